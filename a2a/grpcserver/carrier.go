package grpcserver

import "github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/metadata"

// mdCarrier reads a call's incoming metadata as what a propagator reads
// the caller's trace context from: W3C traceparent and tracestate, as
// gRPC clients instrumented with OpenTelemetry send them. A map, it goes
// into the interface without an allocation.
type mdCarrier metadata.MD

func (m mdCarrier) Get(key string) string {
	if vs := metadata.MD(m).Get(key); len(vs) > 0 {
		return vs[0]
	}
	return ""
}

func (m mdCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// Set does nothing: the incoming metadata is read, not written.
func (mdCarrier) Set(string, string) {}
