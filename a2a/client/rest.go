package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

// HTTPJSON is the HTTP+JSON binding of A2A 1.0 (specification section
// 11): a resource URL and HTTP method per operation (POST /message:send,
// GET /tasks/{id}, ...), under /{tenant}/ for a tenant, bodies in the 1.0
// JSON, errors as google.rpc.Status objects, Server-Sent Events for
// streams.
var HTTPJSON Binding = restBinding{}

type restBinding struct{}

func (restBinding) Name() string { return a2a.BindingHTTPJSON }

func (restBinding) Speaks(v string) bool { return v == a2a.Version }

func (restBinding) Transport(iface *a2a.AgentInterface, cfg *TransportConfig) (Transport, error) {
	base, err := url.Parse(iface.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("want an http(s) URL, not %q", iface.URL)
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath, base.RawQuery, base.Fragment = "", "", ""
	return &restTransport{base: base, hc: cfg.HTTPClient, maxEv: cfg.MaxEventBytes}, nil
}

// restContentType is what requests with a body say they carry (1.0.1
// section 11.1); servers take application/json too.
const restContentType = "application/a2a+json"

type restTransport struct {
	base  *url.URL
	hc    *http.Client
	maxEv int
	sse   ssePool
}

func (t *restTransport) Close() error {
	t.hc.CloseIdleConnections()
	return nil
}

// endpoint returns the URL of a route under the interface and tenant:
// segments are path-escaped, verb (":cancel") is appended to the last.
func (t *restTransport) endpoint(tenant string, query url.Values, verb string, segments ...string) string {
	u := *t.base
	var b strings.Builder
	b.WriteString(u.Path)
	if tenant != "" {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(tenant))
	}
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	b.WriteString(verb)
	u.RawPath = b.String()
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = query.Encode()
	return u.String()
}

// do performs one unary exchange and decodes its 200 answer into out
// (unless nil).
func (t *restTransport) do(ctx context.Context, op, method, target string, body any, out any, h http.Header) error {
	req, err := t.newRequest(ctx, op, method, target, body, h, "application/json")
	if err != nil {
		return err
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return fmt.Errorf("a2a client: %s %s: %w", op, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.maxEv)+1))
	if err != nil {
		return fmt.Errorf("a2a client: %s %s: read response: %w", op, target, err)
	}
	if resp.StatusCode != http.StatusOK {
		return statusError(op, target, resp, data)
	}
	if out == nil {
		return nil
	}
	if err := a2a.Unmarshal(data, out); err != nil {
		return fmt.Errorf("a2a client: %s: decode result: %w", op, err)
	}
	return nil
}

func (t *restTransport) newRequest(ctx context.Context, op, method, target string, body any, h http.Header, accept string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("a2a client: %s: encode request: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s: %w", op, err)
	}
	req.Header.Set("A2A-Version", a2a.Version)
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", restContentType)
	}
	addHeaders(req.Header, h)
	return req, nil
}

// statusError reads a google.rpc.Status error body (section 11.6): the
// A2A error its ErrorInfo names, or, without one, the nearest to its HTTP
// status.
func statusError(op, target string, resp *http.Response, data []byte) error {
	var st struct {
		Error *struct {
			Code    int    `json:"code"`
			Status  string `json:"status"`
			Message string `json:"message"`
			Details []any  `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &st) != nil || st.Error == nil {
		return fmt.Errorf("a2a client: %s %s: HTTP %s: %s", op, target, resp.Status, snippet(data))
	}
	status := resp.StatusCode
	if st.Error.Code != 0 {
		status = st.Error.Code // the status of an error sent within a stream
	}
	e := &a2a.Error{Code: codeOfHTTPStatus(status), Message: st.Error.Message}
	for _, d := range st.Error.Details {
		m, ok := d.(map[string]any)
		if !ok {
			e.Details = append(e.Details, d)
			continue
		}
		switch m["@type"] {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			if reason, _ := m["reason"].(string); reason != "" {
				if c, ok := a2a.CodeForReason(reason); ok {
					e.Code = c
					e.Metadata = infoMetadata(m)
				}
			}
			continue
		case "type.googleapis.com/google.rpc.RetryInfo":
			if delay, ok := m["retryDelay"].(string); ok {
				if d, err := time.ParseDuration(delay); err == nil && d > 0 {
					e.RetryAfter = d
				}
			}
			continue
		}
		e.Details = append(e.Details, d)
	}
	if e.RetryAfter == 0 {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return fmt.Errorf("a2a client: %s: %w", op, e)
}

// infoMetadata returns a decoded google.rpc.ErrorInfo's string metadata,
// or nil.
func infoMetadata(info map[string]any) map[string]string {
	md, _ := info["metadata"].(map[string]any)
	if len(md) == 0 {
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

// codeOfHTTPStatus is the A2A error nearest to an HTTP status, for an error
// body without an ErrorInfo.
func codeOfHTTPStatus(status int) a2a.ErrorCode {
	switch status {
	case http.StatusNotFound:
		return a2a.CodeTaskNotFound
	case http.StatusConflict:
		return a2a.CodeTaskNotCancelable
	case http.StatusUnsupportedMediaType:
		return a2a.CodeContentTypeNotSupported
	case http.StatusBadRequest:
		return a2a.CodeInvalidParams
	case http.StatusNotImplemented:
		return a2a.CodeUnsupportedOperation
	case http.StatusMethodNotAllowed:
		return a2a.CodeMethodNotFound
	}
	return a2a.CodeInternal
}

// SendMessage's body is the request without its tenant, which the route
// carries; so for every request with a body.
func (t *restTransport) SendMessage(ctx context.Context, req *a2a.SendMessageRequest, h http.Header) (a2a.Event, error) {
	r := *req
	r.Tenant = ""
	var sr a2a.StreamResponse
	if err := t.do(ctx, "SendMessage", http.MethodPost, t.endpoint(req.Tenant, nil, "", "message:send"), &r, &sr, h); err != nil {
		return nil, err
	}
	ev, err := sr.Event()
	if err != nil {
		return nil, fmt.Errorf("a2a client: SendMessage: %w", err)
	}
	return ev, nil
}

func (t *restTransport) GetTask(ctx context.Context, req *a2a.GetTaskRequest, h http.Header) (*a2a.Task, error) {
	q := url.Values{}
	if req.HistoryLength != nil {
		q.Set("historyLength", strconv.Itoa(*req.HistoryLength))
	}
	if req.CurrentGeneration != nil {
		q.Set("currentGeneration", strconv.FormatInt(int64(*req.CurrentGeneration), 10))
	}
	out := new(a2a.Task)
	return out, t.do(ctx, "GetTask", http.MethodGet, t.endpoint(req.Tenant, q, "", "tasks", req.ID), nil, out, h)
}

func (t *restTransport) ListTasks(ctx context.Context, req *a2a.ListTasksRequest, h http.Header) (*a2a.ListTasksResponse, error) {
	q := url.Values{}
	if req.ContextID != "" {
		q.Set("contextId", req.ContextID)
	}
	if req.Status != "" {
		q.Set("status", string(req.Status))
	}
	if req.PageSize != nil {
		q.Set("pageSize", strconv.Itoa(*req.PageSize))
	}
	if req.PageToken != "" {
		q.Set("pageToken", req.PageToken)
	}
	if req.HistoryLength != nil {
		q.Set("historyLength", strconv.Itoa(*req.HistoryLength))
	}
	if req.StatusTimestampAfter != nil {
		q.Set("statusTimestampAfter", req.StatusTimestampAfter.UTC().Format(time.RFC3339Nano))
	}
	if req.IncludeArtifacts {
		q.Set("includeArtifacts", "true")
	}
	out := new(a2a.ListTasksResponse)
	return out, t.do(ctx, "ListTasks", http.MethodGet, t.endpoint(req.Tenant, q, "", "tasks"), nil, out, h)
}

func (t *restTransport) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest, h http.Header) (*a2a.Task, error) {
	body := struct {
		Metadata map[string]any `json:"metadata,omitempty"`
	}{req.Metadata}
	out := new(a2a.Task)
	return out, t.do(ctx, "CancelTask", http.MethodPost, t.endpoint(req.Tenant, nil, ":cancel", "tasks", req.ID), &body, out, h)
}

func (t *restTransport) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
	r := *req
	r.Tenant = ""
	out := new(a2a.TaskPushNotificationConfig)
	return out, t.do(ctx, "CreateTaskPushNotificationConfig", http.MethodPost,
		t.endpoint(req.Tenant, nil, "", "tasks", req.TaskID, "pushNotificationConfigs"), &r, out, h)
}

func (t *restTransport) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest, h http.Header) (*a2a.TaskPushNotificationConfig, error) {
	out := new(a2a.TaskPushNotificationConfig)
	return out, t.do(ctx, "GetTaskPushNotificationConfig", http.MethodGet,
		t.endpoint(req.Tenant, nil, "", "tasks", req.TaskID, "pushNotificationConfigs", req.ID), nil, out, h)
}

func (t *restTransport) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest, h http.Header) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	q := url.Values{}
	if req.PageSize > 0 {
		q.Set("pageSize", strconv.Itoa(req.PageSize))
	}
	if req.PageToken != "" {
		q.Set("pageToken", req.PageToken)
	}
	out := new(a2a.ListTaskPushNotificationConfigsResponse)
	return out, t.do(ctx, "ListTaskPushNotificationConfigs", http.MethodGet,
		t.endpoint(req.Tenant, q, "", "tasks", req.TaskID, "pushNotificationConfigs"), nil, out, h)
}

func (t *restTransport) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest, h http.Header) error {
	return t.do(ctx, "DeleteTaskPushNotificationConfig", http.MethodDelete,
		t.endpoint(req.Tenant, nil, "", "tasks", req.TaskID, "pushNotificationConfigs", req.ID), nil, nil, h)
}

func (t *restTransport) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest, h http.Header) (*a2a.AgentCard, error) {
	out := new(a2a.AgentCard)
	return out, t.do(ctx, "GetExtendedAgentCard", http.MethodGet, t.endpoint(req.Tenant, nil, "", "extendedAgentCard"), nil, out, h)
}

// OpenStream posts to /message:stream or /tasks/{id}:subscribe (the
// specification's text says POST for the latter, its proto GET; servers
// take POST). Each event's data is a StreamResponse; a server that fails
// after the stream began sends a google.rpc.Status object instead.
func (t *restTransport) OpenStream(ctx context.Context, req *StreamRequest, h http.Header) (EventStream, error) {
	op, target := "SubscribeToTask", ""
	var body any
	if req.Send != nil {
		r := *req.Send
		r.Tenant = ""
		op, target, body = "SendStreamingMessage", t.endpoint(req.Send.Tenant, nil, "", "message:stream"), &r
	} else {
		target = t.endpoint(req.Subscribe.Tenant, nil, ":subscribe", "tasks", req.Subscribe.ID)
	}
	ctx, cancel := context.WithCancel(ctx)
	hreq, err := t.newRequest(ctx, op, http.MethodPost, target, body, h, "text/event-stream")
	if err == nil {
		replayable(hreq)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	if req.LastEventID != "" {
		hreq.Header.Set("Last-Event-ID", req.LastEventID)
	}
	resp, err := t.hc.Do(hreq)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("a2a client: %s %s: %w: %w", op, target, ErrStreamCut, err)
	}
	if req.Alive != nil {
		req.Alive()
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || mt != "text/event-stream" {
		defer cancel()
		defer resp.Body.Close()
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, int64(t.maxEv)))
		if rerr != nil {
			return nil, fmt.Errorf("a2a client: %s %s: read response: %w: %w", op, target, ErrStreamCut, rerr)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, statusError(op, target, resp, data)
		}
		return nil, fmt.Errorf("a2a client: %s %s: HTTP %s: the server answered a stream with %q", op, target, resp.Status, resp.Header.Get("Content-Type"))
	}
	return t.sse.stream(resp, cancel, t.maxEv, req.Alive, func(data []byte) (a2a.Event, error) {
		if isStatus(data) {
			return nil, statusError(op, target, resp, data)
		}
		var sr a2a.StreamResponse
		if err := a2a.Unmarshal(data, &sr); err != nil {
			return nil, fmt.Errorf("a2a client: %s: decode stream event: %w", op, err)
		}
		ev, err := sr.Event()
		if err != nil {
			return nil, fmt.Errorf("a2a client: %s: decode stream event: %w", op, err)
		}
		return ev, nil
	}, func(err error) error {
		return fmt.Errorf("a2a client: %s %s: %w: %w", op, target, ErrStreamCut, err)
	}), nil
}

// isStatus reports whether an event's data is a google.rpc.Status error
// object ({"error": ...}) rather than a StreamResponse, whose members are
// task, message, statusUpdate and artifactUpdate.
func isStatus(data []byte) bool {
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	return bytes.Contains(data, []byte(`"error"`)) && json.Unmarshal(data, &probe) == nil && len(probe.Error) > 0
}
