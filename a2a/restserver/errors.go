package restserver

import (
	"strconv"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// errorDomain is the google.rpc.ErrorInfo domain of A2A errors.
const errorDomain = "a2a-protocol.org"

// The google.rpc.Code names of the statuses the binding answers with.
const (
	statusInvalidArgument    = "INVALID_ARGUMENT"
	statusFailedPrecondition = "FAILED_PRECONDITION"
	statusNotFound           = "NOT_FOUND"
	statusUnauthenticated    = "UNAUTHENTICATED"
	statusPermissionDenied   = "PERMISSION_DENIED"
	statusAborted            = "ABORTED"
	statusUnimplemented      = "UNIMPLEMENTED"
	statusUnavailable        = "UNAVAILABLE"
	statusInternal           = "INTERNAL"
)

// httpStatus returns the HTTP status of an A2A error and the
// google.rpc.Code name that goes with it: the specification's table (§5.4)
// for the A2A codes, 400 for requests that do not decode, 404 for a route
// that is not served, 500 for internal errors. A retryable internal error
// (a2a.Busy) is 503, which HTTP clients and proxies retry after
// Retry-After.
func httpStatus(e *a2a.Error) (int, string) {
	switch e.Code {
	case a2a.CodeTaskNotFound, a2a.CodeMethodNotFound:
		return 404, statusNotFound
	case a2a.CodeTaskNotCancelable, a2a.CodePushNotificationNotSupported, a2a.CodeUnsupportedOperation,
		a2a.CodeExtendedAgentCardNotConfigured, a2a.CodeExtensionSupportRequired, a2a.CodeVersionNotSupported:
		return 400, statusFailedPrecondition
	case a2a.CodeContentTypeNotSupported, a2a.CodeInvalidParams, a2a.CodeInvalidRequest, a2a.CodeParseError:
		return 400, statusInvalidArgument
	case a2a.CodeUnauthenticated:
		return 401, statusUnauthenticated
	case a2a.CodePermissionDenied:
		return 403, statusPermissionDenied
	case a2a.CodeTaskGenerationMismatch:
		// 409, as the 1.1 draft's text and table say (its proto comment
		// too); the commit that added it says 412 in its message only.
		return 409, statusAborted
	case a2a.CodeInternal:
		if e.RetryAfter > 0 {
			return 503, statusUnavailable
		}
	}
	return 500, statusInternal // CodeInternal, CodeInvalidAgentResponse and any other
}

// The @types of the details, in ProtoJSON's Any form.
const (
	errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"
	retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"
)

// appendStatus appends the google.rpc.Status JSON of e answered with the
// HTTP status code and its google.rpc.Code name (specification 11.6):
// {"error":{"code":404,"status":"NOT_FOUND","message":...,"details":[...]}}.
// The details start with a google.rpc.ErrorInfo naming the error's reason
// in the domain a2a-protocol.org (with the error's Metadata), then a
// google.rpc.RetryInfo when the error says when to retry, then the error's
// own details.
func appendStatus(dst []byte, code int, status string, e *a2a.Error) []byte {
	msg := e.Message
	if msg == "" {
		msg = e.Code.String()
	}
	dst = append(dst, `{"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","message":`...)
	dst = fastjson.AppendString(dst, msg)
	dst = append(dst, `,"details":[`...)
	n := len(dst)
	if reason := e.Code.Reason(); reason != "" {
		dst = append(dst, `{"@type":"`+errorInfoType+`","reason":"`...)
		dst = append(dst, reason...)
		dst = append(dst, `","domain":"`+errorDomain+`"`...)
		if len(e.Metadata) > 0 {
			dst = append(dst, `,"metadata":`...)
			dst, _ = fastjson.AppendAny(dst, e.Metadata) // a map of strings always encodes
		}
		dst = append(dst, '}')
	}
	if e.RetryAfter > 0 {
		if len(dst) > n {
			dst = append(dst, ',')
		}
		// A google.protobuf.Duration in ProtoJSON: seconds with an "s".
		dst = append(dst, `{"@type":"`+retryInfoType+`","retryDelay":"`...)
		dst = strconv.AppendFloat(dst, e.RetryAfter.Seconds(), 'f', -1, 64)
		dst = append(dst, `s"}`...)
	}
	for _, d := range e.Details {
		m := len(dst)
		if len(dst) > n {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = a2a.AppendJSON(dst, d); err != nil {
			dst = dst[:m] // a detail that does not encode is dropped, not the error
		}
	}
	return append(dst, "]}}"...)
}
