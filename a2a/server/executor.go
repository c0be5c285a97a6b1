package server

import (
	"context"
	"iter"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
)

// AgentExecutor is the agent's side of the protocol: it turns a message into
// task events. The Handler owns everything else (task records, the event
// log, streams, push notifications, cancellation).
type AgentExecutor interface {
	// Execute handles one message. Each call is one run of the agent on
	// one task; runs of the same task never overlap.
	//
	// The first event decides the reply. A *a2a.Message answers directly
	// and creates no task (allowed only when req.Task is nil). A *a2a.Task
	// becomes the task's first snapshot. A status or artifact update starts
	// from a SUBMITTED task the server creates. An error before any event
	// is returned to the client as is, so an *a2a.Error keeps its code.
	//
	// Later events must be status or artifact updates, or whole *a2a.Task
	// snapshots. TaskID and ContextID may be left empty (they are filled
	// in) but must match req when set. Illegal state transitions fail the
	// task. The run ends at the first terminal or interrupted status: the
	// Handler then stops pulling events. If the events end before that, the
	// task is canceled when ctx was canceled and failed otherwise; a
	// yielded error fails it with the error's text.
	//
	// ctx is canceled when a client cancels the task or the Handler shuts
	// down; it is not tied to the client connection, so a client that goes
	// away does not stop the work. The Handler takes ownership of yielded
	// events and may modify them.
	Execute(ctx context.Context, req *ExecRequest) iter.Seq2[a2a.Event, error]

	// Cancel is called when a client cancels a task, after the context of
	// any Execute running for the task in this process has been canceled.
	// It lets the agent release what it holds outside a run (sub-tasks on
	// other agents, checkpoints). Returning an error wrapping
	// a2a.ErrTaskNotCancelable refuses the cancellation; other errors are
	// logged and the task is canceled anyway.
	Cancel(ctx context.Context, task *a2a.Task) error
}

// ExecRequest is what an executor gets for one message.
type ExecRequest struct {
	// TaskID and ContextID identify the task; both are set even for a new
	// task, before it exists.
	TaskID    string
	ContextID string
	// Message is the client's message, with TaskID and ContextID filled in.
	Message *a2a.Message
	// Task is the task as it was before this message, or nil for a new task.
	Task *a2a.Task
	// Metadata is the request's metadata.
	Metadata map[string]any
	// AcceptedOutputModes lists the media types the client accepts; empty
	// means any.
	AcceptedOutputModes []string
	// Streaming tells that the client asked for a stream of events.
	Streaming bool
	// Call describes the protocol call that carried the message.
	Call CallInfo
	// Owner is the key of the caller the task belongs to
	// (auth.Principal.Owner in the request's tenant). An executor that
	// keeps state across tasks (a conversation's history by ContextID)
	// keeps it per Owner: another caller naming the same context id must
	// not read or extend it.
	Owner string
	// Caller is who sent the message, as the Gate admitted them (nil for
	// the anonymous caller): the task's creator for a new task, whoever
	// resumes it for a message on an interrupted one. An executor that
	// calls other agents for the task runs those calls with Caller in
	// their context (auth.NewContext), so that credentials acting on the
	// caller's behalf (package a2a/credentials) find them; the ctx
	// Execute gets does not carry it, since the run outlives the request.
	Caller *auth.Principal
}

// CallInfo describes a protocol call. Bindings attach it to the context
// with WithCallInfo.
type CallInfo struct {
	// ProtocolVersion is the A2A version of the wire: "1.0" or "0.3".
	ProtocolVersion string
	// Extensions are the extension URIs the client asked to use
	// (A2A-Extensions).
	Extensions []string
}

type callInfoKey struct{}

// WithCallInfo returns a context carrying info.
func WithCallInfo(ctx context.Context, info CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, info)
}

// CallInfoFrom returns the call info of ctx; without one, a 1.0 call.
func CallInfoFrom(ctx context.Context) CallInfo {
	if info, ok := ctx.Value(callInfoKey{}).(CallInfo); ok {
		return info
	}
	return CallInfo{ProtocolVersion: a2a.Version}
}
