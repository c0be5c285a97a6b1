package grpcserver

import (
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/kitex/client"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/metadata"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/internal/pbconv"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/proto/a2apb"
	"github.com/a2amesh/a2amesh/proto/a2apb/a2aservice"
	"github.com/a2amesh/a2amesh/services/echo"
)

func TestMain(m *testing.M) { a2atest.VerifyTestMain(m) }

// serve runs a Server over a Handler for cfg on 127.0.0.1 for the length of
// the test and returns a Kitex client of it.
func serve(t *testing.T, cfg server.Config) a2aservice.Client {
	t.Helper()
	cli, _ := serveWith(t, cfg, Config{})
	return cli
}

// serveWith is serve with the Server's own configuration (its Grace is
// always short); it returns the server's address too.
func serveWith(t *testing.T, cfg server.Config, gcfg Config) (a2aservice.Client, string) {
	t.Helper()
	if cfg.Card == nil {
		cfg.Card = echo.Card("grpc://127.0.0.1/")
	}
	if cfg.Executor == nil {
		cfg.Executor = &echo.Executor{SlowChunks: 4, SlowInterval: 20 * time.Millisecond}
	}
	h := a2atest.NewHandler(t, cfg)
	gcfg.Grace = 100 * time.Millisecond
	srv, err := New(h, gcfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})
	cli, err := a2aservice.NewClient("lf.a2a.v1.A2AService",
		client.WithHostPorts(ln.Addr().String()), client.WithRPCTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return cli, ln.Addr().String()
}

func sendReq(text string, cfg *a2apb.SendMessageConfiguration) *a2apb.SendMessageRequest {
	return &a2apb.SendMessageRequest{
		Message: &a2apb.Message{MessageId: a2a.NewID(), Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}},
		Configuration: cfg,
	}
}

// wantStatus checks that err is a gRPC status with the code and, for an
// A2A error (reason not empty), a google.rpc.ErrorInfo naming it.
func wantStatus(t *testing.T, err error, code codes.Code, reason string) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("error %v (%T) carries no gRPC status", err, err)
	}
	if st.Code() != code {
		t.Errorf("status %v %q, want code %v", st.Code(), st.Message(), code)
	}
	if strings.Contains(st.Message(), "[biz error]") {
		t.Errorf("message %q has Kitex's biz error suffix", st.Message())
	}
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	switch {
	case reason == "" && info != nil:
		t.Errorf("details have ErrorInfo %v, want none", info)
	case reason != "" && info == nil:
		t.Errorf("details %v have no ErrorInfo, want reason %s", st.Details(), reason)
	case reason != "" && (info.Reason != reason || info.Domain != ErrorDomain):
		t.Errorf("ErrorInfo %s/%s, want %s/%s", info.Domain, info.Reason, ErrorDomain, reason)
	}
}

// recvAll reads a stream to its end and returns its events.
func recvAll(t *testing.T, recv func() (*a2apb.StreamResponse, error)) []a2a.Event {
	t.Helper()
	var evs []a2a.Event
	for range 1000 {
		item, err := recv()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatalf("recv after %d events: %v", len(evs), err)
		}
		ev, err := pbconv.EventFromPB(item)
		if err != nil {
			t.Fatalf("event %d: %v", len(evs), err)
		}
		evs = append(evs, ev)
	}
	t.Fatal("the stream did not end after 1000 events")
	return nil
}

// checkEchoStream checks a stream of an echo task: the task first, then
// updates whose artifact chunks make up text, ending COMPLETED.
func checkEchoStream(t *testing.T, evs []a2a.Event, text string) {
	t.Helper()
	if len(evs) < 3 {
		t.Fatalf("%d events, want the task, updates and the completion", len(evs))
	}
	if _, ok := evs[0].(*a2a.Task); !ok {
		t.Errorf("first event %T, want the task", evs[0])
	}
	var got strings.Builder
	for _, ev := range evs[1:] {
		if u, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			got.WriteString(u.Artifact.Text())
		}
	}
	if got.String() != text {
		t.Errorf("artifact chunks make %q, want %q", got.String(), text)
	}
	if s, _ := a2a.StateOf(evs[len(evs)-1]); s != a2a.TaskStateCompleted {
		t.Errorf("last event %#v, want COMPLETED", evs[len(evs)-1])
	}
}

func TestSendMessage(t *testing.T) {
	cli := serve(t, server.Config{})
	const text = "hello over gRPC"
	resp, err := cli.SendMessage(t.Context(), sendReq(text, nil))
	if err != nil {
		t.Fatal(err)
	}
	task, err := pbconv.TaskFromPB(resp.GetTask())
	if err != nil || task == nil {
		t.Fatalf("response %v is not a task (%v)", resp, err)
	}
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Text() != text {
		t.Errorf("task %+v, want COMPLETED with the artifact %q", task, text)
	}
	if len(task.History) == 0 || task.History[0].Text() != text {
		t.Errorf("history %+v, want the message first", task.History)
	}

	// The task is there afterwards, and in the list.
	got, err := cli.GetTask(t.Context(), &a2apb.GetTaskRequest{Id: task.ID, HistoryLength: new(int32)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Id != task.ID || got.Status.State != a2apb.TaskState_TASK_STATE_COMPLETED || len(got.History) != 0 {
		t.Errorf("GetTask %v, want the completed task without history", got)
	}
	list, err := cli.ListTasks(t.Context(), &a2apb.ListTasksRequest{ContextId: task.ContextID})
	if err != nil {
		t.Fatal(err)
	}
	if list.TotalSize != 1 || len(list.Tasks) != 1 || list.Tasks[0].Id != task.ID {
		t.Errorf("ListTasks %v, want the one task", list)
	}
}

func TestSendStreamingMessage(t *testing.T) {
	cli := serve(t, server.Config{})
	const text = "streamed over gRPC, in ten chunks"
	stream, err := cli.SendStreamingMessage(t.Context(), sendReq(text, nil))
	if err != nil {
		t.Fatal(err)
	}
	checkEchoStream(t, recvAll(t, stream.Recv), text)
}

// Responses keep the oneof members that hold zero values, unary and
// streamed: an empty text part arrives as one, not as a part without
// content (which prutal, Kitex's codec, would send; see internal/pbwire).
func TestZeroValuesOnTheWire(t *testing.T) {
	cli := serve(t, server.Config{})
	// Two runes in ten chunks: eight chunks are empty text.
	stream, err := cli.SendStreamingMessage(t.Context(), sendReq("hi", nil))
	if err != nil {
		t.Fatal(err)
	}
	evs := recvAll(t, stream.Recv)
	checkEchoStream(t, evs, "hi")
	empty := 0
	for _, ev := range evs {
		if u, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && u.Artifact.Text() == "" {
			empty++
		}
	}
	if empty != 8 {
		t.Errorf("%d empty chunks arrived, want 8", empty)
	}

	// A message with no text (its one part is data) gets an empty echo.
	req := sendReq("", nil)
	req.Message.Parts[0].Content = &a2apb.Part_Data{Data: structpb.NewStructValue(&structpb.Struct{})}
	resp, err := cli.SendMessage(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	arts := resp.GetTask().GetArtifacts()
	if len(arts) != 1 || len(arts[0].Parts) != 1 {
		t.Fatalf("artifacts %v, want one with one part", arts)
	}
	if c, ok := arts[0].Parts[0].Content.(*a2apb.Part_Text); !ok || c.Text != "" {
		t.Errorf("the echo's part holds %#v, want empty text", arts[0].Parts[0].Content)
	}
}

func TestSubscribeToTask(t *testing.T) {
	cli := serve(t, server.Config{Executor: &echo.Executor{SlowChunks: 4, SlowInterval: 100 * time.Millisecond}})
	const text = "slow: and steady"
	// The task must still run when the subscription arrives; on a machine
	// so loaded that it finished first, a new task tries again.
	var evs []a2a.Event
	for try := 0; len(evs) == 0; try++ {
		resp, err := cli.SendMessage(t.Context(), sendReq(text, &a2apb.SendMessageConfiguration{ReturnImmediately: true}))
		if err != nil {
			t.Fatal(err)
		}
		stream, err := cli.SubscribeToTask(t.Context(), &a2apb.SubscribeToTaskRequest{Id: resp.GetTask().GetId()})
		if err != nil {
			t.Fatal(err)
		}
		first, err := stream.Recv()
		if st, ok := status.FromError(err); ok && st.Code() == codes.FailedPrecondition && try < 3 {
			continue
		}
		if err != nil {
			t.Fatalf("the first event: %v", err)
		}
		ev, err := pbconv.EventFromPB(first)
		if err != nil {
			t.Fatal(err)
		}
		evs = append([]a2a.Event{ev}, recvAll(t, stream.Recv)...)
	}
	// The snapshot may already hold chunks made before the subscription.
	snap := evs[0].(*a2a.Task)
	var got strings.Builder
	for _, a := range snap.Artifacts {
		got.WriteString(a.Text())
	}
	for _, ev := range evs[1:] {
		if u, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			got.WriteString(u.Artifact.Text())
		}
	}
	if got.String() != text {
		t.Errorf("snapshot and chunks make %q, want %q", got.String(), text)
	}
	if s, _ := a2a.StateOf(evs[len(evs)-1]); s != a2a.TaskStateCompleted {
		t.Errorf("last event %#v, want COMPLETED", evs[len(evs)-1])
	}

	// A finished task has nothing to subscribe to.
	stream, err := cli.SubscribeToTask(t.Context(), &a2apb.SubscribeToTaskRequest{Id: snap.ID})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	wantStatus(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
}

// A client that goes away mid-stream ends the server's side of it: the
// leak check of TestMain finds any goroutine left behind.
func TestStreamClientGoesAway(t *testing.T) {
	cli := serve(t, server.Config{Executor: &echo.Executor{SlowChunks: 1000, SlowInterval: 10 * time.Millisecond}})
	ctx, cancel := context.WithCancel(t.Context())
	stream, err := cli.SendStreamingMessage(ctx, sendReq("slow: forever", nil))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	for range 2000 {
		if _, err := stream.Recv(); err != nil {
			return
		}
	}
	t.Error("the stream went on after the client canceled it")
}

func TestCancelTask(t *testing.T) {
	cli := serve(t, server.Config{Executor: &echo.Executor{SlowChunks: 1000, SlowInterval: 10 * time.Millisecond}})
	resp, err := cli.SendMessage(t.Context(), sendReq("slow: cancel me", &a2apb.SendMessageConfiguration{ReturnImmediately: true}))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTask().GetId()
	task, err := cli.CancelTask(t.Context(), &a2apb.CancelTaskRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	if task.Id != id || task.Status.GetState() != a2apb.TaskState_TASK_STATE_CANCELED {
		t.Errorf("CancelTask %v, want task %s CANCELED", task, id)
	}
	// Canceling it again returns it unchanged; a completed task cannot be
	// canceled.
	again, err := cli.CancelTask(t.Context(), &a2apb.CancelTaskRequest{Id: id})
	if err != nil || again.Status.GetState() != a2apb.TaskState_TASK_STATE_CANCELED {
		t.Errorf("second CancelTask: %v, %v", again, err)
	}
	done, err := cli.SendMessage(t.Context(), sendReq("quick", nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cli.CancelTask(t.Context(), &a2apb.CancelTaskRequest{Id: done.GetTask().GetId()})
	wantStatus(t, err, codes.FailedPrecondition, "TASK_NOT_CANCELABLE")
}

func TestErrors(t *testing.T) {
	card := echo.Card("grpc://127.0.0.1/")
	card.Capabilities.Extensions = []a2a.AgentExtension{{URI: "https://ext.test/needed", Required: true}}
	cli := serve(t, server.Config{Card: card})
	withExt := metadata.AppendToOutgoingContext(t.Context(), ExtensionsKey, "https://ext.test/other, https://ext.test/needed")

	_, err := cli.GetTask(t.Context(), &a2apb.GetTaskRequest{Id: "no-such-task"})
	wantStatus(t, err, codes.NotFound, "TASK_NOT_FOUND")
	if st, _ := status.FromError(err); !strings.Contains(st.Message(), "no-such-task") {
		t.Errorf("message %q does not name the task", st.Message())
	}

	// The card declares no extended card.
	_, err = cli.GetExtendedAgentCard(t.Context(), &a2apb.GetExtendedAgentCardRequest{})
	wantStatus(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION")

	// The card requires an extension: a send that does not ask for it is
	// refused, one whose a2a-extensions metadata does is served.
	_, err = cli.SendMessage(t.Context(), sendReq("hi", nil))
	wantStatus(t, err, codes.FailedPrecondition, "EXTENSION_SUPPORT_REQUIRED")
	if _, err := cli.SendMessage(withExt, sendReq("hi", nil)); err != nil {
		t.Errorf("with the extension asked for: %v", err)
	}

	v03 := metadata.AppendToOutgoingContext(withExt, VersionKey, "0.3")
	_, err = cli.SendMessage(v03, sendReq("hi", nil))
	wantStatus(t, err, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED")
	v10 := metadata.AppendToOutgoingContext(withExt, VersionKey, "1.0.1")
	if _, err := cli.SendMessage(v10, sendReq("hi", nil)); err != nil {
		t.Errorf("with a2a-version 1.0.1: %v", err)
	}

	// Invalid requests: a part without content, a message without parts;
	// a streaming call reports its error as the stream's status.
	bad := sendReq("x", nil)
	bad.Message.Parts[0].Content = nil
	_, err = cli.SendMessage(withExt, bad)
	wantStatus(t, err, codes.InvalidArgument, "")
	noParts := sendReq("x", nil)
	noParts.Message.Parts = nil
	stream, err := cli.SendStreamingMessage(withExt, noParts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	wantStatus(t, err, codes.InvalidArgument, "")
}

func TestPushConfigs(t *testing.T) {
	cli := serve(t, server.Config{})
	resp, err := cli.SendMessage(t.Context(), sendReq("push", nil))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTask().GetId()
	// The task is complete: no event follows, so nothing is delivered.
	created, err := cli.CreateTaskPushNotificationConfig(t.Context(), &a2apb.TaskPushNotificationConfig{
		TaskId: id, Url: "https://hook.example/a2a", Token: "tok",
		Authentication: &a2apb.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.Id == "" || created.TaskId != id || created.Url != "https://hook.example/a2a" {
		t.Errorf("created %v", created)
	}
	got, err := cli.GetTaskPushNotificationConfig(t.Context(), &a2apb.GetTaskPushNotificationConfigRequest{TaskId: id, Id: created.Id})
	if err != nil {
		t.Fatal(err)
	}
	if got.Id != created.Id || got.Token != "tok" {
		t.Errorf("got %v, want %v", got, created)
	}
	list, err := cli.ListTaskPushNotificationConfigs(t.Context(), &a2apb.ListTaskPushNotificationConfigsRequest{TaskId: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Configs) != 1 || list.Configs[0].Id != created.Id {
		t.Errorf("list %v, want the one config", list)
	}
	if _, err := cli.DeleteTaskPushNotificationConfig(t.Context(), &a2apb.DeleteTaskPushNotificationConfigRequest{TaskId: id, Id: created.Id}); err != nil {
		t.Fatal(err)
	}
	_, err = cli.GetTaskPushNotificationConfig(t.Context(), &a2apb.GetTaskPushNotificationConfigRequest{TaskId: id, Id: created.Id})
	if st, _ := status.FromError(err); st.Code() == codes.OK {
		t.Errorf("the deleted config is still there: %v", err)
	}
}

func TestGetExtendedAgentCard(t *testing.T) {
	card := echo.Card("grpc://127.0.0.1/")
	card.Capabilities.ExtendedAgentCard = true
	ext := echo.Card("grpc://127.0.0.1/")
	ext.Description = "the extended card"
	cli := serve(t, server.Config{Card: card, ExtendedCard: ext})
	got, err := cli.GetExtendedAgentCard(t.Context(), &a2apb.GetExtendedAgentCardRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if c := pbconv.CardFromPB(got); c.Description != ext.Description || c.Name != ext.Name || len(c.Skills) != 1 {
		t.Errorf("card %+v, want the extended card", c)
	}
}

// headerID returns a stream's FirstEventIDKey response header.
func headerID(t *testing.T, header func() (metadata.MD, error)) string {
	t.Helper()
	md, err := header()
	if err != nil {
		t.Fatalf("response header: %v", err)
	}
	if vs := md.Get(FirstEventIDKey); len(vs) == 1 {
		return vs[0]
	}
	t.Fatalf("response header %v has no single %s", md, FirstEventIDKey)
	return ""
}

// The streams number their events with the response header
// FirstEventIDKey, and SubscribeToTask continues after LastEventIDKey: a
// task's events from 1, one by one, the same on every stream.
func TestStreamEventIDs(t *testing.T) {
	cli := serve(t, server.Config{})
	stream, err := cli.SendStreamingMessage(t.Context(), sendReq("numbered events", nil))
	if err != nil {
		t.Fatal(err)
	}
	if id := headerID(t, stream.Header); id != "1" {
		t.Errorf("a new task's first event is %s, want 1", id)
	}
	all := recvAll(t, stream.Recv)
	taskID, _ := all[0].TaskIDs()
	for _, after := range []int{0, 2, len(all) - 1} {
		ctx := metadata.AppendToOutgoingContext(t.Context(), LastEventIDKey, strconv.Itoa(after))
		sub, err := cli.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: taskID})
		if err != nil {
			t.Fatal(err)
		}
		if id := headerID(t, sub.Header); id != strconv.Itoa(after+1) {
			t.Errorf("after event %d, the first is %s", after, id)
		}
		if got := recvAll(t, sub.Recv); !reflect.DeepEqual(got, all[after:]) {
			t.Errorf("after event %d: %d events, want the %d after it", after, len(got), len(all)-after)
		}
	}

	// Without one, the snapshot of a running task carries the number of
	// the task's latest event.
	slow := serve(t, server.Config{Executor: &echo.Executor{SlowChunks: 6, SlowInterval: 30 * time.Millisecond}})
	resp, err := slow.SendMessage(t.Context(), sendReq("slow: one two three", &a2apb.SendMessageConfiguration{ReturnImmediately: true}))
	if err != nil {
		t.Fatal(err)
	}
	taskID = resp.GetTask().GetId()
	sub, err := slow.SubscribeToTask(t.Context(), &a2apb.SubscribeToTaskRequest{Id: taskID})
	if err != nil {
		t.Fatal(err)
	}
	first, err := strconv.Atoi(headerID(t, sub.Header))
	if err != nil || first < 1 {
		t.Fatalf("first event id %d (%v)", first, err)
	}
	evs := recvAll(t, sub.Recv)
	last := first + len(evs) - 1
	ctx := metadata.AppendToOutgoingContext(t.Context(), LastEventIDKey, strconv.Itoa(last-1))
	again, err := slow.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: taskID})
	if err != nil {
		t.Fatal(err)
	}
	if got := recvAll(t, again.Recv); len(got) != 1 || !reflect.DeepEqual(got[0], evs[len(evs)-1]) {
		t.Errorf("after event %d: %v, want the last event %v alone", last-1, got, evs[len(evs)-1])
	}

	// A Last-Event-ID that is not one of the task's is refused.
	ctx = metadata.AppendToOutgoingContext(t.Context(), LastEventIDKey, "99999")
	bad, err := slow.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: taskID})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Recv()
	wantStatus(t, err, codes.InvalidArgument, "")
}
