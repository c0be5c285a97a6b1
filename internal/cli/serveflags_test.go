package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/serve"
)

// serveConfig parses args as a command serving an agent would.
func serveConfig(t *testing.T, args ...string) (serve.Config, error) {
	t.Helper()
	for _, env := range []string{"TEST_ADDR", "NATS_URL", "A2AMESH_STATE", "A2AMESH_DATA_DIR", "A2AMESH_COMMIT_DELAY", "A2AMESH_PUSH_ALLOW",
		"A2AMESH_EVENTS_MAX_AGE", "A2AMESH_EVENTS_PER_TASK", "A2AMESH_TASKS_MAX_AGE",
		"A2AMESH_DRAIN_DELAY", "A2AMESH_DRAIN_TIMEOUT", "A2AMESH_NATS_CREDS", "A2AMESH_NATS_NKEY", "A2AMESH_NATS_USER",
		"A2AMESH_NATS_PASSWORD_FILE", "A2AMESH_NATS_TOKEN_FILE", "A2AMESH_NATS_TLS_CA", "A2AMESH_NATS_TLS_CERT", "A2AMESH_NATS_TLS_KEY"} {
		t.Setenv(env, "") // restored after the test
		os.Unsetenv(env)
	}
	f := NewFlags("test", "TEST")
	sf := DefineServe(f, "127.0.0.1:0")
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	return sf.Config(nil)
}

// Every flag that does nothing with the flags it is given stops the
// command, naming it and what to add; none is silently ignored.
func TestServeFlagPairs(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" when the flags are usable; else what the error says
	}{
		{nil, ""},
		{[]string{"--nats", "nats://127.0.0.1:4222"}, ""},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--events-max-age", "1h", "--events-per-task", "100"}, ""},
		{[]string{"--state", "nats", "--nats", "nats://127.0.0.1:4222", "--heartbeat", "2s", "--tasks-max-age", "1h"}, ""},
		{[]string{"--data-dir", "/tmp/a2amesh"}, ""},
		{[]string{"--state", "nats"}, "--state nats: needs --nats"},
		{[]string{"--state", "disk"}, `--state: "disk" is neither`},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--heartbeat", "2s", "--tasks-max-age", "1h"}, ""},
		{[]string{"--state", "memory", "--nats", "nats://127.0.0.1:4222", "--data-dir", "/tmp/a2amesh"}, ""},
		{[]string{"--heartbeat", "2s"}, "--heartbeat: applies only with the state on NATS"},
		{[]string{"--state", "memory", "--nats", "nats://127.0.0.1:4222", "--heartbeat", "2s"}, "--heartbeat: applies only with the state on NATS"},
		{[]string{"--tasks-max-age", "1h"}, "--tasks-max-age: applies only with the state on NATS"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--data-dir", "/tmp/a2amesh"}, "--data-dir: applies only with the state in memory"},
		{[]string{"--events-max-age", "1h"}, "--events-max-age: applies only with --nats"},
		{[]string{"--events-per-task", "5"}, "--events-per-task: applies only with --nats"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-replicas", "3"}, ""},
		{[]string{"--nats-replicas", "3"}, "--nats-replicas: applies only with --nats"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-replicas", "7"}, "must be between 1 and 5"},
		{[]string{"--state", "nats", "--nats", "nats://127.0.0.1:4222", "--data-dir", "/tmp/a2amesh"}, "--data-dir: applies only with the state in memory"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-user", "mesh", "--nats-password-file", "/run/nats/password"}, ""},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-creds", "/run/nats/user.creds", "--nats-tls-ca", "/run/nats/ca.pem"}, ""},
		{[]string{"--nats-user", "mesh", "--nats-password-file", "/run/nats/password"}, "--nats-user, --nats-password-file, --nats-token-file"},
		{[]string{"--nats-tls-ca", "/run/nats/ca.pem"}, "applies only with --nats"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-user", "mesh"}, "User and PasswordFile: give both"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-token-file", "/t", "--nats-nkey", "/n"}, "give one way of authenticating"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-tls-cert", "/run/nats/cert.pem"}, "TLSCert and TLSKey: give both"},
		{[]string{"--push-allow", "10.0.0.0/8, bad host"}, `--push-allow`},
		{[]string{"--drain-delay", "-1s"}, "--drain-delay: must not be negative"},
		{[]string{"--auth-config", "/nonexistent/auth.yaml"}, "--auth-config: auth config: stat /nonexistent/auth.yaml"},
		{[]string{"--signing-key", "/nonexistent/key.pem"}, "--signing-key: "},
		{[]string{"--tls-cert", "/nonexistent/cert.pem"}, "give both"},
		{[]string{"--tls-client-ca", "/nonexistent/ca.pem"}, "give both"},
		{[]string{"--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"}, "--tls-cert, --tls-key: open /nonexistent/cert.pem"},
	}
	for _, tt := range tests {
		_, err := serveConfig(t, tt.args...)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v, want no error", tt.args, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: %v, want an error saying %q", tt.args, err, tt.want)
		}
	}
}

// The NATS credentials come from their A2AMESH_NATS_* variables, shared
// by every command, as they do from their flags.
func TestServeFlagsNATSAuthFromEnv(t *testing.T) {
	want := natsstore.Auth{CredsFile: "/c", NkeyFile: "/n", User: "mesh", PasswordFile: "/p", TokenFile: "/t",
		TLSCA: "/ca", TLSCert: "/cert", TLSKey: "/key"}
	f := NewFlags("test", "TEST")
	for env, v := range map[string]string{"A2AMESH_NATS_CREDS": want.CredsFile, "A2AMESH_NATS_NKEY": want.NkeyFile,
		"A2AMESH_NATS_USER": want.User, "A2AMESH_NATS_PASSWORD_FILE": want.PasswordFile, "A2AMESH_NATS_TOKEN_FILE": want.TokenFile,
		"A2AMESH_NATS_TLS_CA": want.TLSCA, "A2AMESH_NATS_TLS_CERT": want.TLSCert, "A2AMESH_NATS_TLS_KEY": want.TLSKey} {
		t.Setenv(env, v)
	}
	n := DefineNATSAuth(f)
	if err := f.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if got := n.Auth(); got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
}

func TestServeFlagsCommitDelay(t *testing.T) {
	tests := []struct {
		args []string
		want time.Duration // serve.Config.CommitDelay: 0 the state's default, negative none
	}{
		{nil, 0},
		{[]string{"--state", "nats", "--nats", "nats://127.0.0.1:4222"}, 0},
		{[]string{"--state", "nats", "--nats", "nats://127.0.0.1:4222", "--commit-delay", "0"}, -1},
		{[]string{"--commit-delay", "5ms"}, 5 * time.Millisecond},
	}
	for _, tt := range tests {
		c, err := serveConfig(t, tt.args...)
		if err != nil || c.CommitDelay != tt.want {
			t.Errorf("%q: commit delay %v (%v), want %v", tt.args, c.CommitDelay, err, tt.want)
		}
	}
}

func TestServeFlagsDrain(t *testing.T) {
	tests := []struct {
		args         []string
		delay, drain time.Duration // serve.Config's: a negative DrainTimeout is none
	}{
		{nil, 2 * time.Second, serve.DefaultDrainTimeout},
		{[]string{"--drain-delay", "0", "--drain-timeout", "1m"}, 0, time.Minute},
		{[]string{"--drain-timeout", "0"}, 2 * time.Second, -1},
	}
	for _, tt := range tests {
		c, err := serveConfig(t, tt.args...)
		if err != nil || c.DrainDelay != tt.delay || c.DrainTimeout != tt.drain {
			t.Errorf("%q: drain delay %v, timeout %v (%v), want %v, %v", tt.args, c.DrainDelay, c.DrainTimeout, err, tt.delay, tt.drain)
		}
	}
}

func TestServeFlagsPushAllow(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  string
		bad  string
	}{
		{args: []string{"--push-allow", "10.0.0.0/8, bad host"}, bad: "bad host"},
		{args: []string{"--push-allow", "hooks.internal:0"}, bad: "hooks.internal:0"},
		{env: "127.0.0.0/8,10.0.0.0/33", bad: "10.0.0.0/33"},
	} {
		t.Setenv("A2AMESH_PUSH_ALLOW", tt.env)
		f := NewFlags("test", "TEST")
		sf := DefineServe(f, "127.0.0.1:0")
		if err := f.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		_, err := sf.Config(nil)
		if err == nil || !strings.Contains(err.Error(), "--push-allow") || !strings.Contains(err.Error(), `"`+tt.bad+`"`) {
			t.Errorf("%q (env %q): %v, want an error naming --push-allow and %q", tt.args, tt.env, err, tt.bad)
		}
	}
	c, err := serveConfig(t, "--push-allow", "127.0.0.0/8, hooks.internal:8443")
	if err != nil || strings.Join(c.PushAllow, " ") != "127.0.0.0/8 hooks.internal:8443" {
		t.Fatalf("PushAllow %q, %v", c.PushAllow, err)
	}
}

// --auth-config gives the server a gate from the file; --signing-key a
// key from its PEM file.
func TestServeFlagsAuth(t *testing.T) {
	dir := t.TempDir()
	authFile, keyFile := filepath.Join(dir, "auth.yaml"), filepath.Join(dir, "key.pem")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TEST_CI_KEY", "ci-key-0123456789abcdef")
	write(authFile, "apiKeys: {keys: [{name: ci, keyEnv: TEST_CI_KEY}]}\n")
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	write(keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	c, err := serveConfig(t, "--auth-config", authFile, "--signing-key", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.Gate == nil || c.Gate.Open() || c.SigningKey == nil {
		t.Fatalf("gate %v, signing key %v", c.Gate, c.SigningKey)
	}
	write(authFile, "apiKeys: {keys: [{name: ci, key: inline-0123456789}]}\n")
	if _, err := serveConfig(t, "--auth-config", authFile); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("an inline key: %v", err)
	}
}

// --hop-credentials makes the credential every hop carries, from a file
// in the topology's credential format; a bad file names the flag.
func TestServeFlagsHopCredentials(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hop.yaml")
	t.Setenv("TEST_MESH_KEY", "mesh-key-0123456789")
	hop := func(content string) (any, error) {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		f := NewFlags("test", "TEST")
		sf := DefineServe(f, "127.0.0.1:0")
		if err := f.Parse([]string{"--hop-credentials", file}); err != nil {
			t.Fatal(err)
		}
		return sf.HopCredentials()
	}
	c, err := hop("kind: apiKey\nsecretEnv: TEST_MESH_KEY\n")
	if err != nil || c == nil {
		t.Fatalf("an API key: %v, %v", c, err)
	}
	for content, want := range map[string]string{
		"kind: apiKey\nsecret: inline\n":          "unknown field",
		"kind: apiKey\nsecretEnv: TEST_UNSET_X\n": "secretEnv",
		"kind: telepathy\n":                       "kind",
	} {
		if _, err := hop(content); err == nil || !strings.Contains(err.Error(), "--hop-credentials") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming --hop-credentials and %q", content, err, want)
		}
	}
}
