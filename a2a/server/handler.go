// Package server implements the A2A protocol's semantics independently of
// any wire: the Handler validates requests, creates and tracks tasks, runs
// the agent (an AgentExecutor) for each message, records every task event
// in order, serves blocking, non-blocking and streaming sends, resubscription
// from any event, cancellation, push notifications and the agent cards.
// Protocol bindings (JSON-RPC over Hertz, gRPC over Kitex) decode requests,
// call the Handler and encode what it returns.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/telemetry"
)

// Config configures a Handler. Card and Executor are required; the zero
// value of every other field is a working default.
type Config struct {
	// Card is the public agent card. Its capabilities decide which
	// operations are served.
	Card *a2a.AgentCard
	// ExtendedCard is returned by GetExtendedAgentCard when the card
	// declares capabilities.extendedAgentCard.
	ExtendedCard *a2a.AgentCard
	Executor     AgentExecutor

	// Tasks, Events and PushConfigs default to in-memory stores. A Tasks
	// that is a taskstore.Committer holds the events too: Events then
	// defaults to, and must be, its Events(), and each commit is one write.
	Tasks       taskstore.Store
	Events      eventlog.Log
	PushConfigs push.ConfigStore
	// PushSender delivers push notifications; nil means a default Sender,
	// whose SSRF guard refuses private and loopback webhooks, whose
	// bounds keep webhooks that never answer from holding the server's
	// connections, and which reports to Telemetry.
	PushSender *push.Sender
	// Replicas reaches the other replicas that share these stores, so that a
	// cancel reaches the run wherever it runs; nil for a single replica.
	Replicas Replicas

	// Retention is how long a task is kept after reaching a terminal
	// state (Limits bounds how many are kept); 0 means 10 minutes. A
	// negative value means the Handler evicts nothing: the stores drop
	// finished tasks themselves, or they are kept for ever.
	Retention time.Duration
	// CancelTimeout bounds how long CancelTask waits for a running
	// executor to stop before marking the task canceled anyway; 0 means
	// 10 seconds.
	CancelTimeout time.Duration
	// CommitDelay is how long a run's event may wait to be committed (to
	// the log and the task snapshot) together with the events that follow
	// it: one write for a group rather than one per event, which is what a
	// store across the network (JetStream) charges for. An event that
	// settles the task commits its group at once, so a quick run costs
	// one write whatever its number of events; a stream sees an event at
	// most CommitDelay late. Nothing is visible (to streams, GetTask, other
	// replicas) before it is committed. 0 commits each event at once.
	CommitDelay time.Duration
	// Limits bound what clients can make the Handler hold and do at once.
	Limits Limits
	// Gate authenticates and authorizes every request the bindings pass
	// through Admit; nil admits everyone as the anonymous caller. Either
	// way each task belongs to the caller who created it, in the tenant
	// the request named, and other callers do not see it.
	Gate *auth.Gate
	// StoreOutage is how long a running task waits for stores that cannot
	// be reached (eventlog.ErrUnavailable, taskstore.ErrUnavailable), such
	// as a NATS server restarting, before its run fails; 0 means one
	// minute. New requests fail at once with the store's error instead.
	StoreOutage time.Duration
	// Telemetry reports the Handler's spans and metrics, and is carried in
	// each run's context (telemetry.FromContext) to the agent's model and
	// tool calls; nil: none.
	Telemetry *telemetry.Telemetry
	Logger    *slog.Logger
}

// Handler serves the A2A operations. It is safe for concurrent use. Close
// it to stop the agent runs and push deliveries it owns.
type Handler struct {
	card     *a2a.AgentCard
	extended *a2a.AgentCard
	exec     AgentExecutor
	tasks    taskstore.Store
	events   eventlog.Log
	journal  taskstore.Committer // tasks, when it holds events too
	pushCfgs push.ConfigStore
	sender   *push.Sender
	replicas Replicas
	gate     *auth.Gate
	tel      *telemetry.Telemetry
	log      *slog.Logger

	retention     time.Duration
	commitDelay   time.Duration
	cancelTimeout time.Duration
	storeOutage   time.Duration
	limits        Limits

	// generationsOffered: the card declares the generation extension
	// (generation.go), whose long polls wait up to generationWait.
	generationsOffered bool
	generationWait     time.Duration

	// runs holds a token per run going on (MaxRuns); nil for no limit.
	runs   chan struct{}
	drain  drainState
	queued atomic.Int64 // messages waiting for a run

	// base is the parent of every run's context; Close cancels it.
	base   context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	slots  map[string]*slot
	closed bool

	// The tasks held, for the limits (see janitor.go); guarded by mu.
	live          map[string]liveTask
	finished      []finished // in the order they finished
	finishedBytes int64
	waiting       []waitingTask // in the order they began to wait
	sweepTimer    *time.Timer
	sweepArmed    bool
	sweepAt       time.Time
}

// New returns a Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Card == nil {
		return nil, errors.New("server: Config.Card is required")
	}
	if cfg.Executor == nil {
		return nil, errors.New("server: Config.Executor is required")
	}
	h := &Handler{
		card: cfg.Card, extended: cfg.ExtendedCard, exec: cfg.Executor,
		tasks: cfg.Tasks, events: cfg.Events, pushCfgs: cfg.PushConfigs, sender: cfg.PushSender,
		replicas: cfg.Replicas, gate: cfg.Gate, tel: cfg.Telemetry, log: cfg.Logger, retention: cfg.Retention, commitDelay: cfg.CommitDelay, cancelTimeout: cfg.CancelTimeout, storeOutage: cfg.StoreOutage,
		limits: cfg.Limits.withDefaults(), slots: make(map[string]*slot), live: make(map[string]liveTask),
		generationsOffered: offersGenerations(cfg.Card), generationWait: a2a.GenerationWaitMax,
	}
	if h.limits.MaxRuns > 0 {
		h.runs = make(chan struct{}, h.limits.MaxRuns)
	}
	if h.tasks == nil {
		h.tasks = new(taskstore.Memory)
	}
	if c, ok := h.tasks.(taskstore.Committer); ok {
		if h.events == nil {
			h.events = c.Events()
		}
		if h.events != c.Events() {
			return nil, errors.New("server: Config.Tasks commits to its own event log: Config.Events must be that log")
		}
		h.journal = c
	}
	if h.events == nil {
		h.events = new(eventlog.Memory)
	}
	if h.pushCfgs == nil {
		h.pushCfgs = new(push.Memory)
	}
	if h.sender == nil {
		h.sender = &push.Sender{Telemetry: cfg.Telemetry}
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.retention == 0 {
		h.retention = 10 * time.Minute
	}
	if h.cancelTimeout == 0 {
		h.cancelTimeout = 10 * time.Second
	}
	if h.storeOutage == 0 {
		h.storeOutage = time.Minute
	}
	h.base, h.stop = context.WithCancel(context.Background())
	h.drain.init()
	return h, nil
}

// Close cancels every agent run and push delivery the Handler started and
// waits for them to end, or for ctx to be done; then it ends the streams
// still open, as EndStreams does.
func (h *Handler) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	if h.sweepArmed && h.sweepTimer.Stop() {
		h.sweepArmed = false
		h.wg.Done()
	}
	h.mu.Unlock()
	h.stop()
	// Once the runs have recorded their ends, a stream still open has
	// nothing more to wait for here.
	defer h.drain.endStreams()
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: close: runs still active: %w", ctx.Err())
	}
}

// admit counts a goroutine of the Handler's (a run or a push delivery)
// unless the Handler is closing. Counting under mu means Close never waits
// while a goroutine is being added.
func (h *Handler) admit() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	return true
}

// Card returns the public agent card.
func (h *Handler) Card() *a2a.AgentCard { return h.card }

// GetExtendedAgentCard returns the extended card.
func (h *Handler) GetExtendedAgentCard(ctx context.Context, _ *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	if h.gate != nil && auth.FromContext(ctx) == nil {
		return nil, a2a.Errorf(a2a.CodeUnauthenticated, "the extended agent card is for authenticated callers only")
	}
	if !h.card.Capabilities.ExtendedAgentCard {
		return nil, a2a.Errorf(a2a.CodeUnsupportedOperation, "this agent has no extended agent card (its card does not declare capabilities.extendedAgentCard)")
	}
	if h.extended == nil {
		return nil, a2a.Errorf(a2a.CodeExtendedAgentCardNotConfigured, "this agent declares an extended agent card but none is configured")
	}
	return h.extended, nil
}

// GetTask returns a task's current snapshot. With the generation extension
// active it carries its generation, and a request with currentGeneration
// waits for the task to pass it (awaitGeneration).
func (h *Handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if err := checkHistoryLength(req.HistoryLength, "historyLength"); err != nil {
		return nil, err
	}
	if err := h.checkID("tenant", req.Tenant); err != nil {
		return nil, err
	}
	ctx, err := h.scope(ctx, req.Tenant)
	if err != nil {
		return nil, err
	}
	e, err := h.getTask(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	if !h.generations(ctx) {
		return view(e.Task, req.HistoryLength, true), nil
	}
	if g := req.CurrentGeneration; g != nil {
		if e, err = h.awaitGeneration(ctx, e, *g); err != nil {
			return nil, err
		}
	}
	return withGeneration(view(e.Task, req.HistoryLength, true), e.Seq), nil
}

// ListTasks returns a page of tasks, most recently updated first. Without
// historyLength each task comes with its last ListHistoryLength messages,
// and a page stops short of pageSize where the next task would take it past
// Limits.MaxListBytes. A pageSize of 0 is the default of 50, as Google's
// API conventions (AIP-158) have it: a2a-go's gRPC client sends 0 when its
// caller gives none.
func (h *Handler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	size := 50
	if req.PageSize != nil && *req.PageSize != 0 {
		size = *req.PageSize
		if size < 1 || size > 100 {
			return nil, a2a.Errorf(a2a.CodeInvalidParams, "pageSize must be between 1 and 100, got %d", size)
		}
	}
	if err := checkHistoryLength(req.HistoryLength, "historyLength"); err != nil {
		return nil, err
	}
	if req.Status != "" && !req.Status.Valid() {
		return nil, a2a.Errorf(a2a.CodeInvalidParams, "status %q is not a task state", req.Status)
	}
	if err := h.checkIDs("tenant", req.Tenant, "contextId", req.ContextID); err != nil {
		return nil, err
	}
	if len(req.PageToken) > 4*h.limits.MaxIDBytes {
		return nil, a2a.Errorf(a2a.CodeInvalidParams, "pageToken is %d bytes long, longer than any this server issues; pass the nextPageToken of the previous page", len(req.PageToken))
	}
	history := req.HistoryLength
	if history == nil {
		n := ListHistoryLength
		history = &n
	}
	ctx, err := h.scope(ctx, req.Tenant)
	if err != nil {
		return nil, err
	}
	owner, _ := ownerOf(ctx)
	q := taskstore.Query{Owner: owner, ContextID: req.ContextID, State: req.Status, PageSize: size, PageToken: req.PageToken}
	if req.StatusTimestampAfter != nil {
		q.UpdatedAfter = *req.StatusTimestampAfter
	}
	page, err := h.tasks.List(ctx, q)
	if err != nil {
		if errors.Is(err, taskstore.ErrInvalidPageToken) {
			return nil, a2a.Errorf(a2a.CodeInvalidParams, "pageToken: %v; pass the nextPageToken of the previous page, or omit it for the first page", err)
		}
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	resp := &a2a.ListTasksResponse{
		Tasks: make([]*a2a.Task, 0, len(page.Tasks)), NextPageToken: page.NextPageToken,
		PageSize: size, TotalSize: page.Total,
	}
	bytes := 0
	for i, t := range page.Tasks {
		v := view(t, history, req.IncludeArtifacts)
		if bytes += sizeOfTask(v); bytes > h.limits.MaxListBytes && i > 0 {
			// The rest of the page waits for the next call.
			resp.NextPageToken = taskstore.CursorOf(page.Tasks[i-1]).Token()
			break
		}
		resp.Tasks = append(resp.Tasks, v)
	}
	return resp, nil
}

// getTask loads a task, mapping a missing one, and one the caller of ctx
// may not see, to a task-not-found error.
func (h *Handler) getTask(ctx context.Context, id string) (taskstore.Entry, error) {
	if id == "" {
		return taskstore.Entry{}, a2a.Errorf(a2a.CodeInvalidParams, "id is required: name the task")
	}
	if err := h.checkID("id", id); err != nil {
		return taskstore.Entry{}, err
	}
	h.noteTask(ctx, id, "")
	e, err := h.load(ctx, id)
	if err == nil && !visible(ctx, e) {
		h.audit(ctx, "task "+id+" is another's")
		err = taskstore.ErrNotFound
	}
	if errors.Is(err, taskstore.ErrNotFound) {
		// Another's task is not found either: the answer must not tell
		// that it exists.
		return taskstore.Entry{}, a2a.Errorf(a2a.CodeTaskNotFound, "task %q not found (it may never have existed or may have expired)", id)
	}
	if err != nil {
		return e, fmt.Errorf("load task %s: %w", id, err)
	}
	return e, nil
}

// view returns the task as a reply shows it: history cut to its last
// historyLength messages (none for 0) and artifacts dropped when not
// wanted. The snapshot itself is shared, so changes go to a copy.
func view(t *a2a.Task, historyLength *int, artifacts bool) *a2a.Task {
	cutHistory := historyLength != nil && *historyLength < len(t.History)
	if !cutHistory && (artifacts || t.Artifacts == nil) {
		return t
	}
	v := *t
	if cutHistory {
		v.History = t.History[len(t.History)-*historyLength:]
		if len(v.History) == 0 {
			v.History = nil
		}
	}
	if !artifacts {
		v.Artifacts = nil
	}
	return &v
}

func checkHistoryLength(n *int, field string) error {
	if n != nil && *n < 0 {
		return a2a.Errorf(a2a.CodeInvalidParams, "%s must not be negative, got %d (omit it for all history, 0 for none)", field, *n)
	}
	return nil
}

// checkExtensions refuses a call that does not ask for every extension the
// card marks as required.
func (h *Handler) checkExtensions(ctx context.Context) error {
	var missing []string
	for _, ext := range h.card.Capabilities.Extensions {
		if ext.Required && !slices.Contains(CallInfoFrom(ctx).Extensions, ext.URI) {
			missing = append(missing, ext.URI)
		}
	}
	if len(missing) > 0 {
		return a2a.Errorf(a2a.CodeExtensionSupportRequired, "this agent requires the extensions %s; list them in the A2A-Extensions header", strings.Join(missing, ", "))
	}
	return nil
}
