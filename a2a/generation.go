package a2a

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"
)

// GenerationExtension is the URI of a2amesh's generation extension, which
// brings the task generations of the A2A 1.1 draft (Task.generation, the
// generation of each update event, SendMessageConfiguration.
// ifGenerationMatch and GetTaskRequest.currentGeneration) to A2A 1.0. An
// agent that serves it lists it in its card's capabilities.extensions; a
// client activates it per call by naming it in A2A-Extensions (gRPC
// metadata a2a-extensions). Without activation none of the fields is
// written or honoured. docs/protocol.md ("Task generations") is its
// specification.
const GenerationExtension = "https://a2amesh.dev/ext/generation/v1"

// GenerationWaitMax is the longest a server of the generation extension
// holds a GetTask that waits for a generation (currentGeneration) before
// it answers with the task as it is: below the 30 s that clients (a2amesh's
// Config.ResponseTimeout) and proxies commonly allow a response.
const GenerationWaitMax = 25 * time.Second

// Generation numbers a task's changes: 1 for the event that created it,
// one more for each event after it. 0 means unknown: the server did not
// say (the extension is not active, or the server does not have it).
//
// It encodes as a JSON number. It decodes from a number or, as ProtoJSON
// writes an int64, a string holding one, so that it reads what clients
// and servers built on ProtoJSON send.
type Generation int64

// UnmarshalJSON reads a JSON integer or a string holding one; null leaves
// g unchanged.
func (g *Generation) UnmarshalJSON(b []byte) error {
	s := string(b)
	switch {
	case s == "null":
		return nil
	case len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"':
		s = s[1 : len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[int64]()}
	}
	*g = Generation(n)
	return nil
}

// jsonKind describes a JSON value as encoding/json's type errors do.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '"':
		return "string " + string(b)
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	}
	return "number " + string(b)
}
