// Package echo is the echo agent: the first agent of the mesh and the
// reference workload for interop tests and benchmarks. It repeats the text
// it is sent, and a few prefixes make it exercise the rest of the protocol.
package echo

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// The prefixes that change what the agent does.
const (
	// InputPrefix ends the first turn in INPUT_REQUIRED; the next message
	// on the task completes it.
	InputPrefix = "input:"
	// SlowPrefix works for SlowChunks × SlowInterval, one chunk each
	// interval, for trying cancellation and resubscription.
	SlowPrefix = "slow:"
	// FailPrefix ends the task FAILED.
	FailPrefix = "fail:"
)

// SentAtKey is the artifact metadata key of a "slow:" chunk that holds
// when the agent made it (RFC 3339, nanoseconds).
const SentAtKey = "sentAt"

// Executor is the echo agent, an A2A executor. Its zero value is the standard agent:
// 10 chunks when streaming, and 20 chunks 250 ms apart for "slow:".
type Executor struct {
	StreamChunks int
	SlowChunks   int
	SlowInterval time.Duration
}

var _ server.AgentExecutor = (*Executor)(nil)

// ArtifactID names the artifact that holds the echo.
const ArtifactID = "echo"

// Execute implements server.AgentExecutor. Every reply's artifact, chunks
// concatenated, is exactly the text of the message.
func (a *Executor) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := req.Message.Text()
		status := func(state a2a.TaskState, msg string) *a2a.TaskStatusUpdateEvent {
			var m *a2a.Message
			if msg != "" {
				m = a2a.NewTextMessage(a2a.RoleAgent, msg)
			}
			return a2a.NewStatusUpdate(req.TaskID, req.ContextID, state, m)
		}
		switch {
		case req.Task != nil: // a follow-up (the answer to "input:") completes the task
			if yield(chunk(req, text, false, true), nil) {
				yield(status(a2a.TaskStateCompleted, ""), nil)
			}
		case strings.HasPrefix(text, FailPrefix):
			yield(status(a2a.TaskStateFailed, "failed as asked: "+strings.TrimPrefix(text, FailPrefix)), nil)
		case strings.HasPrefix(text, InputPrefix):
			yield(status(a2a.TaskStateInputRequired, "send another message on this task to complete it"), nil)
		case strings.HasPrefix(text, SlowPrefix):
			if !yield(status(a2a.TaskStateWorking, ""), nil) {
				return
			}
			n, interval := orDefault(a.SlowChunks, 20), a.SlowInterval
			if interval <= 0 {
				interval = 250 * time.Millisecond
			}
			t := time.NewTicker(interval)
			defer t.Stop()
			for i, piece := range split(text, n) {
				select {
				case <-t.C:
				case <-ctx.Done():
					return // canceled: the server records it
				}
				c := chunk(req, piece, i > 0, i == n-1)
				// When the chunk was made, for measuring how long it takes
				// to reach a subscriber (a2aload state).
				c.Artifact.Metadata = map[string]any{SentAtKey: time.Now().Format(time.RFC3339Nano)}
				if !yield(c, nil) {
					return
				}
			}
			yield(status(a2a.TaskStateCompleted, ""), nil)
		case req.Streaming:
			if !yield(status(a2a.TaskStateWorking, ""), nil) {
				return
			}
			n := orDefault(a.StreamChunks, 10)
			for i, piece := range split(text, n) {
				if !yield(chunk(req, piece, i > 0, i == n-1), nil) {
					return
				}
			}
			yield(status(a2a.TaskStateCompleted, ""), nil)
		default:
			if yield(chunk(req, text, false, true), nil) {
				yield(status(a2a.TaskStateCompleted, ""), nil)
			}
		}
	}
}

// Cancel implements server.AgentExecutor: the echo agent holds nothing
// outside its runs, which stop when their context is canceled.
func (a *Executor) Cancel(context.Context, *a2a.Task) error { return nil }

func chunk(req *server.ExecRequest, text string, appendParts, last bool) *a2a.TaskArtifactUpdateEvent {
	art := a2a.Artifact{ArtifactID: ArtifactID, Name: "echo", Parts: []a2a.Part{a2a.TextPart(text)}}
	return a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, appendParts, last)
}

// split cuts s into n pieces of nearly equal rune counts (some empty when s
// is short) that concatenate back to s.
func split(s string, n int) []string {
	runes := []rune(s)
	out := make([]string, n)
	for i := range n {
		out[i] = string(runes[i*len(runes)/n : (i+1)*len(runes)/n])
	}
	return out
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Card returns the echo agent's card for an endpoint URL. The endpoint
// serves A2A 1.0 and 0.3, and the card says so.
func Card(url string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "echo",
		Description: "Repeats what it is sent. Prefixes: input: asks for more input, slow: works for about 5 s, fail: fails.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
			{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version03},
		},
		Provider:           &a2a.AgentProvider{Organization: "a2amesh", URL: "https://github.com/a2amesh/a2amesh"},
		Version:            "1.0.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{
			ID: "echo", Name: "Echo", Description: "Returns the text of the message as an artifact.",
			Tags: []string{"echo", "test"}, Examples: []string{"hello", "input: hello", "slow: hello", "fail: hello"},
		}},
	}
}
