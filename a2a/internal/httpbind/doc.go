// Package httpbind holds what A2A's two HTTP bindings, JSON-RPC
// (a2a/jsonrpcserver) and HTTP+JSON (a2a/restserver), do alike on Hertz:
// the Server-Sent Events writer of their streams, request bodies read up
// to a limit, the Host and Origin checks against DNS rebinding, the agent
// card endpoint, the A2A-Version and A2A-Extensions headers, Retry-After,
// the headers as the carrier of the caller's trace context,
// the Hertz options that bound slow clients, and running a Hertz server
// until a context ends.
package httpbind
