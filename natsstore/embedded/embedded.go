// Package embedded runs a NATS server with JetStream inside this process,
// for a mesh that has no NATS of its own to use (a2amesh up, tests,
// benchmarks). It is a package of its own so that importing natsstore
// links only the NATS client: a program links the server only by asking
// for it here.
package embedded

import (
	"fmt"
	"net"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Config configures an in-process NATS server.
type Config struct {
	// Dir keeps JetStream's data; it survives restarts.
	Dir string
	// Host and Port to listen on; Port -1 picks a free port. The zero
	// values mean 127.0.0.1:4222.
	Host string
	Port int
}

// Server is a NATS server with JetStream running in this process.
type Server struct {
	srv *server.Server
}

// Start starts a server and waits until it takes connections.
func Start(cfg Config) (*Server, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Port == 0 {
		cfg.Port = 4222
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: "a2amesh", Host: cfg.Host, Port: cfg.Port,
		JetStream: true, StoreDir: cfg.Dir,
		NoSigs: true, NoLog: true,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded: nats server: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("embedded: the nats server did not start on %s:%d", cfg.Host, cfg.Port)
	}
	return &Server{srv: srv}, nil
}

// URL is the client URL, nats://host:port.
func (s *Server) URL() string { return s.srv.ClientURL() }

// Port is the port the server listens on; a server restarted on it with
// the same Dir is the same server to its clients.
func (s *Server) Port() int { return s.srv.Addr().(*net.TCPAddr).Port }

// Close stops the server and waits until it has.
func (s *Server) Close() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}
