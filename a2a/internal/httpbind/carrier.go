package httpbind

import "go.opentelemetry.io/otel/propagation"

// Carrier returns the request's headers as what a propagator reads the
// caller's trace context from (server.Handler.Begin), without allocating;
// nil for an Exchange other than Hertz's and NetHTTP's.
func Carrier(x Exchange) propagation.TextMapCarrier {
	switch x := x.(type) {
	case hertzExchange:
		return hertzCarrier(x)
	case *netExchange:
		return propagation.HeaderCarrier(x.r.Header)
	}
	return nil
}

// hertzCarrier reads a Hertz request's headers.
type hertzCarrier hertzExchange

func (h hertzCarrier) Get(key string) string { return string(h.c.Request.Header.Peek(key)) }

func (h hertzCarrier) Keys() []string {
	var keys []string
	h.c.Request.Header.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}

// Set does nothing: the request's headers are read, not written.
func (hertzCarrier) Set(string, string) {}
