package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// rpc03 is the A2A 0.3 wire of the JSON-RPC binding: 0.3's method names,
// params and results (kind discriminators, lower-case states), converted
// to and from the 1.0 model by package a2av03. 0.3 has no tenants.
type rpc03 struct{ *rpcConn }

func (t rpc03) SendMessage(ctx context.Context, req *a2a.SendMessageRequest, h http.Header) (a2a.Event, error) {
	var raw json.RawMessage
	if err := t.call(ctx, jsonrpc.OpSendMessage, a2av03.FromSendMessageRequest(req), &raw, h); err != nil {
		return nil, err
	}
	ev, err := a2av03.DecodeEvent(raw)
	if err != nil {
		return nil, fmt.Errorf("a2a client: SendMessage: decode result: %w", err)
	}
	return ev, nil
}

func (t rpc03) GetTask(ctx context.Context, req *a2a.GetTaskRequest, h http.Header) (*a2a.Task, error) {
	return t.task(ctx, jsonrpc.OpGetTask, &a2av03.TaskQueryParams{ID: req.ID, HistoryLength: req.HistoryLength}, h)
}

// ListTasks calls tasks/list, which some 0.3 servers (a2a-go's) offer and
// the 0.3 specification does not.
func (t rpc03) ListTasks(ctx context.Context, req *a2a.ListTasksRequest, h http.Header) (*a2a.ListTasksResponse, error) {
	var res a2av03.ListTasksResult
	if err := t.call(ctx, jsonrpc.OpListTasks, a2av03.FromListTasksRequest(req), &res, h); err != nil {
		return nil, err
	}
	out, err := res.ToListTasksResponse()
	if err != nil {
		return nil, fmt.Errorf("a2a client: ListTasks: decode result: %w", err)
	}
	return out, nil
}

func (t rpc03) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest, h http.Header) (*a2a.Task, error) {
	return t.task(ctx, jsonrpc.OpCancelTask, &a2av03.TaskIDParams{ID: req.ID, Metadata: req.Metadata}, h)
}

func (t rpc03) task(ctx context.Context, op jsonrpc.Op, params any, h http.Header) (*a2a.Task, error) {
	tk, err := callFor[a2av03.Task](ctx, t.rpcConn, op, params, h)
	if err != nil {
		return nil, err
	}
	out, err := tk.ToTask()
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s: decode result: %w", op, err)
	}
	return out, nil
}

func (t rpc03) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
	out, err := callFor[a2av03.TaskPushNotificationConfig](ctx, t.rpcConn, jsonrpc.OpCreatePushConfig, a2av03.FromPushConfig(req), h)
	if err != nil {
		return nil, err
	}
	return pushConfig03(out), nil
}

func pushConfig03(c *a2av03.TaskPushNotificationConfig) *a2a.TaskPushNotificationConfig {
	out := c.PushNotificationConfig.ToPushConfig(c.TaskID)
	out.ID = c.PushNotificationConfig.ID
	return out
}

func (t rpc03) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
	out, err := callFor[a2av03.TaskPushNotificationConfig](ctx, t.rpcConn, jsonrpc.OpGetPushConfig, &a2av03.PushConfigParams{ID: req.TaskID, PushNotificationConfigID: req.ID}, h)
	if err != nil {
		return nil, err
	}
	return pushConfig03(out), nil
}

func (t rpc03) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest, h http.Header) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	var list []a2av03.TaskPushNotificationConfig
	if err := t.call(ctx, jsonrpc.OpListPushConfigs, &a2av03.TaskIDParams{ID: req.TaskID}, &list, h); err != nil {
		return nil, err
	}
	out := &a2a.ListTaskPushNotificationConfigsResponse{Configs: make([]a2a.TaskPushNotificationConfig, len(list))}
	for i := range list {
		out.Configs[i] = *pushConfig03(&list[i])
	}
	return out, nil
}

func (t rpc03) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest, h http.Header) error {
	return t.call(ctx, jsonrpc.OpDeletePushConfig, &a2av03.PushConfigParams{ID: req.TaskID, PushNotificationConfigID: req.ID}, nil, h)
}

// GetExtendedAgentCard calls agent/getAuthenticatedExtendedCard, which
// takes no params.
func (t rpc03) GetExtendedAgentCard(ctx context.Context, _ *a2a.GetExtendedAgentCardRequest, h http.Header) (*a2a.AgentCard, error) {
	return extendedCard(ctx, t.rpcConn, nil, h)
}

// extendedCard calls GetExtendedAgentCard and reads the card in either
// version's form.
func extendedCard(ctx context.Context, c *rpcConn, params any, h http.Header) (*a2a.AgentCard, error) {
	var raw json.RawMessage
	if err := c.call(ctx, jsonrpc.OpGetExtendedAgentCard, params, &raw, h); err != nil {
		return nil, err
	}
	card, err := a2av03.ParseCard(raw)
	if err != nil {
		return nil, fmt.Errorf("a2a client: GetExtendedAgentCard: %w", err)
	}
	return card, nil
}

func (t rpc03) OpenStream(ctx context.Context, req *StreamRequest, h http.Header) (EventStream, error) {
	op, params := jsonrpc.OpSubscribeToTask, any(nil)
	if req.Send != nil {
		op, params = jsonrpc.OpSendStreamingMessage, a2av03.FromSendMessageRequest(req.Send)
	} else {
		params = &a2av03.TaskIDParams{ID: req.Subscribe.ID}
	}
	// 0.3's "final" flag marks the same events as the state does.
	return t.openStream(ctx, op, params, req, h, a2av03.DecodeEvent)
}
