package natsstore_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/telemetry"
)

// TestEventsCarryTrace: the message of an append made in a traced context
// (by a Log, or a Publisher) carries its trace context, which Watch reads
// back as the event's TraceID; an untraced append's carries none. A Log
// times every acknowledged append in its Telemetry's publish metric.
func TestEventsCarryTrace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	tel, err := telemetry.New(telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := natsstore.NewLog(ctx, js, natsstore.LogConfig{Namespace: "weather", Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	p := natsstore.NewPublisher(js, "chat", &eventlog.Memory{}, nil)
	defer p.Close()
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	tid, _ := trace.TraceIDFromHex(traceID)
	traced := trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, TraceFlags: trace.FlagsSampled}))
	start := time.Now().Add(-time.Second)

	submitted := func(id string) a2a.Event {
		return &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	}
	for _, step := range []struct {
		ctx  context.Context
		log  eventlog.Log
		task string
	}{{traced, l, "t1"}, {ctx, l, "t2"}, {traced, p, "t3"}, {ctx, p, "t4"}} {
		if err := step.log.Append(step.ctx, step.task, 1, submitted(step.task)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"t1": traceID, "t2": "", "t3": traceID, "t4": ""}
	for we, err := range natsstore.Watch(ctx, js, start) {
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[we.TaskID]
		if !ok {
			continue
		}
		if we.TraceID != w {
			t.Errorf("task %s: trace %q, want %q", we.TaskID, we.TraceID, w)
		}
		delete(want, we.TaskID)
		if len(want) == 0 {
			break
		}
	}
	mfs, err := tel.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var timed uint64
	for _, mf := range mfs {
		if mf.GetName() == "a2amesh_nats_publish_duration_seconds" {
			for _, m := range mf.GetMetric() {
				timed += m.GetHistogram().GetSampleCount()
			}
		}
	}
	if timed != 2 {
		t.Errorf("%d acknowledged publishes timed, want 2", timed)
	}
}
