package grpcclient

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cloudwego/kitex/pkg/kerrors"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/metadata"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/internal/pbconv"
)

// outgoing returns ctx with a call's request metadata: the protocol
// version, the call's headers under lower-case keys, and, for a
// resumption, the last event received.
func outgoing(ctx context.Context, h http.Header, lastEventID string) context.Context {
	kv := make([]string, 0, 2+2*len(h)+2)
	kv = append(kv, pbconv.VersionKey, a2a.Version)
	for k, vs := range h {
		k = strings.ToLower(k)
		if transportKey(k) {
			continue
		}
		for _, v := range vs {
			kv = append(kv, k, v)
		}
	}
	if lastEventID != "" {
		kv = append(kv, pbconv.LastEventIDKey, lastEventID)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// transportKey reports whether a header is one the binding or HTTP/2 sets
// itself, which a call's headers must not repeat.
func transportKey(k string) bool {
	switch k {
	case pbconv.VersionKey, pbconv.LastEventIDKey, "content-type", "te", "connection", "host", "user-agent":
		return true
	}
	return strings.HasPrefix(k, "grpc-") || strings.HasPrefix(k, ":")
}

// call performs a unary RPC.
func (t *grpcTransport) call(ctx context.Context, h http.Header, method string, args, result any) error {
	k, err := t.acquire()
	if err != nil {
		return fmt.Errorf("a2a client: %s %s: %w", method, t.addr, err)
	}
	defer t.release(k)
	if err := k.c.Call(outgoing(ctx, h, ""), method, args, result); err != nil {
		awaitDeadline(ctx, err)
		return t.callError(method, err, false)
	}
	return nil
}

// awaitDeadline waits, after Kitex timed a call out at ctx's deadline, for
// ctx to end too: Kitex's timer may fire a moment before ctx's, and the
// Client reads why a call ended from ctx.
func awaitDeadline(ctx context.Context, err error) {
	const slack = 50 * time.Millisecond
	dl, ok := ctx.Deadline()
	if !ok || !kerrors.IsTimeoutError(err) || time.Until(dl) > slack { // another timeout (Config.Options)
		return
	}
	wait := time.NewTimer(time.Until(dl) + slack)
	defer wait.Stop()
	select {
	case <-ctx.Done():
	case <-wait.C:
	}
}

// callError returns a failed call's error: the server's answer as an
// *a2a.Error, or the transport's failure, wrapping client.ErrStreamCut on
// a stream (for the Client to resume it).
func (t *grpcTransport) callError(op string, err error, stream bool) error {
	if st, ok := status.FromError(err); ok {
		e, hasInfo := pbconv.ErrorOf(st)
		switch {
		case !answered(st.Code(), hasInfo, e):
		case !hasInfo && e.Code == a2a.CodeInternal && st.Code() != codes.Internal:
			// A status A2A has no error for (UNAUTHENTICATED, ...):
			// keep its name.
			return fmt.Errorf("a2a client: %s %s: gRPC status %s: %w", op, t.addr, st.Code(), e)
		default:
			return fmt.Errorf("a2a client: %s: %w", op, e)
		}
	}
	if p := t.refused.Load(); p != nil && !strings.Contains(err.Error(), (*p).Error()) {
		err = fmt.Errorf("%w (%w)", err, *p)
	}
	if stream {
		return fmt.Errorf("a2a client: %s %s: %w: %w", op, t.addr, client.ErrStreamCut, err)
	}
	return fmt.Errorf("a2a client: %s %s: %w", op, t.addr, err)
}

// answered reports whether a status is the server's answer, rather than a
// failure of the connection or of the stream, which a status stands for
// too (UNAVAILABLE for a closed connection, CANCELLED for a stream the
// server reset) and after which a stream may resume.
func answered(c codes.Code, hasInfo bool, e *a2a.Error) bool {
	switch c {
	case codes.OK, codes.Unavailable, codes.Canceled, codes.DeadlineExceeded, codes.Aborted:
		// But an UNAVAILABLE with a RetryInfo is an agent at its limits.
		return hasInfo || e.RetryAfter > 0
	}
	return true
}
