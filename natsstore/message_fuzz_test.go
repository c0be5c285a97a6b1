package natsstore

import (
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// FuzzLogMessage reads a message of the log as every replica reads what
// the others wrote (the headers that say how, and the body): whatever the
// bytes, the result is the message or an error, never a panic; a message
// read whole reads the same decoding its last event only or none, and a
// snapshot it holds decodes or fails cleanly.
func FuzzLogMessage(f *testing.F) {
	task := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	rec, err := encodeRecord(taskstore.Entry{Task: task, Seq: 3, Owner: "o"})
	if err != nil {
		f.Fatal(err)
	}
	lines, err := encodeLines(nil, "t", 2, []a2a.Event{
		a2a.NewStatusUpdate("t", "c", a2a.TaskStateWorking, nil), a2a.NewStatusUpdate("t", "c", a2a.TaskStateCompleted, nil)})
	if err != nil {
		f.Fatal(err)
	}
	withSnapshot := append(append(append([]byte(nil), lines...), '\n'), rec...)
	f.Add("2", "", "", false, lines)
	f.Add("2", "2", "", true, withSnapshot)
	f.Add("1", "2", "2", true, withSnapshot)
	f.Add("4", "0", "", true, rec)
	f.Add("1", "x", "", false, []byte("{}\n"))
	f.Add("1", "3", "5", true, withSnapshot)
	f.Fuzz(func(t *testing.T, seq, events, commit string, ended bool, data []byte) {
		h := nats.Header{HeaderSeq: {seq}}
		if events != "" {
			h.Set(HeaderEvents, events)
		}
		if commit != "" {
			h.Set(HeaderCommit, commit)
		}
		if ended {
			h.Set(headerEnded, "true")
		}
		m, err := readMessage(h, data, decodeAll)
		if err != nil {
			return
		}
		first, _ := strconv.ParseUint(seq, 10, 64)
		for i, e := range m.entries {
			if e.Seq != first+uint64(i) || e.Event == nil {
				t.Fatalf("entry %d: %+v, want event %d", i, e, first+uint64(i))
			}
		}
		if m.commit < first || m.commit > first+uint64(len(m.entries)) {
			t.Fatalf("commit %d outside events %d to %d", m.commit, first, first+uint64(len(m.entries)))
		}
		for _, what := range []int{decodeLast, decodeNone} {
			o, err := readMessage(h, data, what)
			if err != nil || len(o.entries) != len(m.entries) || string(o.snapshot) != string(m.snapshot) || o.commit != m.commit {
				t.Fatalf("decoding %d: %+v, %v; whole: %+v", what, o, err, m)
			}
		}
		if m.snapshot != nil {
			_, _ = decodeRecord(m.snapshot)
		}
	})
}
