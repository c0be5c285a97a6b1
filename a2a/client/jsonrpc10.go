package client

import (
	"context"
	"fmt"
	"net/http"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// rpc10 is the A2A 1.0 wire of the JSON-RPC binding: params are the
// requests as they are, results the 1.0 objects.
type rpc10 struct{ *rpcConn }

func (t rpc10) SendMessage(ctx context.Context, req *a2a.SendMessageRequest, h http.Header) (a2a.Event, error) {
	var sr a2a.StreamResponse
	if err := t.call(ctx, jsonrpc.OpSendMessage, req, &sr, h); err != nil {
		return nil, err
	}
	ev, err := sr.Event()
	if err != nil {
		return nil, fmt.Errorf("a2a client: SendMessage: %w", err)
	}
	return ev, nil
}

func (t rpc10) GetTask(ctx context.Context, req *a2a.GetTaskRequest, h http.Header) (*a2a.Task, error) {
	return callFor[a2a.Task](ctx, t.rpcConn, jsonrpc.OpGetTask, req, h)
}

func (t rpc10) ListTasks(ctx context.Context, req *a2a.ListTasksRequest, h http.Header) (*a2a.ListTasksResponse, error) {
	return callFor[a2a.ListTasksResponse](ctx, t.rpcConn, jsonrpc.OpListTasks, req, h)
}

func (t rpc10) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest, h http.Header) (*a2a.Task, error) {
	return callFor[a2a.Task](ctx, t.rpcConn, jsonrpc.OpCancelTask, req, h)
}

func (t rpc10) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
	return callFor[a2a.TaskPushNotificationConfig](ctx, t.rpcConn, jsonrpc.OpCreatePushConfig, req, h)
}

func (t rpc10) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
	return callFor[a2a.TaskPushNotificationConfig](ctx, t.rpcConn, jsonrpc.OpGetPushConfig, req, h)
}

func (t rpc10) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest, h http.Header) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	return callFor[a2a.ListTaskPushNotificationConfigsResponse](ctx, t.rpcConn, jsonrpc.OpListPushConfigs, req, h)
}

func (t rpc10) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest, h http.Header) error {
	return t.call(ctx, jsonrpc.OpDeletePushConfig, req, nil, h)
}

func (t rpc10) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest, h http.Header) (*a2a.AgentCard, error) {
	return extendedCard(ctx, t.rpcConn, req, h)
}

func (t rpc10) OpenStream(ctx context.Context, req *StreamRequest, h http.Header) (EventStream, error) {
	op, params := jsonrpc.OpSubscribeToTask, any(req.Subscribe)
	if req.Send != nil {
		op, params = jsonrpc.OpSendStreamingMessage, req.Send
	}
	return t.openStream(ctx, op, params, req, h, func(raw []byte) (a2a.Event, error) {
		var sr a2a.StreamResponse
		if err := a2a.Unmarshal(raw, &sr); err != nil {
			return nil, err
		}
		return sr.Event()
	})
}
