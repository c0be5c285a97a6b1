package serve

import (
	"context"
	"github.com/cloudwego/hertz/pkg/common/adaptor"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/route"
)

// The health endpoints, beside the A2A routes on the same port. They are
// exact paths: an HTTP+JSON route under a tenant named "healthz" or
// "readyz" (/healthz/message:send) is still that route, and no A2A route
// is a single segment of these names.
const (
	// HealthzPath answers 200 while the process serves: a liveness probe.
	HealthzPath = "/healthz"
	// ReadyzPath answers 200 when the server takes work, 503 with the
	// reason in the body when it does not: its state on NATS is out of
	// reach, or it is draining. A readiness probe.
	ReadyzPath = "/readyz"
	// MetricsPath serves the server's Prometheus metrics
	// (Config.Telemetry).
	MetricsPath = "/metrics"
)

var (
	bodyOK    = []byte("ok\n")
	bodyReady = []byte("ready\n")
)

const textPlain = "text/plain; charset=utf-8"

// registerHealth adds the health endpoints to r. They answer from state
// the server keeps (no request to anything), and take no Host check: a
// kubelet probes the pod's address.
func (s *Server) registerHealth(r route.IRoutes) {
	healthz := func(_ context.Context, c *app.RequestContext) { c.Data(200, textPlain, bodyOK) }
	readyz := func(_ context.Context, c *app.RequestContext) {
		if why := s.notReady(); why != "" {
			c.Data(503, textPlain, []byte("not ready: "+why+"\n"))
			return
		}
		c.Data(200, textPlain, bodyReady)
	}
	r.GET(HealthzPath, healthz)
	r.HEAD(HealthzPath, healthz)
	r.GET(ReadyzPath, readyz)
	r.HEAD(ReadyzPath, readyz)
	r.GET(MetricsPath, adaptor.HertzHandler(s.tel.MetricsHandler()))
}

// notReady says why the server takes no work, "" when it does.
func (s *Server) notReady() string {
	if s.draining.Load() {
		return "draining: the server is shutting down"
	}
	if c := s.st.conn; c != nil && !c.IsConnected() {
		return "the state is on NATS, which is out of reach (connection " + c.Status().String() + ")"
	}
	return ""
}

// closeWhileDraining closes the connection of every answer given while the
// server drains, so that a client's next request (a retry of a refused
// message, a resumed stream) opens a new connection, which a load
// balancer sends to another replica, instead of reusing this one.
func (s *Server) closeWhileDraining(ctx context.Context, c *app.RequestContext) {
	c.Next(ctx)
	if s.draining.Load() {
		c.Response.Header.SetConnectionClose(true)
	}
}
