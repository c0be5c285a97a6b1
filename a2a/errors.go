package a2a

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrorCode is a JSON-RPC error code: the standard JSON-RPC codes and the
// A2A-specific ones (-32001 to -32009, and -32010 of the 1.1 draft). gRPC
// and HTTP bindings map them to their own status codes.
type ErrorCode int

// The error codes of JSON-RPC 2.0 and A2A.
const (
	CodeParseError     ErrorCode = -32700 // the body is not valid JSON
	CodeInvalidRequest ErrorCode = -32600 // valid JSON, but not a JSON-RPC request
	CodeMethodNotFound ErrorCode = -32601
	CodeInvalidParams  ErrorCode = -32602
	CodeInternal       ErrorCode = -32603

	CodeTaskNotFound                   ErrorCode = -32001
	CodeTaskNotCancelable              ErrorCode = -32002
	CodePushNotificationNotSupported   ErrorCode = -32003
	CodeUnsupportedOperation           ErrorCode = -32004
	CodeContentTypeNotSupported        ErrorCode = -32005
	CodeInvalidAgentResponse           ErrorCode = -32006
	CodeExtendedAgentCardNotConfigured ErrorCode = -32007
	CodeExtensionSupportRequired       ErrorCode = -32008
	CodeVersionNotSupported            ErrorCode = -32009
	// CodeTaskGenerationMismatch refuses a message whose
	// SendMessageConfiguration.IfGenerationMatch is not the task's
	// generation (gRPC ABORTED, HTTP 409): the A2A 1.1 draft's
	// TaskGenerationMismatchError, which a2amesh answers with only when
	// the GenerationExtension is active.
	CodeTaskGenerationMismatch ErrorCode = -32010

	// The caller is not authenticated (HTTP 401, gRPC UNAUTHENTICATED) or
	// may not do what it asks (HTTP 403, gRPC PERMISSION_DENIED). The
	// specification leaves their JSON-RPC codes to implementations; these
	// are the ones a2a-go uses, so that its clients recognize them.
	CodeUnauthenticated  ErrorCode = -31401
	CodePermissionDenied ErrorCode = -31403
)

var codeNames = map[ErrorCode]struct{ reason, text string }{
	CodeParseError:                     {"PARSE_ERROR", "invalid JSON payload"},
	CodeInvalidRequest:                 {"INVALID_REQUEST", "invalid JSON-RPC request"},
	CodeMethodNotFound:                 {"METHOD_NOT_FOUND", "method not found"},
	CodeInvalidParams:                  {"INVALID_PARAMS", "invalid parameters"},
	CodeInternal:                       {"INTERNAL_ERROR", "internal error"},
	CodeTaskNotFound:                   {"TASK_NOT_FOUND", "task not found"},
	CodeTaskNotCancelable:              {"TASK_NOT_CANCELABLE", "task cannot be canceled"},
	CodePushNotificationNotSupported:   {"PUSH_NOTIFICATION_NOT_SUPPORTED", "push notifications are not supported"},
	CodeUnsupportedOperation:           {"UNSUPPORTED_OPERATION", "operation not supported"},
	CodeContentTypeNotSupported:        {"CONTENT_TYPE_NOT_SUPPORTED", "content type not supported"},
	CodeInvalidAgentResponse:           {"INVALID_AGENT_RESPONSE", "invalid agent response"},
	CodeExtendedAgentCardNotConfigured: {"EXTENDED_AGENT_CARD_NOT_CONFIGURED", "extended agent card not configured"},
	CodeExtensionSupportRequired:       {"EXTENSION_SUPPORT_REQUIRED", "extension support required"},
	CodeVersionNotSupported:            {"VERSION_NOT_SUPPORTED", "protocol version not supported"},
	CodeTaskGenerationMismatch:         {"TASK_GENERATION_MISMATCH", "task generation mismatch"},
	CodeUnauthenticated:                {"UNAUTHENTICATED", "authentication required"},
	// "UNAUTHORIZED" is a2a-go's reason for a refusal to an authenticated
	// caller: its clients know the error by it (the status beside it says
	// PERMISSION_DENIED, as gRPC names it).
	CodePermissionDenied: {"UNAUTHORIZED", "permission denied"},
}

// Reason returns the code's upper-case name, as used in google.rpc.ErrorInfo
// ("TASK_NOT_FOUND"), or "" for a code A2A does not define.
func (c ErrorCode) Reason() string { return codeNames[c].reason }

// CodeForReason returns the code whose Reason is reason, as a
// google.rpc.ErrorInfo names it on the gRPC and HTTP+JSON bindings.
// Earlier a2amesh servers named CodePermissionDenied PERMISSION_DENIED,
// which is still read as that code.
func CodeForReason(reason string) (ErrorCode, bool) {
	if reason == "PERMISSION_DENIED" {
		return CodePermissionDenied, true
	}
	for c, n := range codeNames {
		if n.reason == reason {
			return c, true
		}
	}
	return 0, false
}

func (c ErrorCode) String() string {
	if n, ok := codeNames[c]; ok {
		return n.text
	}
	return "error " + strconv.Itoa(int(c))
}

// Error is a protocol error: what a server returns and a client receives.
// Compare with errors.Is against the Err* values, which match on Code.
type Error struct {
	Code ErrorCode
	// Message says what went wrong and, where possible, what to do.
	Message string
	// Details are the JSON-RPC error's data entries, typically objects with
	// an "@type" key such as google.rpc.ErrorInfo.
	Details []any
	// Metadata are facts about the error by name (the task, the
	// generations compared), which travel as the metadata of the
	// google.rpc.ErrorInfo naming the error's code on the 1.0 bindings.
	Metadata map[string]string
	// RetryAfter, when positive, says the call failed only for now (the
	// agent is at a limit, or something it needs is briefly unavailable)
	// and the same call may succeed if repeated after this long. It
	// travels as a google.rpc.RetryInfo detail and an HTTP Retry-After
	// header. See Busy.
	RetryAfter time.Duration
	// Challenge, on an authentication error, is the WWW-Authenticate
	// value that says how to authenticate; HTTP bindings send it as that
	// header, gRPC as metadata of the same name.
	Challenge string
	cause     error
}

// Busy returns an internal error (-32603) that a client may retry after
// retryAfter: the agent is at one of its limits (concurrent runs, live
// tasks) or cannot reach something it needs for now. The specification
// files rate limits and temporary unavailability under -32603 with retry
// guidance; RetryAfter is that guidance.
func Busy(retryAfter time.Duration, format string, args ...any) *Error {
	e := Errorf(CodeInternal, format, args...)
	e.RetryAfter = retryAfter
	return e
}

// Errorf returns an *Error with the code and a formatted message. A %w verb
// wraps an error, which Unwrap then returns.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), cause: errors.Unwrap(err)}
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "a2a: " + e.Code.String()
	}
	return "a2a: " + e.Message
}

// Unwrap returns the error this one wraps, if any.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, a2a.ErrTaskNotFound) holds for any task-not-found error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinel errors, one per code, for errors.Is. Return Errorf with a
// specific message rather than these.
var (
	ErrParseError                     = &Error{Code: CodeParseError}
	ErrInvalidRequest                 = &Error{Code: CodeInvalidRequest}
	ErrMethodNotFound                 = &Error{Code: CodeMethodNotFound}
	ErrInvalidParams                  = &Error{Code: CodeInvalidParams}
	ErrInternal                       = &Error{Code: CodeInternal}
	ErrTaskNotFound                   = &Error{Code: CodeTaskNotFound}
	ErrTaskNotCancelable              = &Error{Code: CodeTaskNotCancelable}
	ErrPushNotificationNotSupported   = &Error{Code: CodePushNotificationNotSupported}
	ErrUnsupportedOperation           = &Error{Code: CodeUnsupportedOperation}
	ErrContentTypeNotSupported        = &Error{Code: CodeContentTypeNotSupported}
	ErrInvalidAgentResponse           = &Error{Code: CodeInvalidAgentResponse}
	ErrExtendedAgentCardNotConfigured = &Error{Code: CodeExtendedAgentCardNotConfigured}
	ErrExtensionSupportRequired       = &Error{Code: CodeExtensionSupportRequired}
	ErrVersionNotSupported            = &Error{Code: CodeVersionNotSupported}
	ErrTaskGenerationMismatch         = &Error{Code: CodeTaskGenerationMismatch}
	ErrUnauthenticated                = &Error{Code: CodeUnauthenticated}
	ErrPermissionDenied               = &Error{Code: CodePermissionDenied}
)

// AsError returns err as an *Error: itself or the *Error it wraps, or else an
// internal error whose message is err's text.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error(), cause: err}
}
