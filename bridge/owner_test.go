package bridge

import (
	"context"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/adk/checkpoint/checkpointtest"
)

// The executor's store is a checkpoint store over each kind of store, with
// locks over one that has none.
func TestOwnedStoreIsACheckPointStore(t *testing.T) {
	for name, inner := range map[string]func(t *testing.T) adk.CheckPointStore{
		"memory": func(*testing.T) adk.CheckPointStore { return &adk.MemoryCheckPointStore{} },
		"file": func(t *testing.T) adk.CheckPointStore {
			f, err := checkpoint.NewFile(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		"without locks": func(*testing.T) adk.CheckPointStore {
			return struct{ adk.CheckPointStore }{&adk.MemoryCheckPointStore{}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			checkpointtest.Run(t, func(t *testing.T) adk.CheckPointStore { return newOwnedStore(inner(t)) })
		})
	}
}

// A checkpoint is saved with the owner of the run's context; one saved
// before owners were recorded reads as itself and is nobody's to adopt.
func TestCheckpointOwner(t *testing.T) {
	ctx := context.Background()
	inner := &adk.MemoryCheckPointStore{}
	s := newOwnedStore(inner)
	if err := s.Set(withOwner(ctx, owner{ContextID: "ctx-1"}), "task-1", []byte(`{"version":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := inner.Set(ctx, "old", []byte(`{"version":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id        string
		owner     owner
		adoptedBy map[string]bool
	}{
		{"task-1", owner{ContextID: "ctx-1"}, map[string]bool{"ctx-1": true, "ctx-2": false, "": false}},
		{"old", owner{}, map[string]bool{"": false, "ctx-1": false}},
	} {
		if data, ok, err := s.Get(ctx, tc.id); !ok || err != nil || string(data) != `{"version":1}` {
			t.Fatalf("%s: the Runner reads %q, %v, %v", tc.id, data, ok, err)
		}
		o, data, ok, err := s.owned(ctx, tc.id)
		if !ok || err != nil || o != tc.owner || string(data) != `{"version":1}` {
			t.Fatalf("%s: owner %+v, checkpoint %q, %v, %v", tc.id, o, data, ok, err)
		}
		for claimant, want := range tc.adoptedBy {
			if got := o.mayAdopt(owner{ContextID: claimant}); got != want {
				t.Errorf("%s: adopted from context %q: %v", tc.id, claimant, got)
			}
		}
	}
	if err := inner.Set(ctx, "cut", []byte(ownerHeader+`{"context_id":"ctx-1"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(ctx, "cut"); err == nil || !strings.Contains(err.Error(), "bad checkpoint") {
		t.Fatalf("a checkpoint cut in its owner record: %v", err)
	}
}

// FuzzSplitOwner: a stored checkpoint (a file anyone with the directory can
// write) is split into its owner and the Runner's bytes or refused, never a
// panic; and what the store writes splits back into what it was given.
func FuzzSplitOwner(f *testing.F) {
	f.Add([]byte(ownerHeader+`{"context_id":"c1"}`+"\n"+`{"version":1}`), "c1", []byte(`{"version":1}`))
	f.Add([]byte(ownerHeader+`{"context_id":`), "", []byte{})
	f.Add([]byte(`{"version":1}`), "ctx\n\"x", []byte("\n"))
	f.Fuzz(func(t *testing.T, stored []byte, contextID string, data []byte) {
		if o, rest, err := splitOwner(stored); err == nil && len(rest) > len(stored) {
			t.Fatalf("split %q into %+v and %d bytes, more than it holds", stored, o, len(rest))
		}
		ctx := withOwner(context.Background(), owner{ContextID: contextID})
		inner := &adk.MemoryCheckPointStore{}
		if err := newOwnedStore(inner).Set(ctx, "id", data); err != nil {
			t.Fatal(err)
		}
		written, _, _ := inner.Get(ctx, "id")
		o, rest, err := splitOwner(written)
		if err != nil || string(rest) != string(data) || (o.ContextID != contextID && strings.ToValidUTF8(contextID, "\ufffd") == contextID) {
			t.Fatalf("Set(%q as %q) wrote %q, which splits into %+v, %q, %v", data, contextID, written, o, rest, err)
		}
	})
}
