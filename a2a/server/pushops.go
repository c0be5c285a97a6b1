package server

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/push"
)

func (h *Handler) checkPush() error {
	if !h.card.Capabilities.PushNotifications {
		return a2a.Errorf(a2a.CodePushNotificationNotSupported, "this agent does not send push notifications (its card does not declare capabilities.pushNotifications)")
	}
	return nil
}

// CreateTaskPushNotificationConfig registers a webhook for a task's events.
// It is called by the 0.3 "set" too, which replaces a config of the same id.
func (h *Handler) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	if err := h.checkPush(); err != nil {
		return nil, err
	}
	if err := h.checkIDs("tenant", req.Tenant, "taskId", req.TaskID, "id", req.ID); err != nil {
		return nil, err
	}
	ctx, err := h.scope(ctx, req.Tenant)
	if err != nil {
		return nil, err
	}
	if req.URL == "" {
		return nil, a2a.Errorf(a2a.CodeInvalidParams, "url is required: the webhook to notify")
	}
	if err := h.sender.Guard.CheckURL(req.URL); err != nil {
		return nil, a2a.Errorf(a2a.CodeInvalidParams, "url: %v", err)
	}
	e, err := h.getTask(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	c := push.Config{TaskPushNotificationConfig: *req, ProtocolVersion: CallInfoFrom(ctx).ProtocolVersion}
	if c.ID == "" {
		c.ID = a2a.NewID()
	}
	s := h.slotRef(e.Task.ID)
	defer h.slotUnref(s)
	// Under the task's lock, so creates racing each other cannot all pass
	// the cap. A follow-up send's config is checked before its run takes
	// the task (checkSend): a create racing it may pass the cap by one,
	// and notify still bounds the fan-out.
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := h.checkPushCap(ctx, c.TaskID, c.ID, ""); err != nil {
		return nil, err
	}
	if err := h.pushCfgs.Save(ctx, c); err != nil {
		return nil, fmt.Errorf("save push notification config: %w", err)
	}
	if !e.Task.Status.State.Settled() {
		h.ensurePushLocked(s, max(e.Seq, s.lastSeq))
	}
	return &c.TaskPushNotificationConfig, nil
}

// checkPushCap refuses a config that would be one too many for the task
// (Limits.MaxPushConfigsPerTask); one that replaces a config of the same id is
// not one more. field, when set, names the config in the error.
func (h *Handler) checkPushCap(ctx context.Context, taskID, id, field string) error {
	cfgs, err := h.pushCfgs.List(ctx, taskID)
	if err != nil {
		return fmt.Errorf("list push notification configs: %w", err)
	}
	if len(cfgs) < h.limits.MaxPushConfigsPerTask || id != "" && slices.ContainsFunc(cfgs, func(c push.Config) bool { return c.ID == id }) {
		return nil
	}
	if field != "" {
		field += ": "
	}
	return a2a.Errorf(a2a.CodeInvalidParams, "%stask %q already has %d push notification configs, the most this server keeps for a task; delete one of them first (or replace one by giving its id)", field, taskID, len(cfgs))
}

// GetTaskPushNotificationConfig returns one webhook of a task. A 0.3 "get"
// may leave the id empty: it then means the task's default config (the one
// whose id is the task's), or its only one.
func (h *Handler) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	if err := h.checkPush(); err != nil {
		return nil, err
	}
	if err := h.checkIDs("tenant", req.Tenant, "taskId", req.TaskID, "id", req.ID); err != nil {
		return nil, err
	}
	ctx, err := h.scope(ctx, req.Tenant)
	if err != nil {
		return nil, err
	}
	if _, err := h.getTask(ctx, req.TaskID); err != nil {
		return nil, err
	}
	id := req.ID
	if id == "" {
		cfgs, err := h.pushCfgs.List(ctx, req.TaskID)
		if err != nil {
			return nil, fmt.Errorf("list push notification configs: %w", err)
		}
		if len(cfgs) == 1 {
			return &cfgs[0].TaskPushNotificationConfig, nil
		}
		id = req.TaskID
	}
	c, err := h.pushCfgs.Get(ctx, req.TaskID, id)
	if errors.Is(err, push.ErrNotFound) {
		return nil, a2a.Errorf(a2a.CodeTaskNotFound, "task %q has no push notification config %q", req.TaskID, id)
	}
	if err != nil {
		return nil, fmt.Errorf("get push notification config: %w", err)
	}
	return &c.TaskPushNotificationConfig, nil
}

// ListTaskPushNotificationConfigs returns all webhooks of a task, in one page.
func (h *Handler) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	if err := h.checkPush(); err != nil {
		return nil, err
	}
	if err := h.checkIDs("tenant", req.Tenant, "taskId", req.TaskID); err != nil {
		return nil, err
	}
	ctx, err := h.scope(ctx, req.Tenant)
	if err != nil {
		return nil, err
	}
	if _, err := h.getTask(ctx, req.TaskID); err != nil {
		return nil, err
	}
	cfgs, err := h.pushCfgs.List(ctx, req.TaskID)
	if err != nil {
		return nil, fmt.Errorf("list push notification configs: %w", err)
	}
	resp := &a2a.ListTaskPushNotificationConfigsResponse{Configs: make([]a2a.TaskPushNotificationConfig, len(cfgs))}
	for i := range cfgs {
		resp.Configs[i] = cfgs[i].TaskPushNotificationConfig
	}
	return resp, nil
}

// DeleteTaskPushNotificationConfig removes a webhook; deleting one that is
// gone succeeds.
func (h *Handler) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	if err := h.checkPush(); err != nil {
		return err
	}
	if err := h.checkIDs("tenant", req.Tenant, "taskId", req.TaskID, "id", req.ID); err != nil {
		return err
	}
	ctx, err := h.scope(ctx, req.Tenant)
	if err != nil {
		return err
	}
	if _, err := h.getTask(ctx, req.TaskID); err != nil {
		return err
	}
	if req.ID == "" {
		return a2a.Errorf(a2a.CodeInvalidParams, "id is required: name the push notification config to delete")
	}
	if err := h.pushCfgs.Delete(ctx, req.TaskID, req.ID); err != nil {
		return fmt.Errorf("delete push notification config: %w", err)
	}
	return nil
}

// ensurePushLocked starts delivering the task's events after seq after to
// its webhooks, unless a delivery goroutine already runs for it. s.mu is
// held.
func (h *Handler) ensurePushLocked(s *slot, after uint64) {
	if s.pushing || !h.admit() {
		return
	}
	s.pushing = true
	h.mu.Lock()
	s.refs++
	h.mu.Unlock()
	go h.deliver(s, after)
}

// deliver sends each logged event of the task to every webhook registered
// when it is sent, in order, until the task settles. It reads the configs
// for every event, so a deleted config gets nothing more.
func (h *Handler) deliver(s *slot, after uint64) {
	defer h.wg.Done()
	defer h.slotUnref(s)
	ctx := h.base
	for {
		for e, err := range h.events.Subscribe(ctx, s.id, after) {
			if err != nil {
				if ctx.Err() == nil {
					h.log.Warn("a2a: push delivery stopped", "task", s.id, "err", err)
				}
				break
			}
			after = e.Seq
			h.notify(ctx, s.id, e.Event)
			if st, ok := a2a.StateOf(e.Event); ok && st.Settled() {
				break
			}
		}
		// Stop unless a new run has logged more events meanwhile: the
		// run that started it may have seen this goroutine still running.
		s.mu.Lock()
		if s.lastSeq > after && ctx.Err() == nil {
			s.mu.Unlock()
			continue
		}
		s.pushing = false
		s.mu.Unlock()
		return
	}
}

func (h *Handler) notify(ctx context.Context, taskID string, ev a2a.Event) {
	cfgs, err := h.pushCfgs.List(ctx, taskID)
	if err != nil {
		h.log.Warn("a2a: listing push notification configs failed", "task", taskID, "err", err)
		return
	}
	// Creates on other replicas can race past the cap; the fan-out of
	// one event stays bounded all the same.
	cfgs = cfgs[:min(len(cfgs), h.limits.MaxPushConfigsPerTask)]
	var snapshot *a2a.Task
	for _, c := range cfgs {
		if c.ProtocolVersion == a2a.Version03 && snapshot == nil {
			// 0.3 webhooks receive the whole task.
			if e, err := h.load(ctx, taskID); err == nil {
				snapshot = e.Task
			} else {
				snapshot = &a2a.Task{ID: taskID}
			}
		}
		// Sender.Notify logs failed deliveries itself.
		_ = h.sender.Notify(ctx, c, ev, snapshot)
	}
}
