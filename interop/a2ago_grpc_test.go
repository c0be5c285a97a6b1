package interop

// a2a-go v2.4.0's client (A2A 1.0 over gRPC, grpc-go) against the a2amesh
// gRPC binding (a2a/grpcserver on Kitex).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	gopb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	// A grpc-go client that links the gzip compressor (as any program
	// with OpenTelemetry's OTLP exporter does) offers it in
	// grpc-accept-encoding on every call: Kitex failed such calls, having
	// no compressor of that name, until the binding answered uncompressed.
	_ "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
)

// newGoGRPCClient builds an a2a-go client of the gRPC endpoint addr
// (host:port) with its factory and gRPC transport. It is made from the
// endpoint, not from a card, so that it asks the server rather than
// deciding from the card (a2a-go answers GetExtendedAgentCard itself when
// the card declares none). The client is destroyed when the test ends.
func newGoGRPCClient(t *testing.T, ctx context.Context, addr string, opts ...a2aclient.FactoryOption) *a2aclient.Client {
	t.Helper()
	opts = append([]a2aclient.FactoryOption{
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}, opts...)
	c, err := a2aclient.NewFromEndpoints(ctx, []*a2ago.AgentInterface{{
		URL: addr, ProtocolBinding: a2ago.TransportProtocolGRPC, ProtocolVersion: a2ago.Version,
	}}, opts...)
	if err != nil {
		t.Fatalf("a2a-go gRPC client: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Destroy(); err != nil {
			t.Errorf("destroy a2a-go client: %v", err)
		}
	})
	return c
}

// newGoStub returns a2a-go's generated gRPC stub (grpc-go and the official
// protobuf runtime) for addr, for checks below a2a-go's client: the status
// as it is on the wire, and the protobuf message before a2a-go converts it.
func newGoStub(t *testing.T, addr string) gopb.A2AServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return gopb.NewA2AServiceClient(conn)
}

// wireStatus returns the gRPC code of err and the reason and domain of its
// google.rpc.ErrorInfo ("" when it has none).
func wireStatus(err error) (code codes.Code, reason, domain string) {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			reason, domain = info.Reason, info.Domain
		}
	}
	return st.Code(), reason, domain
}

func TestA2AGoGRPCClient(t *testing.T) {
	ctx := testContext(t)
	// srv declares an extended card but has none configured; ext serves
	// one; plain declares none.
	srv := startOurGRPCServer(t, ourOptions{
		loopbackPush: true,
		card:         func(c *a2a.AgentCard) { c.Capabilities.ExtendedAgentCard = true },
	})
	c := newGoGRPCClient(t, ctx, srv.URL)

	t.Run("SendMessage", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("hello over gRPC")})
		if task.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("state %s, want COMPLETED", task.Status.State)
		}
		if got := goArtifactText(task); got != "hello over gRPC" {
			t.Errorf("echo artifact %q, want %q", got, "hello over gRPC")
		}
		if task.ID == "" || task.ContextID == "" {
			t.Errorf("task id %q context %q: both must be set", task.ID, task.ContextID)
		}
		if len(task.History) == 0 || goPartsText(task.History[0].Parts) != "hello over gRPC" || task.History[0].Role != a2ago.MessageRoleUser {
			t.Errorf("history %+v, want the user's message first", task.History)
		}
		if task.Status.Timestamp == nil || task.Status.Timestamp.IsZero() {
			t.Error("the status has no timestamp")
		}
	})

	t.Run("SendMessage/HistoryLength", func(t *testing.T) {
		zero := 0
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage("no history"),
			Config:  &a2ago.SendMessageConfig{HistoryLength: &zero},
		})
		if task.Status.State != a2ago.TaskStateCompleted || len(task.History) != 0 {
			t.Errorf("state %s with %d history messages, want COMPLETED with none", task.Status.State, len(task.History))
		}
	})

	t.Run("SendMessage/ReturnImmediately", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage(heldText("ret")),
			Config:  &a2ago.SendMessageConfig{ReturnImmediately: true},
		})
		if task.Status.State.Terminal() {
			t.Fatalf("returnImmediately returned a %s task; the held task cannot have ended", task.Status.State)
		}
		srv.release("ret")
		final := goPollTask(t, ctx, c, task.ID)
		if final.Status.State != a2ago.TaskStateCompleted || goArtifactText(final) != heldText("ret") {
			t.Errorf("after release: %s with echo %q", final.Status.State, goArtifactText(final))
		}
	})

	t.Run("SendMessage/InputRequired", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage(echo.InputPrefix + " more")})
		if task.Status.State != a2ago.TaskStateInputRequired {
			t.Fatalf("state %s, want INPUT_REQUIRED", task.Status.State)
		}
		follow := goTextMessage("the answer")
		follow.TaskID, follow.ContextID = task.ID, task.ContextID
		done := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: follow})
		if done.ID != task.ID || done.Status.State != a2ago.TaskStateCompleted || goArtifactText(done) != "the answer" {
			t.Errorf("follow-up gave task %s in %s with echo %q, want %s COMPLETED with %q", done.ID, done.Status.State, goArtifactText(done), task.ID, "the answer")
		}
	})

	t.Run("SendStreamingMessage", func(t *testing.T) {
		evs := goCollect(t, c.SendStreamingMessage(ctx, &a2ago.SendMessageRequest{Message: goTextMessage(streamText)}))
		goCheckEchoStream(t, evs, streamText)
	})

	t.Run("GetTask", func(t *testing.T) {
		sent := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("get me")})
		got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: sent.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != sent.ID || got.Status.State != a2ago.TaskStateCompleted || goArtifactText(got) != "get me" {
			t.Fatalf("GetTask: %s %s echo %q", got.ID, got.Status.State, goArtifactText(got))
		}
		if len(got.History) == 0 {
			t.Fatal("GetTask without historyLength returned no history")
		}
		for _, n := range []int{0, 1} {
			got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: sent.ID, HistoryLength: &n})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.History) != n {
				t.Errorf("historyLength %d: got %d messages", n, len(got.History))
			}
		}
	})

	t.Run("ListTasks", func(t *testing.T) {
		contextID := a2ago.NewContextID()
		var ids []a2ago.TaskID
		for i := range 3 {
			m := goTextMessage(fmt.Sprintf("list %d", i))
			m.ContextID = contextID
			ids = append(ids, goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: m}).ID)
		}
		page1, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, PageSize: 2, IncludeArtifacts: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(page1.Tasks) != 2 || page1.TotalSize != 3 || page1.PageSize != 2 || page1.NextPageToken == "" {
			t.Fatalf("first page: %d tasks, total %d, page size %d, next %q; want 2, 3, 2 and a token", len(page1.Tasks), page1.TotalSize, page1.PageSize, page1.NextPageToken)
		}
		if goArtifactText(page1.Tasks[0]) == "" {
			t.Error("includeArtifacts: the first task has no echo artifact")
		}
		page2, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, PageSize: 2, PageToken: page1.NextPageToken})
		if err != nil {
			t.Fatal(err)
		}
		if len(page2.Tasks) != 1 || page2.NextPageToken != "" {
			t.Fatalf("second page: %d tasks, next %q; want 1 and no token", len(page2.Tasks), page2.NextPageToken)
		}
		if len(page2.Tasks[0].Artifacts) != 0 {
			t.Errorf("without includeArtifacts the task has %d artifacts, want none", len(page2.Tasks[0].Artifacts))
		}
		var listed []a2ago.TaskID
		for _, task := range append(page1.Tasks, page2.Tasks...) {
			listed = append(listed, task.ID)
			if task.ContextID != contextID {
				t.Errorf("task %s has context %s, want %s", task.ID, task.ContextID, contextID)
			}
		}
		slices.Reverse(listed) // most recently updated first
		if !slices.Equal(listed, ids) {
			t.Errorf("listed %v, want %v newest first", listed, ids)
		}
		filtered, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, Status: a2ago.TaskStateFailed, PageSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(filtered.Tasks) != 0 || filtered.TotalSize != 0 {
			t.Errorf("status filter FAILED: %d tasks, want none", len(filtered.Tasks))
		}
		// a2a-go's gRPC client always sets the optional page_size, to 0
		// when the caller gives none; the server reads 0 as the default
		// (AIP-158), so a ListTasks without a page size works over gRPC as
		// over JSON-RPC, which leaves the 0 out.
		if all, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID}); err != nil || all.PageSize != 50 || all.TotalSize != 3 || len(all.Tasks) != 3 {
			t.Errorf("ListTasks without a page size: %+v, %v; want the default page of 50 with the 3 tasks", all, err)
		}
	})

	t.Run("CancelTask", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage(heldText("cancel")),
			Config:  &a2ago.SendMessageConfig{ReturnImmediately: true},
		})
		canceled, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if canceled.ID != task.ID || canceled.Status.State != a2ago.TaskStateCanceled {
			t.Fatalf("CancelTask: %s %s, want %s CANCELED", canceled.ID, canceled.Status.State, task.ID)
		}
		got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2ago.TaskStateCanceled {
			t.Fatalf("GetTask after cancel: %v, %v", got, err)
		}
	})

	t.Run("SubscribeToTask", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage(heldText("sub")),
			Config:  &a2ago.SendMessageConfig{ReturnImmediately: true},
		})
		var evs []a2ago.Event
		for ev, err := range c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				t.Fatalf("subscription failed after %d events: %v", len(evs), err)
			}
			evs = append(evs, ev)
			if len(evs) == 1 {
				srv.release("sub") // subscribed: let the task go on
			}
		}
		if len(evs) == 0 {
			t.Fatal("no events")
		}
		first, ok := evs[0].(*a2ago.Task)
		if !ok || first.ID != task.ID || first.Status.State.Terminal() {
			t.Fatalf("first event %s, want the running task %s", goEventKind(evs[0]), task.ID)
		}
		var text strings.Builder
		for _, ev := range evs[1:] {
			if au, ok := ev.(*a2ago.TaskArtifactUpdateEvent); ok {
				text.WriteString(goPartsText(au.Artifact.Parts))
			}
		}
		last, ok := evs[len(evs)-1].(*a2ago.TaskStatusUpdateEvent)
		if !ok || last.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("last event %s, want status(COMPLETED)", goEventKind(evs[len(evs)-1]))
		}
		if text.String() != heldText("sub") {
			t.Errorf("chunks after subscribing concatenate to %q, want %q", text.String(), heldText("sub"))
		}
	})

	t.Run("PushConfig", func(t *testing.T) {
		hook := startWebhook(t)
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage(echo.InputPrefix + " push")})
		created, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{
			TaskID: task.ID, URL: hook.URL, Token: "go-token",
			Auth: &a2ago.PushAuthInfo{Scheme: "Bearer", Credentials: "secret"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if created.ID == "" || created.TaskID != task.ID || created.URL != hook.URL || created.Token != "go-token" ||
			created.Auth == nil || created.Auth.Scheme != "Bearer" || created.Auth.Credentials != "secret" {
			t.Fatalf("created %+v", created)
		}
		got, err := c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, created) {
			t.Errorf("GetTaskPushConfig %+v, want %+v", got, created)
		}
		list, err := c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].ID != created.ID {
			t.Fatalf("ListTaskPushConfigs: %+v, want the one config", list)
		}

		follow := goTextMessage("pushed")
		follow.TaskID = task.ID
		if done := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: follow}); done.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("follow-up: %s", done.Status.State)
		}
		hook.await(t, "of the task's completion", func(d delivery) bool {
			var sr a2ago.StreamResponse
			if json.Unmarshal(d.Body, &sr) != nil {
				return false
			}
			st, ok := sr.Event.(*a2ago.TaskStatusUpdateEvent)
			return ok && st.TaskID == task.ID && st.Status.State == a2ago.TaskStateCompleted
		})

		if err := c.DeleteTaskPushConfig(ctx, &a2ago.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); err != nil {
			t.Fatal(err)
		}
		list, err = c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil || len(list) != 0 {
			t.Fatalf("after delete: %+v, %v; want none", list, err)
		}
		if _, err := c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); !errors.Is(err, a2ago.ErrTaskNotFound) {
			t.Errorf("getting the deleted config: %v, want ErrTaskNotFound", err)
		}
	})

	t.Run("GetExtendedAgentCard", func(t *testing.T) {
		ext := startOurGRPCServer(t, ourOptions{extended: extendedCardFor})
		got, err := newGoGRPCClient(t, ctx, ext.URL).GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "echo-extended" || len(got.Skills) != 2 || !got.Capabilities.ExtendedAgentCard {
			t.Errorf("extended card %+v, want echo-extended with 2 skills", got)
		}

		// Declared but not configured: -32007, FAILED_PRECONDITION.
		_, err = c.GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{})
		if !errors.Is(err, a2ago.ErrExtendedCardNotConfigured) {
			t.Errorf("extended card not configured: got %v, want ErrExtendedCardNotConfigured", err)
		}
		_, err = newGoStub(t, srv.URL).GetExtendedAgentCard(ctx, &gopb.GetExtendedAgentCardRequest{})
		if code, reason, domain := wireStatus(err); code != codes.FailedPrecondition || reason != "EXTENDED_AGENT_CARD_NOT_CONFIGURED" || domain != "a2a-protocol.org" {
			t.Errorf("on the wire: %v %s/%s, want FAILED_PRECONDITION with ErrorInfo a2a-protocol.org/EXTENDED_AGENT_CARD_NOT_CONFIGURED", code, domain, reason)
		}

		// Not declared: -32004 (UnsupportedOperationError), also
		// FAILED_PRECONDITION, told apart by the ErrorInfo's reason.
		plain := startOurGRPCServer(t, ourOptions{})
		_, err = newGoGRPCClient(t, ctx, plain.URL).GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{})
		if !errors.Is(err, a2ago.ErrUnsupportedOperation) {
			t.Errorf("extended card not declared: got %v, want ErrUnsupportedOperation", err)
		}
		_, err = newGoStub(t, plain.URL).GetExtendedAgentCard(ctx, &gopb.GetExtendedAgentCardRequest{})
		if code, reason, domain := wireStatus(err); code != codes.FailedPrecondition || reason != "UNSUPPORTED_OPERATION" || domain != "a2a-protocol.org" {
			t.Errorf("on the wire: %v %s/%s, want FAILED_PRECONDITION with ErrorInfo a2a-protocol.org/UNSUPPORTED_OPERATION", code, domain, reason)
		}

		// Quirk: an a2a-go client made from a card that declares no
		// extended card answers the call itself, without asking the
		// server, with ErrExtendedCardNotConfigured (-32007) where the
		// specification (§3.1.11) has UnsupportedOperationError (-32004).
		fromCard, err := a2aclient.NewFromCard(ctx, &a2ago.AgentCard{
			Name: "echo", SupportedInterfaces: []*a2ago.AgentInterface{{URL: plain.URL, ProtocolBinding: a2ago.TransportProtocolGRPC, ProtocolVersion: a2ago.Version}},
		}, a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
		if err != nil {
			t.Fatal(err)
		}
		defer fromCard.Destroy()
		if _, err := fromCard.GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{}); !errors.Is(err, a2ago.ErrExtendedCardNotConfigured) {
			t.Errorf("client from a card without an extended card: %v; it used to answer ErrExtendedCardNotConfigured itself (has a2a-go changed?)", err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		done := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("done")})
		follow := goTextMessage("too late")
		follow.TaskID = done.ID
		negative := -1
		checks := []struct {
			name string
			err  error
			want error
		}{
			{"GetTask unknown", second(c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "no-such-task"})), a2ago.ErrTaskNotFound},
			{"CancelTask unknown", second(c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: "no-such-task"})), a2ago.ErrTaskNotFound},
			{"CancelTask completed", second(c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: done.ID})), a2ago.ErrTaskNotCancelable},
			{"SendMessage to a completed task", second(c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: follow})), a2ago.ErrUnsupportedOperation},
			{"SendMessage to an unknown task", second(c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: &a2ago.Message{ID: a2ago.NewMessageID(), TaskID: "no-such-task", Role: a2ago.MessageRoleUser, Parts: a2ago.ContentParts{a2ago.NewTextPart("x")}}})), a2ago.ErrTaskNotFound},
			{"SubscribeToTask completed", streamErr(c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: done.ID})), a2ago.ErrUnsupportedOperation},
			{"SubscribeToTask unknown", streamErr(c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: "no-such-task"})), a2ago.ErrTaskNotFound},
			{"GetTask negative historyLength", second(c.GetTask(ctx, &a2ago.GetTaskRequest{ID: done.ID, HistoryLength: &negative})), a2ago.ErrInvalidParams},
			{"SendMessage without parts", second(c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: &a2ago.Message{ID: a2ago.NewMessageID(), Role: a2ago.MessageRoleUser}})), a2ago.ErrInvalidParams},
			{"SendMessage with an unaccepted media type", second(c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: &a2ago.Message{ID: a2ago.NewMessageID(), Role: a2ago.MessageRoleUser, Parts: a2ago.ContentParts{{Content: a2ago.Raw("png"), MediaType: "image/png"}}}})), a2ago.ErrUnsupportedContentType},
			{"GetTaskPushConfig unknown config", second(c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: done.ID, ID: "no-such-config"})), a2ago.ErrTaskNotFound},
			{"CreateTaskPushConfig refused URL", second(c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: done.ID, URL: "http://169.254.169.254/latest"})), a2ago.ErrInvalidParams},
		}
		for _, ch := range checks {
			if !errors.Is(ch.err, ch.want) {
				t.Errorf("%s: got %v, want %v", ch.name, ch.err, ch.want)
			}
		}
		// The status message survives: a2a-go keeps it as the error's.
		_, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "no-such-task"})
		var ae *a2ago.Error
		if !errors.As(err, &ae) || !strings.Contains(ae.Message, "no-such-task") {
			t.Errorf("task not found: %#v, want an *a2a.Error naming the task", err)
		}
		_, err = newGoStub(t, srv.URL).GetTask(ctx, &gopb.GetTaskRequest{Id: "no-such-task"})
		if code, reason, _ := wireStatus(err); code != codes.NotFound || reason != "TASK_NOT_FOUND" {
			t.Errorf("task not found on the wire: %v %s, want NOT_FOUND with ErrorInfo TASK_NOT_FOUND", code, reason)
		}
	})

	t.Run("Version", func(t *testing.T) {
		// a2a-go sends a2a-version: 1.0 on every call; a patch version is
		// the same version.
		for _, v := range []string{"1.0", "1.0.1"} {
			vc := newGoGRPCClient(t, ctx, srv.URL, a2aclient.WithCallInterceptors(versionOverride{version: v}))
			if _, err := vc.SendMessage(ctx, &a2ago.SendMessageRequest{Message: goTextMessage("v" + v)}); err != nil {
				t.Errorf("a2a-version %s: %v", v, err)
			}
		}
		for _, v := range []string{"0.3", "9.9"} {
			vc := newGoGRPCClient(t, ctx, srv.URL, a2aclient.WithCallInterceptors(versionOverride{version: v}))
			if _, err := vc.GetTask(ctx, &a2ago.GetTaskRequest{ID: "any"}); !errors.Is(err, a2ago.ErrVersionNotSupported) {
				t.Errorf("a2a-version %s: got %v, want ErrVersionNotSupported", v, err)
			}
		}
		// Without the key the call is taken as 1.0.
		if _, err := newGoStub(t, srv.URL).GetTask(ctx, &gopb.GetTaskRequest{Id: "no-such-task"}); status.Code(err) != codes.NotFound {
			t.Errorf("no a2a-version: %v, want the call served (NOT_FOUND)", err)
		}
		md := metadata.Pairs("a2a-version", "9.9")
		_, err := newGoStub(t, srv.URL).GetTask(metadata.NewOutgoingContext(ctx, md), &gopb.GetTaskRequest{Id: "no-such-task"})
		if code, reason, _ := wireStatus(err); code != codes.FailedPrecondition || reason != "VERSION_NOT_SUPPORTED" {
			t.Errorf("a2a-version 9.9 on the wire: %v %s, want FAILED_PRECONDITION with ErrorInfo VERSION_NOT_SUPPORTED", code, reason)
		}
	})

	t.Run("Errors/Capabilities", func(t *testing.T) {
		// A server whose card declares neither streaming nor push, and
		// requires an extension.
		const ext = "urn:a2amesh:interop:required"
		bare := startOurGRPCServer(t, ourOptions{card: func(c *a2a.AgentCard) {
			c.Capabilities = a2a.AgentCapabilities{Extensions: []a2a.AgentExtension{{URI: ext, Required: true}}}
		}})
		bc := newGoGRPCClient(t, ctx, bare.URL)
		if _, err := bc.SendMessage(ctx, &a2ago.SendMessageRequest{Message: goTextMessage("x")}); !errors.Is(err, a2ago.ErrExtensionSupportRequired) {
			t.Errorf("send without the required extension: got %v, want ErrExtensionSupportRequired", err)
		}
		// a2a-extensions travels as gRPC metadata.
		extCtx := a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{"A2A-Extensions": {ext}})
		task := goSendTask(t, extCtx, bc, &a2ago.SendMessageRequest{Message: goTextMessage("with the extension")})
		if task.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("send with the extension: %s", task.Status.State)
		}
		if _, err := bc.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: task.ID, URL: "http://127.0.0.1:1/hook"}); !errors.Is(err, a2ago.ErrPushNotificationNotSupported) {
			t.Errorf("push on an agent without push: got %v, want ErrPushNotificationNotSupported", err)
		}
		if err := streamErr(bc.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: task.ID})); !errors.Is(err, a2ago.ErrUnsupportedOperation) {
			t.Errorf("subscribe on an agent without streaming: got %v, want ErrUnsupportedOperation", err)
		}
		if err := streamErr(bc.SendStreamingMessage(extCtx, &a2ago.SendMessageRequest{Message: goTextMessage("stream")})); !errors.Is(err, a2ago.ErrUnsupportedOperation) {
			t.Errorf("stream on an agent without streaming: got %v, want ErrUnsupportedOperation", err)
		}
	})
}

// partsAgent completes each task with one artifact holding the parts of
// the message it was sent, unchanged (or reply, when set), and keeps each
// message it receives by id, so that a test sees both directions of the
// wire: what reached the server and what came back.
type partsAgent struct {
	reply []a2a.Part
	mu    sync.Mutex
	got   map[string]a2a.Message
}

func (p *partsAgent) Execute(_ context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		p.mu.Lock()
		if p.got == nil {
			p.got = make(map[string]a2a.Message)
		}
		p.got[req.Message.MessageID] = *req.Message
		p.mu.Unlock()
		parts := p.reply
		if parts == nil {
			parts = req.Message.Parts
		}
		art := a2a.Artifact{ArtifactID: "parts", Parts: parts}
		if yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, false, true), nil) {
			yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil), nil)
		}
	}
}

func (p *partsAgent) Cancel(context.Context, *a2a.Task) error { return nil }

// received returns the message of id as the agent received it.
func (p *partsAgent) received(t *testing.T, id string) a2a.Message {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.got[id]
	if !ok {
		t.Fatalf("the agent received no message %s", id)
	}
	return m
}

// acceptAnyMedia lets a card take the media types the parts tests send.
func acceptAnyMedia(c *a2a.AgentCard) {
	c.DefaultInputModes = []string{"text/plain", "application/octet-stream", "application/pdf", "application/json"}
}

// jsonOf returns v as the A2A JSON of the specification, decoded into
// generic values: the common ground on which parts of a2a-go's model and
// ours compare.
func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// goPartsOf returns the parts of the task's "parts" artifact.
func goPartsOf(t *testing.T, task *a2ago.Task) a2ago.ContentParts {
	t.Helper()
	for _, art := range task.Artifacts {
		if art.ID == "parts" {
			return art.Parts
		}
	}
	t.Fatalf("task %s has no parts artifact", task.ID)
	return nil
}

func TestA2AGoGRPCParts(t *testing.T) {
	ctx := testContext(t)
	agent := &partsAgent{}
	srv := startOurGRPCServer(t, ourOptions{executor: agent, card: acceptAnyMedia})
	c := newGoGRPCClient(t, ctx, srv.URL)

	// send sends parts from a2a-go and checks, in the spec's JSON, that
	// our server received them as sent and that a2a-go reads back the
	// same parts in the artifact and in the history.
	send := func(t *testing.T, parts ...*a2ago.Part) {
		t.Helper()
		msg := a2ago.NewMessage(a2ago.MessageRoleUser, parts...)
		msg.Metadata = map[string]any{"from": "a2a-go", "n": 2.5, "flag": true}
		task, err := c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: msg})
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		want := jsonOf(t, msg.Parts)
		got := agent.received(t, msg.ID)
		if g := jsonOf(t, got.Parts); !reflect.DeepEqual(g, want) {
			t.Errorf("our server received parts\n%v\nwant\n%v", g, want)
		}
		if g, w := jsonOf(t, got.Metadata), jsonOf(t, msg.Metadata); !reflect.DeepEqual(g, w) {
			t.Errorf("our server received message metadata %v, want %v", g, w)
		}
		tk := task.(*a2ago.Task)
		if g := jsonOf(t, goPartsOf(t, tk)); !reflect.DeepEqual(g, want) {
			t.Errorf("a2a-go read back artifact parts\n%v\nwant\n%v", g, want)
		}
		if len(tk.History) == 0 {
			t.Fatal("no history")
		}
		if g := jsonOf(t, tk.History[0].Parts); !reflect.DeepEqual(g, want) {
			t.Errorf("a2a-go read back history parts\n%v\nwant\n%v", g, want)
		}
	}

	t.Run("EveryKind", func(t *testing.T) {
		text := a2ago.NewTextPart("hello")
		text.Metadata = map[string]any{"k": "v", "n": 1.5, "l": []any{"a", 2.0}, "o": map[string]any{"deep": true}}
		raw := &a2ago.Part{Content: a2ago.Raw{0, 1, 2, 254, 255}, MediaType: "application/octet-stream", Filename: "f.bin"}
		url := &a2ago.Part{Content: a2ago.URL("https://example.com/f.pdf"), MediaType: "application/pdf", Filename: "f.pdf"}
		data := &a2ago.Part{Content: a2ago.Data{Value: map[string]any{"a": []any{1.0, "x", true}, "b": map[string]any{"c": 2.5}}}, MediaType: "application/json"}
		send(t, text, raw, url, data)
	})

	t.Run("Streaming", func(t *testing.T) {
		msg := a2ago.NewMessage(a2ago.MessageRoleUser,
			a2ago.NewTextPart("streamed"),
			&a2ago.Part{Content: a2ago.Raw("bytes"), MediaType: "application/octet-stream"},
			&a2ago.Part{Content: a2ago.Data{Value: map[string]any{"k": "v"}}})
		evs := goCollect(t, c.SendStreamingMessage(ctx, &a2ago.SendMessageRequest{Message: msg}))
		kinds := make([]string, len(evs))
		for i, ev := range evs {
			kinds[i] = goEventKind(ev)
		}
		if !slices.Equal(kinds, []string{"task(TASK_STATE_SUBMITTED)", "artifact", "status(TASK_STATE_COMPLETED)"}) {
			t.Fatalf("events %v, want the task, the artifact and COMPLETED", kinds)
		}
		au := evs[1].(*a2ago.TaskArtifactUpdateEvent)
		if g, w := jsonOf(t, au.Artifact.Parts), jsonOf(t, msg.Parts); !reflect.DeepEqual(g, w) {
			t.Errorf("streamed artifact parts\n%v\nwant\n%v", g, w)
		}
		if !au.LastChunk || au.Append {
			t.Errorf("append=%v lastChunk=%v, want false and true", au.Append, au.LastChunk)
		}
	})
}

// TestA2AGoGRPCZeroValues sends what protobuf holds as zero values inside
// a oneof: an empty text part, an empty file, and 0, false and "" in data
// and metadata (google.protobuf.Value is a oneof too). Each must reach
// both ends as sent: a oneof member that is set is on the wire even when
// its value is the zero value. (Kitex's codec, prutal v0.1.3, leaves such
// members out; our server writes its responses with internal/pbwire.)
func TestA2AGoGRPCZeroValues(t *testing.T) {
	ctx := testContext(t)
	agent := &partsAgent{}
	srv := startOurGRPCServer(t, ourOptions{executor: agent, card: acceptAnyMedia})
	c := newGoGRPCClient(t, ctx, srv.URL)
	zeros := map[string]any{"zero": 0.0, "no": false, "empty": "", "null": nil, "list": []any{0.0, false, ""}}

	tests := []struct {
		name  string
		parts []*a2ago.Part
	}{
		{"EmptyText", []*a2ago.Part{a2ago.NewTextPart(""), a2ago.NewTextPart("after")}},
		{"EmptyFile", []*a2ago.Part{{Content: a2ago.Raw{}, MediaType: "application/octet-stream", Filename: "empty.bin"}}},
		{"DataZeros", []*a2ago.Part{{Content: a2ago.Data{Value: zeros}}}},
		{"MetadataZeros", []*a2ago.Part{{Content: a2ago.Text("t"), Metadata: zeros}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := a2ago.NewMessage(a2ago.MessageRoleUser, tt.parts...)
			want := jsonOf(t, msg.Parts)
			res, err := c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: msg})
			if g := jsonOf(t, agent.received(t, msg.ID).Parts); !reflect.DeepEqual(g, want) {
				t.Errorf("our server received\n%v\nwant\n%v", g, want)
			}
			if err != nil {
				t.Fatalf("a2a-go could not read the reply: %v", err)
			}
			if g := jsonOf(t, goPartsOf(t, res.(*a2ago.Task))); !reflect.DeepEqual(g, want) {
				t.Errorf("a2a-go read back\n%v\nwant\n%v", g, want)
			}
		})
	}

	t.Run("EmptyTextOnTheWire", func(t *testing.T) {
		// Below a2a-go's conversion: the protobuf message as grpc-go and
		// the official runtime decode it.
		resp, err := newGoStub(t, srv.URL).SendMessage(ctx, &gopb.SendMessageRequest{Message: &gopb.Message{
			MessageId: a2ago.NewMessageID(), Role: gopb.Role_ROLE_USER,
			Parts: []*gopb.Part{{Content: &gopb.Part_Text{Text: ""}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		arts := resp.GetTask().GetArtifacts()
		if len(arts) != 1 || len(arts[0].Parts) != 1 {
			t.Fatalf("artifacts %v, want one with one part", arts)
		}
		if c, ok := arts[0].Parts[0].Content.(*gopb.Part_Text); !ok || c.Text != "" {
			t.Errorf("the part holds %#v, want the text member, empty", arts[0].Parts[0].Content)
		}
	})
}

// Quirk: a2a-go reads a data part only when its value is an object
// (pbconv reads google.protobuf.Value's struct_value; any other value
// becomes an empty map), and refuses to send any other. The specification
// (§4.1.6 Part; a2a.proto Part.data) allows any JSON value: array, string,
// number, boolean or null.
func TestA2AGoGRPCDataNotObject(t *testing.T) {
	ctx := testContext(t)
	reply := []a2a.Part{{Data: json.RawMessage(`[1,"x"]`)}, {Data: json.RawMessage(`"s"`)}, {Data: json.RawMessage(`7`)}}
	srv := startOurGRPCServer(t, ourOptions{executor: &partsAgent{reply: reply}})
	task := goSendTask(t, ctx, newGoGRPCClient(t, ctx, srv.URL), &a2ago.SendMessageRequest{Message: goTextMessage("data please")})
	for i, p := range goPartsOf(t, task) {
		if m, ok := p.Data().(map[string]any); !ok || len(m) != 0 {
			t.Errorf("part %d: a2a-go read %#v; it used to read non-object data as an empty map (has a2a-go fixed it?)", i, p.Data())
		}
	}
	// On the wire the values are there.
	resp, err := newGoStub(t, srv.URL).SendMessage(ctx, &gopb.SendMessageRequest{Message: &gopb.Message{
		MessageId: a2ago.NewMessageID(), Role: gopb.Role_ROLE_USER, Parts: []*gopb.Part{{Content: &gopb.Part_Text{Text: "x"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	for _, p := range resp.GetTask().GetArtifacts()[0].GetParts() {
		got = append(got, p.GetData().AsInterface())
	}
	if want := []any{[]any{1.0, "x"}, "s", 7.0}; !reflect.DeepEqual(got, want) {
		t.Errorf("on the wire: %#v, want %#v", got, want)
	}
	// a2a-go's client refuses to send non-object data at all.
	msg := a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewDataPart([]any{1.0}))
	if _, err := newGoGRPCClient(t, ctx, srv.URL).SendMessage(ctx, &a2ago.SendMessageRequest{Message: msg}); err == nil {
		t.Error("a2a-go sent a list as a data part; it used to refuse (has it been fixed?)")
	}
}

// A request over the server's limit (8 MiB by default) reaches grpc-go as
// RESOURCE_EXHAUSTED naming the sizes, and the connection goes on: the
// trailers our server writes for it decode with grpc-go's HPACK, and the
// next call on the same connection is answered.
func TestA2AGoGRPCRequestOverTheLimit(t *testing.T) {
	ctx := testContext(t)
	srv := startOurGRPCServer(t, ourOptions{})
	stub := newGoStub(t, srv.URL)
	send := func(text string) error {
		_, err := stub.SendMessage(ctx, &gopb.SendMessageRequest{Message: &gopb.Message{
			MessageId: a2ago.NewMessageID(), Role: gopb.Role_ROLE_USER, Parts: []*gopb.Part{{Content: &gopb.Part_Text{Text: text}}},
		}})
		return err
	}
	err := send(strings.Repeat("x", 9<<20))
	if st, _ := status.FromError(err); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "exceeds the server's limit of 8388608 bytes") {
		t.Fatalf("a request of 9 MiB: %v, want RESOURCE_EXHAUSTED with the sizes", err)
	}
	if err := send("small"); err != nil {
		t.Fatalf("the next call: %v", err)
	}
	// a2a-go's own client sees the same.
	_, err = newGoGRPCClient(t, ctx, srv.URL).SendMessage(ctx, &a2ago.SendMessageRequest{Message: goTextMessage(strings.Repeat("y", 9<<20))})
	// a2a-go makes an error of its own of the status, with its message.
	if err == nil || !strings.Contains(err.Error(), "request message of 9437239 bytes exceeds the server's limit of 8388608 bytes") {
		t.Errorf("a2a-go's client: %v, want the refusal", err)
	}
}
