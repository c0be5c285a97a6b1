package natsstore

import (
	"maps"
	"testing"
)

// The sweep is due at the first look, at the first look after a replica
// disappeared (not when one appears), and every fullSweepEvery looks.
func TestLookout(t *testing.T) {
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	type look struct {
		live  map[string]bool
		sweep bool
	}
	steady := func(n int, live map[string]bool) []look {
		var ls []look
		for range n {
			ls = append(ls, look{live, false})
		}
		return ls
	}
	tests := []struct {
		name  string
		looks []look
	}{
		{"first look", []look{{set("a", "b"), true}, {set("a", "b"), false}}},
		{"a replica disappears", []look{{set("a", "b"), true}, {set("a", "b"), false}, {set("a"), true}, {set("a"), false}}},
		{"a replica appears", []look{{set("a"), true}, {set("a", "b"), false}, {set("a", "b"), false}}},
		{"one appears as another disappears", []look{{set("a", "b"), true}, {set("a", "c"), true}, {set("a", "c"), false}}},
		{"none left", []look{{set("a", "b"), true}, {set(), true}, {set(), false}}},
		{"backstop", append(append([]look{{set("a"), true}}, steady(fullSweepEvery-2, set("a"))...),
			look{set("a"), true}, look{set("a"), false})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w lookout
			for i, l := range tt.looks {
				if got := w.due(l.live); got != l.sweep {
					t.Fatalf("look %d (live %v, seen %v): sweep %v, want %v", i+1, l.live, w.seen, got, l.sweep)
				}
				w.saw(maps.Clone(l.live))
			}
		})
	}
	// A sweep that failed is due again at the next look, as is the first
	// look after a reset (NATS was away).
	var w lookout
	w.due(set("a", "b"))
	w.saw(set("a", "b"))
	if !w.due(set("a")) { // sweep fails: no saw
		t.Fatal("no sweep after a replica disappeared")
	}
	if !w.due(set("a")) {
		t.Fatal("no sweep after a failed one")
	}
	w.saw(set("a"))
	w.reset()
	if !w.due(set("a")) {
		t.Fatal("no sweep after a reset")
	}
}
