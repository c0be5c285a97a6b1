package natsstore

import (
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/internal/fastjson"
	"github.com/a2amesh/a2amesh/internal/fastjson/fastjsontest"
)

// TestRecordCodecHandlesEveryField fills every exported field of a record
// and checks that encodeRecord writes what encoding/json writes and that
// readRecord takes encoding/json's encoding and reads every field back: a
// field added to record and not to them fails it.
func TestRecordCodecHandlesEveryField(t *testing.T) {
	want := new(record)
	if err := new(fastjsontest.Filler).Fill(want); err != nil {
		t.Fatal(err)
	}
	task := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	var err error
	if want.Task, err = a2a.AppendJSON(nil, task); err != nil {
		t.Fatal(err)
	}
	std, err := fastjson.AppendReflect(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := encodeRecord(taskstore.Entry{Task: task, Seq: want.Seq, Owner: want.Owner})
	if err != nil {
		t.Fatal(err)
	}
	if err := fastjsontest.SameJSON(fast, std); err != nil {
		t.Errorf("encodeRecord differs from encoding/json:\n%v", err)
	}
	got, ok := readRecord(std)
	if !ok {
		t.Fatalf("readRecord declines %s", std)
	}
	if d := fastjsontest.Diff(&got, want); d != "" {
		t.Errorf("readRecord reads a record differently from encoding/json's encoding:\n%s", d)
	}
}
