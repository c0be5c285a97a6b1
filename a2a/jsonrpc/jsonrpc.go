// Package jsonrpc is the JSON-RPC 2.0 envelope of A2A's JSON-RPC binding,
// shared by the server binding and the client: the method names of both
// protocol versions, request and response envelopes, the error object, and
// strict decoding of untrusted request bodies.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// Op is a protocol operation, independent of wire version.
type Op uint8

// The A2A operations.
const (
	OpSendMessage Op = iota + 1
	OpSendStreamingMessage
	OpGetTask
	OpListTasks
	OpCancelTask
	OpSubscribeToTask
	OpCreatePushConfig
	OpGetPushConfig
	OpListPushConfigs
	OpDeletePushConfig
	OpGetExtendedAgentCard
	numOps
)

// methodNames holds each operation's method name per wire version. The 0.3
// names are from the 0.3 specification, except tasks/list, which a2a-go's
// 0.3 line added.
var methodNames = [numOps][2]string{
	OpSendMessage:          {"SendMessage", "message/send"},
	OpSendStreamingMessage: {"SendStreamingMessage", "message/stream"},
	OpGetTask:              {"GetTask", "tasks/get"},
	OpListTasks:            {"ListTasks", "tasks/list"},
	OpCancelTask:           {"CancelTask", "tasks/cancel"},
	OpSubscribeToTask:      {"SubscribeToTask", "tasks/resubscribe"},
	OpCreatePushConfig:     {"CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/set"},
	OpGetPushConfig:        {"GetTaskPushNotificationConfig", "tasks/pushNotificationConfig/get"},
	OpListPushConfigs:      {"ListTaskPushNotificationConfigs", "tasks/pushNotificationConfig/list"},
	OpDeletePushConfig:     {"DeleteTaskPushNotificationConfig", "tasks/pushNotificationConfig/delete"},
	OpGetExtendedAgentCard: {"GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"},
}

var methods = func() map[string]methodInfo {
	m := make(map[string]methodInfo, 2*int(numOps))
	for op := OpSendMessage; op < numOps; op++ {
		m[methodNames[op][0]] = methodInfo{op, a2a.Version}
		m[methodNames[op][1]] = methodInfo{op, a2a.Version03}
	}
	return m
}()

type methodInfo struct {
	op      Op
	version string
}

// ReadOnly reports whether the operation only reads: calling it again
// changes nothing.
func (op Op) ReadOnly() bool {
	switch op {
	case OpGetTask, OpListTasks, OpGetPushConfig, OpListPushConfigs, OpGetExtendedAgentCard:
		return true
	}
	return false
}

// Method returns the operation's method name in the given protocol version
// ("1.0" or "0.3").
func (op Op) Method(version string) string {
	if op == 0 || op >= numOps {
		return ""
	}
	if version == a2a.Version03 {
		return methodNames[op][1]
	}
	return methodNames[op][0]
}

func (op Op) String() string { return op.Method(a2a.Version) }

// Streaming reports whether the operation answers with an SSE stream.
func (op Op) Streaming() bool { return op == OpSendStreamingMessage || op == OpSubscribeToTask }

// ParseMethod returns the operation a method name calls and the protocol
// version the name belongs to.
func ParseMethod(name string) (op Op, version string, ok bool) {
	m, ok := methods[name]
	return m.op, m.version, ok
}

// Request is a decoded JSON-RPC request envelope.
type Request struct {
	// ID is the raw JSON id: a string, a number or null; nil when absent
	// (a notification, which A2A still answers over HTTP).
	ID     json.RawMessage
	Method string
	// Params is the raw params object; nil when absent.
	Params json.RawMessage
}

// envelope holds the raw values of a request's members.
type envelope struct {
	JSONRPC, Method, ID, Params []byte
}

// scanEnvelope picks the members of a valid JSON object. Member names
// match exactly, as JSON-RPC requires (encoding/json would match any
// case); a repeated member's last value counts. The values alias obj.
func scanEnvelope(obj []byte) envelope {
	var env envelope
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		keyEnd := skipString(obj, i)
		key := obj[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal(obj[i:keyEnd], &k) == nil {
				key = []byte(k)
			}
		}
		start := skipSpace(obj, skipSpace(obj, keyEnd)+1) // past the colon
		end := skipValue(obj, start)
		switch string(key) {
		case "jsonrpc":
			env.JSONRPC = obj[start:end]
		case "method":
			env.Method = obj[start:end]
		case "id":
			env.ID = obj[start:end]
		case "params":
			env.Params = obj[start:end]
		}
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return env
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the valid JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// DecodeRequest decodes and checks a request body. Its errors carry the code
// JSON-RPC prescribes: CodeParseError for a body that is not JSON,
// CodeInvalidRequest for JSON that is not a single request object, and
// CodeInvalidParams for params that are not an object. When the body got as
// far as a valid id, the returned Request carries it, so the error reply can
// echo it. The Request's ID and Params alias body.
func DecodeRequest(body []byte) (Request, *a2a.Error) {
	var req Request
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) == 0 {
		return req, a2a.Errorf(a2a.CodeParseError, "request body is empty: want a JSON-RPC 2.0 request object")
	}
	if b[0] != '{' {
		if !json.Valid(b) {
			return req, parseError(b)
		}
		if b[0] == '[' {
			return req, a2a.Errorf(a2a.CodeInvalidRequest, "batch requests are not supported: send one JSON-RPC request object per HTTP request")
		}
		return req, a2a.Errorf(a2a.CodeInvalidRequest, "request must be a JSON object, got %s", jsonKind(b[0]))
	}
	if !json.Valid(b) {
		return req, parseError(b)
	}
	env := scanEnvelope(b)
	if env.ID != nil {
		switch c := env.ID[0]; {
		case c == '"' && !utf8.Valid(env.ID):
			// Echoed as it came, it would make the reply invalid JSON.
			return req, a2a.Errorf(a2a.CodeInvalidRequest, "id is a string that is not valid UTF-8")
		case c == '"', c == '-', c >= '0' && c <= '9':
			req.ID = env.ID
		case string(env.ID) == "null":
		default:
			return req, a2a.Errorf(a2a.CodeInvalidRequest, "id must be a string, a number or null, got %s", jsonKind(c))
		}
	}
	if string(env.JSONRPC) != `"2.0"` {
		if env.JSONRPC == nil {
			return req, a2a.Errorf(a2a.CodeInvalidRequest, `missing "jsonrpc": "2.0"`)
		}
		return req, a2a.Errorf(a2a.CodeInvalidRequest, `"jsonrpc" must be "2.0", got %s`, truncate(env.JSONRPC))
	}
	if env.Method == nil {
		return req, a2a.Errorf(a2a.CodeInvalidRequest, `missing "method"`)
	}
	if err := json.Unmarshal(env.Method, &req.Method); err != nil {
		return req, a2a.Errorf(a2a.CodeInvalidRequest, `"method" must be a string, got %s`, jsonKind(env.Method[0]))
	}
	if req.Method == "" {
		return req, a2a.Errorf(a2a.CodeInvalidRequest, `"method" must not be empty`)
	}
	if env.Params != nil && string(env.Params) != "null" {
		if env.Params[0] != '{' {
			return req, a2a.Errorf(a2a.CodeInvalidParams, `"params" must be an object (named parameters), got %s`, jsonKind(env.Params[0]))
		}
		req.Params = env.Params
	}
	return req, nil
}

func parseError(b []byte) *a2a.Error {
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return a2a.Errorf(a2a.CodeParseError, "request body is not valid JSON: %s at byte %d", se.Error(), se.Offset)
	}
	return a2a.Errorf(a2a.CodeParseError, "request body is not valid JSON: %v", err)
}

func jsonKind(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "invalid JSON"
}

func truncate(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// DecodeParams decodes a params object into a fresh v with a2a.Unmarshal.
// Its error has CodeInvalidParams and names the offending field the way the
// request spells it ("params.message.parts: ...").
func DecodeParams(params json.RawMessage, v any) *a2a.Error {
	if params == nil {
		params = []byte("{}")
	}
	if err := a2a.Unmarshal(params, v); err != nil {
		return ParamsError(err)
	}
	return nil
}

// ParamsError turns a decoding error into an invalid-params error that names
// the field.
func ParamsError(err error) *a2a.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := "params"
		if te.Field != "" {
			field += "." + te.Field
		}
		return a2a.Errorf(a2a.CodeInvalidParams, "%s: want %s, got a JSON %s", field, goTypeName(te.Type.String()), te.Value)
	}
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return ae
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return a2a.Errorf(a2a.CodeInvalidParams, "params: %s", msg)
}

func goTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return "an object"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	}
	return t
}

// ErrorObject is the JSON-RPC error object as it travels.
type ErrorObject struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Err returns the protocol error the object carries. 1.0 details (an array)
// become the error's Details; a 0.3 data object becomes its only detail. A
// google.rpc.RetryInfo detail (or a 0.3 object's retryDelay) sets
// RetryAfter; the metadata of a google.rpc.ErrorInfo of A2A's domain that
// names the error's code becomes its Metadata.
func (o *ErrorObject) Err() *a2a.Error {
	e := &a2a.Error{Code: a2a.ErrorCode(o.Code), Message: o.Message}
	if len(o.Data) > 0 {
		var details []any
		if err := json.Unmarshal(o.Data, &details); err != nil {
			var one any
			if json.Unmarshal(o.Data, &one) == nil && one != nil {
				details = []any{one}
			}
		}
		e.Details = details
	}
	for _, d := range e.Details {
		m, ok := d.(map[string]any)
		if !ok {
			continue
		}
		t, _ := m["@type"].(string)
		if t == errorInfoType {
			e.Metadata = infoMetadata(m, e.Code)
			continue
		}
		if t != retryInfoType && t != "" {
			continue
		}
		if delay, ok := m["retryDelay"].(string); ok {
			if d, err := time.ParseDuration(delay); err == nil && d > 0 {
				e.RetryAfter = d
			}
		}
	}
	return e
}

// The @types of google.rpc.ErrorInfo and RetryInfo in ProtoJSON Any form,
// and the ErrorInfo domain of A2A errors.
const (
	errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"
	retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"
	errorDomain   = "a2a-protocol.org"
)

// infoMetadata returns the string metadata of a decoded google.rpc.ErrorInfo
// that names code in A2A's domain, or nil.
func infoMetadata(info map[string]any, code a2a.ErrorCode) map[string]string {
	reason, _ := info["reason"].(string)
	domain, _ := info["domain"].(string)
	md, _ := info["metadata"].(map[string]any)
	if domain != errorDomain || reason != code.Reason() || len(md) == 0 {
		return nil
	}
	out := make(map[string]string, len(md))
	for k, v := range md {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// errorData returns the JSON-RPC error's data member. On the 1.0 wire it is
// an array of typed details led by a google.rpc.ErrorInfo, and a
// google.rpc.RetryInfo when the error says when to retry; 0.3 peers expect
// an object there, so the 0.3 wire gets {"reason": ..., "retryDelay": ...}.
func errorData(e *a2a.Error, version string) any {
	reason := e.Code.Reason()
	var delay string
	if e.RetryAfter > 0 {
		// A google.protobuf.Duration in ProtoJSON: seconds with an "s".
		delay = strconv.FormatFloat(e.RetryAfter.Seconds(), 'f', -1, 64) + "s"
	}
	if version == a2a.Version03 {
		if reason == "" {
			return nil
		}
		obj := map[string]string{"reason": reason}
		if delay != "" {
			obj["retryDelay"] = delay
		}
		return obj
	}
	var details []any
	switch {
	case reason != "" && len(e.Metadata) > 0:
		details = append(details, map[string]any{"@type": errorInfoType, "reason": reason, "domain": errorDomain, "metadata": e.Metadata})
	case reason != "":
		details = append(details, map[string]string{"@type": errorInfoType, "reason": reason, "domain": errorDomain})
	}
	if delay != "" {
		details = append(details, map[string]string{"@type": retryInfoType, "retryDelay": delay})
	}
	return append(details, e.Details...)
}

// AppendError appends a JSON-RPC error response for id (null when nil).
func AppendError(dst []byte, id json.RawMessage, e *a2a.Error, version string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	obj := struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}{int(e.Code), e.Message, errorData(e, version)}
	if obj.Message == "" {
		obj.Message = e.Code.String()
	}
	dst = append(dst, `,"error":`...)
	n := len(dst)
	dst, err := a2a.AppendJSON(dst, obj)
	if err != nil {
		// Details that cannot be encoded are dropped rather than the error.
		obj.Data = nil
		dst, _ = a2a.AppendJSON(dst[:n], obj)
	}
	return append(dst, '}')
}

// AppendResult appends a JSON-RPC success response carrying result,
// encoded by a2a.AppendJSON.
func AppendResult(dst []byte, id json.RawMessage, result any) ([]byte, error) {
	n := len(dst)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst, err := a2a.AppendJSON(dst, result)
	if err != nil {
		return dst[:n], fmt.Errorf("encode result: %w", err)
	}
	return append(dst, '}'), nil
}

func appendID(dst []byte, id json.RawMessage) []byte {
	if id == nil {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// AppendRequest appends a request object for method with a string id and
// params (omitted when nil) encoded by a2a.AppendJSON.
func AppendRequest(dst []byte, id, method string, params any) ([]byte, error) {
	n := len(dst)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = fastjson.AppendString(dst, id)
	dst = append(dst, `,"method":`...)
	dst = fastjson.AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		var err error
		if dst, err = a2a.AppendJSON(dst, params); err != nil {
			return dst[:n], fmt.Errorf("encode params: %w", err)
		}
	}
	return append(dst, '}'), nil
}

// Response is a decoded response envelope.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *ErrorObject    `json:"error"`
}

// DecodeResponse decodes a response envelope as encoding/json would, except
// that ID and Result alias data.
func DecodeResponse(data []byte) (Response, error) {
	var resp Response
	if !fastjson.Enabled {
		if err := fastjson.Unmarshal(data, &resp); err != nil {
			return Response{}, err
		}
		return resp, nil
	}
	r := fastjson.New(data)
	if r.Open('{') {
		var seen uint32
		for n := 0; r.Next('}', &n); {
			switch key := r.Key(); string(key) {
			case "jsonrpc":
				r.Seen(&seen, 1)
				r.StringTo(&resp.JSONRPC)
			case "id":
				r.Seen(&seen, 2)
				resp.ID = r.Raw()
			case "result":
				r.Seen(&seen, 4)
				resp.Result = r.Raw()
			case "error":
				// Errors are rare: encoding/json reads them.
				if !r.Null() {
					r.Fail()
				}
			default:
				r.Unknown(key, "jsonrpc", "id", "result", "error")
			}
		}
	}
	if r.End() {
		return resp, nil
	}
	var slow Response
	if err := json.Unmarshal(data, &slow); err != nil {
		return Response{}, err
	}
	return slow, nil
}
