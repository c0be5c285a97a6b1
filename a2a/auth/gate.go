package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

// GateConfig configures a Gate.
type GateConfig struct {
	// Authenticators verify credentials, tried in order: the first that
	// finds a credential of its kind decides. At least one is required
	// unless AllowAnonymous.
	Authenticators []Authenticator
	// AllowAnonymous admits a request that presents no credential at all,
	// as the anonymous caller (a nil Principal), for an agent that is open
	// on purpose. A request presenting an invalid credential is refused
	// all the same.
	AllowAnonymous bool
	// Policy says who may call which method.
	Policy Policy
	// Limits bound how often one principal, and one tenant, may call.
	Limits RateLimits
	// Audit receives one record per decision (admitted, refused, or
	// refused in dry run) with the method, the principal, its tenant and
	// the reason; never a credential. nil means slog.Default().
	Audit *slog.Logger
}

// Gate admits or refuses each request before a server acts on it. It is
// safe for concurrent use.
type Gate struct {
	authns    []Authenticator
	anonymous bool
	policy    Policy
	limiter   *limiter
	audit     *slog.Logger
}

// NewGate returns the Gate of cfg.
func NewGate(cfg GateConfig) (*Gate, error) {
	if len(cfg.Authenticators) == 0 && !cfg.AllowAnonymous {
		return nil, errors.New("auth: a gate needs an Authenticator, or AllowAnonymous for an open agent")
	}
	if err := cfg.Policy.validate(); err != nil {
		return nil, err
	}
	// The card names each scheme once: two of one name would leave one
	// undeclared.
	declared := map[string]bool{}
	for _, a := range cfg.Authenticators {
		if d, ok := a.(Describer); ok {
			name, _ := d.SecurityScheme()
			if declared[name] {
				return nil, fmt.Errorf("auth: two authenticators declare the security scheme %q: give each its own scheme name", name)
			}
			declared[name] = true
		}
	}
	l, err := newLimiter(cfg.Limits)
	if err != nil {
		return nil, err
	}
	g := &Gate{authns: cfg.Authenticators, anonymous: cfg.AllowAnonymous, policy: cfg.Policy, limiter: l, audit: cfg.Audit}
	if g.audit == nil {
		g.audit = slog.Default()
	}
	return g, nil
}

// Audit is the gate's audit log, for the decisions made after the gate:
// the server's refusal of a task that is not the caller's.
func (g *Gate) Audit() *slog.Logger { return g.audit }

// Open reports whether the gate admits anonymous callers.
func (g *Gate) Open() bool { return g.anonymous }

// Describe declares the gate on card: each Describer authenticator's
// security scheme, and one security requirement per scheme, since any one
// admits a caller. An open gate adds no requirement: a client may send
// nothing.
func (g *Gate) Describe(card *a2a.AgentCard) {
	for _, a := range g.authns {
		d, ok := a.(Describer)
		if !ok {
			continue
		}
		name, scheme := d.SecurityScheme()
		if card.SecuritySchemes == nil {
			card.SecuritySchemes = make(map[string]a2a.SecurityScheme)
		}
		card.SecuritySchemes[name] = scheme
		if !g.anonymous {
			card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirement{Schemes: map[string][]string{name: {}}})
		}
	}
}

// Admit authenticates a request for the A2A method (its 1.0 name, such as
// "SendMessage" or "GetTask"), applies the policy and the rate limits, and
// returns ctx carrying the principal (FromContext). It refuses with an
// *a2a.Error: CodeUnauthenticated, with a Challenge, for a missing or
// invalid credential; CodePermissionDenied for a method the policy denies
// the caller; a retryable internal error (a2a.Busy) past a rate limit, or
// when an Authenticator fails otherwise (it cannot reach its keys).
func (g *Gate) Admit(ctx context.Context, method string, creds Credentials) (context.Context, error) {
	p, decider, err := g.authenticate(ctx, creds)
	switch {
	case errors.Is(err, ErrNoCredentials) || errors.Is(err, ErrInvalidCredentials):
		g.record(ctx, "refused", method, nil, creds, err)
		e := a2a.Errorf(a2a.CodeUnauthenticated, "%s: %v", method, err)
		e.Challenge = g.challenge(decider, err)
		return ctx, e
	case err != nil:
		// The agent, not the credential, is at fault (it has no keys
		// to check tokens with, say): the caller may try again.
		g.record(ctx, "refused", method, nil, creds, err)
		return ctx, a2a.Busy(5*time.Second, "%s: the agent cannot check credentials now: %v", method, err)
	}
	if err := g.policy.allows(method, p); err != nil {
		if g.policy.DryRun {
			g.record(ctx, "refused in dry run", method, p, creds, err)
		} else {
			g.record(ctx, "refused", method, p, creds, err)
			return ctx, a2a.Errorf(a2a.CodePermissionDenied, "%s: %v", method, err)
		}
	}
	if wait, which := g.limiter.take(p, time.Now()); wait > 0 {
		err := fmt.Errorf("%w: the %s's limit is reached", ErrRateLimited, which)
		g.record(ctx, "refused", method, p, creds, err)
		return ctx, a2a.Busy(wait, "%s: %s's rate limit is reached; retry in %v", method, which, wait.Round(time.Millisecond))
	}
	g.record(ctx, "admitted", method, p, creds, nil)
	return NewContext(ctx, p), nil
}

// authenticate finds the principal of creds: the first Authenticator that
// finds a credential of its kind decides, and its index is returned (-1
// when none found one).
func (g *Gate) authenticate(ctx context.Context, creds Credentials) (*Principal, int, error) {
	for i, a := range g.authns {
		p, err := a.Authenticate(ctx, creds)
		if errors.Is(err, ErrNoCredentials) {
			continue
		}
		if err != nil {
			return nil, i, err
		}
		if p == nil {
			return nil, i, fmt.Errorf("%w: the authenticator returned no principal", ErrInvalidCredentials)
		}
		return p, i, nil
	}
	if g.anonymous {
		return nil, -1, nil
	}
	if len(g.authns) == 0 {
		return nil, -1, ErrNoCredentials
	}
	return nil, -1, fmt.Errorf("%w: send one of %s", ErrNoCredentials, g.kinds())
}

// kinds names the credentials the gate takes, for a refusal's message.
func (g *Gate) kinds() string {
	var names []string
	for _, a := range g.authns {
		if n, ok := a.(interface{ Kind() string }); ok {
			names = append(names, n.Kind())
		}
	}
	if len(names) == 0 {
		return "the credentials the agent card's securitySchemes declare"
	}
	return strings.Join(names, " or ")
}

// challenge joins the challenges of every Authenticator, so that a client
// learns each way in. The one that refused a credential (g.authns[decider];
// -1 when none was sent) comes first and alone says why, with err; the
// others found no credential of theirs, which RFC 6750 answers without an
// error code.
func (g *Gate) challenge(decider int, err error) string {
	var cs []string
	if decider >= 0 {
		if c := g.authns[decider].Challenge(err); c != "" {
			cs = append(cs, c)
		}
	}
	for i, a := range g.authns {
		if i == decider {
			continue
		}
		if c := a.Challenge(ErrNoCredentials); c != "" {
			cs = append(cs, c)
		}
	}
	return strings.Join(cs, ", ")
}

// record writes one decision to the audit log.
func (g *Gate) record(ctx context.Context, decision, method string, p *Principal, creds Credentials, err error) {
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelWarn
	}
	if !g.audit.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("decision", decision), slog.String("method", method)}
	if p != nil {
		attrs = append(attrs, slog.String("scheme", p.Scheme), slog.String("principal", p.ID()))
		if p.Tenant != "" {
			attrs = append(attrs, slog.String("tenant", p.Tenant))
		}
	} else if err == nil {
		attrs = append(attrs, slog.String("principal", "anonymous"))
	}
	if creds.Remote != nil {
		attrs = append(attrs, slog.String("remote", creds.Remote.String()))
	}
	if err != nil {
		attrs = append(attrs, slog.String("reason", err.Error()))
	}
	g.audit.LogAttrs(ctx, level, "a2a: auth", attrs...)
}
