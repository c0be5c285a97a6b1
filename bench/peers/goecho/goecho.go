// Package goecho is the echo agent built on an independent A2A
// implementation, a2a-go v2.4.0: the peer that interop tests talk to and
// that benchmarks measure a2amesh against. It behaves like
// services/echo: text completes a task with one artifact holding
// the text; a stream gets WORKING, ten appended chunks, then COMPLETED;
// "input:" asks for more input; "slow:" works in timed chunks; "fail:"
// fails.
package goecho

import (
	"context"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// Executor is the echo agent for a2a-go.
type Executor struct {
	SlowChunks   int
	SlowInterval time.Duration
}

// streamingKey marks, in request metadata, a request that asked for a
// stream: a2a-go's executors are not told, so an interceptor tells them.
const streamingKey = "goecho.streaming"

// Execute implements a2asrv.AgentExecutor.
func (e *Executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := messageText(ec.Message)
		status := func(s a2a.TaskState, msg string) a2a.Event {
			var m *a2a.Message
			if msg != "" {
				m = a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(msg))
			}
			return a2a.NewStatusUpdateEvent(ec, s, m)
		}
		chunk := func(s string, appendParts, last bool) a2a.Event {
			ev := a2a.NewArtifactUpdateEvent(ec, "echo", a2a.NewTextPart(s))
			ev.Artifact.Name = "echo"
			ev.Append, ev.LastChunk = appendParts, last
			return ev
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		streaming, _ := ec.Metadata[streamingKey].(bool)
		switch {
		case ec.StoredTask != nil:
			if yield(chunk(text, false, true), nil) {
				yield(status(a2a.TaskStateCompleted, ""), nil)
			}
		case strings.HasPrefix(text, "fail:"):
			yield(status(a2a.TaskStateFailed, "failed as asked: "+strings.TrimPrefix(text, "fail:")), nil)
		case strings.HasPrefix(text, "input:"):
			yield(status(a2a.TaskStateInputRequired, "send another message on this task to complete it"), nil)
		case strings.HasPrefix(text, "slow:"):
			if !yield(status(a2a.TaskStateWorking, ""), nil) {
				return
			}
			n, interval := e.SlowChunks, e.SlowInterval
			if n <= 0 {
				n = 20
			}
			if interval <= 0 {
				interval = 250 * time.Millisecond
			}
			for i, piece := range split(text, n) {
				select {
				case <-time.After(interval):
				case <-ctx.Done():
					return
				}
				if !yield(chunk(piece, i > 0, i == n-1), nil) {
					return
				}
			}
			yield(status(a2a.TaskStateCompleted, ""), nil)
		case streaming:
			if !yield(status(a2a.TaskStateWorking, ""), nil) {
				return
			}
			for i, piece := range split(text, 10) {
				if !yield(chunk(piece, i > 0, i == 9), nil) {
					return
				}
			}
			yield(status(a2a.TaskStateCompleted, ""), nil)
		default:
			if yield(chunk(text, false, true), nil) {
				yield(status(a2a.TaskStateCompleted, ""), nil)
			}
		}
	}
}

// Cancel implements a2asrv.AgentExecutor.
func (e *Executor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

func split(s string, n int) []string {
	runes := []rune(s)
	out := make([]string, n)
	for i := range n {
		out[i] = string(runes[i*len(runes)/n : (i+1)*len(runes)/n])
	}
	return out
}

// streamMarker tells the executor which sends asked for a stream.
type streamMarker struct{}

func (streamMarker) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	if r, ok := req.Payload.(*a2a.SendMessageRequest); ok && cc.Method() == "SendStreamingMessage" {
		r.SetMeta(streamingKey, true)
	}
	return ctx, nil, nil
}

func (streamMarker) After(context.Context, *a2asrv.CallContext, *a2asrv.Response) error { return nil }

// Options configures the server.
type Options struct {
	Executor Executor
	// AllowPrivateWebhooks lets push notifications reach loopback, for tests.
	AllowPrivateWebhooks bool
	// ExtendedCard, when set, is declared and served.
	ExtendedCard *a2a.AgentCard
}

// Card returns the peer's card: JSON-RPC 1.0 at baseURL and 0.3 at
// baseURL+"v03/", with streaming and push notifications.
func Card(baseURL string, extended bool) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "goecho",
		Description: "Echo agent on a2a-go v2.4.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: baseURL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
			{URL: baseURL + "v03/", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
		},
		Version:            "1.0.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true, ExtendedAgentCard: extended},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "echoes", Tags: []string{"echo"}}},
	}
}

// NewHandler returns the peer's HTTP handler for an agent reachable at
// baseURL (ending in "/"): JSON-RPC 1.0 at "/", 0.3 at "/v03/", and the
// agent card.
func NewHandler(baseURL string, opts Options) http.Handler {
	card := Card(baseURL, opts.ExtendedCard != nil)
	return NewJSONRPCHandler(card, NewRequestHandler(card, opts))
}

// NewJSONRPCHandler serves handler over JSON-RPC, 1.0 at "/" and 0.3 at
// "/v03/", and card at the well-known path: NewHandler for a card that
// names other bindings too.
func NewJSONRPCHandler(card *a2a.AgentCard, handler a2asrv.RequestHandler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", a2asrv.NewJSONRPCHandler(handler))
	mux.Handle("/v03/", a2av0.NewJSONRPCHandler(handler))
	mux.Handle("/.well-known/agent-card.json", a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card)))
	return mux
}

// NewRequestHandler returns the peer's binding-agnostic a2a-go handler,
// which checks requests against card's capabilities, for serving over
// a2a-go's other bindings (its gRPC and REST servers) under a card that
// names them.
func NewRequestHandler(card *a2a.AgentCard, opts Options) a2asrv.RequestHandler {
	exec := opts.Executor
	hopts := []a2asrv.RequestHandlerOption{
		a2asrv.WithCallInterceptors(streamMarker{}),
		// a2a-go's store scopes tasks to a user and refuses listing without
		// one; the echo peer serves everyone as one user.
		a2asrv.WithTaskStore(taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{
			Authenticator: func(context.Context) (string, error) { return "goecho", nil },
		})),
		a2asrv.WithCapabilityChecks(&card.Capabilities),
		a2asrv.WithPushNotifications(push.NewInMemoryStore(), push.NewHTTPPushSender(&push.HTTPSenderConfig{
			Timeout: 10 * time.Second, AllowPrivateNetworks: opts.AllowPrivateWebhooks,
		})),
	}
	if opts.ExtendedCard != nil {
		hopts = append(hopts, a2asrv.WithExtendedAgentCard(opts.ExtendedCard))
	}
	return a2asrv.NewHandler(&exec, hopts...)
}
