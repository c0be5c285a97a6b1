package pbconv

import (
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/a2amesh/a2amesh/a2a"
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
	case a2a.CodeUnauthenticated:
		return codes.Unauthenticated
	case a2a.CodePermissionDenied:
		return codes.PermissionDenied
	case a2a.CodeTaskGenerationMismatch:
		return codes.Aborted
	}
	return codes.Internal // CodeInternal, CodeInvalidAgentResponse and any other
}

// errorCode is the inverse of grpcCode for a status without an ErrorInfo:
// the A2A code nearest to a gRPC status code. FAILED_PRECONDITION, which
// stands for several A2A errors, becomes UnsupportedOperation (the call is
// not possible in the task's or agent's state); codes A2A has no error for
// (UNAVAILABLE, ...) become internal errors.
func errorCode(c codes.Code) a2a.ErrorCode {
	switch c {
	case codes.NotFound:
		return a2a.CodeTaskNotFound
	case codes.FailedPrecondition:
		return a2a.CodeUnsupportedOperation
	case codes.InvalidArgument:
		return a2a.CodeInvalidParams
	case codes.Unimplemented:
		return a2a.CodeMethodNotFound
	case codes.Unauthenticated:
		return a2a.CodeUnauthenticated
	case codes.PermissionDenied:
		return a2a.CodePermissionDenied
	}
	return a2a.CodeInternal
}

// isA2ACode reports whether c is one of the A2A-specific codes, whose
// status must carry a google.rpc.ErrorInfo naming it.
func isA2ACode(c a2a.ErrorCode) bool {
	return c <= a2a.CodeTaskNotFound && c >= a2a.CodeTaskGenerationMismatch
}

// StatusOf returns the gRPC status of an A2A error: the code of the
// specification's mapping, the error's message, a google.rpc.ErrorInfo for
// the A2A-specific codes (with the error's Metadata) and a
// google.rpc.RetryInfo for retryable errors. A
// retryable internal error (a2a.Busy) is UNAVAILABLE, the code gRPC clients
// retry on. The error reports details that do not encode; the status is
// then returned without them.
func StatusOf(e *a2a.Error) (*status.Status, error) {
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
		details = append(details, &errdetails.ErrorInfo{Reason: e.Code.Reason(), Domain: ErrorDomain, Metadata: e.Metadata})
	}
	if e.RetryAfter > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(e.RetryAfter)})
	}
	if len(details) == 0 {
		return st, nil
	}
	withDetails, err := st.WithDetails(details...)
	if err != nil {
		return st, err
	}
	return withDetails, nil
}

// ErrorOf returns the A2A error a gRPC status stands for: the code its
// google.rpc.ErrorInfo names (in ErrorDomain), with the ErrorInfo's
// metadata, else the code nearest to its status code; a
// google.rpc.RetryInfo becomes RetryAfter. hasInfo reports whether an
// ErrorInfo named the code.
func ErrorOf(st *status.Status) (e *a2a.Error, hasInfo bool) {
	e = &a2a.Error{Code: errorCode(st.Code()), Message: st.Message()}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			if d.Domain != ErrorDomain {
				continue
			}
			if c, ok := a2a.CodeForReason(d.Reason); ok {
				e.Code, hasInfo = c, true
				if len(d.Metadata) > 0 {
					e.Metadata = d.Metadata
				}
			}
		case *errdetails.RetryInfo:
			if delay := d.GetRetryDelay().AsDuration(); delay > 0 {
				e.RetryAfter = delay
			}
		}
	}
	return e, hasInfo
}
