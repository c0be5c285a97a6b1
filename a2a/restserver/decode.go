package restserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// decodeRequest builds the request object of the operation rt names from
// the path's values, the query (raw, as in the URL) and the body (empty
// when none came). The result is the *a2a request type the Handler method
// takes. Bodies are the operation's request object in ProtoJSON (the
// google.api.http body "*"); where the path names a value too (the task,
// the tenant), a body naming another is refused. Operations without a
// body take their fields from query parameters named as the JSON fields
// (specification 11.5); unknown parameters are ignored.
func decodeRequest(rt target, query string, body []byte) (any, *a2a.Error) {
	switch rt.op {
	case jsonrpc.OpSendMessage, jsonrpc.OpSendStreamingMessage:
		req := new(a2a.SendMessageRequest)
		if err := decodeBody(body, req); err != nil {
			return nil, err
		}
		return req, pathValue("tenant", &req.Tenant, rt.tenant)

	case jsonrpc.OpCancelTask:
		req := new(a2a.CancelTaskRequest)
		if err := decodeBody(body, req); err != nil {
			return nil, err
		}
		if err := pathValue("tenant", &req.Tenant, rt.tenant); err != nil {
			return nil, err
		}
		return req, pathValue("id", &req.ID, rt.id)

	case jsonrpc.OpCreatePushConfig:
		req := new(a2a.TaskPushNotificationConfig)
		if err := decodeBody(body, req); err != nil {
			return nil, err
		}
		if err := pathValue("tenant", &req.Tenant, rt.tenant); err != nil {
			return nil, err
		}
		return req, pathValue("taskId", &req.TaskID, rt.id)

	case jsonrpc.OpSubscribeToTask:
		// POST (the specification's text) may carry the request as a body,
		// GET (its proto) cannot; the path names the task either way.
		req := new(a2a.SubscribeToTaskRequest)
		if err := decodeBody(body, req); err != nil {
			return nil, err
		}
		q, err := parseQuery(query)
		if err != nil {
			return nil, err
		}
		var tenant string
		if err := q.tenant(&tenant, rt.tenant); err != nil {
			return nil, err
		}
		if err := pathValue("tenant", &req.Tenant, tenant); err != nil {
			return nil, err
		}
		return req, pathValue("id", &req.ID, rt.id)
	}

	q, err := parseQuery(query)
	if err != nil {
		return nil, err
	}
	var tenant string
	if err := q.tenant(&tenant, rt.tenant); err != nil {
		return nil, err
	}
	switch rt.op {
	case jsonrpc.OpGetTask:
		req := &a2a.GetTaskRequest{Tenant: tenant, ID: rt.id}
		return req, asA2A(errors.Join(q.int("historyLength", &req.HistoryLength), q.generation("currentGeneration", &req.CurrentGeneration)))

	case jsonrpc.OpListTasks:
		req := &a2a.ListTasksRequest{Tenant: tenant}
		var status string
		err := errors.Join(q.str("contextId", &req.ContextID), q.str("status", &status), q.int("pageSize", &req.PageSize),
			q.str("pageToken", &req.PageToken), q.int("historyLength", &req.HistoryLength),
			q.time("statusTimestampAfter", &req.StatusTimestampAfter), q.bool("includeArtifacts", &req.IncludeArtifacts))
		if err == nil && req.StatusTimestampAfter == nil {
			// a2a-go v2.4.0's client names the parameter so.
			err = q.time("lastUpdatedAfter", &req.StatusTimestampAfter)
		}
		req.Status = a2a.TaskState(status)
		return req, asA2A(err)

	case jsonrpc.OpListPushConfigs:
		req := &a2a.ListTaskPushNotificationConfigsRequest{Tenant: tenant, TaskID: rt.id}
		var size *int
		err := errors.Join(q.int("pageSize", &size), q.str("pageToken", &req.PageToken))
		if size != nil {
			req.PageSize = *size
		}
		return req, asA2A(err)

	case jsonrpc.OpGetPushConfig:
		return &a2a.GetTaskPushNotificationConfigRequest{Tenant: tenant, TaskID: rt.id, ID: rt.configID}, nil

	case jsonrpc.OpDeletePushConfig:
		return &a2a.DeleteTaskPushNotificationConfigRequest{Tenant: tenant, TaskID: rt.id, ID: rt.configID}, nil

	case jsonrpc.OpGetExtendedAgentCard:
		return &a2a.GetExtendedAgentCardRequest{Tenant: tenant}, nil
	}
	return nil, a2a.Errorf(a2a.CodeMethodNotFound, "operation %s is not served here", rt.op)
}

// asA2A returns the first of errors.Join's errors, which are *a2a.Error.
func asA2A(err error) *a2a.Error {
	if err == nil {
		return nil
	}
	var e *a2a.Error
	if errors.As(err, &e) {
		return e
	}
	return a2a.Errorf(a2a.CodeInvalidParams, "%v", err)
}

// pathValue sets *field to the path's value, refusing a body that names
// another. An empty path value (no tenant in the path) leaves the body's.
func pathValue(name string, field *string, fromPath string) *a2a.Error {
	switch {
	case fromPath == "":
	case *field == "" || *field == fromPath:
		*field = fromPath
	default:
		return a2a.Errorf(a2a.CodeInvalidParams, "the body's %s %q differs from the path's %q; send one, or the same", name, *field, fromPath)
	}
	return nil
}

// decodeBody decodes a request body into v, a fresh request object. An
// empty body is an empty request. Member names may be the proto fields'
// (task_id) at the top level, as ProtoJSON parsers accept.
func decodeBody(body []byte, v any) *a2a.Error {
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) == 0 {
		return nil
	}
	if !json.Valid(b) {
		return a2a.Errorf(a2a.CodeParseError, "the request body is not valid JSON")
	}
	if b[0] != '{' {
		return a2a.Errorf(a2a.CodeInvalidRequest, "the request body must be a JSON object (the operation's request), got %s", jsonKind(b[0]))
	}
	b, perr := jsonrpc.ProtoFieldNames(b)
	if perr != nil {
		return perr
	}
	if err := a2a.Unmarshal(b, v); err != nil {
		return bodyError(err)
	}
	return nil
}

// bodyError turns a decoding error into an invalid-params error naming
// the member as the body spells it.
func bodyError(err error) *a2a.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the request body"
		}
		return a2a.Errorf(a2a.CodeInvalidParams, "%s: want %s, got a JSON %s", field, kindOf(te.Type), te.Value)
	}
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return ae
	}
	return a2a.Errorf(a2a.CodeInvalidParams, "the request body: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// kindOf names the JSON kind a Go type decodes from.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct, reflect.Interface:
		return "an object"
	}
	return "a number"
}

func jsonKind(c byte) string {
	switch {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return "a number"
}

// query is a request's query parameters.
type query url.Values

func parseQuery(raw string) (query, *a2a.Error) {
	if raw == "" {
		return nil, nil
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, a2a.Errorf(a2a.CodeInvalidParams, "the query string does not parse: %v", err)
	}
	return query(v), nil
}

// one returns the value of a parameter named once; "" for none or an
// empty value, which the parameter's absence means.
func (q query) one(name string) (string, error) {
	vs := q[name]
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
		return vs[0], nil
	}
	return "", a2a.Errorf(a2a.CodeInvalidParams, "query parameter %s is given %d times; it takes one value", name, len(vs))
}

func (q query) str(name string, dst *string) error {
	v, err := q.one(name)
	if v != "" {
		*dst = v
	}
	return err
}

func (q query) int(name string, dst **int) error {
	v, err := q.one(name)
	if err != nil || v == "" {
		return err
	}
	n, perr := strconv.ParseInt(v, 10, 32)
	if perr != nil {
		return a2a.Errorf(a2a.CodeInvalidParams, "query parameter %s: want a decimal integer, got %q", name, v)
	}
	i := int(n)
	*dst = &i
	return nil
}

// generation reads an int64 parameter (the 1.1 draft's currentGeneration).
func (q query) generation(name string, dst **a2a.Generation) error {
	v, err := q.one(name)
	if err != nil || v == "" {
		return err
	}
	n, perr := strconv.ParseInt(v, 10, 64)
	if perr != nil {
		return a2a.Errorf(a2a.CodeInvalidParams, "query parameter %s: want a decimal integer, got %q", name, v)
	}
	g := a2a.Generation(n)
	*dst = &g
	return nil
}

func (q query) bool(name string, dst *bool) error {
	v, err := q.one(name)
	switch {
	case err != nil || v == "":
		return err
	case v == "true":
		*dst = true
	case v == "false":
		*dst = false
	default:
		return a2a.Errorf(a2a.CodeInvalidParams, "query parameter %s: want true or false, got %q", name, v)
	}
	return nil
}

func (q query) time(name string, dst **time.Time) error {
	v, err := q.one(name)
	if err != nil || v == "" {
		return err
	}
	t, perr := time.Parse(time.RFC3339Nano, v)
	if perr != nil {
		return a2a.Errorf(a2a.CodeInvalidParams, "query parameter %s: want an RFC 3339 time such as 2025-11-09T10:30:00Z, got %q", name, v)
	}
	*dst = &t
	return nil
}

// tenant sets *dst to the tenant the path names or, for a path without
// one, the tenant query parameter: a field that no path segment binds is
// a query parameter (google.api.http).
func (q query) tenant(dst *string, fromPath string) *a2a.Error {
	v, err := q.one("tenant")
	if err != nil {
		return asA2A(err)
	}
	if fromPath == "" {
		if v != "" {
			*dst = v
		}
		return nil
	}
	if v != "" && v != fromPath {
		return a2a.Errorf(a2a.CodeInvalidParams, "query parameter tenant %q differs from the path's %q", v, fromPath)
	}
	*dst = fromPath
	return nil
}
