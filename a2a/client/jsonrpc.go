package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// JSONRPC is the JSON-RPC 2.0 binding, A2A 1.0 and 0.3: one endpoint, a
// POST per call, Server-Sent Events for streams. Each version is a wire of
// its own (jsonrpc10.go, jsonrpc03.go) over the same HTTP exchange.
var JSONRPC Binding = jsonrpcBinding{}

type jsonrpcBinding struct{}

func (jsonrpcBinding) Name() string { return a2a.BindingJSONRPC }

func (jsonrpcBinding) Speaks(v string) bool { return v == a2a.Version || v == a2a.Version03 }

func (jsonrpcBinding) Transport(iface *a2a.AgentInterface, cfg *TransportConfig) (Transport, error) {
	conn := newRPCConn(iface.URL, iface.ProtocolVersion, cfg)
	if iface.ProtocolVersion == a2a.Version03 {
		return rpc03{conn}, nil
	}
	return rpc10{conn}, nil
}

// rpcConn is the HTTP side of the JSON-RPC binding, shared by its wires:
// requests with their ids and headers, responses, and event streams.
type rpcConn struct {
	url     string
	version string
	hc      *http.Client
	maxEv   int
	nextID  atomic.Uint64
	// headers are the headers of every request: unary [0], streaming [1].
	headers [2]http.Header
	sse     ssePool
}

func newRPCConn(url, version string, cfg *TransportConfig) *rpcConn {
	c := &rpcConn{url: url, version: version, hc: cfg.HTTPClient, maxEv: cfg.MaxEventBytes}
	for i, accept := range []string{"application/json", "text/event-stream"} {
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("A2A-Version", version)
		h.Set("Accept", accept)
		c.headers[i] = h
	}
	return c
}

func (c *rpcConn) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// newRequest builds the HTTP request of a JSON-RPC call.
func (c *rpcConn) newRequest(ctx context.Context, op jsonrpc.Op, params any, extra http.Header, stream bool) (*http.Request, string, error) {
	id := strconv.FormatUint(c.nextID.Add(1), 10)
	body, err := jsonrpc.AppendRequest(make([]byte, 0, 1024), id, op.Method(c.version), params)
	if err != nil {
		return nil, "", fmt.Errorf("a2a client: %s: encode request: %w", op, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, "", fmt.Errorf("a2a client: %s: %w", op, err)
	}
	kind := 0
	if stream {
		kind = 1
	}
	req.Header = c.headers[kind].Clone()
	if stream || op.ReadOnly() {
		replayable(req)
	}
	addHeaders(req.Header, extra)
	if exts := req.Header.Get("A2A-Extensions"); exts != "" && c.version == a2a.Version03 {
		req.Header.Set("X-A2A-Extensions", exts) // the 0.3 name of the header
	}
	return req, id, nil
}

// addHeaders adds a call's headers to a request's, which keeps its own.
func addHeaders(dst, extra http.Header) {
	for k, v := range extra {
		if _, ours := dst[k]; !ours {
			dst[k] = v
		}
	}
}

// call performs a unary JSON-RPC call and decodes its result into out
// (unless out is nil).
func (c *rpcConn) call(ctx context.Context, op jsonrpc.Op, params, out any, h http.Header) error {
	req, id, err := c.newRequest(ctx, op, params, h, false)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("a2a client: %s %s: %w", op, c.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxEv)+1))
	if err != nil {
		return fmt.Errorf("a2a client: %s %s: read response: %w", op, c.url, err)
	}
	return c.decodeUnary(op, id, resp.StatusCode, resp.Status, body, out)
}

func (c *rpcConn) decodeUnary(op jsonrpc.Op, id string, status int, statusText string, body []byte, out any) error {
	// A result is required, but a2a-go omits it where it means nothing
	// (deleting a push config); when the caller discards it, let it pass.
	r, err := jsonrpc.DecodeResponse(body)
	if err != nil || (r.Error == nil && r.Result == nil && out != nil) {
		return fmt.Errorf("a2a client: %s %s: HTTP %s: not a JSON-RPC response: %s", op, c.url, statusText, snippet(body))
	}
	if r.Error != nil {
		return fmt.Errorf("a2a client: %s: %w", op, r.Error.Err())
	}
	if status != http.StatusOK {
		return fmt.Errorf("a2a client: %s %s: HTTP %s", op, c.url, statusText)
	}
	if got := strings.Trim(string(r.ID), `"`); got != id {
		return fmt.Errorf("a2a client: %s: response id %s does not match request id %s", op, r.ID, id)
	}
	if out == nil {
		return nil
	}
	if err := a2a.Unmarshal(r.Result, out); err != nil {
		return fmt.Errorf("a2a client: %s: decode result: %w", op, err)
	}
	return nil
}

// callFor performs a unary call and decodes its result into a new T.
func callFor[T any](ctx context.Context, c *rpcConn, op jsonrpc.Op, params any, h http.Header) (*T, error) {
	out := new(T)
	if err := c.call(ctx, op, params, out, h); err != nil {
		return nil, err
	}
	return out, nil
}

// openStream starts a streaming JSON-RPC call; decode reads one event's
// result in the wire's version.
func (c *rpcConn) openStream(ctx context.Context, op jsonrpc.Op, params any, req *StreamRequest, h http.Header,
	decode func([]byte) (a2a.Event, error)) (EventStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	hreq, id, err := c.newRequest(ctx, op, params, h, true)
	if err != nil {
		cancel()
		return nil, err
	}
	if req.LastEventID != "" {
		hreq.Header.Set("Last-Event-ID", req.LastEventID)
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("a2a client: %s %s: %w: %w", op, c.url, ErrStreamCut, err)
	}
	if req.Alive != nil {
		req.Alive()
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		// An error answered as a plain JSON-RPC response.
		defer cancel()
		defer resp.Body.Close()
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxEv)))
		if rerr != nil {
			return nil, fmt.Errorf("a2a client: %s %s: read response: %w: %w", op, c.url, ErrStreamCut, rerr)
		}
		if derr := c.decodeUnary(op, id, resp.StatusCode, resp.Status, body, nil); derr != nil {
			return nil, derr
		}
		return nil, fmt.Errorf("a2a client: %s %s: HTTP %s: the server answered a stream with %q", op, c.url, resp.Status, resp.Header.Get("Content-Type"))
	}
	return c.sse.stream(resp, cancel, c.maxEv, req.Alive, func(data []byte) (a2a.Event, error) {
		r, err := jsonrpc.DecodeResponse(data)
		if err != nil {
			return nil, fmt.Errorf("a2a client: %s: stream event is not a JSON-RPC response: %w", op, err)
		}
		if r.Error != nil {
			return nil, fmt.Errorf("a2a client: %s: %w", op, r.Error.Err())
		}
		ev, err := decode(r.Result)
		if err != nil {
			return nil, fmt.Errorf("a2a client: %s: decode stream event: %w", op, err)
		}
		return ev, nil
	}, func(err error) error {
		return fmt.Errorf("a2a client: %s %s: %w: %w", op, c.url, ErrStreamCut, err)
	}), nil
}
