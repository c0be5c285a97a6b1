// Package conformance is the agent the official A2A conformance kit
// (a2aproject/a2a-tck) tests: it behaves as the kit's scenarios
// (tck/scenarios/*.feature) describe, chosen by the prefix of the
// messageId a message carries, so that the kit can drive every part of the
// protocol through it. Everything else (validation, task records, streams,
// push notifications, errors) is server.Handler's, which is what the kit
// measures.
package conformance

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// The messageId prefixes the agent knows, each a scenario of the kit. A
// message whose messageId has none of them completes its task with a
// message saying so.
const (
	// CompleteTask completes the task with the status message
	// "Hello from TCK".
	CompleteTask = "tck-complete-task"
	// ArtifactText completes the task with an artifact of one text part,
	// "Generated text content".
	ArtifactText = "tck-artifact-text"
	// ArtifactFile completes the task with an artifact of one file part
	// holding bytes, named output.txt, of media type text/plain.
	ArtifactFile = "tck-artifact-file"
	// ArtifactFileURL completes the task with an artifact of one file part
	// pointing to https://example.com/output.txt, named output.txt, of
	// media type text/plain.
	ArtifactFileURL = "tck-artifact-file-url"
	// ArtifactData completes the task with an artifact of one data part,
	// {"key": "value", "count": 42}.
	ArtifactData = "tck-artifact-data"
	// MessageResponse answers with the message "Direct message response"
	// instead of a task.
	MessageResponse = "tck-message-response"
	// InputRequired leaves the task INPUT_REQUIRED.
	InputRequired = "tck-input-required"
	// RejectTask fails the request with an error whose message is
	// "rejected"; no task is created.
	RejectTask = "tck-reject-task"

	// Stream001, Stream003, StreamOrdering001 and StreamArtifactText go
	// WORKING, add an artifact of one text part ("Stream hello from TCK",
	// "Stream task lifecycle", "Ordered output", "Streamed text content")
	// and complete the task.
	Stream001          = "tck-stream-001"
	Stream003          = "tck-stream-003"
	StreamOrdering001  = "tck-stream-ordering-001"
	StreamArtifactText = "tck-stream-artifact-text"
	// Stream002 completes the task at once.
	Stream002 = "tck-stream-002"
	// StreamArtifactFile goes WORKING, adds the artifact of ArtifactFile
	// and completes the task.
	StreamArtifactFile = "tck-stream-artifact-file"
	// StreamArtifactChunked goes WORKING, sends one text artifact in two
	// chunks ("chunk-1 ", then "chunk-2" as the last chunk) and completes
	// the task.
	StreamArtifactChunked = "tck-stream-artifact-chunked"

	// Resubscribe keeps the task WORKING for Executor.LongRun, for
	// resubscribing to it, then completes it.
	Resubscribe = "test-resubscribe-message-id"
)

// DefaultLongRun is how long a Resubscribe task stays WORKING when
// Executor.LongRun is zero: twice the kit's default streaming timeout of
// 2 s, as its SUT requirements ask.
const DefaultLongRun = 4 * time.Second

// Executor is the conformance agent, an A2A executor. Its zero value is
// the agent the kit expects.
type Executor struct {
	// LongRun is how long a Resubscribe task stays WORKING; zero means
	// DefaultLongRun.
	LongRun time.Duration
}

var _ server.AgentExecutor = (*Executor)(nil)

// ArtifactID names every artifact the agent makes (a task gets at most
// one).
const ArtifactID = "tck-artifact"

// Execute implements server.AgentExecutor: the message's messageId prefix
// picks the scenario, the same whether the client streams or not. A
// message that continues a task (the answer to InputRequired) is handled
// the same way, except that MessageResponse then completes the task with
// its message, since only a new task may be answered by a message alone.
func (e *Executor) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		id := req.Message.MessageID
		switch {
		case strings.HasPrefix(id, RejectTask):
			// A2A has no code for an agent refusing a request; the kit's
			// reference agents raise an error of no particular kind.
			yield(nil, a2a.Errorf(a2a.CodeInternal, "rejected"))
			return
		case strings.HasPrefix(id, Resubscribe):
			if !yield(status(req, a2a.TaskStateWorking, ""), nil) {
				return
			}
			hold := e.LongRun
			if hold <= 0 {
				hold = DefaultLongRun
			}
			t := time.NewTimer(hold)
			defer t.Stop()
			select {
			case <-t.C:
				yield(status(req, a2a.TaskStateCompleted, ""), nil)
			case <-ctx.Done(): // canceled: the server records it
			}
			return
		}
		for _, ev := range script(req) {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// script returns the events of the scenario a message's messageId picks,
// for every scenario but RejectTask and Resubscribe.
func script(req *server.ExecRequest) []a2a.Event {
	id := req.Message.MessageID
	completed := status(req, a2a.TaskStateCompleted, "")
	working := status(req, a2a.TaskStateWorking, "")
	switch {
	case strings.HasPrefix(id, CompleteTask):
		return []a2a.Event{status(req, a2a.TaskStateCompleted, "Hello from TCK")}
	// ArtifactFileURL before ArtifactFile, whose prefix it extends.
	case strings.HasPrefix(id, ArtifactFileURL):
		return []a2a.Event{artifact(req, a2a.URLPart("https://example.com/output.txt", "text/plain", "output.txt")), completed}
	case strings.HasPrefix(id, ArtifactFile):
		return []a2a.Event{artifact(req, filePart()), completed}
	case strings.HasPrefix(id, ArtifactText):
		return []a2a.Event{artifact(req, a2a.TextPart("Generated text content")), completed}
	case strings.HasPrefix(id, ArtifactData):
		return []a2a.Event{artifact(req, a2a.Part{Data: json.RawMessage(`{"key":"value","count":42}`)}), completed}
	case strings.HasPrefix(id, MessageResponse):
		if req.Task != nil {
			return []a2a.Event{status(req, a2a.TaskStateCompleted, "Direct message response")}
		}
		return []a2a.Event{a2a.NewTextMessage(a2a.RoleAgent, "Direct message response")}
	case strings.HasPrefix(id, InputRequired):
		return []a2a.Event{status(req, a2a.TaskStateInputRequired, "")}
	case strings.HasPrefix(id, Stream001):
		return []a2a.Event{working, artifact(req, a2a.TextPart("Stream hello from TCK")), completed}
	case strings.HasPrefix(id, Stream002):
		return []a2a.Event{completed}
	case strings.HasPrefix(id, Stream003):
		return []a2a.Event{working, artifact(req, a2a.TextPart("Stream task lifecycle")), completed}
	case strings.HasPrefix(id, StreamOrdering001):
		return []a2a.Event{working, artifact(req, a2a.TextPart("Ordered output")), completed}
	case strings.HasPrefix(id, StreamArtifactText):
		return []a2a.Event{working, artifact(req, a2a.TextPart("Streamed text content")), completed}
	case strings.HasPrefix(id, StreamArtifactFile):
		return []a2a.Event{working, artifact(req, filePart()), completed}
	case strings.HasPrefix(id, StreamArtifactChunked):
		return []a2a.Event{working, chunk(req, a2a.TextPart("chunk-1 "), false, false), chunk(req, a2a.TextPart("chunk-2"), true, true), completed}
	}
	return []a2a.Event{status(req, a2a.TaskStateCompleted, "no scenario has the prefix of messageId "+id)}
}

// Cancel implements server.AgentExecutor: the agent holds nothing outside
// its runs, which stop when their context is canceled.
func (e *Executor) Cancel(context.Context, *a2a.Task) error { return nil }

// filePart is the file of ArtifactFile and StreamArtifactFile.
func filePart() a2a.Part { return a2a.RawPart([]byte("tck"), "text/plain", "output.txt") }

func status(req *server.ExecRequest, state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	var m *a2a.Message
	if text != "" {
		m = a2a.NewTextMessage(a2a.RoleAgent, text)
	}
	return a2a.NewStatusUpdate(req.TaskID, req.ContextID, state, m)
}

// artifact is the task's artifact, whole.
func artifact(req *server.ExecRequest, part a2a.Part) *a2a.TaskArtifactUpdateEvent {
	return chunk(req, part, false, true)
}

func chunk(req *server.ExecRequest, part a2a.Part, appendParts, last bool) *a2a.TaskArtifactUpdateEvent {
	art := a2a.Artifact{ArtifactID: ArtifactID, Parts: []a2a.Part{part}}
	return a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, appendParts, last)
}

// Card returns the conformance agent's card for an endpoint URL. It
// declares streaming and push notifications, so that the kit tests them;
// it takes text and JSON, so that a part of another media type is refused
// with ContentTypeNotSupportedError (-32005), and makes text and JSON.
func Card(url string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "conformance",
		Description: "Behaves as the A2A conformance kit's scenarios describe, chosen by the messageId prefix (tck-complete-task, tck-stream-001, ...).",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
			{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version03},
		},
		Provider:           &a2a.AgentProvider{Organization: "a2amesh", URL: "https://github.com/a2amesh/a2amesh"},
		Version:            "1.0.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{
			ID: "tck", Name: "A2A TCK scenarios",
			Description: "Completes, streams, asks for input or rejects as the messageId prefix says.",
			Tags:        []string{"tck", "conformance", "test"},
			Examples:    []string{CompleteTask, Stream001, InputRequired},
		}},
	}
}
