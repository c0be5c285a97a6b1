// Package credentials holds the credentials an agent presents when it
// calls another: client.Credentials for a client.Config (or a
// bridge.RemoteConfig, or a gateway topology's agent), asked on every
// call.
//
// An agent calls another either as itself or on behalf of its caller:
//
//   - as itself, with a static secret (Bearer, APIKey) or with a token of
//     its own from an OAuth 2.0 authorization server (ClientCredentials,
//     the client-credentials grant);
//   - on behalf of its caller, so that the agent called sees the end user
//     and scopes the tasks to them: by passing on the caller's own bearer
//     token (Forward), or by trading it at the authorization server for
//     one meant for the agent called (Exchange, RFC 8693 token exchange).
//
// The caller is the auth.Principal in the call's context, which the
// server's Gate put in the request's context and the bridge carries into
// every run, its resumptions and its cancellations; Principal.Token is the
// bearer token it authenticated with.
//
// Secrets come from files (FromFile, re-read when they change, as a
// Kubernetes Secret's mount does) or from environment variables
// (FromEnv). Errors name the file, the variable or the token endpoint,
// never a secret or a token.
package credentials

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/client"
)

var (
	_ client.Credentials = (*Static)(nil)
	_ client.Credentials = (*ClientCredentials)(nil)
	_ client.Credentials = Forward{}
	_ client.Credentials = (*Exchange)(nil)
)

// ErrNoCallerToken matches, with errors.Is, the error of credentials that
// act on a caller's behalf (Forward, Exchange) for a call whose context
// carries no caller with a bearer token: an anonymous caller, one that
// authenticated otherwise (an API key, a client certificate), or a call
// made outside any request.
var ErrNoCallerToken = errors.New("credentials: no caller's bearer token to act on behalf of")

// noCallerToken is an ErrNoCallerToken saying why.
type noCallerToken struct{ why string }

func (e *noCallerToken) Error() string {
	return "no caller's bearer token to act on behalf of: " + e.why
}
func (e *noCallerToken) Is(target error) bool { return target == ErrNoCallerToken }

// callerToken returns the bearer token of the caller ctx carries.
func callerToken(ctx context.Context) (string, error) {
	p := auth.FromContext(ctx)
	switch {
	case p == nil:
		return "", &noCallerToken{"the call is made for no authenticated caller"}
	case p.Token == "":
		return "", &noCallerToken{fmt.Sprintf("the caller %s did not authenticate with a bearer token", p)}
	}
	return p.Token, nil
}

// Forward presents the caller's own bearer token, as it came: the agent
// called sees the end user, and must accept tokens meant for the agent
// forwarding them (a shared audience). Prefer Exchange where the
// authorization server can issue a token for the agent called, so that a
// token is never accepted beyond the audience it names.
type Forward struct{}

// Header implements client.Credentials: "Authorization: Bearer" with the
// caller's token, or an error wrapping ErrNoCallerToken.
func (Forward) Header(ctx context.Context) (http.Header, error) {
	token, err := callerToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("credentials: forward: %w", err)
	}
	return bearerHeader(token), nil
}

func bearerHeader(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}
