package jsonrpcserver

import (
	"context"
	"encoding/json"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// wire is one protocol version of the JSON-RPC binding: how its params
// decode into the requests of the a2a model and how the Handler's results
// encode. A2A 1.0's (wire10.go) and 0.3's (wire03.go) are the two; the
// method name picks one, and nothing else in the binding asks which.
type wire interface {
	sendMessage(json.RawMessage) (*a2a.SendMessageRequest, error)
	getTask(json.RawMessage) (*a2a.GetTaskRequest, error)
	listTasks(json.RawMessage) (*a2a.ListTasksRequest, error)
	cancelTask(json.RawMessage) (*a2a.CancelTaskRequest, error)
	subscribeToTask(json.RawMessage) (*a2a.SubscribeToTaskRequest, error)
	createPushConfig(json.RawMessage) (*a2a.TaskPushNotificationConfig, error)
	getPushConfig(json.RawMessage) (*a2a.GetTaskPushNotificationConfigRequest, error)
	listPushConfigs(json.RawMessage) (*a2a.ListTaskPushNotificationConfigsRequest, error)
	deletePushConfig(json.RawMessage) (*a2a.DeleteTaskPushNotificationConfigRequest, error)
	getExtendedCard(json.RawMessage) (*a2a.GetExtendedAgentCardRequest, error)

	// event encodes a send's result and each streamed event.
	event(a2a.Event) any
	task(*a2a.Task) any
	tasks(*a2a.ListTasksResponse) any
	pushConfig(*a2a.TaskPushNotificationConfig) any
	pushConfigs(*a2a.ListTaskPushNotificationConfigsResponse) any
	// deleted is DeleteTaskPushNotificationConfig's result.
	deleted() any
	card(*a2a.AgentCard) (any, error)
}

// wireOf returns the wire of a protocol version.
func wireOf(version string) wire {
	if version == a2a.Version03 {
		return wire03{}
	}
	return wire10{}
}

// call decodes the params of a unary operation in the wire's version, calls
// the handler and returns the result in the same version.
func (s *Server) call(ctx context.Context, op jsonrpc.Op, w wire, params json.RawMessage) (any, error) {
	h := s.h
	switch op {
	case jsonrpc.OpSendMessage:
		return unary(ctx, params, w.sendMessage, h.SendMessage, w.event)
	case jsonrpc.OpGetTask:
		return unary(ctx, params, w.getTask, h.GetTask, w.task)
	case jsonrpc.OpListTasks:
		return unary(ctx, params, w.listTasks, h.ListTasks, w.tasks)
	case jsonrpc.OpCancelTask:
		return unary(ctx, params, w.cancelTask, h.CancelTask, w.task)
	case jsonrpc.OpCreatePushConfig:
		return unary(ctx, params, w.createPushConfig, h.CreateTaskPushNotificationConfig, w.pushConfig)
	case jsonrpc.OpGetPushConfig:
		return unary(ctx, params, w.getPushConfig, h.GetTaskPushNotificationConfig, w.pushConfig)
	case jsonrpc.OpListPushConfigs:
		return unary(ctx, params, w.listPushConfigs, h.ListTaskPushNotificationConfigs, w.pushConfigs)
	case jsonrpc.OpDeletePushConfig:
		return unary(ctx, params, w.deletePushConfig, func(ctx context.Context, r *a2a.DeleteTaskPushNotificationConfigRequest) (struct{}, error) {
			return struct{}{}, h.DeleteTaskPushNotificationConfig(ctx, r)
		}, func(struct{}) any { return w.deleted() })
	case jsonrpc.OpGetExtendedAgentCard:
		req, err := w.getExtendedCard(params)
		if err != nil {
			return nil, err
		}
		card, err := h.GetExtendedAgentCard(ctx, req)
		if err != nil {
			return nil, err
		}
		return w.card(card)
	}
	return nil, a2a.Errorf(a2a.CodeMethodNotFound, "method %s is not served here", op)
}

// unary decodes a call's params, calls the Handler and encodes its result.
func unary[In, Out any](ctx context.Context, params json.RawMessage, decode func(json.RawMessage) (In, error),
	call func(context.Context, In) (Out, error), encode func(Out) any) (any, error) {
	req, err := decode(params)
	if err != nil {
		return nil, err
	}
	out, err := call(ctx, req)
	if err != nil {
		return nil, err
	}
	return encode(out), nil
}

// decodeInto decodes params into a new T, as a 1.0 request or a 0.3
// params object.
func decodeInto[T any](params json.RawMessage) (*T, error) {
	v := new(T)
	if err := jsonrpc.DecodeParams(params, v); err != nil {
		return nil, err
	}
	return v, nil
}

// decodeAs decodes params as a P and converts it to a request.
func decodeAs[P, R any](params json.RawMessage, convert func(*P) (*R, error)) (*R, error) {
	p, err := decodeInto[P](params)
	if err != nil {
		return nil, err
	}
	return convert(p)
}
