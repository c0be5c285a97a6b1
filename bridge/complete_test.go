package bridge

import (
	"encoding/json"
	"testing"

	"github.com/a2amesh/a2amesh/internal/fastjson"
	"github.com/a2amesh/a2amesh/internal/fastjson/fastjsontest"
)

// The fields metajson.go hands whole to encoding/json: a value holding one
// is written, or read, there instead.
var (
	writtenByEncodingJSON = []string{
		"bridge.eventMeta.Action", "bridge.eventMeta.CustomizedOutput", "bridge.runMeta.Resume",
		"bridge.resultMeta.Interrupt",
		"schema.Message.MultiContent", "schema.Message.ResponseMeta", "schema.Message.Extra",
	}
	readByEncodingJSON = []string{
		"bridge.eventMeta.Action", "bridge.runMeta.Resume", "bridge.resultMeta.Interrupt",
		"schema.Message.MultiContent", "schema.Message.ResponseMeta", "schema.Message.Extra",
	}
)

// TestMetaFastPathsHandleEveryField fills every exported field of the
// metadata types (and of the adk and schema types within) and checks that
// AppendJSON writes what encoding/json writes, and that fromPlain turns
// what encoding/json writes, decoded as the wire decodes metadata, back
// into the value. A field added to one of these types and not to
// metajson.go fails it.
func TestMetaFastPathsHandleEveryField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func(t *testing.T, f *fastjsontest.Filler, mustTake bool)
	}{
		{"eventMeta", checkMetaFields[eventMeta]},
		{"runMeta", checkMetaFields[runMeta]},
		{"resultMeta", checkMetaFields[resultMeta]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every field: the result must be right, wherever it is made.
			tc.check(t, &fastjsontest.Filler{}, false)
			// All but the fields left to encoding/json: AppendJSON writes
			// the rest itself, and fromPlain must take them.
			tc.check(t, &fastjsontest.Filler{Skip: writtenByEncodingJSON}, false)
			tc.check(t, &fastjsontest.Filler{Skip: readByEncodingJSON}, true)
		})
	}
}

func checkMetaFields[T any, P interface {
	*T
	fastjson.Appender
}](t *testing.T, f *fastjsontest.Filler, mustTake bool) {
	want := new(T)
	if err := f.Fill(want); err != nil {
		t.Fatal(err)
	}
	std, err := fastjson.AppendReflect(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := P(want).AppendJSON(nil)
	if err != nil {
		t.Fatalf("AppendJSON: %v", err)
	}
	if err := fastjsontest.SameJSON(fast, std); err != nil {
		t.Errorf("%T.AppendJSON differs from encoding/json:\n%v", want, err)
	}

	var plain any
	if err := json.Unmarshal(std, &plain); err != nil {
		t.Fatal(err)
	}
	got, ok := fromPlain[T](plain)
	switch {
	case ok:
		if d := fastjsontest.Diff(&got, want); d != "" {
			t.Errorf("fromPlain reads %T differently from encoding/json's encoding:\n%s", want, d)
		}
	case mustTake:
		t.Errorf("fromPlain declines %s", std)
	}
}
