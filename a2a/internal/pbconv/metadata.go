package pbconv

// Metadata keys of the gRPC binding. The first two are the specification's
// counterparts of the A2A-Version and A2A-Extensions HTTP headers; the
// last two are a2amesh's counterparts of SSE's event ids, which gRPC lacks
// (docs/protocol.md).
const (
	VersionKey    = "a2a-version"
	ExtensionsKey = "a2a-extensions"
	// FirstEventIDKey, a response header of the streaming RPCs, is the
	// sequence number of the stream's first event; the events after it
	// are numbered one by one from it, as a task's events are.
	FirstEventIDKey = "a2amesh-first-event-id"
	// LastEventIDKey, request metadata of SubscribeToTask, asks for the
	// task's events after this one, as SSE's Last-Event-ID header does.
	LastEventIDKey = "last-event-id"
)
