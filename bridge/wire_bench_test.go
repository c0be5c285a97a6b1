package bridge

import (
	"encoding/json"
	"testing"

	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// BenchmarkMetaWire measures the bridge's metadata on every hop: written
// by its AppendJSON methods and read from the plain values the wire
// decodes by metaValue, hand-written or through the codec a build tag
// routes them through (docs/benchmarks.md).
func BenchmarkMetaWire(b *testing.B) {
	for _, tc := range []struct {
		name, json string
		bench      func(b *testing.B, plain map[string]any)
	}{
		{"event", metaSeeds[0], benchMeta[eventMeta]},
		{"run", metaSeeds[2], benchMeta[runMeta]},
	} {
		var plain any
		if err := json.Unmarshal([]byte(tc.json), &plain); err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) { tc.bench(b, map[string]any{"k": plain}) })
	}
}

func benchMeta[T any, P interface {
	*T
	fastjson.Appender
}](b *testing.B, plain map[string]any) {
	v, ok, err := metaValue[T](plain, "k")
	if !ok || err != nil {
		b.Fatal(ok, err)
	}
	buf := make([]byte, 0, 1024)
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if buf, err = P(&v).AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := metaValue[T](plain, "k"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
