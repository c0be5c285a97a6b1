package grpcclient

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/metadata"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/internal/pbconv"
)

// A status the server answers with is an *a2a.Error; one that stands for
// a failed connection is a cut on a stream.
func TestCallError(t *testing.T) {
	withDetails := func(code codes.Code, details ...*errdetails.ErrorInfo) error {
		st := status.New(code, "m")
		for _, d := range details {
			st, _ = st.WithDetails(d)
		}
		return st.Err()
	}
	busy, _ := status.New(codes.Unavailable, "busy").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Second)})
	tests := []struct {
		name string
		err  error
		want a2a.ErrorCode // 0: a transport failure
		text string        // the error says it too
	}{
		{"A2A error", withDetails(codes.FailedPrecondition, &errdetails.ErrorInfo{Domain: pbconv.ErrorDomain, Reason: "TASK_NOT_CANCELABLE"}), a2a.CodeTaskNotCancelable, ""},
		{"no ErrorInfo", withDetails(codes.NotFound), a2a.CodeTaskNotFound, ""},
		{"internal", withDetails(codes.Internal), a2a.CodeInternal, ""},
		{"unauthenticated", withDetails(codes.Unauthenticated), a2a.CodeUnauthenticated, ""},
		{"permission denied", withDetails(codes.PermissionDenied), a2a.CodePermissionDenied, ""},
		{"unknown: a grpc-go handler's plain error", withDetails(codes.Unknown), a2a.CodeInternal, "gRPC status Unknown"},
		{"busy", busy.Err(), a2a.CodeInternal, ""},
		{"connection closed", withDetails(codes.Unavailable), 0, "code = 14"},
		{"stream reset", withDetails(codes.Canceled), 0, ""},
		{"not a status", io.ErrUnexpectedEOF, 0, "unexpected EOF"},
	}
	tr := &grpcTransport{addr: "127.0.0.1:1"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				err := tr.callError("Op", tt.err, stream)
				var e *a2a.Error
				isA2A := errors.As(err, &e)
				switch {
				case tt.want != 0 && (!isA2A || e.Code != tt.want):
					t.Errorf("stream %v: %v, want code %d", stream, err, tt.want)
				case tt.want != 0 && errors.Is(err, client.ErrStreamCut):
					t.Errorf("stream %v: %v is a cut", stream, err)
				case tt.want == 0 && errors.Is(err, client.ErrStreamCut) != stream:
					t.Errorf("stream %v: %v, want a cut: %v", stream, err, stream)
				case tt.want == 0 && isA2A:
					t.Errorf("stream %v: %v is an A2A error", stream, err)
				}
				if !strings.Contains(err.Error(), tt.text) {
					t.Errorf("%q does not say %q", err, tt.text)
				}
			}
		})
	}
}

// A call's headers become its metadata, under lower-case keys, but for
// those of the binding and of HTTP/2.
func TestOutgoing(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer t")
	h.Add("X-Api-Key", "k")
	h.Add("X-Multi", "a")
	h.Add("X-Multi", "b")
	h.Set("Content-Type", "text/plain")
	h.Set("A2A-Version", "0.3")
	h.Set("Grpc-Timeout", "1S")
	md, _ := metadata.FromOutgoingContext(outgoing(t.Context(), h, "7"))
	want := metadata.MD{
		"a2a-version": {"1.0"}, "authorization": {"Bearer t"}, "x-api-key": {"k"}, "x-multi": {"a", "b"}, "last-event-id": {"7"},
	}
	if len(md) != len(want) {
		t.Errorf("metadata %v, want %v", md, want)
	}
	for k, vs := range want {
		if got := md.Get(k); strings.Join(got, ",") != strings.Join(vs, ",") {
			t.Errorf("%s: %v, want %v", k, got, vs)
		}
	}
}

func TestAddress(t *testing.T) {
	tests := []struct{ url, want string }{
		{"127.0.0.1:9000", "127.0.0.1:9000"},
		{"agents.example.com:443", "agents.example.com:443"},
		{"[::1]:9000", "[::1]:9000"},
		{"grpc://127.0.0.1:9000", "127.0.0.1:9000"},
		{"grpc://127.0.0.1:9000/", "127.0.0.1:9000"},
		{"http://127.0.0.1:9000", ""},
		{"grpc://127.0.0.1:9000/a2a", ""},
		{"grpc://user@127.0.0.1:9000", ""},
		{"127.0.0.1", ""},
		{":9000", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := address(tt.url)
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("address(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
		}
	}
}
