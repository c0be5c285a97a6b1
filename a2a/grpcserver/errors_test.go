package grpcserver

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// Every A2A error becomes the status of the specification's table (§5.4),
// with an ErrorInfo for the A2A-specific codes; other errors are hidden
// behind INTERNAL; a retryable error is UNAVAILABLE with a RetryInfo.
func TestStatusError(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		err    error
		code   codes.Code
		msg    string
		reason string // ErrorInfo's, "" for none
		retry  time.Duration
	}{
		{a2a.Errorf(a2a.CodeTaskNotFound, "task %q not found", "t1"), codes.NotFound, `task "t1" not found`, "TASK_NOT_FOUND", 0},
		{a2a.Errorf(a2a.CodeTaskNotCancelable, "x"), codes.FailedPrecondition, "x", "TASK_NOT_CANCELABLE", 0},
		{a2a.Errorf(a2a.CodePushNotificationNotSupported, "x"), codes.FailedPrecondition, "x", "PUSH_NOTIFICATION_NOT_SUPPORTED", 0},
		{a2a.Errorf(a2a.CodeUnsupportedOperation, "x"), codes.FailedPrecondition, "x", "UNSUPPORTED_OPERATION", 0},
		{a2a.Errorf(a2a.CodeContentTypeNotSupported, "x"), codes.InvalidArgument, "x", "CONTENT_TYPE_NOT_SUPPORTED", 0},
		{a2a.Errorf(a2a.CodeInvalidAgentResponse, "x"), codes.Internal, "x", "INVALID_AGENT_RESPONSE", 0},
		{a2a.Errorf(a2a.CodeExtendedAgentCardNotConfigured, "x"), codes.FailedPrecondition, "x", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", 0},
		{a2a.Errorf(a2a.CodeExtensionSupportRequired, "x"), codes.FailedPrecondition, "x", "EXTENSION_SUPPORT_REQUIRED", 0},
		{a2a.Errorf(a2a.CodeVersionNotSupported, "x"), codes.FailedPrecondition, "x", "VERSION_NOT_SUPPORTED", 0},
		{a2a.Errorf(a2a.CodeTaskGenerationMismatch, "x"), codes.Aborted, "x", "TASK_GENERATION_MISMATCH", 0},
		{a2a.Errorf(a2a.CodeInvalidParams, "message.parts: required"), codes.InvalidArgument, "message.parts: required", "", 0},
		{a2a.Errorf(a2a.CodeMethodNotFound, "x"), codes.Unimplemented, "x", "", 0},
		{a2a.ErrTaskNotFound, codes.NotFound, "task not found", "TASK_NOT_FOUND", 0},
		{fmt.Errorf("wrapped: %w", a2a.Errorf(a2a.CodeTaskNotFound, "gone")), codes.NotFound, "gone", "TASK_NOT_FOUND", 0},
		{a2a.Busy(3*time.Second, "at the run limit"), codes.Unavailable, "at the run limit", "", 3 * time.Second},
		{fmt.Errorf("disk on fire"), codes.Internal, "internal error while serving M; see the server log", "", 0},
		{fmt.Errorf("load: %w", taskstore.ErrUnavailable), codes.Internal, "the agent's task storage cannot be reached at the moment; retry later", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			st, ok := status.FromError(statusError(log, "M", tt.err))
			if !ok {
				t.Fatal("no status")
			}
			if st.Code() != tt.code || st.Message() != tt.msg {
				t.Errorf("status %v %q, want %v %q", st.Code(), st.Message(), tt.code, tt.msg)
			}
			var reason string
			var retry time.Duration
			for _, d := range st.Details() {
				switch d := d.(type) {
				case *errdetails.ErrorInfo:
					if d.Domain != ErrorDomain {
						t.Errorf("ErrorInfo domain %q", d.Domain)
					}
					reason = d.Reason
				case *errdetails.RetryInfo:
					retry = d.RetryDelay.AsDuration()
				default:
					t.Errorf("unexpected detail %v", d)
				}
			}
			if reason != tt.reason || retry != tt.retry {
				t.Errorf("details: reason %q, retry %v; want %q, %v", reason, retry, tt.reason, tt.retry)
			}
		})
	}
}
