package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// RemoteConfig configures a RemoteAgent.
type RemoteConfig struct {
	// URL is the agent's base URL, where its card is served.
	URL string
	// Name, when set, is the agent's name in the caller's tree instead of
	// the card's.
	Name string
	// HTTPClient sends the requests; nil means http.DefaultClient's
	// settings in a client of its own.
	HTTPClient *http.Client
	// Bindings are the protocol bindings the agent may be called over,
	// the preferred first, chosen among those its card lists (see
	// client.Config.Bindings); empty: JSON-RPC, then HTTP+JSON. Add gRPC
	// with grpcclient.Binding.
	Bindings []client.Binding
	// IdleTimeout bounds every silence of a run's stream, from its request
	// on: no response headers, event or keep-alive for this long and the
	// stream counts as cut; it is resumed, and resumptions must hear from
	// the agent within IdleTimeout of the cut, so an agent that hangs ends
	// the run with an error event naming it and its URL within about
	// twice IdleTimeout. 0 means client.DefaultStreamIdleTimeout (20 s;
	// a2amesh agents send keep-alives every 15 s); negative, no bound.
	IdleTimeout time.Duration
	// ResponseTimeout bounds the card fetch (each try, with Wait) and the
	// agent's unary calls; 0 means client.DefaultResponseTimeout (30 s);
	// negative, no bound.
	ResponseTimeout time.Duration
	// AllowedOrigins are origins (scheme://host[:port]) besides URL's on
	// which the agent's card may name its interface; by default the card
	// must name URL's origin, since the URL, not the card, is what the
	// caller trusts.
	AllowedOrigins []string
	// Credentials authenticate the calls to the agent: the caller's own
	// (credentials.Forward, credentials.Exchange), or the calling agent's
	// (credentials.ClientCredentials, credentials.Bearer, ...); nil sends
	// none. A run's calls, the CancelTask that cancelling it sends, and
	// a resume's call all carry the identity of the run's context: an
	// Executor puts the task's caller there (server.ExecRequest.Caller).
	// The card fetch goes without them (see client.Credentials).
	Credentials client.Credentials
	// CancelTimeout bounds the CancelTask sent when the caller's run is
	// cancelled; 0 means 5 s.
	CancelTimeout time.Duration
	// StateTypes name the session value types that come back from the
	// remote agent as themselves.
	StateTypes []adk.StateType
	// Wait is how long NewRemoteAgent keeps trying, with backoff, to reach
	// an agent that is not up yet; 0 means one try. A card whose interface
	// is refused (client.ErrOriginRefused) is not retried.
	Wait time.Duration
	// VerifyCard, when set, checks the agent's card once fetched (its
	// signature, say: cardsign.Verifier.Verify); NewRemoteAgent refuses
	// an agent whose card it fails, naming the agent. A refusal is not
	// retried.
	VerifyCard func(ctx context.Context, card *a2a.AgentCard) error
	// Limit, when set, bounds how often runs call the agent (a new task
	// or a resumed one): beyond it a run fails at once with a retryable
	// error naming the agent, rather than press on another team's agent.
	Limit *Rate
}

// ErrCardRefused is the error of NewRemoteAgent when RemoteConfig.
// VerifyCard refuses the agent's card; test with errors.Is.
var ErrCardRefused = errors.New("its card is refused")

// Rate is a sustained number of calls per second with a burst.
type Rate struct {
	PerSecond float64
	// Burst is how many calls may come at once; 0 means one second's
	// worth (at least 1).
	Burst int
}

// RemoteAgent is an A2A agent used as an adk.Agent. A run sends the
// agent's input, RunPath, session values and transfer targets with one
// streamed message and turns the task's events back into ADK events: the
// remote agent's events keep their agents and RunPaths, its transfer to one
// of the caller's agents ends its run with that transfer, its interrupt
// becomes this agent's (resumed with a message on the same task), its
// session value changes come back, and cancelling the run cancels the task.
// An A2A agent that is not an a2amesh bridge works too: its answers become
// assistant messages, INPUT_REQUIRED an interrupt.
type RemoteAgent struct {
	client        *client.Client
	name, desc    string
	skills        []adk.Skill // its card's
	url           string
	types         []adk.StateType
	cancelTimeout time.Duration
	limit         *limiter // nil: no limit

	mu             sync.Mutex
	subAgents      []adk.Agent
	parent         adk.Agent
	disallowParent bool
}

var (
	_ adk.ResumableAgent = (*RemoteAgent)(nil)
	_ adk.OnSubAgents    = (*RemoteAgent)(nil)
)

// NewRemoteAgent resolves the agent's card at cfg.URL.
func NewRemoteAgent(ctx context.Context, cfg RemoteConfig) (*RemoteAgent, error) {
	ccfg := client.Config{
		HTTPClient:        cfg.HTTPClient,
		Bindings:          cfg.Bindings,
		StreamIdleTimeout: cfg.IdleTimeout,
		ResponseTimeout:   cfg.ResponseTimeout,
		AllowedOrigins:    cfg.AllowedOrigins,
		Credentials:       cfg.Credentials,
	}
	c, err := client.New(ctx, cfg.URL, ccfg)
	if err != nil && cfg.Wait > 0 {
		deadline, pause := time.Now().Add(cfg.Wait), 100*time.Millisecond
		for err != nil && !errors.Is(err, client.ErrOriginRefused) && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("bridge: remote agent at %s: %w", cfg.URL, ctx.Err())
			case <-time.After(pause):
			}
			pause = min(2*pause, 2*time.Second)
			c, err = client.New(ctx, cfg.URL, ccfg)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bridge: remote agent at %s: %w", cfg.URL, err)
	}
	card := c.Card()
	if cfg.VerifyCard != nil {
		if err := cfg.VerifyCard(ctx, card); err != nil {
			c.Close()
			return nil, fmt.Errorf("bridge: remote agent %q at %s: %w: %w", card.Name, cfg.URL, ErrCardRefused, err)
		}
	}
	r := &RemoteAgent{client: c, name: card.Name, desc: card.Description, skills: skillsOfCard(card), url: cfg.URL,
		types: cfg.StateTypes, cancelTimeout: cfg.CancelTimeout}
	if cfg.Limit != nil {
		if cfg.Limit.PerSecond <= 0 {
			c.Close()
			return nil, fmt.Errorf("bridge: remote agent %q at %s: a rate limit needs a positive PerSecond", card.Name, cfg.URL)
		}
		r.limit = newLimiter(*cfg.Limit)
	}
	if cfg.Name != "" {
		r.name = cfg.Name
	}
	if r.cancelTimeout == 0 {
		r.cancelTimeout = 5 * time.Second
	}
	return r, nil
}

func (r *RemoteAgent) Name(context.Context) string        { return r.name }
func (r *RemoteAgent) Description(context.Context) string { return r.desc }

// Skills are the skills of the agent's card, as it was fetched.
func (r *RemoteAgent) Skills(context.Context) []adk.Skill { return r.skills }

// skillsOfCard returns what card declares as adk skills.
func skillsOfCard(card *a2a.AgentCard) []adk.Skill {
	var out []adk.Skill
	for _, s := range card.Skills {
		out = append(out, adk.Skill{ID: s.ID, Name: s.Name, Description: s.Description,
			Tags: slices.Clone(s.Tags), Examples: slices.Clone(s.Examples)})
	}
	return out
}

// URL is the agent's base URL.
func (r *RemoteAgent) URL() string { return r.url }

// Client is the A2A client the agent is called with.
func (r *RemoteAgent) Client() *client.Client { return r.client }

// OnSetSubAgents records agents the remote agent may transfer to.
func (r *RemoteAgent) OnSetSubAgents(_ context.Context, subAgents []adk.Agent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subAgents = subAgents
	return nil
}

// OnSetAsSubAgent records the agent the remote agent may transfer back to.
func (r *RemoteAgent) OnSetAsSubAgent(_ context.Context, parent adk.Agent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.parent != nil {
		return fmt.Errorf("remote agent %s is already a sub-agent of %s", r.name, r.parent.Name(context.Background()))
	}
	r.parent = parent
	return nil
}

// OnDisallowTransferToParent keeps the remote agent from transferring back.
func (r *RemoteAgent) OnDisallowTransferToParent(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.disallowParent = true
	return nil
}

func (r *RemoteAgent) callers(ctx context.Context) []adk.CallerAgent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []adk.CallerAgent
	for _, s := range r.subAgents {
		out = append(out, adk.CallerAgent{Name: s.Name(ctx), Description: s.Description(ctx), Skills: adk.SkillsOf(ctx, s)})
	}
	if r.parent != nil && !r.disallowParent {
		out = append(out, adk.CallerAgent{Name: r.parent.Name(ctx), Description: r.parent.Description(ctx),
			Skills: adk.SkillsOf(ctx, r.parent)})
	}
	return out
}

// remoteState is what an interrupted RemoteAgent keeps: the task to send
// the resume to.
type remoteState struct {
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id"`
}

// Run sends input to the remote agent as a new task.
func (r *RemoteAgent) Run(ctx context.Context, input *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	go func() {
		defer gen.Close()
		if input == nil {
			input = &adk.AgentInput{}
		}
		meta, err := r.runMeta(ctx)
		if err == nil {
			err = r.admit()
		}
		if err != nil {
			gen.Send(r.failure(err))
			return
		}
		meta.Input, meta.Streaming = input.Messages, input.EnableStreaming
		msg := a2a.NewTextMessage(a2a.RoleUser, requestText(input.Messages))
		r.exchange(ctx, msg, meta, gen, false)
	}()
	return it
}

// Resume sends the inputs of the resume to the interrupted remote task.
func (r *RemoteAgent) Resume(ctx context.Context, info *adk.ResumeInfo, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	go func() {
		defer gen.Close()
		var st remoteState
		if err := json.Unmarshal(info.State, &st); err != nil || st.TaskID == "" {
			gen.Send(r.failure(fmt.Errorf("resume: no remote task in the saved state: %v", err)))
			return
		}
		meta, err := r.runMeta(ctx)
		if err == nil {
			err = r.admit()
		}
		if err != nil {
			gen.Send(r.failure(err))
			return
		}
		meta.Resume, meta.Streaming = info.Inputs, info.EnableStreaming
		if meta.Resume == nil {
			meta.Resume = map[string]any{}
		}
		text := infoText(info.Data)
		if info.Data == nil {
			text = "resume"
			for _, v := range info.Inputs {
				if s, ok := v.(string); ok {
					text = s
					break
				}
			}
		}
		msg := a2a.NewTextMessage(a2a.RoleUser, text)
		msg.TaskID, msg.ContextID = st.TaskID, st.ContextID
		if lost := r.exchange(ctx, msg, meta, gen, true); lost {
			// The remote server no longer knows the task (it restarted and
			// kept its tasks in memory), but its checkpoint outlives it: a
			// new task resumes the run from there.
			msg.TaskID, meta.ResumeTask = "", st.TaskID
			r.exchange(ctx, msg, meta, gen, false)
		}
	}()
	return it
}

func (r *RemoteAgent) runMeta(ctx context.Context) (*runMeta, error) {
	values, err := adk.MarshalSessionValues(ctx, r.types...)
	if err != nil {
		return nil, fmt.Errorf("session values: %w", err)
	}
	return &runMeta{RunPath: adk.CurrentRunPath(ctx), Callers: r.callers(ctx), SessionValues: values}, nil
}

// requestText is what a plain A2A agent is asked: the person's request
// (adk.UserRequest), never the context about the caller's agents that
// follows it after a transfer.
func requestText(msgs []*schema.Message) string {
	if m := adk.UserRequest(msgs); m != nil {
		return m.Text()
	}
	return "(no request)"
}

func (r *RemoteAgent) failure(err error) *adk.AgentEvent {
	return &adk.AgentEvent{AgentName: r.name, Err: fmt.Errorf("remote agent %s at %s: %w", r.name, r.url, err)}
}

// exchange sends msg and turns the task's events into ADK events until the
// task ends or waits for input. The stream is not tied to ctx: when ctx is
// cancelled, the remote task is cancelled (as soon as its id is known) and
// the stream ends with the task. With mayLose, a follow-up to a task the
// server does not know reports lost instead of failing.
func (r *RemoteAgent) exchange(ctx context.Context, msg *a2a.Message, meta *runMeta, gen *adk.AsyncGenerator[*adk.AgentEvent], mayLose bool) (lost bool) {
	var failed error // what the run fails with, for the hop's span and metric
	ctx, endHop := r.hop(ctx, "SendStreamingMessage")
	d := &decoder{agent: r, ctx: ctx, gen: gen, streams: map[string]*schema.StreamWriter[*schema.Message]{},
		taskID: msg.TaskID, contextID: msg.ContextID}
	defer func() { endHop(d.taskID, failed) }()
	defer d.closeStreams(errors.New("the remote stream ended early"))
	streamCtx, stopStream := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStream()
	var c canceler
	c.taskID = msg.TaskID
	stopWatching := context.AfterFunc(ctx, func() {
		if id := c.cancelled(); id != "" {
			r.cancelRemote(ctx, id)
		}
		// Give the task cancelTimeout to end on its own, then stop waiting.
		time.AfterFunc(r.cancelTimeout, stopStream)
	})
	defer stopWatching()

	req := &a2a.SendMessageRequest{Message: msg, Metadata: map[string]any{KeyRun: meta}}
	seen := false
	for refusals := 0; ; refusals++ {
		again := false
		for ev, err := range r.client.SendStreamingMessage(streamCtx, req) {
			if err != nil {
				if mayLose && !seen && errors.Is(err, a2a.ErrTaskNotFound) {
					failed = err
					return true
				}
				// Refused for now (the agent's replica is draining, or at
				// its limits) before anything was done: send it again, on
				// a new connection (a draining server closes them), which
				// an address in front of replicas may take to another.
				if e := a2a.AsError(err); !seen && e.RetryAfter > 0 && refusals < maxRefusals && pause(ctx, min(e.RetryAfter, maxRefusalPause)) {
					again = true
					break
				}
				failed = err
				if ctx.Err() != nil {
					gen.Send(r.failure(fmt.Errorf("cancelled: %w", ctx.Err())))
				} else {
					gen.Send(r.failure(err))
				}
				return
			}
			seen = true
			done := d.event(ev.Event)
			if id := c.learn(d.taskID); id != "" {
				r.cancelRemote(ctx, id) // cancelled before the task's id was known
			}
			if done {
				return false
			}
		}
		if !again {
			break
		}
	}
	if !d.ended {
		failed = errors.New("the task's stream ended before the task did")
		gen.Send(r.failure(failed))
	}
	return false
}

// maxRefusals is how many times in a row a run's message refused with
// retry guidance (a2a.Error.RetryAfter) is sent again, waiting as asked
// but at most maxRefusalPause each time.
const (
	maxRefusals     = 3
	maxRefusalPause = 5 * time.Second
)

// pause waits d, or until ctx ends; it reports whether it waited d.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// canceler remembers whether a run was cancelled and which remote task to
// cancel; the cancellation and the task's id may come in either order.
type canceler struct {
	mu        sync.Mutex
	taskID    string
	cancel    bool
	requested bool
}

// cancelled records the cancellation and returns the task to cancel, if
// known.
func (c *canceler) cancelled() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancel = true
	if c.taskID != "" && !c.requested {
		c.requested = true
		return c.taskID
	}
	return ""
}

// learn records the task's id and returns it if a cancellation is waiting
// for it.
func (c *canceler) learn(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taskID == "" {
		c.taskID = id
	}
	if c.cancel && c.taskID != "" && !c.requested {
		c.requested = true
		return c.taskID
	}
	return ""
}

// cancelRemote cancels the remote task of a run its caller cancelled: the
// remote agent must not go on working for nobody. run is the run's
// context, cancelled by now: the CancelTask goes with its values, the
// identity the task was made with, since the remote agent lets only the
// task's owner cancel it.
func (r *RemoteAgent) cancelRemote(run context.Context, taskID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run), r.cancelTimeout)
	defer cancel()
	_, _ = r.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: taskID}) // best effort: the task may have ended meanwhile
}

// decoder turns one task's A2A events into ADK events.
type decoder struct {
	agent             *RemoteAgent
	ctx               context.Context
	gen               *adk.AsyncGenerator[*adk.AgentEvent]
	taskID, contextID string
	streams           map[string]*schema.StreamWriter[*schema.Message] // open artifact streams by artifact id
	ended             bool
}

func (d *decoder) closeStreams(err error) {
	for id, w := range d.streams {
		w.Fail(err)
		delete(d.streams, id)
	}
}

// adkEvent rebuilds the ADK event m describes, with msg as its message
// (nil for none).
func (d *decoder) adkEvent(m *eventMeta, msg *schema.Message) *adk.AgentEvent {
	ev := &adk.AgentEvent{AgentName: m.Agent, RunPath: m.RunPath, Action: m.Action}
	if ev.AgentName == "" {
		ev.AgentName = d.agent.name
	}
	if m.Output || len(m.CustomizedOutput) > 0 {
		ev.Output = &adk.AgentOutput{}
		if m.Output && msg != nil {
			ev.Output.MessageOutput = &adk.MessageVariant{Message: msg, Role: m.Role, ToolName: m.ToolName}
			if m.Streaming {
				ev.Output.MessageOutput.IsStreaming, ev.Output.MessageOutput.Message = true, nil
				ev.Output.MessageOutput.MessageStream = schema.FromSlice([]*schema.Message{msg})
			}
		}
		if len(m.CustomizedOutput) > 0 {
			var v any
			if err := json.Unmarshal(m.CustomizedOutput, &v); err == nil {
				ev.Output.CustomizedOutput = v
			}
		}
	}
	if m.Error != "" {
		ev.Err = fmt.Errorf("remote agent %s at %s: %s", ev.AgentName, d.agent.url, m.Error)
	}
	return ev
}

// event handles one A2A event; done is true when the task ended or waits.
func (d *decoder) event(ev a2a.Event) (done bool) {
	switch e := ev.(type) {
	case *a2a.Task:
		d.taskID, d.contextID = e.ID, e.ContextID
		if st := e.Status; st.State != a2a.TaskStateSubmitted && st.State != a2a.TaskStateWorking {
			return d.final(&a2a.TaskStatusUpdateEvent{TaskID: e.ID, ContextID: e.ContextID, Status: st, Metadata: e.Metadata})
		}
	case *a2a.Message:
		// A direct reply: no task.
		d.gen.Send(&adk.AgentEvent{AgentName: d.agent.name, Output: &adk.AgentOutput{MessageOutput: &adk.MessageVariant{
			Message: fromA2AMessage(e), Role: schema.Assistant}}})
		d.ended = true
		return true
	case *a2a.TaskStatusUpdateEvent:
		d.taskID, d.contextID = e.TaskID, e.ContextID
		switch e.Status.State {
		case a2a.TaskStateSubmitted, a2a.TaskStateWorking:
			d.working(e)
		default:
			return d.final(e)
		}
	case *a2a.TaskArtifactUpdateEvent:
		d.artifact(e)
	}
	return false
}

func (d *decoder) working(e *a2a.TaskStatusUpdateEvent) {
	m, ok, err := metaValue[eventMeta](e.Metadata, KeyEvent)
	switch {
	case err != nil:
		d.gen.Send(d.agent.failure(fmt.Errorf("a bad event: %w", err)))
	case ok:
		d.gen.Send(d.adkEvent(&m, m.Message))
	case e.Status.Message != nil && e.Status.Message.Text() != "":
		msg := fromA2AMessage(e.Status.Message)
		msg.Role = schema.Assistant
		d.gen.Send(&adk.AgentEvent{AgentName: d.agent.name, Output: &adk.AgentOutput{MessageOutput: &adk.MessageVariant{
			Message: msg, Role: schema.Assistant}}})
	}
}

func (d *decoder) artifact(e *a2a.TaskArtifactUpdateEvent) {
	m, hasMeta, err := metaValue[eventMeta](e.Metadata, KeyEvent)
	if err != nil {
		d.gen.Send(d.agent.failure(fmt.Errorf("a bad event: %w", err)))
		return
	}
	text := e.Artifact.Text()
	id := e.Artifact.ArtifactID
	if w, open := d.streams[id]; open {
		if !e.Append {
			// The chunk replaces the artifact: the message streamed so
			// far ends here, and this chunk starts the next.
			delete(d.streams, id)
			w.Close()
		} else {
			if text != "" {
				w.Send(&schema.Message{Role: schema.Assistant, Content: text})
			}
			if e.LastChunk {
				d.endStream(id, w, &m)
			}
			return
		}
	}
	if !hasMeta {
		m = eventMeta{Agent: d.agent.name, Output: true, Role: schema.Assistant, Streaming: !e.LastChunk}
	}
	if e.LastChunk && !m.Streaming {
		msg := &schema.Message{Role: schema.Assistant}
		if m.Message != nil {
			cp := *m.Message
			msg = &cp
		}
		msg.Content = text
		d.gen.Send(d.adkEvent(&m, msg))
		return
	}
	// A streamed message: its ADK event goes out now with a stream the
	// following chunks feed.
	r, w := schema.Pipe[*schema.Message]()
	ev := d.adkEvent(&m, nil)
	ev.Output = &adk.AgentOutput{MessageOutput: &adk.MessageVariant{IsStreaming: true, MessageStream: r, Role: m.Role, ToolName: m.ToolName}}
	if ev.Output.MessageOutput.Role == "" {
		ev.Output.MessageOutput.Role = schema.Assistant
	}
	d.gen.Send(ev)
	if text != "" {
		w.Send(&schema.Message{Role: schema.Assistant, Content: text})
	}
	if e.LastChunk {
		d.endStream(id, w, &m)
		return
	}
	d.streams[id] = w
}

// endStream ends an artifact stream with the rest of the message its last
// chunk's metadata carries.
func (d *decoder) endStream(id string, w *schema.StreamWriter[*schema.Message], m *eventMeta) {
	delete(d.streams, id)
	if m.Message != nil && (len(m.Message.ToolCalls) > 0 || m.Message.ResponseMeta != nil || len(m.Message.Extra) > 0 ||
		len(m.Message.MultiContent) > 0) {
		rest := *m.Message
		rest.Content = ""
		w.Send(&rest)
	}
	if m.StreamError != "" {
		w.Fail(errors.New(m.StreamError))
		return
	}
	w.Close()
}

// final handles the task's last status.
func (d *decoder) final(e *a2a.TaskStatusUpdateEvent) bool {
	d.ended = true
	result, _, err := metaValue[resultMeta](e.Metadata, KeyResult)
	if err != nil {
		d.gen.Send(d.agent.failure(fmt.Errorf("a bad result: %w", err)))
		return true
	}
	if len(result.SessionValues) > 0 {
		vals, err := adk.UnmarshalSessionValues(result.SessionValues, d.agent.types...)
		if err != nil {
			d.gen.Send(d.agent.failure(err))
			return true
		}
		adk.AddSessionValues(d.ctx, vals)
	}
	text := ""
	if e.Status.Message != nil {
		text = e.Status.Message.Text()
	}
	switch e.Status.State {
	case a2a.TaskStateCompleted:
		if _, ours := e.Metadata[KeyResult]; !ours && text != "" {
			d.gen.Send(&adk.AgentEvent{AgentName: d.agent.name, Output: &adk.AgentOutput{MessageOutput: &adk.MessageVariant{
				Message: schema.AssistantMessage(text, nil), Role: schema.Assistant}}})
		}
	case a2a.TaskStateInputRequired:
		info := result.Interrupt
		if info == nil {
			info = &adk.InterruptInfo{Data: text}
		}
		ev := adk.NewInterruptEvent(info.Data, remoteState{TaskID: d.taskID, ContextID: d.contextID})
		ev.AgentName = d.agent.name
		ev.Action.Interrupted.Points = info.Points
		d.gen.Send(ev)
	case a2a.TaskStateFailed:
		if m, ok, _ := metaValue[eventMeta](e.Metadata, KeyEvent); ok {
			d.gen.Send(d.adkEvent(&m, nil))
		} else {
			d.gen.Send(d.agent.failure(fmt.Errorf("task %s failed: %s", d.taskID, text)))
		}
	default:
		d.gen.Send(d.agent.failure(fmt.Errorf("task %s ended %s: %s", d.taskID, e.Status.State, text)))
	}
	return true
}
