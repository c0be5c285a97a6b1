package natsstore

import (
	"fmt"
	"net"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbeddedConfig configures an in-process NATS server.
type EmbeddedConfig struct {
	// Dir keeps JetStream's data; it survives restarts.
	Dir string
	// Host and Port to listen on; Port -1 picks a free port. The zero
	// values mean 127.0.0.1:4222.
	Host string
	Port int
}

// Embedded is a NATS server with JetStream running in this process.
type Embedded struct {
	srv *server.Server
}

// StartEmbedded starts a server and waits until it takes connections.
func StartEmbedded(cfg EmbeddedConfig) (*Embedded, error) {
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
		return nil, fmt.Errorf("natsstore: embedded server: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("natsstore: the embedded server did not start on %s:%d", cfg.Host, cfg.Port)
	}
	return &Embedded{srv: srv}, nil
}

// URL is the client URL, nats://host:port.
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Port is the port the server listens on; a server restarted on it with
// the same Dir is the same server to its clients.
func (e *Embedded) Port() int { return e.srv.Addr().(*net.TCPAddr).Port }

// Close stops the server and waits until it has.
func (e *Embedded) Close() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}
