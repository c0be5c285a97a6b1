// Command jsfloor is the durable-state benchmark's floor: the echo agent on
// a2amesh's server with in-memory stores, plus the least a server can do to
// make each commit durable on JetStream before it answers: an
// acknowledged publish of the commit's events to a subject of the task's
// own, with no headers and no concurrency check. --publishes 2 publishes
// each commit twice, one after the other, the shape of the JetStream stores'
// commit (the log's message, then the task's snapshot in its bucket).
//
// `a2aload state` runs it beside the echo agent with in-memory and with
// JetStream stores, so the report shows what acknowledged writes alone cost
// on the machine that ran it, next to what the stores cost. It is not a
// store: nothing reads the published events back.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/services/echo"
)

// The floor's stream, apart from the mesh's events stream.
const (
	stream  = "A2AMESH_FLOOR"
	subject = "a2amesh.floor."
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9001", "address to listen on")
	natsURL := flag.String("nats", "nats://127.0.0.1:4222", "NATS server with JetStream")
	retention := flag.Duration("retention", 5*time.Second, "how long finished tasks are kept (in memory)")
	commitDelay := flag.Duration("commit-delay", time.Millisecond, "as the echo agent's --commit-delay")
	publishes := flag.Int("publishes", 1, "acknowledged publishes per commit, one after the other")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cli.RouteHertzLogs(log)
	if err := run(*addr, *natsURL, *retention, *commitDelay, *publishes, log); err != nil {
		fmt.Fprintln(os.Stderr, "jsfloor:", err)
		os.Exit(1)
	}
}

func run(addr, natsURL string, retention, commitDelay time.Duration, publishes int, log *slog.Logger) error {
	ctx, stop := cli.SignalContext()
	defer stop()
	nc, js, err := natsstore.Connect(ctx, natsURL, natsstore.ConnConfig{Name: "jsfloor", Logger: log})
	if err != nil {
		return err
	}
	defer nc.Close()
	// File storage and the default persist mode, as the events stream.
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{subject + ">"},
		Storage: jetstream.FileStorage, MaxAge: time.Minute})
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	h, err := server.New(server.Config{Card: echo.Card(url), Executor: new(echo.Executor), Retention: retention,
		CommitDelay: commitDelay, Logger: log, Events: &publishingLog{Log: new(eventlog.Memory), js: js, publishes: publishes}})
	if err != nil {
		return err
	}
	srv, err := jsonrpcserver.New(h, jsonrpcserver.Config{Logger: log})
	if err != nil {
		return err
	}
	serveErr := srv.Serve(ctx, ln, 2*time.Second)
	closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Close(closeCtx); err != nil {
		log.Warn("closing", "err", err)
	}
	return serveErr
}

// publishingLog is an in-memory log whose appends are first published, and
// acknowledged, on JetStream.
type publishingLog struct {
	eventlog.Log
	js        jetstream.JetStream
	publishes int
}

func (l *publishingLog) Append(ctx context.Context, taskID string, seq uint64, events ...a2a.Event) error {
	var body []byte
	for i, ev := range events {
		if i > 0 {
			body = append(body, '\n')
		}
		var err error
		if body, err = a2a.AppendJSON(body, a2a.Wrap(ev)); err != nil {
			return err
		}
	}
	// Task ids are the server's UUIDs: valid subject tokens.
	for i := range l.publishes {
		if _, err := l.js.Publish(ctx, subject+strconv.Itoa(i)+"."+taskID, body); err != nil {
			return fmt.Errorf("publish event %d of task %s: %w", seq, taskID, err)
		}
	}
	return l.Log.Append(ctx, taskID, seq, events...)
}
