package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

// Transport carries the A2A operations to one interface of an agent, over
// one protocol binding in one protocol version: the wire, and only the
// wire. The Client does what every binding shares before it calls a
// Transport: it sets the request's tenant, bounds ctx by its timeouts, and
// resumes the streams a Transport opens when they are cut.
//
// Errors the server answers with are *a2a.Error values (errors.As), so
// that errors.Is(err, a2a.ErrTaskNotFound) holds whatever the binding.
// Implementations must be safe for concurrent use.
type Transport interface {
	// SendMessage returns the *a2a.Task or the *a2a.Message the agent
	// answers with.
	SendMessage(ctx context.Context, req *a2a.SendMessageRequest, h http.Header) (a2a.Event, error)
	GetTask(ctx context.Context, req *a2a.GetTaskRequest, h http.Header) (*a2a.Task, error)
	ListTasks(ctx context.Context, req *a2a.ListTasksRequest, h http.Header) (*a2a.ListTasksResponse, error)
	CancelTask(ctx context.Context, req *a2a.CancelTaskRequest, h http.Header) (*a2a.Task, error)
	CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig, h http.Header) (*a2a.TaskPushNotificationConfig, error)
	GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest, h http.Header) (*a2a.TaskPushNotificationConfig, error)
	ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest, h http.Header) (*a2a.ListTaskPushNotificationConfigsResponse, error)
	DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest, h http.Header) error
	GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest, h http.Header) (*a2a.AgentCard, error)

	// OpenStream starts a streaming call (SendStreamingMessage or
	// SubscribeToTask) and returns its events as they arrive. An error
	// the server answers before the first event may be returned here or
	// by the stream's first Recv. The stream ends when ctx does.
	OpenStream(ctx context.Context, req *StreamRequest, h http.Header) (EventStream, error)

	// Close releases what the Transport holds (idle connections); calls
	// in progress are not interrupted.
	Close() error
}

// StreamRequest is a streaming call: exactly one of Send and Subscribe is
// set.
type StreamRequest struct {
	// Send is a SendStreamingMessage.
	Send *a2a.SendMessageRequest
	// Subscribe is a SubscribeToTask.
	Subscribe *a2a.SubscribeToTaskRequest
	// LastEventID, with Subscribe, asks for the task's events after this
	// one (SSE's Last-Event-ID), without the current snapshot first; the
	// Client resumes cut streams so. A Transport whose wire has no way to
	// say it leaves it to the server: a server that does not honour it
	// sends the snapshot and the events after it.
	LastEventID string
	// Alive, when set, is called each time the server is heard from on
	// this stream: response headers, an event, a keep-alive. The Client
	// counts a stream that is silent longer than Config.StreamIdleTimeout
	// as cut.
	Alive func()
}

// EventStream is one streaming call's events.
type EventStream interface {
	// Recv returns the next event. It returns io.EOF when the server
	// ended the stream; the error of a stream the server ended with an
	// A2A error is that *a2a.Error; any other error (the connection
	// failed, the server went silent) ends the stream too and wraps
	// ErrStreamCut when the Client may resume the task's stream after
	// the last event received.
	Recv() (Event, error)
	// Close ends the call; the stream is unusable after it. It is safe
	// to call more than once.
	Close() error
}

// ErrStreamCut matches, with errors.Is, the error of a stream whose
// connection failed or went silent before its task settled, after the
// Client's resumptions (Config.ResumeAttempts) ran out. Transports wrap it
// into the errors of cuts they see, so that the Client resumes them.
var ErrStreamCut = errors.New("stream cut before the task settled")

// Binding makes Transports for one protocol binding, such as JSONRPC and
// HTTPJSON in this package, or gRPC in package grpcclient.
type Binding interface {
	// Name is the binding as agent cards name it in
	// AgentInterface.ProtocolBinding (a2a.BindingJSONRPC, ...).
	Name() string
	// Speaks reports whether the binding speaks the protocol version
	// ("1.0", "0.3").
	Speaks(version string) bool
	// Transport returns a Transport for the interface, whose URL the
	// Client has checked and resolved against the card's.
	Transport(iface *a2a.AgentInterface, cfg *TransportConfig) (Transport, error)
}

// TransportConfig is what a Binding needs of the Client's Config.
type TransportConfig struct {
	// HTTPClient sends the requests of the bindings over HTTP/1.1 (never
	// nil: the Client's own, guarded when Config.Guard is set).
	HTTPClient *http.Client
	// Dial, when set, dials the connections of bindings that make their
	// own (gRPC's); it is Config.Guard's dialer when the Client has one,
	// which such a binding must use.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxEventBytes bounds one unary response and one streamed event.
	MaxEventBytes int
	// StreamIdleTimeout is Config.StreamIdleTimeout with its default
	// applied (<= 0: no bound), for a binding that has a way of its own
	// of telling a silent server from a dead one (HTTP/2 pings).
	StreamIdleTimeout time.Duration
}
