package bridge

import (
	"bytes"
	"cmp"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// ExecutorConfig configures an Executor.
type ExecutorConfig struct {
	// Agent is the agent (tree) served.
	Agent adk.Agent
	// CheckPointStore keeps interrupted tasks; the checkpoint id is the
	// task id, and each checkpoint records the task's context (see
	// docs/bridge.md). Nil means an adk.MemoryCheckPointStore.
	CheckPointStore adk.CheckPointStore
	// StateTypes name the session value types checkpoints and callers
	// bring back as themselves.
	StateTypes []adk.StateType
	// Conversations keeps what was said in each context, so a second task
	// in a context sees the earlier turns. Nil means a MemoryConversations
	// with its defaults.
	Conversations Conversations
	// Tasks is the server's task store (the one in server.Config.Tasks).
	// With it, a new task whose run metadata names an interrupted task in
	// resume_task takes over that task's checkpoint and resumes its run,
	// provided the server lost that task (a restart with tasks in memory,
	// an expiry) and the new task is in the lost task's context. Nil
	// refuses every such request: the executor could not tell a lost task
	// from one that still exists, whose run only a message on it resumes.
	Tasks  TaskGetter
	Logger *slog.Logger
}

// TaskGetter reads the server's tasks; a taskstore.Store is one.
type TaskGetter interface {
	// Get returns the task, or an error wrapping taskstore.ErrNotFound.
	Get(ctx context.Context, id string) (taskstore.Entry, error)
}

// Executor serves an adk.Agent as an A2A agent: each task is one Runner
// run, checkpointed under the task id. A message on an INPUT_REQUIRED task
// resumes the run; cancelling the task cancels the run.
type Executor struct {
	runner, streamer *adk.Runner
	store            *ownedStore
	tasks            TaskGetter
	types            []adk.StateType
	conversations    Conversations
	log              *slog.Logger
}

var _ server.AgentExecutor = (*Executor)(nil)

// NewExecutor returns an Executor for cfg.
func NewExecutor(ctx context.Context, cfg ExecutorConfig) (*Executor, error) {
	if cfg.Agent == nil {
		return nil, errors.New("bridge: the executor needs an agent")
	}
	e := &Executor{tasks: cfg.Tasks, types: cfg.StateTypes, conversations: cfg.Conversations, log: cfg.Logger}
	store := cfg.CheckPointStore
	if store == nil {
		store = &adk.MemoryCheckPointStore{}
	}
	e.store = newOwnedStore(store)
	if e.conversations == nil {
		e.conversations = &MemoryConversations{}
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	rc := adk.RunnerConfig{Agent: cfg.Agent, CheckPointStore: e.store, StateTypes: cfg.StateTypes}
	e.runner = adk.NewRunner(ctx, rc)
	rc.EnableStreaming = true
	e.streamer = adk.NewRunner(ctx, rc)
	return e, nil
}

// Card returns a card for agent served at url: its name and description,
// its skills (adk.SkillsOf; when it declares none, one skill with its name
// and description), streaming and push notifications, A2A 1.0 and 0.3.
func Card(ctx context.Context, agent adk.Agent, url string) *a2a.AgentCard {
	name, desc := agent.Name(ctx), agent.Description(ctx)
	skills := []a2a.AgentSkill{{ID: name, Name: name, Description: desc, Tags: []string{"adk"}}}
	if declared := adk.SkillsOf(ctx, agent); len(declared) > 0 {
		skills = make([]a2a.AgentSkill, len(declared))
		for i, s := range declared {
			// A card's skill has tags (the field is required), if only none.
			tags := s.Tags
			if tags == nil {
				tags = []string{}
			}
			skills[i] = a2a.AgentSkill{ID: cmp.Or(s.ID, s.Name), Name: cmp.Or(s.Name, s.ID), Description: s.Description,
				Tags: slices.Clone(tags), Examples: slices.Clone(s.Examples)}
		}
	}
	return &a2a.AgentCard{
		Name:        name,
		Description: desc,
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
			{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version03},
		},
		Provider:           &a2a.AgentProvider{Organization: "a2amesh", URL: "https://github.com/a2amesh/a2amesh"},
		Version:            "1.0.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             skills,
	}
}

// Execute runs the agent on the message, or resumes the task's run.
func (e *Executor) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		meta, _, err := metaValue[runMeta](req.Metadata, KeyRun)
		if err == nil {
			err = meta.check()
		}
		if err != nil {
			yield(nil, a2a.Errorf(a2a.CodeInvalidParams, "bridge: %v", err))
			return
		}
		var values map[string]any
		if len(meta.SessionValues) > 0 {
			if values, err = adk.UnmarshalSessionValues(meta.SessionValues, e.types...); err != nil {
				yield(nil, a2a.Errorf(a2a.CodeInvalidParams, "bridge: %v", err))
				return
			}
		}
		runner := e.runner
		if meta.Streaming || (meta.Input == nil && req.Streaming) {
			runner = e.streamer
		}
		var end runEnd
		opts := []adk.AgentRunOption{adk.WithCheckPointID(req.TaskID), adk.WithRunEnd(end.capture)}
		if values != nil {
			opts = append(opts, adk.WithSessionValues(values))
		}
		if len(meta.RunPath) > 0 {
			opts = append(opts, adk.WithRunPath(meta.RunPath))
		}
		if len(meta.Callers) > 0 {
			opts = append(opts, adk.WithCallerAgents(meta.Callers...))
		}

		// The run's checkpoints are the task's context's to adopt. The
		// run acts for the caller: the remote agents it calls, cancels
		// and resumes are called with the caller's identity (see
		// RemoteConfig.Credentials).
		ctx := withOwner(ctx, ownerOf(req))
		if req.Caller != nil {
			ctx = auth.NewContext(ctx, req.Caller)
		}
		var it *adk.AsyncIterator[*adk.AgentEvent]
		var userText *schema.Message
		if meta.ResumeTask != "" && req.Task == nil {
			if err := e.adopt(ctx, meta.ResumeTask, req); err != nil {
				yield(nil, err)
				return
			}
			for id, v := range meta.Resume {
				opts = append(opts, adk.ResumeWith(id, v))
			}
			if it, err = runner.Resume(ctx, req.TaskID, opts...); err != nil {
				yield(nil, a2a.Errorf(a2a.CodeInternal, "bridge: resume task %s: %v", meta.ResumeTask, err))
				return
			}
		} else if req.Task != nil && req.Task.Status.State == a2a.TaskStateInputRequired {
			inputs := meta.Resume
			if inputs == nil {
				inputs = plainResume(req)
			}
			for id, v := range inputs {
				opts = append(opts, adk.ResumeWith(id, v))
			}
			if it, err = runner.Resume(ctx, req.TaskID, opts...); err != nil {
				yield(nil, a2a.Errorf(a2a.CodeInternal, "bridge: resume task %s: %v", req.TaskID, err))
				return
			}
		} else {
			input := meta.Input
			if input == nil {
				userText = fromA2AMessage(req.Message)
				earlier, err := e.conversations.Load(ctx, conversationKey(req))
				if err != nil {
					e.log.Warn("loading the conversation", "context", req.ContextID, "err", err)
				}
				input = append(earlier, userText)
			}
			it = runner.Run(ctx, input, opts...)
		}

		enc := &encoder{taskID: req.TaskID, contextID: req.ContextID, yield: yield}
		// The task exists, WORKING, from the first event: a caller learns
		// its id before the agent says anything.
		var first a2a.Event = &a2a.Task{ID: req.TaskID, ContextID: req.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		if req.Task != nil {
			first = a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil)
		}
		if !yield(first, nil) {
			return
		}
		for ev, ok := it.Next(); ok; ev, ok = it.Next() {
			if !enc.event(ev) {
				drainRun(it)
				return
			}
		}
		if ctx.Err() != nil {
			// The task was cancelled: the Handler records it so; a FAILED
			// status from the run's last error would misstate it.
			return
		}
		result := resultMeta{SessionValues: changedValues(meta.SessionValues, end.values)}
		if userText != nil && enc.interrupt == nil && enc.held == nil && enc.answer != "" {
			if err := e.conversations.Append(ctx, conversationKey(req), userText, schema.AssistantMessage(enc.answer, nil)); err != nil {
				e.log.Warn("saving the conversation", "context", req.ContextID, "err", err)
			}
		}
		enc.finish(&result)
	}
}

// drainRun reads a run to its end after its consumer went away, so its
// goroutine ends too.
func drainRun(it *adk.AsyncIterator[*adk.AgentEvent]) {
	for ev, ok := it.Next(); ok; ev, ok = it.Next() {
		if mv := ev.Output; mv != nil && mv.MessageOutput != nil && mv.MessageOutput.MessageStream != nil {
			mv.MessageOutput.MessageStream.Close()
		}
	}
}

// plainResume gives a plain client's answer to every interrupted point of
// the task: its text, to the points its INPUT_REQUIRED message lists.
func plainResume(req *server.ExecRequest) map[string]any {
	text := req.Message.Text()
	inputs := map[string]any{}
	if st := req.Task.Status.Message; st != nil {
		if points, ok, _ := metaValue[[]*adk.InterruptPoint](st.Metadata, KeyPoints); ok {
			for _, p := range points {
				inputs[p.ID] = text
			}
		}
	}
	return inputs
}

// adopt moves the checkpoint of task from to the new task req starts,
// whose run resumes from it: only if the server lost task from (a task it
// still has is resumed by a message on it), only for a task in from's
// context, and under from's checkpoint lock, so that a resume or another
// adoption cannot take it at the same time. Its errors are *a2a.Error.
func (e *Executor) adopt(ctx context.Context, from string, req *server.ExecRequest) error {
	if e.tasks == nil {
		return a2a.Errorf(a2a.CodeUnsupportedOperation, "bridge: resume_task: this agent does not resume lost tasks (its executor is not given the server's tasks, ExecutorConfig.Tasks)")
	}
	claimant := ownerOf(req)
	// Refused requests are turned away before the lock: taking it, they
	// could keep the owner's own resume from running.
	if _, err := e.adoptable(ctx, from, claimant); err != nil {
		return err
	}
	unlock, err := e.store.Lock(ctx, from)
	if errors.Is(err, adk.ErrCheckPointBusy) {
		return a2a.Errorf(a2a.CodeTaskNotFound, "bridge: resume_task: task %s cannot be adopted: another request is resuming or adopting it", from)
	}
	if err != nil {
		return a2a.Errorf(a2a.CodeInternal, "bridge: resume_task: lock the checkpoint of task %s: %v", from, err)
	}
	defer unlock()
	data, err := e.adoptable(ctx, from, claimant) // again: it may have been taken meanwhile
	if err != nil {
		return err
	}
	if err := e.store.inner.Set(ctx, req.TaskID, data); err != nil {
		return a2a.Errorf(a2a.CodeInternal, "bridge: resume_task: move the checkpoint of task %s to task %s: %v", from, req.TaskID, err)
	}
	if err := e.store.inner.Delete(ctx, from); err != nil {
		// Two copies would let a second adoption resume the run again.
		if undo := e.store.inner.Delete(context.WithoutCancel(ctx), req.TaskID); undo != nil {
			e.log.Error("a checkpoint is now saved twice", "task", from, "copy", req.TaskID, "err", undo)
		}
		return a2a.Errorf(a2a.CodeInternal, "bridge: resume_task: move the checkpoint of task %s: %v; try again", from, err)
	}
	return nil
}

// adoptable returns the checkpoint of task from, as stored, if claimant
// may adopt it.
func (e *Executor) adoptable(ctx context.Context, from string, claimant owner) ([]byte, error) {
	switch stored, err := e.tasks.Get(ctx, from); {
	case err == nil && principalKey(stored.Owner) == claimant.Principal:
		return nil, a2a.Errorf(a2a.CodeInvalidParams, "bridge: resume_task: task %s still exists; resume it with a message on it (message.taskId), not with a new task", from)
	case err == nil:
		// Another's task: told apart from none no more than its checkpoint.
		return nil, a2a.Errorf(a2a.CodeTaskNotFound, "bridge: resume_task: no interrupted task %s of context %s to resume (it finished, was resumed already, or never interrupted here)", from, claimant.ContextID)
	case !errors.Is(err, taskstore.ErrNotFound):
		return nil, a2a.Errorf(a2a.CodeInternal, "bridge: resume_task: cannot tell whether task %s is lost: %v", from, err)
	}
	data, ok, err := e.store.inner.Get(ctx, from)
	if err != nil {
		return nil, a2a.Errorf(a2a.CodeInternal, "bridge: resume_task: the checkpoint of task %s: %v", from, err)
	}
	var o owner
	if ok {
		if o, _, err = splitOwner(data); err != nil {
			return nil, a2a.Errorf(a2a.CodeInternal, "bridge: resume_task: the checkpoint of task %s: %v", from, err)
		}
		if o.ContextID == "" {
			e.log.Warn("a checkpoint without an owner cannot be adopted; it was saved before owners were recorded", "task", from)
		}
	}
	// A checkpoint of another context is not told apart from none.
	if !ok || !o.mayAdopt(claimant) {
		return nil, a2a.Errorf(a2a.CodeTaskNotFound, "bridge: resume_task: no interrupted task %s of context %s to resume (it finished, was resumed already, or never interrupted here)", from, claimant.ContextID)
	}
	return data, nil
}

// Cancel drops the checkpoint of a task canceled while it waited for
// input; a running task's run stops with its context.
func (e *Executor) Cancel(ctx context.Context, task *a2a.Task) error {
	if err := e.store.Delete(ctx, task.ID); err != nil {
		return fmt.Errorf("bridge: drop the checkpoint of task %s: %w", task.ID, err)
	}
	return nil
}

// runEnd captures a run's final session values.
type runEnd struct {
	values []byte
}

func (r *runEnd) capture(ctx context.Context) {
	r.values, _ = adk.MarshalSessionValues(ctx) // values are JSON by then: they were checked on the way in or set by agents
}

// changedValues returns the values of after that are new or differ from
// before (both as MarshalSessionValues writes them).
func changedValues(before json.RawMessage, after []byte) json.RawMessage {
	if len(after) == 0 || string(after) == "{}" {
		return nil
	}
	var b, a map[string]json.RawMessage
	_ = json.Unmarshal(before, &b)
	if json.Unmarshal(after, &a) != nil {
		return nil
	}
	changed := map[string]json.RawMessage{}
	for k, v := range a {
		if old, ok := b[k]; !ok || !bytes.Equal(old, v) {
			changed[k] = v
		}
	}
	if len(changed) == 0 {
		return nil
	}
	out, _ := json.Marshal(changed)
	return out
}

// encoder turns a run's ADK events into A2A events.
type encoder struct {
	taskID, contextID string
	yield             func(a2a.Event, error) bool

	// held is an error event kept back until the next event shows it was
	// not the run's last (the last one fails the task).
	held      *adk.AgentEvent
	interrupt *adk.InterruptInfo
	answer    string // the run's last answer text
}

func metaOf(ev *adk.AgentEvent) *eventMeta {
	m := &eventMeta{Agent: ev.AgentName, RunPath: ev.RunPath, Action: ev.Action}
	if ev.Err != nil {
		m.Error = ev.Err.Error()
	}
	if out := ev.Output; out != nil {
		if mv := out.MessageOutput; mv != nil {
			m.Output, m.Role, m.ToolName, m.Streaming = true, mv.Role, mv.ToolName, mv.IsStreaming
		}
		if out.CustomizedOutput != nil {
			m.CustomizedOutput, _ = json.Marshal(out.CustomizedOutput)
		}
	}
	return m
}

func (e *encoder) status(state a2a.TaskState, msg *a2a.Message, meta map[string]any) bool {
	ev := a2a.NewStatusUpdate(e.taskID, e.contextID, state, msg)
	ev.Metadata = meta
	return e.yield(ev, nil)
}

func (e *encoder) event(ev *adk.AgentEvent) bool {
	if act := ev.Action; act != nil && act.Interrupted != nil {
		if e.interrupt == nil {
			e.interrupt = &adk.InterruptInfo{Data: act.Interrupted.Data}
		}
		e.interrupt.Points = append(e.interrupt.Points, act.Interrupted.Points...)
		return true
	}
	if e.held != nil {
		held := e.held
		e.held = nil
		if !e.plain(held) {
			return false
		}
	}
	if ev.Err != nil {
		e.held = ev
		return true
	}
	mv := (*adk.MessageVariant)(nil)
	if ev.Output != nil {
		mv = ev.Output.MessageOutput
	}
	switch {
	case mv != nil && mv.IsStreaming && mv.MessageStream != nil:
		return e.stream(ev, mv.MessageStream)
	case mv != nil && mv.Message != nil && mv.Role == schema.Assistant && mv.Message.Text() != "" && len(mv.Message.ToolCalls) == 0:
		e.answer = mv.Message.Text()
		meta := metaOf(ev)
		rest := *mv.Message
		rest.Content = ""
		meta.Message = &rest
		art := a2a.Artifact{ArtifactID: uuid.NewString(), Name: ev.AgentName, Parts: []a2a.Part{a2a.TextPart(mv.Message.Content)}}
		up := a2a.NewArtifactUpdate(e.taskID, e.contextID, art, false, true)
		up.Metadata = map[string]any{KeyEvent: meta}
		return e.yield(up, nil)
	default:
		return e.plain(ev)
	}
}

// plain sends an event as a WORKING status: its message (if any) rendered
// for a plain reader, the ADK facts in metadata.
func (e *encoder) plain(ev *adk.AgentEvent) bool {
	meta := metaOf(ev)
	var msg *a2a.Message
	if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil {
		meta.Message = ev.Output.MessageOutput.Message
		msg = toA2AMessage(ev.AgentName, meta.Message)
	} else if ev.Err != nil {
		msg = a2a.NewTextMessage(a2a.RoleAgent, fmt.Sprintf("[%s] error: %v", ev.AgentName, ev.Err))
	}
	return e.status(a2a.TaskStateWorking, msg, map[string]any{KeyEvent: meta})
}

// stream sends a streamed message: its text chunks as chunks of one
// artifact, the last one carrying the rest of the message; a message with
// no text goes whole as a status.
func (e *encoder) stream(ev *adk.AgentEvent, s *schema.StreamReader[*schema.Message]) bool {
	defer s.Close()
	meta := metaOf(ev)
	id := uuid.NewString()
	var chunks []*schema.Message
	var pending string // text held back so the last chunk can carry the rest
	sent := false
	var text []byte
	send := func(chunk string, last bool, m *eventMeta) bool {
		art := a2a.Artifact{ArtifactID: id, Name: ev.AgentName, Parts: []a2a.Part{a2a.TextPart(chunk)}}
		up := a2a.NewArtifactUpdate(e.taskID, e.contextID, art, sent, last)
		if m != nil {
			up.Metadata = map[string]any{KeyEvent: m}
		}
		sent = true
		return e.yield(up, nil)
	}
	var streamErr error
	for {
		c, err := s.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				streamErr = err
			}
			break
		}
		chunks = append(chunks, c)
		if c.Content == "" {
			continue
		}
		text = append(text, c.Content...)
		if pending != "" {
			var first *eventMeta
			if !sent {
				first = metaOf(ev) // the first chunk names the agent, the last adds the rest
			}
			if !send(pending, false, first) {
				return false
			}
		}
		pending = c.Content
	}
	whole, err := schema.ConcatMessages(chunks)
	if err != nil && streamErr == nil {
		streamErr = err
	}
	if whole == nil {
		whole = &schema.Message{Role: ev.Output.MessageOutput.Role}
	}
	if streamErr != nil {
		meta.StreamError = streamErr.Error()
	}
	if pending == "" {
		// Nothing to put in an artifact: the message goes whole.
		meta.Message = whole
		return e.status(a2a.TaskStateWorking, toA2AMessage(ev.AgentName, whole), map[string]any{KeyEvent: meta})
	}
	if len(whole.ToolCalls) == 0 && streamErr == nil && whole.Role == schema.Assistant {
		e.answer = string(text)
	}
	rest := *whole
	rest.Content = ""
	meta.Message = &rest
	return send(pending, true, meta)
}

// finish sends the task's last status: INPUT_REQUIRED with the question,
// FAILED with the last error, or COMPLETED.
func (e *encoder) finish(result *resultMeta) {
	switch {
	case e.interrupt != nil:
		if e.held != nil && !e.plain(e.held) {
			return
		}
		result.Interrupt = e.interrupt
		msg := a2a.NewTextMessage(a2a.RoleAgent, infoText(e.interrupt.Data))
		msg.Metadata = map[string]any{KeyPoints: e.interrupt.Points}
		e.status(a2a.TaskStateInputRequired, msg, map[string]any{KeyResult: result})
	case e.held != nil:
		meta := metaOf(e.held)
		msg := a2a.NewTextMessage(a2a.RoleAgent, e.held.Err.Error())
		e.status(a2a.TaskStateFailed, msg, map[string]any{KeyEvent: meta, KeyResult: result})
	default:
		e.status(a2a.TaskStateCompleted, nil, map[string]any{KeyResult: result})
	}
}

// Conversations keeps what was said in each context for an Executor. The
// Executor keys each conversation by its context id and the caller who
// owns it, so that a context id a caller names is theirs alone.
type Conversations interface {
	// Load returns the messages of contextID so far, oldest first.
	Load(ctx context.Context, contextID string) ([]*schema.Message, error)
	// Append adds messages to contextID.
	Append(ctx context.Context, contextID string, msgs ...*schema.Message) error
}

// MemoryConversations keeps conversations in memory, bounded by bytes
// (all of them together, and each one) and by age, so that at any request
// rate they hold at most MaxBytes and outlive their tasks by no more than
// a server keeps tasks. Their size is an estimate (messageBytes): the
// text, tool calls and their arguments, content parts and extras, plus
// about what Go allocates for each. Expired conversations go at the next
// Load or Append, whichever context it names: no goroutine runs for them,
// and a store nobody calls holds at most MaxBytes. The zero value is ready
// to use.
type MemoryConversations struct {
	// MaxBytes bounds all conversations together; past it, those appended
	// to least recently go first. 0 means 64 MiB.
	MaxBytes int64
	// MaxContextBytes bounds one conversation; past it, its oldest
	// messages go first, and a message larger than that is not kept. 0
	// means 1 MiB; it is at most MaxBytes.
	MaxContextBytes int64
	// MaxMessages bounds the messages of one conversation, its oldest
	// going first. 0 means 50.
	MaxMessages int
	// MaxAge is how long a conversation is kept after it was last appended
	// to. 0 means 10 minutes (what a server keeps a finished task by
	// default: a conversation lasts as long as its last task); a negative
	// value keeps conversations until the bounds on bytes push them out.
	MaxAge time.Duration

	now func() time.Time // time.Now; tests set it

	mu    sync.Mutex
	byID  map[string]*list.Element // of *conversation
	order list.List                // least recently appended first
	bytes int64                    // of all conversations
}

type conversation struct {
	id    string
	msgs  []*schema.Message
	sizes []int64 // of msgs, as messageBytes counted them when appended
	bytes int64   // the conversation's, its own overhead included
	last  time.Time
}

// Load returns a copy of the context's messages.
func (m *MemoryConversations) Load(_ context.Context, contextID string) ([]*schema.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(m.clock())
	if el, ok := m.byID[contextID]; ok {
		return slices.Clone(el.Value.(*conversation).msgs), nil
	}
	return nil, nil
}

// Append adds messages, dropping the oldest beyond the bounds.
func (m *MemoryConversations) Append(_ context.Context, contextID string, msgs ...*schema.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock()
	m.expire(now)
	maxBytes, maxContext, maxMessages := m.MaxBytes, m.MaxContextBytes, m.MaxMessages
	if maxBytes <= 0 {
		maxBytes = 64 << 20
	}
	if maxContext <= 0 {
		maxContext = 1 << 20
	}
	maxContext = min(maxContext, maxBytes)
	if maxMessages <= 0 {
		maxMessages = 50
	}
	if m.byID == nil {
		m.byID = map[string]*list.Element{}
	}
	el, ok := m.byID[contextID]
	if ok {
		m.order.MoveToBack(el)
	} else {
		c := &conversation{id: contextID, bytes: conversationOverhead + int64(len(contextID))}
		el = m.order.PushBack(c)
		m.byID[contextID] = el
		m.bytes += c.bytes
	}
	c := el.Value.(*conversation)
	c.last = now
	for _, msg := range msgs {
		n := messageBytes(msg)
		c.msgs, c.sizes = append(c.msgs, msg), append(c.sizes, n)
		c.bytes += n
		m.bytes += n
	}
	drop := 0
	for drop < len(c.msgs) && (len(c.msgs)-drop > maxMessages || c.bytes > maxContext) {
		c.bytes -= c.sizes[drop]
		m.bytes -= c.sizes[drop]
		drop++
	}
	if drop > 0 {
		// Copies, so that the arrays let the dropped messages go.
		c.msgs, c.sizes = slices.Clone(c.msgs[drop:]), slices.Clone(c.sizes[drop:])
	}
	if len(c.msgs) == 0 {
		m.remove(el)
	}
	for m.bytes > maxBytes {
		m.remove(m.order.Front())
	}
	return nil
}

func (m *MemoryConversations) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now()
}

// expire drops the conversations older than MaxAge: the first ones, as
// the order is by last append.
func (m *MemoryConversations) expire(now time.Time) {
	maxAge := m.MaxAge
	if maxAge == 0 {
		maxAge = 10 * time.Minute
	}
	if maxAge < 0 {
		return
	}
	for el := m.order.Front(); el != nil && now.Sub(el.Value.(*conversation).last) >= maxAge; el = m.order.Front() {
		m.remove(el)
	}
}

func (m *MemoryConversations) remove(el *list.Element) {
	c := m.order.Remove(el).(*conversation)
	delete(m.byID, c.id)
	m.bytes -= c.bytes
}

// About what Go allocates for each thing a conversation holds on a 64-bit
// machine besides its strings (structs, slice and map slots), so that many
// small messages count too.
const (
	conversationOverhead = 256 // the map entry, list element and conversation
	messageOverhead      = 192 // a schema.Message and its slots
	partOverhead         = 80  // a schema.ToolCall or schema.ContentPart
)

// messageBytes estimates the memory a message holds.
func messageBytes(m *schema.Message) int64 {
	n := messageOverhead
	if m == nil {
		return int64(n)
	}
	n += len(m.Role) + len(m.Content) + len(m.Name) + len(m.ToolCallID) + len(m.ToolName)
	for _, p := range m.MultiContent {
		n += partOverhead + len(p.Type) + len(p.Text) + len(p.URL) + len(p.MIMEType)
	}
	for _, tc := range m.ToolCalls {
		n += partOverhead + len(tc.ID) + len(tc.Type) + len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	if r := m.ResponseMeta; r != nil {
		n += partOverhead + len(r.FinishReason)
	}
	if m.Extra != nil {
		n += valueBytes(m.Extra, 0)
	}
	return int64(n)
}

// valueBytes estimates the memory of an extra's value: strings, bytes,
// maps and slices by their contents, down to a depth where a value that
// contains itself would stop.
func valueBytes(v any, depth int) int {
	const slot = 16 // an interface value
	if depth > 8 {
		return slot
	}
	switch v := v.(type) {
	case string:
		return slot + len(v)
	case []byte:
		return slot + len(v)
	case json.RawMessage:
		return slot + len(v)
	case map[string]any:
		n := 3 * slot
		for k, e := range v {
			n += slot + len(k) + valueBytes(e, depth+1)
		}
		return n
	case []any:
		n := 2 * slot
		for _, e := range v {
			n += valueBytes(e, depth+1)
		}
		return n
	}
	return slot
}
