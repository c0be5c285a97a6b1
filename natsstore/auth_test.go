package natsstore_test

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/natsstore"
)

// authCase is a NATS server that requires a credential, the credential
// that it admits, and those it refuses.
type authCase struct {
	name string
	// serve sets the server's authorization.
	serve func(*server.Options)
	right natsstore.Auth
	// wrong are credentials the server refuses, by what is wrong.
	wrong map[string]natsstore.Auth
	// secrets are what no error or log may show.
	secrets []string
}

// Connect admits a client with the credential the server requires, on
// which a store works, and refuses one with a wrong credential or none:
// at once (no retry mends it), naming the server, never the secret.
func TestConnectAuthenticates(t *testing.T) {
	for _, c := range authCases(t) {
		t.Run(c.name, func(t *testing.T) {
			srv := authServer(t, c.serve)
			url := srv.ClientURL()
			logs := new(a2atest.LogBuffer)
			log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			// A bound far beyond an answer: a refusal must come back
			// before it, not be retried until it ends.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()

			nc, js, err := natsstore.Connect(ctx, url, natsstore.ConnConfig{Name: t.Name(), Auth: c.right, Logger: log})
			if err != nil {
				t.Fatalf("the right credential: %v", err)
			}
			stores, err := natsstore.Open(ctx, js, natsstore.StoresConfig{Namespace: "AuthAgent"})
			if err != nil {
				t.Fatal(err)
			}
			task := &a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
			if _, err := stores.Tasks.Commit(ctx, taskstore.Entry{Task: task, Seq: 1}, task); err != nil {
				t.Fatal(err)
			}
			if e, err := stores.Tasks.Get(ctx, "task-1"); err != nil || e.Task.ID != "task-1" {
				t.Fatalf("Get: %+v, %v", e, err)
			}
			nc.Close()

			for why, auth := range c.wrong {
				_, _, err := natsstore.Connect(ctx, url, natsstore.ConnConfig{Name: t.Name(), Auth: auth, Logger: log})
				switch {
				case err == nil:
					t.Errorf("%s: connected", why)
					continue
				case ctx.Err() != nil:
					t.Fatalf("%s: retried until the context ended: %v", why, err)
				case !strings.Contains(err.Error(), url):
					t.Errorf("%s: the error does not name the server %s: %v", why, url, err)
				}
				t.Logf("%s: %v", why, err)
				for _, s := range c.secrets {
					if strings.Contains(err.Error(), s) {
						t.Errorf("%s: the error shows a secret: %v", why, err)
					}
				}
			}
			for _, s := range c.secrets {
				if strings.Contains(logs.String(), s) {
					t.Errorf("the log shows a secret:\n%s", logs.String())
				}
			}
		})
	}
}

// A rotated password takes effect at the next reconnection, without a
// new connection: the server, given the new password, drops the client
// that authenticated with the old one, and the client reconnects with the
// file's new content.
func TestConnectRereadsThePassword(t *testing.T) {
	o := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
		Users: []*server.User{{Username: "mesh", Password: "the-first-password"}}}
	srv := authServer(t, func(so *server.Options) { *so = *o })
	file := filepath.Join(t.TempDir(), "password")
	must(t, os.WriteFile(file, []byte("the-first-password"), 0o600))
	nc, js, err := natsstore.Connect(t.Context(), srv.ClientURL(), natsstore.ConnConfig{Name: t.Name(), Auth: natsstore.Auth{User: "mesh", PasswordFile: file}})
	must(t, err)
	defer nc.Close()

	// The Secret changes, then the server's configuration.
	must(t, os.WriteFile(file, []byte("the-second-password\n"), 0o600))
	next := *o
	next.Port = srv.Addr().(*net.TCPAddr).Port
	next.Users = []*server.User{{Username: "mesh", Password: "the-second-password"}}
	must(t, srv.ReloadOptions(&next))
	waitFor(t, 10*time.Second, "the client to reconnect with the new password", func() bool {
		return nc.Stats().Reconnects > 0 && nc.IsConnected()
	})
	if _, err := natsstore.Open(t.Context(), js, natsstore.StoresConfig{Namespace: "AuthAgent"}); err != nil {
		t.Fatal(err)
	}
}

// Credentials that cannot be used are refused before connecting, naming
// the file or the fields; a URL's password never shows.
func TestConnectRefusesUnusableAuth(t *testing.T) {
	srv := authServer(t, func(o *server.Options) { o.Users = []*server.User{{Username: "mesh", Password: "in-the-url"}} })
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	must(t, os.WriteFile(empty, []byte("\n"), 0o600))
	missing := filepath.Join(dir, "missing")
	url := srv.ClientURL()
	withPassword := strings.Replace(url, "nats://", "nats://mesh:wrong-in-the-url@", 1)
	for _, c := range []struct {
		name, url string
		auth      natsstore.Auth
		want      string
	}{
		{"a missing password file", url, natsstore.Auth{User: "mesh", PasswordFile: missing}, missing},
		{"an empty token file", url, natsstore.Auth{TokenFile: empty}, empty},
		{"a missing credentials file", url, natsstore.Auth{CredsFile: missing}, missing},
		{"a missing nkey seed", url, natsstore.Auth{NkeyFile: missing}, missing},
		{"a missing CA", url, natsstore.Auth{TLSCA: missing}, missing},
		{"a certificate without its key", url, natsstore.Auth{TLSCert: missing}, "TLSCert and TLSKey"},
		{"a missing certificate", url, natsstore.Auth{TLSCert: missing, TLSKey: missing}, missing},
		{"a user without a password", url, natsstore.Auth{User: "mesh"}, "User and PasswordFile"},
		{"two ways", url, natsstore.Auth{TokenFile: empty, NkeyFile: empty}, "NkeyFile and TokenFile"},
		{"a wrong password in the URL", withPassword, natsstore.Auth{}, "nats://mesh:xxxxx@"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			_, _, err := natsstore.Connect(ctx, c.url, natsstore.ConnConfig{Auth: c.auth})
			switch {
			case err == nil:
				t.Fatal("connected")
			case ctx.Err() != nil:
				t.Fatalf("retried until the context ended: %v", err)
			case !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "in-the-url"):
				t.Fatalf("%v, want an error naming %s, and no password", err, c.want)
			}
		})
	}
}

func authCases(t *testing.T) []authCase {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const password, token = "pass-word-of-the-mesh", "token-of-the-mesh"
	user := func(t *testing.T) (nkeys.KeyPair, string) {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		seed, err := kp.Seed()
		if err != nil {
			t.Fatal(err)
		}
		return kp, string(seed)
	}
	nkey, nkeySeed := user(t)
	nkeyPub, _ := nkey.PublicKey()
	_, otherSeed := user(t)
	serve, creds, credsSecret := operator(t, dir)
	ca, other := a2atest.NewCA(t), a2atest.NewCA(t)
	caFile, certFile, keyFile := ca.WriteFiles(t, ca.Client(t, "spiffe://mesh/agent"))
	otherCA, otherCert, otherKey := other.WriteFiles(t, other.Client(t, "spiffe://mesh/agent"))
	serverTLS := ca.ServerTLS(t)
	serverTLS.ClientAuth = tls.RequireAndVerifyClientCert

	return []authCase{
		{name: "user and password",
			serve: func(o *server.Options) { o.Users = []*server.User{{Username: "mesh", Password: password}} },
			right: natsstore.Auth{User: "mesh", PasswordFile: write("password", password+"\n")},
			wrong: map[string]natsstore.Auth{
				"another password": {User: "mesh", PasswordFile: write("other-password", "not-"+password)},
				"another user":     {User: "someone", PasswordFile: write("password2", password)},
				"none":             {},
			},
			secrets: []string{password}},
		{name: "token",
			serve: func(o *server.Options) { o.Authorization = token },
			right: natsstore.Auth{TokenFile: write("token", token)},
			wrong: map[string]natsstore.Auth{
				"another token": {TokenFile: write("other-token", "not-"+token)},
				"none":          {},
			},
			secrets: []string{token}},
		{name: "nkey",
			serve: func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: nkeyPub}} },
			right: natsstore.Auth{NkeyFile: write("user.nk", nkeySeed)},
			wrong: map[string]natsstore.Auth{
				"another key": {NkeyFile: write("other.nk", otherSeed)},
				"none":        {},
			},
			secrets: []string{nkeySeed, otherSeed}},
		{name: "credentials file",
			serve:   serve,
			right:   natsstore.Auth{CredsFile: creds},
			wrong:   map[string]natsstore.Auth{"a key the account did not sign": {NkeyFile: write("other2.nk", otherSeed)}, "none": {}},
			secrets: []string{credsSecret, otherSeed}},
		{name: "mutual TLS",
			serve: func(o *server.Options) {
				o.TLSConfig, o.TLS, o.TLSVerify, o.TLSTimeout = serverTLS, true, true, 5
			},
			right: natsstore.Auth{TLSCA: caFile, TLSCert: certFile, TLSKey: keyFile},
			wrong: map[string]natsstore.Auth{
				"a certificate of another CA": {TLSCA: caFile, TLSCert: otherCert, TLSKey: otherKey},
				"no certificate":              {TLSCA: caFile},
				"a server of another CA":      {TLSCA: otherCA, TLSCert: certFile, TLSKey: keyFile},
			}},
	}
}

// operator makes an operator, an account with JetStream and a user of it:
// the server options that trust the operator and know the account, and
// the user's credentials file, whose seed is a secret.
func operator(t *testing.T, dir string) (serve func(*server.Options), creds, seed string) {
	t.Helper()
	op, err := nkeys.CreateOperator()
	must(t, err)
	acc, err := nkeys.CreateAccount()
	must(t, err)
	sys, err := nkeys.CreateAccount() // JetStream needs the system's
	must(t, err)
	usr, err := nkeys.CreateUser()
	must(t, err)
	opPub, _ := op.PublicKey()
	accPub, _ := acc.PublicKey()
	sysPub, _ := sys.PublicKey()
	usrPub, _ := usr.PublicKey()
	oc := jwt.NewOperatorClaims(opPub)
	oc.SystemAccount = sysPub
	sysJWT, err := jwt.NewAccountClaims(sysPub).Encode(op)
	must(t, err)
	ac := jwt.NewAccountClaims(accPub)
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	accJWT, err := ac.Encode(op)
	must(t, err)
	uc := jwt.NewUserClaims(usrPub)
	uc.IssuerAccount = accPub
	usrJWT, err := uc.Encode(acc)
	must(t, err)
	usrSeed, err := usr.Seed()
	must(t, err)
	b, err := jwt.FormatUserConfig(usrJWT, usrSeed)
	must(t, err)
	creds = filepath.Join(dir, "user.creds")
	must(t, os.WriteFile(creds, b, 0o600))
	return func(o *server.Options) {
		res := &server.MemAccResolver{}
		must(t, res.Store(accPub, accJWT))
		must(t, res.Store(sysPub, sysJWT))
		o.TrustedOperators, o.AccountResolver, o.SystemAccount = []*jwt.OperatorClaims{oc}, res, sysPub
	}, creds, string(usrSeed)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// authServer starts a NATS server with JetStream on a free port of
// 127.0.0.1, configured by configure, until the test's end.
func authServer(t *testing.T, configure func(*server.Options)) *server.Server {
	t.Helper()
	o := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true}
	configure(o)
	srv, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	return srv
}
