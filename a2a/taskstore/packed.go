package taskstore

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/internal/packjson"
)

// A finished task no longer changes in the ordinary course, and a server
// keeps many (for their retention) to answer the few GetTask and ListTasks
// that read them: Memory holds each as a record of bytes in an arena
// outside the Go heap,
//
//	seq, version   uvarints
//	owner          a uvarint length, bytes
//	state          a byte: its place in finishedStates, plus one
//	status time    8 bytes, Unix nanoseconds
//	context id     a uvarint length, bytes
//	the task       its 1.0 JSON, packed by packjson knowing its ids and
//	               status time (known, below)
//
// under its id in Memory.done: what List filters on and Update and Delete
// unindex by, kept apart from the JSON, which is decoded only when the
// task is read. Everything from the state on is encoded before Memory is
// locked (packTask); the head, whose version is only known under the lock,
// is written then.

// finishedStates are the states of tasks held packed: the terminal ones.
var finishedStates = [...]a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected}

// packTask appends to dst the part of t's record that does not change with
// its version; ok is false for a task that is not finished, or cannot be
// encoded, which Memory then holds as it is. scratch is room for the JSON.
func packTask(dst, scratch []byte, t *a2a.Task) (_, _ []byte, ok bool) {
	code := 0
	for i, s := range finishedStates {
		if s == t.Status.State {
			code = i + 1
		}
	}
	if code == 0 {
		return dst, scratch, false
	}
	js, err := a2a.AppendJSON(scratch[:0], t)
	if err != nil {
		return dst, js, false
	}
	ns := t.Status.Timestamp.UnixNano()
	dst = append(dst, byte(code))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(ns))
	dst = appendBytes(dst, t.ContextID)
	return packjson.Pack(dst, known(t.ID, t.ContextID, ns), js), js, true
}

// known are the strings the record keeps apart from the JSON, which its
// packing knows: the ids, and the status time as JSON writes a time in
// UTC.
func known(id, ctx string, ns int64) []string {
	return []string{id, ctx, time.Unix(0, ns).UTC().Format(time.RFC3339Nano)}
}

// appendHead appends the head of a record, then its tail from packTask.
func appendHead(dst []byte, seq, version uint64, owner string, tail []byte) []byte {
	dst = binary.AppendUvarint(dst, seq)
	dst = binary.AppendUvarint(dst, version)
	dst = appendBytes(dst, owner)
	return append(dst, tail...)
}

func headSize(seq, version uint64, owner string) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], seq) + binary.PutUvarint(b[:], version) + binary.PutUvarint(b[:], uint64(len(owner))) + len(owner)
}

func appendBytes(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// record is a packed task's record read: its slices are views of the
// bytes it was read from.
type record struct {
	seq, version uint64
	owner        []byte
	state        a2a.TaskState
	ns           int64
	ctx          []byte
	packed       []byte
}

// readRecord reads a record Memory wrote.
func readRecord(b []byte) record {
	var r record
	var n int
	r.seq, n = binary.Uvarint(b)
	b = b[n:]
	r.version, n = binary.Uvarint(b)
	b = b[n:]
	r.owner, b = readBytes(b)
	r.state = finishedStates[b[0]-1]
	r.ns = int64(binary.LittleEndian.Uint64(b[1:]))
	r.ctx, r.packed = readBytes(b[9:])
	return r
}

func readBytes(b []byte) (field, rest []byte) {
	n, w := binary.Uvarint(b)
	return b[w : w+int(n) : w+int(n)], b[w+int(n):]
}

// entry decodes the stored task, id.
func (r *record) entry(id string) (Entry, error) {
	docs, err := packjson.Unpack(r.packed, known(id, string(r.ctx), r.ns))
	if err != nil || len(docs) != 1 {
		return Entry{}, fmt.Errorf("taskstore: task %s is held damaged: %v", id, err)
	}
	t := new(a2a.Task)
	if err := a2a.Unmarshal(docs[0], t); err != nil {
		return Entry{}, fmt.Errorf("taskstore: task %s is held damaged: %w", id, err)
	}
	return Entry{Task: t, Seq: r.seq, Version: r.version, Owner: string(r.owner)}, nil
}

// matches reports whether the record passes q's filters.
func (r *record) matches(q *Query) bool {
	return (q.Owner == "" || string(r.owner) == q.Owner) &&
		(q.ContextID == "" || string(r.ctx) == q.ContextID) &&
		(q.State == "" || r.state == q.State) &&
		(q.UpdatedAfter.IsZero() || !time.Unix(0, r.ns).Before(q.UpdatedAfter))
}
