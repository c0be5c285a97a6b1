package grpcclient

import (
	"context"
	"fmt"
	"net/http"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/internal/pbconv"
	"github.com/a2amesh/a2amesh/internal/pbwire"
	"github.com/a2amesh/a2amesh/proto/a2apb"
	"github.com/a2amesh/a2amesh/proto/a2apb/a2aservice"
)

// result converts a unary RPC's result, which must be there.
func result[P any, T any](op string, p *P, conv func(*P) (T, error)) (T, error) {
	var zero T
	if p == nil {
		return zero, fmt.Errorf("a2a client: %s: the response holds no result", op)
	}
	v, err := conv(p)
	if err != nil {
		return zero, fmt.Errorf("a2a client: %s: decode the result: %w", op, err)
	}
	return v, nil
}

// encodeErr wraps the error of encoding a request.
func encodeErr(op string, err error) error {
	return fmt.Errorf("a2a client: %s: encode the request: %w", op, err)
}

func (t *grpcTransport) SendMessage(ctx context.Context, req *a2a.SendMessageRequest, h http.Header) (a2a.Event, error) {
	const op = "SendMessage"
	buf := t.bufs.Get()
	defer t.bufs.Put(buf)
	b, err := pbconv.AppendSendRequest(*buf, req)
	*buf = b
	if err != nil {
		return nil, encodeErr(op, err)
	}
	// The answer is read by pbconv's direct decoding, without the
	// generated result's a2apb copy.
	res := new(pbconv.IncomingSendResponse)
	if err := t.call(ctx, h, op, pbwire.Encoded(b), res); err != nil {
		return nil, err
	}
	ev, err := res.Event()
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s: decode the result: %w", op, err)
	}
	return ev, nil
}

func (t *grpcTransport) GetTask(ctx context.Context, req *a2a.GetTaskRequest, h http.Header) (*a2a.Task, error) {
	const op = "GetTask"
	res := new(a2aservice.GetTaskResult)
	if err := t.call(ctx, h, op, t.out(pbconv.GetTaskRequestToPB(req)), res); err != nil {
		return nil, err
	}
	return result(op, res.GetSuccess(), pbconv.TaskFromPB)
}

func (t *grpcTransport) ListTasks(ctx context.Context, req *a2a.ListTasksRequest, h http.Header) (*a2a.ListTasksResponse, error) {
	const op = "ListTasks"
	res := new(a2aservice.ListTasksResult)
	if err := t.call(ctx, h, op, t.out(pbconv.ListTasksRequestToPB(req)), res); err != nil {
		return nil, err
	}
	return result(op, res.GetSuccess(), pbconv.ListTasksResponseFromPB)
}

func (t *grpcTransport) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest, h http.Header) (*a2a.Task, error) {
	const op = "CancelTask"
	md, err := pbconv.StructToPB(req.Metadata)
	if err != nil {
		return nil, encodeErr(op, err)
	}
	res := new(a2aservice.CancelTaskResult)
	pb := &a2apb.CancelTaskRequest{Tenant: req.Tenant, Id: req.ID, Metadata: md}
	if err := t.call(ctx, h, op, t.out(pb), res); err != nil {
		return nil, err
	}
	return result(op, res.GetSuccess(), pbconv.TaskFromPB)
}

func (t *grpcTransport) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
	const op = "CreateTaskPushNotificationConfig"
	res := new(a2aservice.CreateTaskPushNotificationConfigResult)
	if err := t.call(ctx, h, op, t.out(pbconv.PushConfigToPB(req)), res); err != nil {
		return nil, err
	}
	return result(op, res.GetSuccess(), noErr(pbconv.PushConfigFromPB))
}

func (t *grpcTransport) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
	const op = "GetTaskPushNotificationConfig"
	res := new(a2aservice.GetTaskPushNotificationConfigResult)
	pb := &a2apb.GetTaskPushNotificationConfigRequest{Tenant: req.Tenant, TaskId: req.TaskID, Id: req.ID}
	if err := t.call(ctx, h, op, t.out(pb), res); err != nil {
		return nil, err
	}
	return result(op, res.GetSuccess(), noErr(pbconv.PushConfigFromPB))
}

func (t *grpcTransport) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest, h http.Header) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	const op = "ListTaskPushNotificationConfigs"
	res := new(a2aservice.ListTaskPushNotificationConfigsResult)
	pb := &a2apb.ListTaskPushNotificationConfigsRequest{Tenant: req.Tenant, TaskId: req.TaskID, PageSize: int32(min(max(req.PageSize, 0), 1<<31-1)), PageToken: req.PageToken}
	if err := t.call(ctx, h, op, t.out(pb), res); err != nil {
		return nil, err
	}
	return result(op, res.GetSuccess(), noErr(pbconv.ListPushConfigsResponseFromPB))
}

func (t *grpcTransport) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest, h http.Header) error {
	const op = "DeleteTaskPushNotificationConfig"
	pb := &a2apb.DeleteTaskPushNotificationConfigRequest{Tenant: req.Tenant, TaskId: req.TaskID, Id: req.ID}
	return t.call(ctx, h, op, t.out(pb), new(a2aservice.DeleteTaskPushNotificationConfigResult))
}

func (t *grpcTransport) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest, h http.Header) (*a2a.AgentCard, error) {
	const op = "GetExtendedAgentCard"
	res := new(a2aservice.GetExtendedAgentCardResult)
	if err := t.call(ctx, h, op, t.out(&a2apb.GetExtendedAgentCardRequest{Tenant: req.Tenant}), res); err != nil {
		return nil, err
	}
	return result(op, res.GetSuccess(), noErr(pbconv.CardFromPB))
}

// noErr lifts a conversion that cannot fail.
func noErr[A, B any](f func(A) B) func(A) (B, error) {
	return func(a A) (B, error) { return f(a), nil }
}
