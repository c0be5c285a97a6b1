package server

import (
	"sync"

	"github.com/a2amesh/a2amesh/a2a"
)

// The size estimates below approximate the bytes of an object's JSON
// encoding: strings by their length (escapes are not counted), numbers and
// field names by a constant. They bound what a task may hold, what a
// finished task costs to keep and what a ListTasks page weighs, so they
// need to grow with the data, not to be exact; they read each value once.

// fieldCost is what a field's name, quotes and separators add, roughly.
const fieldCost = 16

// eventMemory is about what a finished task costs in memory for each of
// its events beyond its content's size. The in-memory stores hold a
// finished task packed, outside the Go heap (taskstore.Memory,
// eventlog.Memory): the echo agent's task of three events, whose size is
// 660, takes 0.9 KiB of resident memory all told (a2aload retain,
// docs/benchmarks.md). A finished task is kept at its content's size plus
// this for each of its events; one heavy with content costs up to twice
// its size, its snapshot and its log each holding the content.
const eventMemory = 96

func sizeOfEvent(ev a2a.Event) int {
	switch e := ev.(type) {
	case *a2a.Task:
		return sizeOfTask(e)
	case *a2a.Message:
		return sizeOfMessage(e)
	case *a2a.TaskStatusUpdateEvent:
		return 4*fieldCost + len(e.TaskID) + len(e.ContextID) + sizeOfStatus(&e.Status) + sizeOfMap(e.Metadata)
	case *a2a.TaskArtifactUpdateEvent:
		return 5*fieldCost + len(e.TaskID) + len(e.ContextID) + sizeOfArtifact(&e.Artifact) + sizeOfMap(e.Metadata)
	}
	return 0
}

func sizeOfTask(t *a2a.Task) int {
	n := 6*fieldCost + len(t.ID) + len(t.ContextID) + sizeOfStatus(&t.Status) + sizeOfMap(t.Metadata)
	for i := range t.History {
		n += sizeOfMessage(&t.History[i])
	}
	for i := range t.Artifacts {
		n += sizeOfArtifact(&t.Artifacts[i])
	}
	return n
}

func sizeOfStatus(s *a2a.TaskStatus) int {
	n := 3*fieldCost + len(s.State) + 24 // the timestamp
	if s.Message != nil {
		n += sizeOfMessage(s.Message)
	}
	return n
}

func sizeOfMessage(m *a2a.Message) int {
	n := 8*fieldCost + len(m.MessageID) + len(m.ContextID) + len(m.TaskID) + len(m.Role) +
		sizeOfParts(m.Parts) + sizeOfMap(m.Metadata) + sizeOfStrings(m.Extensions) + sizeOfStrings(m.ReferenceTaskIDs)
	return n
}

func sizeOfArtifact(a *a2a.Artifact) int {
	return 6*fieldCost + len(a.ArtifactID) + len(a.Name) + len(a.Description) +
		sizeOfParts(a.Parts) + sizeOfMap(a.Metadata) + sizeOfStrings(a.Extensions)
}

func sizeOfParts(parts []a2a.Part) int {
	n := 0
	for i := range parts {
		p := &parts[i]
		n += 2*fieldCost + len(p.Text) + len(p.Raw)*4/3 + len(p.URL) + len(p.Data) +
			len(p.Filename) + len(p.MediaType) + sizeOfMap(p.Metadata)
	}
	return n
}

func sizeOfStrings(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s) + 3
	}
	return n
}

func sizeOfMap(m map[string]any) int {
	n := 2
	for k, v := range m {
		n += len(k) + 4 + sizeOfValue(v)
	}
	return n
}

// sizeOfValue estimates a decoded JSON value, and what Go values metadata
// holds before it is encoded (other types count as a number's size).
func sizeOfValue(v any) int {
	switch v := v.(type) {
	case string:
		return len(v) + 2
	case map[string]any:
		return sizeOfMap(v)
	case []any:
		n := 2
		for _, e := range v {
			n += sizeOfValue(e) + 1
		}
		return n
	case []string:
		return sizeOfStrings(v) + 2
	case []byte:
		return len(v)*4/3 + 2
	case nil, bool:
		return 5
	case appender:
		// A value that encodes itself (the bridge's metadata) is measured
		// by encoding it: its size is what it holds, not its Go type's.
		bp := scratch.Get().(*[]byte)
		b, err := v.AppendJSON((*bp)[:0])
		n := len(b)
		if cap(b) <= 64<<10 {
			*bp = b[:0]
		}
		scratch.Put(bp)
		if err == nil {
			return n
		}
	}
	return 8
}

type appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}
