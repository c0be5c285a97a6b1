// Package taskstore keeps the latest snapshot of every task: the Store
// interface a server writes through, with optimistic concurrency by
// version, and Memory, the in-process implementation. Durable
// implementations (JetStream KV) satisfy the same interface and pass the
// same conformance suite (package storetest).
//
// A store may hold a task encoded, as a durable one does and as Memory
// does a finished task's: each read of it is then a new snapshot, equal
// to the one stored as its 1.0 JSON decodes (metadata in JSON's own
// types), not the pointer stored.
package taskstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
)

// Errors a Store returns; test with errors.Is.
var (
	ErrNotFound         = errors.New("taskstore: task not found")
	ErrExists           = errors.New("taskstore: task already exists")
	ErrConflict         = errors.New("taskstore: task changed since it was read")
	ErrInvalidPageToken = errors.New("taskstore: invalid page token")
	// ErrUnavailable means a store kept elsewhere cannot be reached at the
	// moment: the call was not made, or its outcome is unknown, and the
	// same call may succeed later.
	ErrUnavailable = errors.New("taskstore: the store cannot be reached")
)

// Entry is a stored task.
type Entry struct {
	// Task is a shared snapshot: never modify it; store a changed copy.
	Task *a2a.Task
	// Seq is the sequence number of the last task event folded into Task.
	Seq uint64
	// Version identifies this revision of the entry for Update.
	Version uint64
	// Owner is the key of the principal the task belongs to
	// (auth.Principal.Owner): a server shows and changes the task only
	// for requests with the same key. It is set when the task is created
	// and never changes.
	Owner string
}

// Store keeps task snapshots. Implementations are safe for concurrent use.
type Store interface {
	// Create stores e.Task as a new task whose latest event is e.Seq,
	// owned by e.Owner (e.Version is ignored). It fails with ErrExists if
	// the id is taken.
	Create(ctx context.Context, e Entry) (version uint64, err error)
	// Get returns the task, or ErrNotFound.
	Get(ctx context.Context, id string) (Entry, error)
	// Update replaces the task with e.Task and e.Seq if the stored
	// version is still e.Version, and fails with ErrConflict otherwise
	// (or ErrNotFound if it is gone). e.Owner must be the owner the task
	// was created with: the owner never changes, and a store may refuse
	// an update that names another.
	Update(ctx context.Context, e Entry) (version uint64, err error)
	// Delete removes the task; deleting a missing task is not an error.
	Delete(ctx context.Context, id string) error
	// List returns one page of the tasks matching q, most recently
	// updated (by status timestamp) first.
	List(ctx context.Context, q Query) (Page, error)
}

// Query selects and pages tasks. Zero fields do not filter.
type Query struct {
	// Owner keeps the tasks of one owner (Entry.Owner). A server answering
	// a client always sets it; "" lists every owner's tasks, for the
	// server's own housekeeping.
	Owner     string
	ContextID string
	State     a2a.TaskState
	// UpdatedAfter keeps tasks whose status timestamp is at or after it.
	UpdatedAfter time.Time
	// PageSize is the most tasks to return; it must be positive.
	PageSize int
	// PageToken continues after a previous page's NextPageToken.
	PageToken string
}

// Matches reports whether the stored task passes the query's filters.
func (q *Query) Matches(e Entry) bool {
	t := e.Task
	return (q.Owner == "" || e.Owner == q.Owner) &&
		(q.ContextID == "" || t.ContextID == q.ContextID) &&
		(q.State == "" || t.Status.State == q.State) &&
		(q.UpdatedAfter.IsZero() || !t.Status.Timestamp.Before(q.UpdatedAfter))
}

// Page is one page of a List.
type Page struct {
	Tasks []*a2a.Task
	// NextPageToken is empty on the last page.
	NextPageToken string
	// Total counts all tasks that match the query, across pages.
	Total int
}

// Cursor is a position in List order: tasks sort by status timestamp,
// newest first, then by id, descending.
type Cursor struct {
	Time time.Time
	ID   string
}

// CursorOf returns the cursor of a task.
func CursorOf(t *a2a.Task) Cursor { return Cursor{Time: t.Status.Timestamp, ID: t.ID} }

// Before reports whether c comes before d in List order.
func (c Cursor) Before(d Cursor) bool {
	if !c.Time.Equal(d.Time) {
		return c.Time.After(d.Time)
	}
	return c.ID > d.ID
}

// Equal reports whether c and d are the same position.
func (c Cursor) Equal(d Cursor) bool { return c.ID == d.ID && c.Time.Equal(d.Time) }

// Token encodes the cursor as an opaque page token.
func (c Cursor) Token() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Time.UnixNano(), 10) + ":" + c.ID))
}

// ParseToken decodes a page token; it fails with ErrInvalidPageToken.
func ParseToken(token string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: %q is not one this server issued", ErrInvalidPageToken, token)
	}
	ns, id, ok := strings.Cut(string(b), ":")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return Cursor{}, fmt.Errorf("%w: %q is not one this server issued", ErrInvalidPageToken, token)
	}
	return Cursor{Time: time.Unix(0, n).UTC(), ID: id}, nil
}

// Committer is a Store that also holds its tasks' event logs, so that a
// server commits a task's new events and the snapshot they lead to in one
// write instead of two (the log's, then the store's).
type Committer interface {
	Store
	// Commit appends events to the task's log, numbered up to e.Seq, and
	// stores e as the task's snapshot, if the stored version is still
	// e.Version (0: the task must not exist yet; it fails with ErrExists
	// if it does), all or nothing; otherwise it fails with ErrConflict,
	// or ErrNotFound if the task is gone. With no events it is Create or
	// Update. Events() returns the log, which a server must read the
	// task's events from.
	Commit(ctx context.Context, e Entry, events ...a2a.Event) (version uint64, err error)
	Events() eventlog.Log
}
