package client

import (
	"context"
	"fmt"
	"net/http"

	"github.com/a2amesh/a2amesh/a2a"
)

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
//
// With SendMessageConfiguration.IfGenerationMatch (which activates the
// generation extension, see Generations) a message on an existing task is
// taken only if the task is still at that generation; otherwise the error
// matches a2a.ErrTaskGenerationMismatch, and its Metadata (errors.As an
// *a2a.Error) holds the task's currentGeneration when the agent knew it.
func (c *Client) SendMessage(ctx context.Context, req *a2a.SendMessageRequest, opts ...CallOption) (a2a.Event, error) {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	opts = withGenerations(opts, conditional(req))
	settles := req.Configuration == nil || !req.Configuration.ReturnImmediately
	ev, err := unary(ctx, c, "SendMessage", opts, settles, func(ctx context.Context, h http.Header) (a2a.Event, error) {
		return c.t.SendMessage(ctx, &r, h)
	})
	if err != nil {
		return nil, err
	}
	switch ev.(type) {
	case *a2a.Task, *a2a.Message:
		return ev, nil
	}
	return nil, fmt.Errorf("a2a client: SendMessage: the agent replied with a %T, want a task or a message", ev)
}

// GetTask returns a task.
//
// With CurrentGeneration (which activates the generation extension, see
// Generations) it is a long poll: an agent that has the extension answers
// once the task's generation is past it, or with the task as it is after
// at most a2a.GenerationWaitMax, so the call's response timeout
// (Config.ResponseTimeout) counts from then.
func (c *Client) GetTask(ctx context.Context, req *a2a.GetTaskRequest, opts ...CallOption) (*a2a.Task, error) {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	if req.CurrentGeneration != nil {
		opts = append(withGenerations(opts, true), func(cc *callConfig) { cc.longPoll = true })
	}
	return unary(ctx, c, "GetTask", opts, false, func(ctx context.Context, h http.Header) (*a2a.Task, error) {
		return c.t.GetTask(ctx, &r, h)
	})
}

// conditional reports whether a send sets ifGenerationMatch.
func conditional(req *a2a.SendMessageRequest) bool {
	return req.Configuration != nil && req.Configuration.IfGenerationMatch != nil
}

// ListTasks returns a page of tasks. Over 0.3 it calls tasks/list, which
// some 0.3 servers (a2a-go's) offer and the 0.3 specification does not.
func (c *Client) ListTasks(ctx context.Context, req *a2a.ListTasksRequest, opts ...CallOption) (*a2a.ListTasksResponse, error) {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return unary(ctx, c, "ListTasks", opts, false, func(ctx context.Context, h http.Header) (*a2a.ListTasksResponse, error) {
		return c.t.ListTasks(ctx, &r, h)
	})
}

// CancelTask cancels a task and returns it.
func (c *Client) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest, opts ...CallOption) (*a2a.Task, error) {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return unary(ctx, c, "CancelTask", opts, false, func(ctx context.Context, h http.Header) (*a2a.Task, error) {
		return c.t.CancelTask(ctx, &r, h)
	})
}

// CreateTaskPushNotificationConfig registers a webhook for a task. Over
// 0.3 it is tasks/pushNotificationConfig/set.
func (c *Client) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig, opts ...CallOption) (*a2a.TaskPushNotificationConfig, error) {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return unary(ctx, c, "CreateTaskPushNotificationConfig", opts, false, func(ctx context.Context, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
		return c.t.CreateTaskPushNotificationConfig(ctx, &r, h)
	})
}

// GetTaskPushNotificationConfig returns one of a task's webhooks.
func (c *Client) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest, opts ...CallOption) (*a2a.TaskPushNotificationConfig, error) {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return unary(ctx, c, "GetTaskPushNotificationConfig", opts, false, func(ctx context.Context, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
		return c.t.GetTaskPushNotificationConfig(ctx, &r, h)
	})
}

// ListTaskPushNotificationConfigs returns a task's webhooks.
func (c *Client) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest, opts ...CallOption) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return unary(ctx, c, "ListTaskPushNotificationConfigs", opts, false, func(ctx context.Context, h http.Header) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
		return c.t.ListTaskPushNotificationConfigs(ctx, &r, h)
	})
}

// DeleteTaskPushNotificationConfig removes one of a task's webhooks.
func (c *Client) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest, opts ...CallOption) error {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	_, err := unary(ctx, c, "DeleteTaskPushNotificationConfig", opts, false, func(ctx context.Context, h http.Header) (struct{}, error) {
		return struct{}{}, c.t.DeleteTaskPushNotificationConfig(ctx, &r, h)
	})
	return err
}

// GetExtendedAgentCard returns the card the agent shows authenticated
// clients. Over 0.3 it is agent/getAuthenticatedExtendedCard.
func (c *Client) GetExtendedAgentCard(ctx context.Context, opts ...CallOption) (*a2a.AgentCard, error) {
	return unary(ctx, c, "GetExtendedAgentCard", opts, false, func(ctx context.Context, h http.Header) (*a2a.AgentCard, error) {
		return c.t.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{Tenant: c.tenant}, h)
	})
}
