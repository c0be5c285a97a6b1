// Package push delivers a task's events to the webhooks clients register
// (A2A push notifications), so a client need not hold a stream open to learn
// how its task goes. It owns three things:
//
//   - the registered webhooks: the ConfigStore interface a server keeps them
//     in, and Memory, the in-process implementation. Durable implementations
//     satisfy the same interface and pass the same conformance suite
//     (package pushtest).
//   - delivery: Sender posts one event to one webhook in the payload format
//     of the A2A version the client registered with, retrying transient
//     failures with backoff, within bounds on the connections and pending
//     notifications webhooks can hold and with a breaker per destination,
//     so a webhook that never answers costs the server little.
//   - protection of the server's own network: a webhook URL is chosen by a
//     client, so Sender dials through a netguard.Guard, which refuses
//     loopback, private, link-local and similar addresses (server-side
//     request forgery) unless an operator allowlists them, and follows no
//     redirect.
//   - proof of origin: besides the config's credentials, a Sender with
//     Signing signs each notification with the agent's key, and a webhook
//     checks it with a Verifier holding the agent's published keys, or
//     fetching them from the agent's JWKS URL.
//
// Which events are pushed, and when, is the server's decision: it calls
// Sender.Notify for each event a task's webhooks should see.
package push

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/a2a"
)

// ErrNotFound is returned, wrapped, by ConfigStore.Get; test with errors.Is.
var ErrNotFound = errors.New("push: push notification config not found")

// Config is a registered webhook.
type Config struct {
	a2a.TaskPushNotificationConfig
	// ProtocolVersion is the A2A version of the client that registered the
	// webhook ("1.0" or "0.3"; empty means "1.0"). It decides the payload
	// format, because a client can only parse notifications in the wire form
	// of the version it speaks.
	ProtocolVersion string
}

// clone returns a copy of c that shares no memory with it.
func (c Config) clone() Config {
	if c.Authentication != nil {
		a := *c.Authentication
		c.Authentication = &a
	}
	return c
}

// ConfigStore keeps the webhooks registered for each task. Implementations
// are safe for concurrent use. Save stores a copy of its argument and the
// configs returned belong to the caller, so neither side can change the
// other's data.
type ConfigStore interface {
	// Save creates or replaces the config with c's (TaskID, ID). Both must
	// be non-empty: the server assigns an ID before saving. Replacing a
	// config keeps its place in List order.
	Save(ctx context.Context, c Config) error
	// Get returns one config, or an error wrapping ErrNotFound.
	Get(ctx context.Context, taskID, id string) (Config, error)
	// List returns the task's configs in the order they were first saved;
	// none (and no error) when the task has no webhooks or is unknown,
	// since a task without webhooks is normal.
	List(ctx context.Context, taskID string) ([]Config, error)
	// Delete removes one config; deleting a missing one is not an error, so
	// a retried delete succeeds.
	Delete(ctx context.Context, taskID, id string) error
	// DeleteTask removes all of a task's configs, e.g. when the task is
	// deleted; a task with none is not an error.
	DeleteTask(ctx context.Context, taskID string) error
}
