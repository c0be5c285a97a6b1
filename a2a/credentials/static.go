package credentials

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/a2amesh/a2amesh/internal/userfile"
)

// A Secret is a secret value (an API key, a token, a client secret) read
// each time it is needed, so that a rotated secret applies without a
// restart.
type Secret interface {
	// Value returns the secret; an error names where it was sought,
	// never the value.
	Value() (string, error)
}

// FromFile is a secret held in a file, such as a Kubernetes Secret
// mounted as a volume: its content, without leading and trailing white
// space. The file is read again when it changes (another file at the
// path, another size or modification time), as a mount does when the
// Secret is rotated; otherwise the value read last serves. An empty file
// is an error.
func FromFile(path string) Secret { return &fileSecret{path: path} }

type fileSecret struct {
	path string

	mu    sync.Mutex
	info  os.FileInfo // of the file value was read from
	value string
}

func (f *fileSecret) Value() (string, error) {
	info, err := os.Stat(f.path)
	if err != nil {
		return "", fmt.Errorf("secret file: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.info != nil && os.SameFile(f.info, info) && f.info.Size() == info.Size() && f.info.ModTime().Equal(info.ModTime()) {
		return f.value, nil
	}
	b, err := userfile.Read(f.path)
	if err != nil {
		return "", fmt.Errorf("secret file: %w", err)
	}
	v := string(bytes.TrimSpace(b))
	if v == "" {
		return "", fmt.Errorf("secret file %s is empty", f.path)
	}
	f.info, f.value = info, v
	return v, nil
}

// FromEnv is a secret held in an environment variable, read at each use.
// An unset or empty variable is an error.
func FromEnv(name string) Secret { return envSecret(name) }

type envSecret string

func (e envSecret) Value() (string, error) {
	v := strings.TrimSpace(os.Getenv(string(e)))
	if v == "" {
		return "", fmt.Errorf("secret environment variable %s is unset or empty", string(e))
	}
	return v, nil
}

// Static presents a secret of the agent's own in one header, the same on
// every call: an API key or a long-lived bearer token.
type Static struct {
	header, prefix string
	secret         Secret
}

// Bearer presents token as "Authorization: Bearer <token>".
func Bearer(token Secret) *Static {
	return &Static{header: "Authorization", prefix: "Bearer ", secret: token}
}

// APIKey presents key in header ("" means X-API-Key, which an a2a/auth
// APIKeys authenticator reads by default).
func APIKey(header string, key Secret) *Static {
	if header == "" {
		header = "X-API-Key"
	}
	return &Static{header: header, secret: key}
}

// Header implements client.Credentials.
func (s *Static) Header(context.Context) (http.Header, error) {
	if s.secret == nil {
		return nil, errors.New("credentials: no secret configured")
	}
	v, err := s.secret.Value()
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		return nil, errors.New("credentials: the secret holds a line break or a NUL, which no header may carry")
	}
	return http.Header{http.CanonicalHeaderKey(s.header): {s.prefix + v}}, nil
}

// The HTTP bounds of the token endpoint's exchanges.
const (
	// tokenTimeout bounds one request to a token endpoint, whatever the
	// HTTP client's own timeout.
	tokenTimeout = 10 * time.Second
	// maxTokenResponse bounds a token endpoint's response body.
	maxTokenResponse = 64 << 10
)
