package server

import (
	"context"
	"log/slog"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// Admit passes a request for the A2A method (its 1.0 name: "SendMessage",
// "GetTask", ...) through the Handler's Gate (Config.Gate): bindings call
// it for every operation, with the request's credentials, and call the
// operation with the context it returns, which carries the caller. Without
// a Gate every caller is admitted as the anonymous one.
func (h *Handler) Admit(ctx context.Context, method string, creds auth.Credentials) (context.Context, error) {
	if h.gate == nil {
		return ctx, nil
	}
	return h.gate.Admit(ctx, method, creds)
}

// Gated reports whether the Handler has a Gate: bindings need not gather
// credentials for a Handler without one.
func (h *Handler) Gated() bool { return h.gate != nil }

type ownerKey struct{}

// scope returns ctx carrying the owner key of the caller (auth.FromContext)
// in the request's tenant, which every task operation then checks
// (getTask) or stamps on a new task. A credential bound to a tenant may
// name only that one.
func (h *Handler) scope(ctx context.Context, tenant string) (context.Context, error) {
	p := auth.FromContext(ctx)
	if p != nil && p.Tenant != "" && tenant != "" && tenant != p.Tenant {
		h.audit(ctx, "the request names tenant "+tenant+", the credential another")
		return ctx, a2a.Errorf(a2a.CodePermissionDenied, "tenant %q: the credential is for another tenant", tenant)
	}
	return context.WithValue(ctx, ownerKey{}, p.Owner(tenant)), nil
}

// ownerOf returns the owner key scope put in ctx.
func ownerOf(ctx context.Context) (string, bool) {
	o, ok := ctx.Value(ownerKey{}).(string)
	return o, ok
}

// visible reports whether the caller of ctx may see the stored task: it
// is theirs. The tasks stored before tasks had owners (owner "") are the
// anonymous caller's in the default tenant. A context without an owner is the process itself (a
// housekeeping call), which sees every task.
func visible(ctx context.Context, e taskstore.Entry) bool {
	o, ok := ownerOf(ctx)
	return !ok || e.Owner == o || e.Owner == "" && o == (*auth.Principal)(nil).Owner("")
}

// audit records in the gate's audit log (without a gate, the server's
// log) a refusal made past the gate: a task that is not the caller's, a
// tenant the credential is not for.
func (h *Handler) audit(ctx context.Context, reason string) {
	log := h.log
	if h.gate != nil {
		log = h.gate.Audit()
	}
	p := auth.FromContext(ctx)
	who := "anonymous"
	if p != nil {
		who = p.ID()
	}
	log.LogAttrs(ctx, slog.LevelWarn, "a2a: auth", slog.String("decision", "refused"), slog.String("principal", who), slog.String("reason", reason))
}
