package serve_test

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
	"github.com/a2amesh/a2amesh/serve"
)

// turns answers each message with an artifact and asks for the next
// (INPUT_REQUIRED): a new task's events are 1 the task, 2 the artifact, 3
// the question, and each follow-up adds three.
type turns struct{}

func (turns) Execute(_ context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		art := a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart(req.Message.Text())}}
		if yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, false, true), nil) {
			yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateInputRequired, nil), nil)
		}
	}
}

func (turns) Cancel(context.Context, *a2a.Task) error { return nil }

// replica serves turns with its state on the NATS server at url, on every
// binding, until the test ends.
func replica(t *testing.T, url string) *serve.Server {
	t.Helper()
	card := &a2a.AgentCard{Name: "turns", Description: "asks for more", Version: "1.0.0",
		Capabilities: a2a.AgentCapabilities{Streaming: true}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
	return serveUntilEnd(t, turns{}, card, serve.Config{NATS: serve.NATS{URL: url}, GRPCAddr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}, bound)
}

// Two replicas sharing their state on NATS number a task's changes alike,
// on every binding: the task one made has the same generation on the
// other, a long poll on one answers for an event committed by the other,
// and a conditional message that lost to a write on the other replica is
// refused as a mismatch.
func TestGenerationsAcrossReplicas(t *testing.T) {
	ns, err := embedded.Start(embedded.Config{Dir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	a, b := replica(t, ns.URL()), replica(t, ns.URL())
	if !slices.ContainsFunc(a.Card().Capabilities.Extensions, func(e a2a.AgentExtension) bool { return e.URI == a2a.GenerationExtension }) {
		t.Fatalf("the card does not declare the extension: %+v", a.Card().Capabilities)
	}
	for _, binding := range []client.Binding{client.JSONRPC, client.HTTPJSON, grpcclient.Binding(grpcclient.Config{})} {
		t.Run(binding.Name(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			dial := func(s *serve.Server) *client.Client {
				c, err := client.New(ctx, s.URL(), client.Config{Bindings: []client.Binding{binding}})
				if err != nil {
					t.Fatal(err)
				}
				if c.Binding() != binding.Name() {
					t.Fatalf("the client speaks %s", c.Binding())
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
			ca, cb := dial(a), dial(b)
			ev, err := ca.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "one")}, client.Generations())
			if err != nil {
				t.Fatal(err)
			}
			task := ev.(*a2a.Task)
			follow := func(text string, match a2a.Generation) *a2a.SendMessageRequest {
				m := a2a.NewTextMessage(a2a.RoleUser, text)
				m.TaskID = task.ID
				return &a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: &match}}
			}

			steps := []struct {
				name string
				do   func() (*a2a.Task, error)
				want a2a.Generation // -1: the step checks it
			}{
				{"the task as replica A made it", func() (*a2a.Task, error) { return task, nil }, 3},
				{"replica B, without the extension", func() (*a2a.Task, error) { return cb.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}) }, 0},
				{"replica B", func() (*a2a.Task, error) {
					return cb.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}, client.Generations())
				}, 3},
				{"a long poll on B for a follow-up on A", func() (*a2a.Task, error) {
					type polled struct {
						task *a2a.Task
						err  error
					}
					ch := make(chan polled, 1)
					go func() {
						got, err := cb.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: new(a2a.Generation(3))})
						ch <- polled{got, err}
					}()
					ev, err := ca.SendMessage(ctx, follow("two", 3))
					if err != nil || ev.(*a2a.Task).Generation != 6 {
						t.Fatalf("conditional follow-up on A: %v, %v", ev, err)
					}
					p := <-ch // bounded by ctx
					if p.err == nil && (p.task.Generation <= 3 || p.task.Generation > 6) {
						t.Errorf("the long poll answered generation %d, want 4 to 6", p.task.Generation)
					}
					return p.task, p.err
				}, -1},
				{"B writes at the generation both read", func() (*a2a.Task, error) {
					ev, err := cb.SendMessage(ctx, follow("three", 6))
					if err != nil {
						return nil, err
					}
					return ev.(*a2a.Task), nil
				}, 9},
				{"A's message at that generation has lost", func() (*a2a.Task, error) {
					_, err := ca.SendMessage(ctx, follow("four", 6))
					var e *a2a.Error
					if !errors.Is(err, a2a.ErrTaskGenerationMismatch) || !errors.As(err, &e) ||
						e.Metadata["currentGeneration"] != "9" || e.Metadata["expectedGeneration"] != "6" {
						t.Errorf("A's stale message: %v (%+v)", err, e)
					}
					return ca.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}, client.Generations())
				}, 9},
			}
			for _, s := range steps {
				got, err := s.do()
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if s.want >= 0 && got.Generation != s.want {
					t.Fatalf("%s: generation %d, want %d", s.name, got.Generation, s.want)
				}
			}
		})
	}
}

// nlog is a replica's task log on NATS, which a test watches: subscribed
// tells each Subscribe (a long poll's wait).
type nlog struct {
	eventlog.Log
	subscribed chan uint64
}

func (l *nlog) Subscribe(ctx context.Context, taskID string, after uint64) iter.Seq2[eventlog.Entry, error] {
	select {
	case l.subscribed <- after:
	default:
	}
	return l.Log.Subscribe(ctx, taskID, after)
}

// ntasks is a replica's tasks on NATS, which commit each group of events
// with the snapshot it leads to in one write (taskstore.Committer), their
// log watched (nlog) and before run ahead of each commit, with the number
// of its first event.
type ntasks struct {
	*natsstore.TaskStore
	log    *nlog
	before func(seq uint64)
}

func (s *ntasks) Events() eventlog.Log { return s.log }

func (s *ntasks) Commit(ctx context.Context, e taskstore.Entry, events ...a2a.Event) (uint64, error) {
	if s.before != nil && len(events) > 0 {
		s.before(e.Seq - uint64(len(events)) + 1)
	}
	return s.TaskStore.Commit(ctx, e, events...)
}

// natsReplica is a Handler of turns over the stores on NATS at url, which
// the test watches.
func natsReplica(t *testing.T, url string) (*server.Handler, *ntasks) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	nc, js, err := natsstore.Connect(ctx, url, natsstore.ConnConfig{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	st, err := natsstore.Open(ctx, js, natsstore.StoresConfig{Namespace: "turns"})
	if err != nil {
		t.Fatal(err)
	}
	tasks := &ntasks{TaskStore: st.Tasks, log: &nlog{Log: st.Tasks.Events(), subscribed: make(chan uint64, 1)}}
	card := &a2a.AgentCard{Name: "turns", Capabilities: a2a.AgentCapabilities{Streaming: true,
		Extensions: []a2a.AgentExtension{{URI: a2a.GenerationExtension}}}}
	h, err := server.New(server.Config{Card: card, Executor: turns{}, Tasks: tasks, PushConfigs: st.Push,
		Retention: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return h, tasks
}

// The same over NATS, step by step: a long poll on replica B is waiting
// (its log subscribed) when replica A commits the event that ends it; and
// a conditional message that matched on A but whose write replica B beat
// (B's write slipped in just before A's commit) is refused as a mismatch,
// not folded into B's task.
func TestGenerationsAcrossNATSReplicas(t *testing.T) {
	ns, err := embedded.Start(embedded.Config{Dir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	a, atasks := natsReplica(t, ns.URL())
	b, btasks := natsReplica(t, ns.URL())
	blog := btasks.log
	ctx := server.WithCallInfo(context.Background(), server.CallInfo{ProtocolVersion: a2a.Version, Extensions: []string{a2a.GenerationExtension}})
	send := func(h *server.Handler, taskID, text string, match *a2a.Generation) (*a2a.Task, error) {
		m := a2a.NewTextMessage(a2a.RoleUser, text)
		m.TaskID = taskID
		ev, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: match}})
		if err != nil {
			return nil, err
		}
		return ev.(*a2a.Task), nil
	}
	task, err := send(a, "", "one", nil)
	if err != nil || task.Generation != 3 {
		t.Fatalf("new task on A: %v, %v", task, err)
	}

	select { // forget the subscriptions of B's loads so far
	case <-blog.subscribed:
	default:
	}
	type polled struct {
		task *a2a.Task
		err  error
	}
	ch := make(chan polled, 1)
	go func() {
		got, err := b.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: new(a2a.Generation(3))})
		ch <- polled{got, err}
	}()
	select {
	case <-blog.subscribed:
	case <-time.After(bound):
		t.Fatal("the long poll on B did not subscribe to the task's log")
	}
	if _, err := send(a, task.ID, "two", new(a2a.Generation(3))); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-ch:
		if p.err != nil || p.task.Generation <= 3 || p.task.Generation > 6 {
			t.Fatalf("the long poll on B answered %v, %v; want generation 4 to 6", p.task, p.err)
		}
	case <-time.After(bound):
		t.Fatal("the long poll on B did not answer")
	}

	atasks.before = func(seq uint64) {
		if seq == 7 { // A is about to commit its follow-up: B gets there first
			atasks.before = nil
			if _, err := send(b, task.ID, "from B", new(a2a.Generation(6))); err != nil {
				t.Error(err)
			}
		}
	}
	_, err = send(a, task.ID, "from A", new(a2a.Generation(6)))
	var e *a2a.Error
	if !errors.Is(err, a2a.ErrTaskGenerationMismatch) || !errors.As(err, &e) || e.Metadata["currentGeneration"] != "9" {
		t.Fatalf("A's message that lost the race: %v (%+v)", err, e)
	}
	got, err := a.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Generation != 9 || got.History[len(got.History)-1].Text() != "from B" {
		t.Fatalf("the task after the race: %v, %v", got, err)
	}
}
