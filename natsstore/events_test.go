package natsstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func natsServer(t testing.TB) *embedded.Server {
	t.Helper()
	e, err := embedded.Start(embedded.Config{Dir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// replica opens a connection of its own to e, as a replica of an agent
// would, closed when the test ends; js.Conn() is the connection.
func replica(t testing.TB, e *embedded.Server) jetstream.JetStream {
	t.Helper()
	nc, js, err := natsstore.Connect(t.Context(), e.URL(), natsstore.ConnConfig{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return js
}

func TestPublishAndWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	nc, js, err := natsstore.Connect(ctx, e.URL(), natsstore.ConnConfig{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := natsstore.EnsureEventsStream(ctx, js, natsstore.EventsConfig{}); err != nil {
		t.Fatal(err)
	}
	// Twice is fine, as when several servers start at once.
	if err := natsstore.EnsureEventsStream(ctx, js, natsstore.EventsConfig{}); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, natsstore.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := st.CachedInfo().Config; cfg.PersistMode != jetstream.DefaultPersistMode || cfg.Storage != jetstream.FileStorage {
		t.Errorf("events stream: persist mode %v, storage %v; want default, file", cfg.PersistMode, cfg.Storage)
	}
	p := natsstore.NewPublisher(js, "weather.agent", &eventlog.Memory{}, nil)
	defer p.Close()
	start := time.Now().Add(-time.Second)
	events := []a2a.Event{
		&a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}},
		a2a.NewStatusUpdate("t1", "c1", a2a.TaskStateWorking, a2a.NewTextMessage(a2a.RoleAgent, "working")),
		a2a.NewArtifactUpdate("t1", "c1", a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("sunny")}}, false, true),
		a2a.NewStatusUpdate("t1", "c1", a2a.TaskStateCompleted, nil),
	}
	for i, ev := range events {
		if err := p.Append(ctx, "t1", uint64(i+1), ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The wrapped log has them too.
	n := 0
	for _, err := range p.Subscribe(ctx, "t1", 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 4 {
		t.Fatalf("the log has %d events", n)
	}

	i := 0
	for we, err := range natsstore.Watch(ctx, js, start) {
		if err != nil {
			t.Fatal(err)
		}
		if we.Agent != "weather.agent" || we.TaskID != "t1" || we.ContextID != "c1" || we.Seq != uint64(i+1) {
			t.Fatalf("event %d: %+v", i, we)
		}
		if s, _ := a2a.StateOf(we.Event); i == 3 && s != a2a.TaskStateCompleted {
			t.Fatalf("last event %+v", we.Event)
		}
		i++
		if i == len(events) {
			break
		}
	}
	// Another task of the agent lands on the same stream.
	if err := p.Append(ctx, "t2", 1, events[0]); err != nil {
		t.Fatal(err)
	}
	_ = p.Flush(ctx)
	s, err := js.Stream(ctx, natsstore.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	for { // the server stores what it received a moment later
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 5 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("stream holds %d messages", info.State.Msgs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
