package serve_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/serve"
)

// ca is a test certificate authority.
type ca struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
}

func newCA(t *testing.T, name string) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &ca{key, cert}
}

// issue returns a certificate of the CA for a server (ip) or a client
// (uri, ou).
func (c *ca) issue(t *testing.T, ip net.IP, uri, ou string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "leaf", OrganizationalUnit: []string{ou}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	if ip != nil {
		tmpl.IPAddresses, tmpl.ExtKeyUsage = []net.IP{ip}, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	} else {
		u, _ := url.Parse(uri)
		tmpl.URIs, tmpl.ExtKeyUsage = []*url.URL{u}, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func (c *ca) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.cert)
	return p
}

// TestMutualTLS: over TLS, a client certificate the server's CA issued
// is a credential: its URI names the principal and its OU the tenant; a
// client without one, or with one of another CA, is unauthenticated.
func TestMutualTLS(t *testing.T) {
	meshCA, otherCA := newCA(t, "mesh CA"), newCA(t, "other CA")
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{auth.NewMTLS(auth.MTLSConfig{TenantFromOU: true})}})
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{meshCA.issue(t, net.ParseIP("127.0.0.1"), "", "")},
		ClientCAs: meshCA.pool(), ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
	s, _, _ := start(t, serve.Config{TLS: tlsCfg, Gate: gate})
	if u, _ := url.Parse(s.URL()); u.Scheme != "https" {
		t.Fatalf("URL %s, want https", s.URL())
	}
	if sc := s.Card().SecuritySchemes["mtls"]; sc.MutualTLS == nil {
		t.Fatalf("card's schemes %+v, want mtls", s.Card().SecuritySchemes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(certs ...tls.Certificate) (*client.Client, error) {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: meshCA.pool(), Certificates: certs}}}
		t.Cleanup(hc.CloseIdleConnections)
		return client.New(ctx, s.URL(), client.Config{HTTPClient: hc})
	}
	research, err := connect(meshCA.issue(t, nil, "spiffe://team-a.example/research", "team-a"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := research.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hi")})
	if err != nil {
		t.Fatalf("with the mesh's certificate: %v", err)
	}
	task := ev.(*a2a.Task)
	if _, err := research.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, Tenant: "team-b"}); !errors.Is(err, a2a.ErrPermissionDenied) {
		t.Fatalf("a certificate of team-a naming team-b: %v, want permission denied", err)
	}
	writer, err := connect(meshCA.issue(t, nil, "spiffe://team-a.example/writer", "team-a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("another certificate's GetTask: %v, want task not found", err)
	}
	anonymous, err := connect()
	if err != nil {
		t.Fatal(err) // the card is public
	}
	if _, err := anonymous.ListTasks(ctx, &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("without a certificate: %v, want unauthenticated", err)
	}
	// A client offers only a certificate of a CA the server asks for:
	// one of another CA is not even sent, and the client is nobody.
	evil, err := connect(otherCA.issue(t, nil, "spiffe://evil.example/x", "team-a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := evil.ListTasks(ctx, &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("with another CA's certificate: %v, want unauthenticated", err)
	}
}

// TestMutualTLSGRPC: Config.TLS serves the gRPC binding over TLS too, its
// card entry still a host:port: a client certificate names the principal
// on gRPC as on HTTP, none is unauthenticated, another principal's task
// is not found, and streams run.
func TestMutualTLSGRPC(t *testing.T) {
	meshCA := newCA(t, "mesh CA")
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{auth.NewMTLS(auth.MTLSConfig{})}})
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{meshCA.issue(t, net.ParseIP("127.0.0.1"), "", "")},
		ClientCAs: meshCA.pool(), ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
	s, _, _ := start(t, serve.Config{TLS: tlsCfg, Gate: gate, GRPCAddr: "127.0.0.1:0"})
	for _, iface := range s.Card().SupportedInterfaces {
		if _, _, err := net.SplitHostPort(iface.URL); iface.ProtocolBinding == a2a.BindingGRPC && err != nil {
			t.Fatalf("gRPC interface URL %q, want a bare host:port", iface.URL)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(certs ...tls.Certificate) *client.Client {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: meshCA.pool()}}}
		t.Cleanup(hc.CloseIdleConnections)
		c, err := client.New(ctx, s.URL(), client.Config{HTTPClient: hc, Bindings: []client.Binding{
			grpcclient.Binding(grpcclient.Config{TLS: &tls.Config{RootCAs: meshCA.pool(), Certificates: certs}})}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if c.Binding() != a2a.BindingGRPC {
			t.Fatalf("the client speaks %s, want gRPC", c.Binding())
		}
		return c
	}
	research := connect(meshCA.issue(t, nil, "spiffe://team-a.example/research", ""))
	ev, err := research.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hi")})
	if err != nil {
		t.Fatalf("with the mesh's certificate: %v", err)
	}
	task := ev.(*a2a.Task)
	if _, err := research.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil {
		t.Errorf("its own task: %v", err)
	}
	var events int
	for _, err := range research.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "streamed")}) {
		if err != nil {
			t.Fatalf("stream after %d events: %v", events, err)
		}
		events++
	}
	if events < 2 {
		t.Errorf("the stream had %d events", events)
	}
	writer := connect(meshCA.issue(t, nil, "spiffe://team-a.example/writer", ""))
	if _, err := writer.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another certificate's GetTask: %v, want task not found", err)
	}
	if _, err := connect().ListTasks(ctx, &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Errorf("without a certificate: %v, want unauthenticated", err)
	}
}
