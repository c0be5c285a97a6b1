// Package a2a is the Agent2Agent (A2A) protocol's data model: tasks, messages,
// parts, artifacts, streaming events, agent cards, push notification
// configurations, the request and response objects of every operation, and
// the protocol's errors with their codes.
//
// The Go types follow the A2A 1.0 specification (specification/a2a.proto) and
// their encoding/json form is the 1.0 JSON wire form: camelCase field names,
// TASK_STATE_* and ROLE_* enum strings, RFC 3339 UTC timestamps, and oneofs
// (Part content, StreamResponse, SecurityScheme) encoded by member name.
// The A2A 0.3 wire form lives in package a2av03, which converts to and from
// these types, so the rest of the system works with one model.
//
// Values handed to a server or returned by a store are shared snapshots:
// treat them as read-only and copy before changing them.
package a2a
