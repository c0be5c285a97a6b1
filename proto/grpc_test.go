package proto

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/a2amesh/a2amesh/proto/a2apb"
	"github.com/a2amesh/a2amesh/proto/a2apb/a2aservice"
	"github.com/cloudwego/kitex/client"
	"github.com/cloudwego/kitex/pkg/kerrors"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	"github.com/cloudwego/kitex/server"
)

// unimplemented answers every A2A method with gRPC's UNIMPLEMENTED: the
// stand-in for the binding until the server core is wired to it, and the
// handler the smoke test below serves.
type unimplemented struct{}

// errUnimplemented is a Kitex gRPC biz status error rather than a plain
// status error: for a handler's plain error, Kitex's server appends
// " [biz error]" to the grpc-message it sends, which every client, Kitex or
// not, would then see; a biz status error goes out with its status as set.
func errUnimplemented(method string) error {
	msg := "a2amesh: " + method + " is not served over gRPC yet"
	err := kerrors.NewGRPCBizStatusError(int32(codes.Unimplemented), msg)
	err.(*kerrors.GRPCBizStatusError).SetGRPCStatus(status.New(codes.Unimplemented, msg))
	return err
}

func (*unimplemented) SendMessage(context.Context, *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	return nil, errUnimplemented("SendMessage")
}

func (*unimplemented) SendStreamingMessage(*a2apb.SendMessageRequest, a2apb.A2AService_SendStreamingMessageServer) error {
	return errUnimplemented("SendStreamingMessage")
}

func (*unimplemented) GetTask(context.Context, *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	return nil, errUnimplemented("GetTask")
}

func (*unimplemented) ListTasks(context.Context, *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	return nil, errUnimplemented("ListTasks")
}

func (*unimplemented) CancelTask(context.Context, *a2apb.CancelTaskRequest) (*a2apb.Task, error) {
	return nil, errUnimplemented("CancelTask")
}

func (*unimplemented) SubscribeToTask(*a2apb.SubscribeToTaskRequest, a2apb.A2AService_SubscribeToTaskServer) error {
	return errUnimplemented("SubscribeToTask")
}

func (*unimplemented) CreateTaskPushNotificationConfig(context.Context, *a2apb.TaskPushNotificationConfig) (*a2apb.TaskPushNotificationConfig, error) {
	return nil, errUnimplemented("CreateTaskPushNotificationConfig")
}

func (*unimplemented) GetTaskPushNotificationConfig(context.Context, *a2apb.GetTaskPushNotificationConfigRequest) (*a2apb.TaskPushNotificationConfig, error) {
	return nil, errUnimplemented("GetTaskPushNotificationConfig")
}

func (*unimplemented) ListTaskPushNotificationConfigs(context.Context, *a2apb.ListTaskPushNotificationConfigsRequest) (*a2apb.ListTaskPushNotificationConfigsResponse, error) {
	return nil, errUnimplemented("ListTaskPushNotificationConfigs")
}

func (*unimplemented) GetExtendedAgentCard(context.Context, *a2apb.GetExtendedAgentCardRequest) (*a2apb.AgentCard, error) {
	return nil, errUnimplemented("GetExtendedAgentCard")
}

func (*unimplemented) DeleteTaskPushNotificationConfig(context.Context, *a2apb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	return nil, errUnimplemented("DeleteTaskPushNotificationConfig")
}

// The generated service runs: a Kitex gRPC server on 127.0.0.1:0 carries a
// unary and a server-streaming call from a Kitex client to the handler, and
// the handler's error, code and message, back.
func TestGRPCSmoke(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svr := a2aservice.NewServer(&unimplemented{}, // Kitex requires a pointer handler
		server.WithListener(ln),
		server.WithExitWaitTime(10*time.Millisecond))
	ran := make(chan error, 1)
	go func() { ran <- svr.Run() }()
	t.Cleanup(func() {
		if err := svr.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		if err := <-ran; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	cli, err := a2aservice.NewClient("lf.a2a.v1.A2AService",
		client.WithHostPorts(ln.Addr().String()),
		client.WithRPCTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	task, err := cli.GetTask(ctx, &a2apb.GetTaskRequest{Id: "t1"})
	checkUnimplemented(t, "GetTask", task, err)

	stream, err := cli.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{
		Message: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}},
	})
	if err != nil {
		t.Fatalf("SendStreamingMessage: %v", err)
	}
	// Kitex's Recv returns an empty message beside the error: only the
	// error counts.
	_, err = stream.Recv()
	checkUnimplemented[a2apb.StreamResponse](t, "SendStreamingMessage", nil, err)
}

func checkUnimplemented[T any](t *testing.T, method string, got *T, err error) {
	t.Helper()
	if got != nil {
		t.Errorf("%s answered %v, want an error", method, got)
	}
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("%s: error %v (%T) carries no gRPC status", method, err, err)
	}
	want := "a2amesh: " + method + " is not served over gRPC yet"
	if st.Code() != codes.Unimplemented || st.Message() != want {
		t.Errorf("%s: status %v %q, want %v %q", method, st.Code(), st.Message(), codes.Unimplemented, want)
	}
}
