package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Credentials authenticate a client's calls to an agent: an API key, a
// bearer token of the client's own, or a token that stands for the caller
// on whose behalf the call is made (package a2a/credentials has each).
// Set them on Config.Credentials.
//
// They do not apply to the card fetch (Resolve, New): the card is the
// agent's public description (the extended card is the one behind
// authentication), and it is fetched when a client is made, where no
// caller's identity is at hand for credentials that act on a caller's
// behalf. A card served behind authentication takes a header through
// Config.CallOptions; the extended card, a call like any other, takes the
// Credentials.
type Credentials interface {
	// Header returns the headers that authenticate one call, such as
	// Authorization; ctx is the call's, which carries the caller a call
	// on someone's behalf is made for. A header the call's CallOptions
	// set is sent as they set it. An error fails the call, which is not
	// sent; its message must not hold a secret.
	Header(ctx context.Context) (http.Header, error)
}

// ErrCredentials matches, with errors.Is, the error of a call that was not
// sent because the client's Credentials failed: no token could be had (the
// token endpoint refused or is down, a secret file is missing, the call
// is made for no caller). The error names the agent and wraps the
// Credentials' own error.
var ErrCredentials = errors.New("a2a client: no credentials for the call")

// credentialsError is a call the Credentials could not authenticate.
type credentialsError struct {
	op, agent string
	err       error
}

func (e *credentialsError) Error() string {
	msg := e.err.Error()
	if !strings.HasPrefix(msg, "credentials: ") {
		msg = "credentials: " + msg
	}
	return fmt.Sprintf("a2a client: %s to %s: %s", e.op, e.agent, msg)
}

func (e *credentialsError) Unwrap() []error { return []error{ErrCredentials, e.err} }

// authenticate returns the headers of a call: h, the call's, with the
// Credentials' headers added where h does not set them, and the trace
// context of ctx (withTrace). h is not changed.
func (c *Client) authenticate(ctx context.Context, op string, h http.Header) (http.Header, error) {
	if c.creds == nil {
		return withTrace(ctx, h), nil
	}
	ch, err := c.creds.Header(ctx)
	if err != nil {
		return nil, &credentialsError{op: op, agent: c.agentName(), err: err}
	}
	if len(ch) == 0 {
		return withTrace(ctx, h), nil
	}
	out := h.Clone()
	if out == nil {
		out = make(http.Header, len(ch))
	}
	for k, vs := range ch {
		k = http.CanonicalHeaderKey(k)
		if _, set := h[k]; !set {
			out[k] = vs
		}
	}
	return withTrace(ctx, out), nil
}

// agentName names the agent in errors: its card's name and its URL.
func (c *Client) agentName() string {
	if c.card != nil && c.card.Name != "" {
		return fmt.Sprintf("agent %q at %s", c.card.Name, c.url)
	}
	return "the agent at " + c.url
}
