package taskstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestIndex checks the index against a sorted slice over random inserts
// and removes: its order, its counts, pages from any cursor, and that no
// chunk outgrows maxChunk. Keys come in order, a little out of order (as
// tasks finishing at once do) and at random.
func TestIndex(t *testing.T) {
	tests := []struct {
		name string
		ns   func(rng *rand.Rand, step int) int64
	}{
		{"in order", func(_ *rand.Rand, step int) int64 { return int64(step) }},
		{"a little out of order", func(rng *rand.Rand, step int) int64 { return int64(step + rng.IntN(8)) }},
		{"at random", func(rng *rand.Rand, _ int) int64 { return rng.Int64N(1000) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			var ix index
			var model []ikey // sorted oldest first
			for step := range 20_000 {
				if len(model) > 0 && rng.IntN(3) == 0 {
					// Remove the oldest most often, as eviction does.
					k := model[0]
					if rng.IntN(4) == 0 {
						k = model[rng.IntN(len(model))]
					}
					ix.remove(k)
					i, _ := slices.BinarySearchFunc(model, k, cmpKeys)
					model = slices.Delete(model, i, i+1)
				} else {
					k := ikey{tt.ns(rng, step), fmt.Sprintf("t%05d", step)}
					ix.insert(k)
					i, _ := slices.BinarySearchFunc(model, k, cmpKeys)
					model = slices.Insert(model, i, k)
				}
				if step%1000 == 999 {
					checkIndex(t, &ix, model, rng)
				}
			}
			if full := float64(ix.len()) / float64(len(ix.chunks)*maxChunk); tt.name != "at random" && full < 0.75 {
				t.Errorf("chunks are %.0f%% full", 100*full)
			}
		})
	}
}

func cmpKeys(a, b ikey) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

func checkIndex(t *testing.T, ix *index, model []ikey, rng *rand.Rand) {
	t.Helper()
	if ix.len() != len(model) {
		t.Fatalf("len %d, want %d", ix.len(), len(model))
	}
	for i, c := range ix.chunks {
		if cap(c) > maxChunk || len(c) == 0 && ix.len() > 0 || len(c) > 0 && ix.lasts[i] != c[len(c)-1] {
			t.Fatalf("chunk %d: %d keys, room for %d, last %v (recorded %v)", i, len(c), cap(c), c[len(c)-1], ix.lasts[i])
		}
	}
	var got []ikey
	ix.ascend(nil, func(k ikey) bool { got = append(got, k); return true })
	want := slices.Clone(model)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Fatalf("ascend: %d keys, not the %d in order", len(got), len(want))
	}
	if len(model) == 0 {
		return
	}
	// A page after a cursor, and a count from a time: at random places.
	k := model[rng.IntN(len(model))]
	after := Cursor{Time: time.Unix(0, k.ns), ID: k.id}
	var page []ikey
	ix.ascend(&after, func(k ikey) bool { page = append(page, k); return len(page) < 10 })
	i := slices.Index(want, k)
	if w := want[i+1 : min(i+11, len(want))]; !slices.Equal(page, w) {
		t.Fatalf("page after %v: %v, want %v", k, page, w)
	}
	newer := 0
	for _, m := range model {
		if k.less(m) {
			newer++
		}
	}
	if n := ix.newerThan(k); n != newer {
		t.Fatalf("newerThan(%v) = %d, want %d", k, n, newer)
	}
}
