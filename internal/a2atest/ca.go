package a2atest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority for tests of TLS: it issues a server
// certificate for 127.0.0.1 and client certificates naming a URI.
type CA struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	// Pool holds the CA's certificate: a client's RootCAs, a server's
	// ClientCAs.
	Pool *x509.CertPool
}

// NewCA returns a CA valid for an hour.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{key, cert, pool}
}

// Server returns a server certificate for 127.0.0.1.
func (c *CA) Server(t testing.TB) tls.Certificate {
	t.Helper()
	return c.issue(t, &x509.Certificate{IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
}

// Client returns a client certificate whose URI SAN is uri (a SPIFFE ID,
// say).
func (c *CA) Client(t testing.TB, uri string) tls.Certificate {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return c.issue(t, &x509.Certificate{URIs: []*url.URL{u}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}

func (c *CA) issue(t testing.TB, tmpl *x509.Certificate) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber, tmpl.Subject = big.NewInt(time.Now().UnixNano()), pkix.Name{CommonName: "leaf"}
	tmpl.NotBefore, tmpl.NotAfter, tmpl.KeyUsage = time.Now().Add(-time.Hour), time.Now().Add(time.Hour), x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// ServerTLS returns a server's TLS config with a certificate of the CA,
// verifying the client certificates of the CA that clients send.
func (c *CA) ServerTLS(t testing.TB) *tls.Config {
	t.Helper()
	return &tls.Config{Certificates: []tls.Certificate{c.Server(t)}, ClientCAs: c.Pool,
		ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
}

// WriteFiles writes the CA's certificate, and cert with its key, to PEM
// files in a directory of the test's, for what reads them from files.
func (c *CA) WriteFiles(t testing.TB, cert tls.Certificate) (caFile, certFile, keyFile string) {
	t.Helper()
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := []struct {
		name, kind string
		der        []byte
	}{{"ca.pem", "CERTIFICATE", c.cert.Raw}, {"cert.pem", "CERTIFICATE", cert.Certificate[0]}, {"key.pem", "PRIVATE KEY", key}}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
}

// ClientTLS returns a client's TLS config trusting the CA and presenting
// certs.
func (c *CA) ClientTLS(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: c.Pool, Certificates: certs, MinVersion: tls.VersionTLS12}
}
