package grpcclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	kclient "github.com/cloudwego/kitex/client"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/metadata"
	"github.com/cloudwego/kitex/pkg/streaming"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/internal/pbconv"
	"github.com/a2amesh/a2amesh/internal/pbwire"
	"github.com/a2amesh/a2amesh/proto/a2apb"
)

// OpenStream starts SendStreamingMessage or SubscribeToTask and waits for
// the response header, which numbers the events (FirstEventIDKey). While
// the stream is open it tells the Client that the server is alive
// (StreamRequest.Alive) every third of StreamIdleTimeout: the keepalive
// pings are what fail the connection of a server that stops answering.
func (t *grpcTransport) OpenStream(ctx context.Context, req *client.StreamRequest, h http.Header) (client.EventStream, error) {
	op, method := "SubscribeToTask", "SubscribeToTask"
	var msg any
	if req.Send != nil {
		op, method = "SendStreamingMessage", "SendStreamingMessage"
		buf := t.bufs.Get()
		defer t.bufs.Put(buf) // sent (copied) by open, or failed
		b, err := pbconv.AppendSendRequest(*buf, req.Send)
		*buf = b
		if err != nil {
			return nil, encodeErr(op, err)
		}
		msg = pbwire.Encoded(b)
	} else {
		msg = t.out(&a2apb.SubscribeToTaskRequest{Tenant: req.Subscribe.Tenant, Id: req.Subscribe.ID})
	}
	k, err := t.acquire()
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s %s: %w", op, t.addr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &eventStream{t: t, k: k, op: op, cancel: cancel, alive: req.Alive}
	st, md, err := s.open(outgoing(ctx, h, req.LastEventID), method, msg)
	if err != nil {
		s.Close()
		return nil, t.callError(op, err, true)
	}
	s.st = st
	if vs := md.Get(pbconv.FirstEventIDKey); len(vs) > 0 {
		s.next, _ = strconv.ParseUint(strings.TrimSpace(vs[0]), 10, 64) // 0 (no ids) if it is not a number
	}
	if s.alive != nil {
		s.alive()
		if t.idle > 0 {
			// A timer rather than a goroutine with a ticker: nothing
			// to start per stream, nor to wait for at its end.
			every := max(t.idle/3, time.Millisecond)
			s.mu.Lock()
			s.heartbeat = time.AfterFunc(every, func() { s.beat(every) })
			s.mu.Unlock()
		}
	}
	return s, nil
}

// eventStream is the client.EventStream of one streaming RPC.
type eventStream struct {
	t      *grpcTransport
	k      *kitex
	op     string
	cancel context.CancelFunc
	alive  func()
	st     streaming.Stream
	next   uint64 // the next event's id; 0 when the server numbers none
	// in receives each event, read by pbconv's direct decoding rather
	// than into the generated a2apb.StreamResponse.
	in pbconv.IncomingEvent

	mu        sync.Mutex  // guards heartbeat and closed
	heartbeat *time.Timer // calls beat while the stream is open
	closed    bool
	once      sync.Once
}

// open starts the RPC: sends the request, closes the sending side, and
// reads the response header.
func (s *eventStream) open(ctx context.Context, method string, msg any) (streaming.Stream, metadata.MD, error) {
	res := new(streaming.Result)
	if err := s.k.c.(kclient.Streaming).Stream(ctx, method, nil, res); err != nil {
		return nil, nil, err
	}
	st := res.Stream
	s.st = st // for Close
	if err := st.SendMsg(msg); err != nil {
		return nil, nil, err
	}
	if err := st.Close(); err != nil {
		return nil, nil, err
	}
	md, err := st.Header()
	if err != nil {
		return nil, nil, err
	}
	return st, md, nil
}

// beat tells the Client the server is alive, and comes again after every,
// until Close.
func (s *eventStream) beat(every time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.alive()
	s.heartbeat.Reset(every)
}

func (s *eventStream) Recv() (client.Event, error) {
	m := &s.in
	if err := s.st.RecvMsg(m); err != nil {
		if err == io.EOF {
			return client.Event{}, io.EOF
		}
		return client.Event{}, s.t.callError(s.op, err, true)
	}
	if s.alive != nil {
		s.alive()
	}
	ev, err := m.Event()
	if err != nil {
		return client.Event{}, fmt.Errorf("a2a client: %s: decode stream event: %w", s.op, err)
	}
	var id string
	if _, reply := ev.(*a2a.Message); !reply && s.next > 0 {
		id = strconv.FormatUint(s.next, 10)
		s.next++
	}
	return client.Event{Event: ev, ID: id}, nil
}

func (s *eventStream) Close() error {
	s.once.Do(func() {
		s.mu.Lock() // no Alive after Close: a beat holds mu
		s.closed = true
		if s.heartbeat != nil {
			s.heartbeat.Stop()
		}
		s.mu.Unlock()
		s.cancel()
		if f, ok := s.st.(streaming.WithDoFinish); ok {
			f.DoFinish(nil) // releases the stream's connection
		}
		s.t.release(s.k)
	})
	return nil
}
