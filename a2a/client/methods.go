package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// callFor performs a unary call and decodes its result into a new T.
func callFor[T any](ctx context.Context, c *Client, op jsonrpc.Op, params any, opts []CallOption) (*T, error) {
	out := new(T)
	if err := c.call(ctx, op, params, out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// withTenant returns the request's tenant, or the interface's.
func (c *Client) withTenant(t string) string {
	if t == "" {
		return c.tenant
	}
	return t
}

// SendMessage sends a message and returns the resulting *a2a.Task (settled,
// unless the request asks to return immediately) or the agent's direct
// *a2a.Message.
//
// A SendMessage that waits for the task lasts as long as the task, so
// Config.ResponseTimeout does not bound it (see Timeout).
func (c *Client) SendMessage(ctx context.Context, req *a2a.SendMessageRequest, opts ...CallOption) (a2a.Event, error) {
	op := jsonrpc.OpSendMessage
	if req.Configuration == nil || !req.Configuration.ReturnImmediately {
		opts = append(opts[:len(opts):len(opts)], untilSettled)
	}
	if c.v03() {
		var raw json.RawMessage
		if err := c.call(ctx, op, a2av03.FromSendMessageRequest(req), &raw, opts); err != nil {
			return nil, err
		}
		ev, err := a2av03.DecodeEvent(raw)
		if err != nil {
			return nil, fmt.Errorf("a2a client: %s: decode result: %w", op, err)
		}
		return sendResult(op, ev)
	}
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	var sr a2a.StreamResponse
	if err := c.call(ctx, op, &r, &sr, opts); err != nil {
		return nil, err
	}
	ev, err := sr.Event()
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s: %w", op, err)
	}
	return sendResult(op, ev)
}

func untilSettled(c *callConfig) { c.untilSettled = true }

func sendResult(op jsonrpc.Op, ev a2a.Event) (a2a.Event, error) {
	switch ev.(type) {
	case *a2a.Task, *a2a.Message:
		return ev, nil
	}
	return nil, fmt.Errorf("a2a client: %s: the agent replied with a %T, want a task or a message", op, ev)
}

// GetTask returns a task.
func (c *Client) GetTask(ctx context.Context, req *a2a.GetTaskRequest, opts ...CallOption) (*a2a.Task, error) {
	if c.v03() {
		return c.task03(ctx, jsonrpc.OpGetTask, &a2av03.TaskQueryParams{ID: req.ID, HistoryLength: req.HistoryLength}, opts)
	}
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return callFor[a2a.Task](ctx, c, jsonrpc.OpGetTask, &r, opts)
}

// ListTasks returns a page of tasks. Over 0.3 it calls tasks/list, which
// some 0.3 servers (a2a-go's) offer and the 0.3 specification does not.
func (c *Client) ListTasks(ctx context.Context, req *a2a.ListTasksRequest, opts ...CallOption) (*a2a.ListTasksResponse, error) {
	op := jsonrpc.OpListTasks
	if c.v03() {
		var res a2av03.ListTasksResult
		if err := c.call(ctx, op, a2av03.FromListTasksRequest(req), &res, opts); err != nil {
			return nil, err
		}
		out, err := res.ToListTasksResponse()
		if err != nil {
			return nil, fmt.Errorf("a2a client: %s: decode result: %w", op, err)
		}
		return out, nil
	}
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return callFor[a2a.ListTasksResponse](ctx, c, op, &r, opts)
}

// CancelTask cancels a task and returns it.
func (c *Client) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest, opts ...CallOption) (*a2a.Task, error) {
	if c.v03() {
		return c.task03(ctx, jsonrpc.OpCancelTask, &a2av03.TaskIDParams{ID: req.ID, Metadata: req.Metadata}, opts)
	}
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return callFor[a2a.Task](ctx, c, jsonrpc.OpCancelTask, &r, opts)
}

func (c *Client) task03(ctx context.Context, op jsonrpc.Op, params any, opts []CallOption) (*a2a.Task, error) {
	t, err := callFor[a2av03.Task](ctx, c, op, params, opts)
	if err != nil {
		return nil, err
	}
	out, err := t.ToTask()
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s: decode result: %w", op, err)
	}
	return out, nil
}

// CreateTaskPushNotificationConfig registers a webhook for a task. Over
// 0.3 it is tasks/pushNotificationConfig/set.
func (c *Client) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig, opts ...CallOption) (*a2a.TaskPushNotificationConfig, error) {
	op := jsonrpc.OpCreatePushConfig
	if c.v03() {
		out, err := callFor[a2av03.TaskPushNotificationConfig](ctx, c, op, a2av03.FromPushConfig(req), opts)
		if err != nil {
			return nil, err
		}
		return pushConfig03(out), nil
	}
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return callFor[a2a.TaskPushNotificationConfig](ctx, c, op, &r, opts)
}

func pushConfig03(c *a2av03.TaskPushNotificationConfig) *a2a.TaskPushNotificationConfig {
	out := c.PushNotificationConfig.ToPushConfig(c.TaskID)
	out.ID = c.PushNotificationConfig.ID
	return out
}

// GetTaskPushNotificationConfig returns one of a task's webhooks.
func (c *Client) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest, opts ...CallOption) (*a2a.TaskPushNotificationConfig, error) {
	op := jsonrpc.OpGetPushConfig
	if c.v03() {
		out, err := callFor[a2av03.TaskPushNotificationConfig](ctx, c, op, &a2av03.PushConfigParams{ID: req.TaskID, PushNotificationConfigID: req.ID}, opts)
		if err != nil {
			return nil, err
		}
		return pushConfig03(out), nil
	}
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return callFor[a2a.TaskPushNotificationConfig](ctx, c, op, &r, opts)
}

// ListTaskPushNotificationConfigs returns a task's webhooks.
func (c *Client) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest, opts ...CallOption) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	op := jsonrpc.OpListPushConfigs
	if c.v03() {
		var list []a2av03.TaskPushNotificationConfig
		if err := c.call(ctx, op, &a2av03.TaskIDParams{ID: req.TaskID}, &list, opts); err != nil {
			return nil, err
		}
		out := &a2a.ListTaskPushNotificationConfigsResponse{Configs: make([]a2a.TaskPushNotificationConfig, len(list))}
		for i := range list {
			out.Configs[i] = *pushConfig03(&list[i])
		}
		return out, nil
	}
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return callFor[a2a.ListTaskPushNotificationConfigsResponse](ctx, c, op, &r, opts)
}

// DeleteTaskPushNotificationConfig removes one of a task's webhooks.
func (c *Client) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest, opts ...CallOption) error {
	op := jsonrpc.OpDeletePushConfig
	if c.v03() {
		return c.call(ctx, op, &a2av03.PushConfigParams{ID: req.TaskID, PushNotificationConfigID: req.ID}, nil, opts)
	}
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return c.call(ctx, op, &r, nil, opts)
}

// GetExtendedAgentCard returns the card the agent shows authenticated
// clients. Over 0.3 it is agent/getAuthenticatedExtendedCard.
func (c *Client) GetExtendedAgentCard(ctx context.Context, opts ...CallOption) (*a2a.AgentCard, error) {
	op := jsonrpc.OpGetExtendedAgentCard
	var params any // 0.3 takes none
	if !c.v03() {
		params = &a2a.GetExtendedAgentCardRequest{Tenant: c.tenant}
	}
	var raw json.RawMessage
	if err := c.call(ctx, op, params, &raw, opts); err != nil {
		return nil, err
	}
	card, err := a2av03.ParseCard(raw)
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s: %w", op, err)
	}
	return card, nil
}
