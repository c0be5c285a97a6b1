package pbconv

import (
	"testing"
	"time"

	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/a2amesh/a2amesh/a2a"
)

// Every A2A error survives the trip through its status, but for the
// JSON-RPC codes that share INVALID_ARGUMENT with invalid params.
func TestStatusRoundTrip(t *testing.T) {
	for _, c := range []a2a.ErrorCode{
		a2a.CodeTaskNotFound, a2a.CodeTaskNotCancelable, a2a.CodePushNotificationNotSupported, a2a.CodeUnsupportedOperation,
		a2a.CodeContentTypeNotSupported, a2a.CodeInvalidAgentResponse, a2a.CodeExtendedAgentCardNotConfigured,
		a2a.CodeExtensionSupportRequired, a2a.CodeVersionNotSupported, a2a.CodeTaskGenerationMismatch, a2a.CodeInvalidParams,
		a2a.CodeMethodNotFound, a2a.CodeInternal,
	} {
		in := a2a.Errorf(c, "what went wrong")
		st, err := StatusOf(in)
		if err != nil {
			t.Fatal(err)
		}
		out, hasInfo := ErrorOf(st)
		if out.Code != c || out.Message != in.Message || out.RetryAfter != 0 || hasInfo != isA2ACode(c) {
			t.Errorf("%v: came back as %+v (ErrorInfo %v)", c, out, hasInfo)
		}
	}
	st, _ := StatusOf(a2a.Busy(2*time.Second, "at the limit"))
	if out, _ := ErrorOf(st); out.Code != a2a.CodeInternal || out.RetryAfter != 2*time.Second {
		t.Errorf("busy came back as %+v", out)
	}
}

// A generation mismatch is ABORTED (the 1.1 draft's mapping) and its
// ErrorInfo carries the error's metadata, both ways.
func TestStatusOfGenerationMismatch(t *testing.T) {
	in := a2a.Errorf(a2a.CodeTaskGenerationMismatch, "task generation mismatch")
	in.Metadata = map[string]string{"taskId": "t", "expectedGeneration": "3", "currentGeneration": "5"}
	st, err := StatusOf(in)
	if err != nil {
		t.Fatal(err)
	}
	if st.Code() != codes.Aborted {
		t.Fatalf("code %v, want ABORTED", st.Code())
	}
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	if info == nil || info.Reason != "TASK_GENERATION_MISMATCH" || info.Domain != ErrorDomain || info.Metadata["currentGeneration"] != "5" {
		t.Fatalf("ErrorInfo %v", info)
	}
	out, hasInfo := ErrorOf(st)
	if !hasInfo || out.Code != a2a.CodeTaskGenerationMismatch || out.Metadata["expectedGeneration"] != "3" || out.Metadata["taskId"] != "t" {
		t.Fatalf("came back as %+v (ErrorInfo %v)", out, hasInfo)
	}
}

// A status from another server: the ErrorInfo's reason in A2A's domain
// decides, else the nearest code to the status code.
func TestErrorOf(t *testing.T) {
	info := func(domain, reason string) *errdetails.ErrorInfo {
		return &errdetails.ErrorInfo{Domain: domain, Reason: reason}
	}
	tests := []struct {
		name    string
		code    codes.Code
		details []*errdetails.ErrorInfo
		want    a2a.ErrorCode
		hasInfo bool
	}{
		{"reason", codes.FailedPrecondition, []*errdetails.ErrorInfo{info(ErrorDomain, "TASK_NOT_CANCELABLE")}, a2a.CodeTaskNotCancelable, true},
		{"reason against the code", codes.Internal, []*errdetails.ErrorInfo{info(ErrorDomain, "TASK_NOT_FOUND")}, a2a.CodeTaskNotFound, true},
		{"other domain", codes.FailedPrecondition, []*errdetails.ErrorInfo{info("example.com", "TASK_NOT_FOUND")}, a2a.CodeUnsupportedOperation, false},
		{"unknown reason", codes.NotFound, []*errdetails.ErrorInfo{info(ErrorDomain, "NO_SUCH_REASON")}, a2a.CodeTaskNotFound, false},
		{"not found", codes.NotFound, nil, a2a.CodeTaskNotFound, false},
		{"invalid argument", codes.InvalidArgument, nil, a2a.CodeInvalidParams, false},
		{"unimplemented", codes.Unimplemented, nil, a2a.CodeMethodNotFound, false},
		{"unauthenticated", codes.Unauthenticated, nil, a2a.CodeUnauthenticated, false},
		{"permission denied", codes.PermissionDenied, nil, a2a.CodePermissionDenied, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := status.New(tt.code, "m")
			for _, d := range tt.details {
				var err error
				if st, err = st.WithDetails(d); err != nil {
					t.Fatal(err)
				}
			}
			e, hasInfo := ErrorOf(st)
			if e.Code != tt.want || hasInfo != tt.hasInfo || e.Message != "m" {
				t.Errorf("got %+v (ErrorInfo %v), want code %v (ErrorInfo %v)", e, hasInfo, tt.want, tt.hasInfo)
			}
		})
	}
	st, _ := status.New(codes.Unavailable, "later").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Second)})
	if e, _ := ErrorOf(st); e.RetryAfter != time.Second || e.Code != a2a.CodeInternal {
		t.Errorf("retry info: %+v", e)
	}
}
