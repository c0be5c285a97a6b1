package server

import (
	"context"
	"errors"
	"log/slog"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// ProtocolError is what a binding answers for err, an error of a Handler
// method: a protocol error as it is; stores that cannot be reached, a
// canceled request and anything else as an internal error (-32603) whose
// message says no more than the client needs, the details going to log
// (method names the operation there). Every binding answers with it, so
// that a failure reads the same on each.
func ProtocolError(log *slog.Logger, method string, err error) *a2a.Error {
	var e *a2a.Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, taskstore.ErrUnavailable), errors.Is(err, eventlog.ErrUnavailable):
		log.Warn("a2a: request failed", "method", method, "err", err)
		return a2a.Errorf(a2a.CodeInternal, "the agent's task storage cannot be reached at the moment; retry later")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return a2a.Errorf(a2a.CodeInternal, "the request was canceled: %v", err)
	}
	log.Error("a2a: request failed", "method", method, "err", err)
	return a2a.Errorf(a2a.CodeInternal, "internal error while serving %s; see the server log", method)
}
