package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/adk"
)

// owner is who may take over an interrupted task's checkpoint once the
// server lost the task: what the executor records with the checkpoint.
// That is the task's context and the caller the task belonged to
// (server.ExecRequest.Owner): a lost task's context id is known only to
// those who had the task (ListTasks no longer shows it), and even they
// must be its caller (a hop trusted to act for others would pass on that
// comparison).
type owner struct {
	ContextID string `json:"context_id"`
	Principal string `json:"principal,omitempty"`
}

// ownerOf is the owner of req's task.
func ownerOf(req *server.ExecRequest) owner {
	return owner{ContextID: req.ContextID, Principal: principalKey(req.Owner)}
}

// principalKey is the caller's owner key as recorded: "" for the
// anonymous caller in the default tenant, as records saved before callers
// were recorded have it, and as a request without an owner is.
func principalKey(o string) string {
	if o == (*auth.Principal)(nil).Owner("") {
		return ""
	}
	return o
}

// conversationKey is where the executor keeps the conversation of req's
// context: per caller, so that no one reads or extends another's by
// naming its context id.
func conversationKey(req *server.ExecRequest) string {
	if p := principalKey(req.Owner); p != "" {
		return p + " " + req.ContextID
	}
	return req.ContextID
}

// mayAdopt reports whether a task made by claimant may take over a
// checkpoint o owns. A record without a context (a checkpoint saved before
// owners were recorded) is adopted by no one.
func (o owner) mayAdopt(claimant owner) bool {
	return o.ContextID != "" && o.ContextID == claimant.ContextID && o.Principal == claimant.Principal
}

type ownerKey struct{}

// withOwner returns a context whose runs save their checkpoints as o's.
func withOwner(ctx context.Context, o owner) context.Context {
	return context.WithValue(ctx, ownerKey{}, o)
}

// ownerHeader starts a checkpoint the bridge saved: the header, the owner
// record's JSON, a newline, then the Runner's checkpoint as it wrote it.
const ownerHeader = "a2amesh.bridge.owner "

// ownedStore is the executor's checkpoint store: it saves each checkpoint
// with its owner (from the run's context, see withOwner) and gives the
// Runner back its checkpoint without it. A checkpoint without the header
// (saved before owners were recorded) reads as itself, with no owner.
//
// It is an adk.CheckPointLocker: the store's own locks when it has them
// (across processes), else locks of this process, which the executor's
// Runners and its adoptions share.
type ownedStore struct {
	inner  adk.CheckPointStore
	locker adk.CheckPointLocker
}

var _ adk.CheckPointLocker = (*ownedStore)(nil)

func newOwnedStore(inner adk.CheckPointStore) *ownedStore {
	s := &ownedStore{inner: inner}
	if l, ok := inner.(adk.CheckPointLocker); ok {
		s.locker = l
	} else {
		s.locker = &adk.ProcessLocks{}
	}
	return s
}

// Get returns the Runner's checkpoint saved under id.
func (s *ownedStore) Get(ctx context.Context, id string) ([]byte, bool, error) {
	_, data, ok, err := s.owned(ctx, id)
	return data, ok, err
}

// owned returns the checkpoint saved under id and its owner.
func (s *ownedStore) owned(ctx context.Context, id string) (owner, []byte, bool, error) {
	data, ok, err := s.inner.Get(ctx, id)
	if err != nil || !ok {
		return owner{}, nil, ok, err
	}
	o, rest, err := splitOwner(data)
	if err != nil {
		return owner{}, nil, false, fmt.Errorf("%w: %s: %w", adk.ErrBadCheckPoint, id, err)
	}
	return o, rest, true, nil
}

// Set saves data under id, owned by the owner ctx carries.
func (s *ownedStore) Set(ctx context.Context, id string, data []byte) error {
	o, _ := ctx.Value(ownerKey{}).(owner) // none: adopted by no one
	head, _ := json.Marshal(o)            // strings always encode
	b := make([]byte, 0, len(ownerHeader)+len(head)+1+len(data))
	b = append(append(append(append(b, ownerHeader...), head...), '\n'), data...)
	return s.inner.Set(ctx, id, b)
}

// Delete removes the checkpoint saved under id.
func (s *ownedStore) Delete(ctx context.Context, id string) error {
	return s.inner.Delete(ctx, id)
}

// Lock claims id for one run.
func (s *ownedStore) Lock(ctx context.Context, id string) (func(), error) {
	return s.locker.Lock(ctx, id)
}

// splitOwner splits a stored checkpoint into its owner and the Runner's
// checkpoint.
func splitOwner(data []byte) (owner, []byte, error) {
	var o owner
	if !bytes.HasPrefix(data, []byte(ownerHeader)) {
		return o, data, nil
	}
	head, rest, ok := bytes.Cut(data[len(ownerHeader):], []byte{'\n'})
	if !ok {
		return o, nil, fmt.Errorf("its owner record does not end")
	}
	if err := json.Unmarshal(head, &o); err != nil {
		return o, nil, fmt.Errorf("its owner record: %w", err)
	}
	return o, rest, nil
}
