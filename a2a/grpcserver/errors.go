package grpcserver

import (
	"log/slog"

	"github.com/cloudwego/kitex/pkg/kerrors"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of A2A errors.
const ErrorDomain = "a2a-protocol.org"

// grpcCode returns the gRPC status code of an A2A error code: the
// specification's table (§5.4) for the A2A codes, the usual equivalents
// for JSON-RPC's own.
func grpcCode(c a2a.ErrorCode) codes.Code {
	switch c {
	case a2a.CodeTaskNotFound:
		return codes.NotFound
	case a2a.CodeTaskNotCancelable, a2a.CodePushNotificationNotSupported, a2a.CodeUnsupportedOperation,
		a2a.CodeExtendedAgentCardNotConfigured, a2a.CodeExtensionSupportRequired, a2a.CodeVersionNotSupported:
		return codes.FailedPrecondition
	case a2a.CodeContentTypeNotSupported, a2a.CodeInvalidParams, a2a.CodeInvalidRequest, a2a.CodeParseError:
		return codes.InvalidArgument
	case a2a.CodeMethodNotFound:
		return codes.Unimplemented
	}
	return codes.Internal // CodeInternal, CodeInvalidAgentResponse and any other
}

// isA2ACode reports whether c is one of the A2A-specific codes, whose
// status must carry a google.rpc.ErrorInfo naming it.
func isA2ACode(c a2a.ErrorCode) bool {
	return c <= a2a.CodeTaskNotFound && c >= a2a.CodeVersionNotSupported
}

// statusError returns err as the error a Kitex handler returns for a gRPC
// status: code per the specification, the error's message, a
// google.rpc.ErrorInfo for A2A errors and a google.rpc.RetryInfo for
// retryable ones. A retryable error (a2a.Busy) is UNAVAILABLE, the code
// gRPC clients retry on. The status travels as a Kitex GRPCBizStatusError:
// for a plain error Kitex would append " [biz error]" to the message.
func statusError(log *slog.Logger, method string, err error) error {
	e := server.ProtocolError(log, method, err)
	code := grpcCode(e.Code)
	if e.RetryAfter > 0 && e.Code == a2a.CodeInternal {
		code = codes.Unavailable
	}
	msg := e.Message
	if msg == "" {
		msg = e.Code.String()
	}
	st := status.New(code, msg)
	var details []proto.Message
	if isA2ACode(e.Code) {
		details = append(details, &errdetails.ErrorInfo{Reason: e.Code.Reason(), Domain: ErrorDomain})
	}
	if e.RetryAfter > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(e.RetryAfter)})
	}
	if len(details) > 0 {
		if withDetails, derr := st.WithDetails(details...); derr == nil {
			st = withDetails
		} else {
			log.Error("a2a: gRPC status details do not encode", "err", derr)
		}
	}
	be := kerrors.NewGRPCBizStatusError(int32(code), msg)
	be.(*kerrors.GRPCBizStatusError).SetGRPCStatus(st)
	return be
}
