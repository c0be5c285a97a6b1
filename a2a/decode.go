package a2a

import (
	"encoding/json"
	"time"

	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// Unmarshal decodes the 1.0 JSON form of a value into v, which it replaces
// on success and leaves alone on error. The result and the error are those
// of encoding/json.Unmarshal into a fresh value; for the values a client
// or server reads most (a *StreamResponse, *SendMessageRequest, *Task,
// *Message, and the two update events) it gets there without reflection,
// and other values go through encoding/json.
func Unmarshal(data []byte, v any) error {
	switch x := v.(type) {
	case *StreamResponse:
		return unmarshal(data, x, readStreamResponse)
	case *SendMessageRequest:
		return unmarshal(data, x, readSendRequest)
	case *Task:
		return unmarshal(data, x, readTask)
	case *Message:
		return unmarshal(data, x, readMessage)
	case *TaskStatusUpdateEvent:
		return unmarshal(data, x, readStatusUpdate)
	case *TaskArtifactUpdateEvent:
		return unmarshal(data, x, readArtifactUpdate)
	}
	return fastjson.Unmarshal(data, v)
}

// unmarshal reads data into a fresh T with read, and when the fast path
// declines, with encoding/json.
func unmarshal[T any](data []byte, dst *T, read func(*fastjson.Reader, *T)) error {
	if fastjson.Enabled {
		r := fastjson.New(data)
		var v T
		read(&r, &v)
		if r.End() {
			*dst = v
			return nil
		}
	}
	var slow T
	if err := fastjson.Unmarshal(data, &slow); err != nil {
		return err
	}
	*dst = slow
	return nil
}

// Each reader below decodes one type as encoding/json would into a zero
// value: null leaves it zero, unknown members are skipped, and whatever
// the reader does not take (a repeated or case-folded member name, a
// member it leaves to encoding/json) fails the Reader.

func readStreamResponse(r *fastjson.Reader, v *StreamResponse) {
	if r.Null() || !r.Open('{') {
		return
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "task":
			r.Seen(&seen, 1)
			v.Task = readPtr(r, readTask)
		case "message":
			r.Seen(&seen, 2)
			v.Message = readPtr(r, readMessage)
		case "statusUpdate":
			r.Seen(&seen, 4)
			v.StatusUpdate = readPtr(r, readStatusUpdate)
		case "artifactUpdate":
			r.Seen(&seen, 8)
			v.ArtifactUpdate = readPtr(r, readArtifactUpdate)
		default:
			r.Unknown(key, "task", "message", "statusUpdate", "artifactUpdate")
		}
	}
}

// readPtr reads a *T member: null gives nil.
func readPtr[T any](r *fastjson.Reader, read func(*fastjson.Reader, *T)) *T {
	if r.Null() {
		return nil
	}
	v := new(T)
	read(r, v)
	return v
}

func readSendRequest(r *fastjson.Reader, v *SendMessageRequest) {
	if r.Null() || !r.Open('{') {
		return
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "tenant":
			r.Seen(&seen, 1)
			r.StringTo(&v.Tenant)
		case "message":
			r.Seen(&seen, 2)
			v.Message = readPtr(r, readMessage)
		case "configuration":
			r.Seen(&seen, 4)
			v.Configuration = readPtr(r, readSendConfig)
		case "metadata":
			r.Seen(&seen, 8)
			v.Metadata = r.Map()
		default:
			r.Unknown(key, "tenant", "message", "configuration", "metadata")
		}
	}
}

func readSendConfig(r *fastjson.Reader, v *SendMessageConfiguration) {
	if r.Null() || !r.Open('{') {
		return
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "acceptedOutputModes":
			r.Seen(&seen, 1)
			v.AcceptedOutputModes = r.Strings()
		case "historyLength":
			r.Seen(&seen, 2)
			r.IntPtr(&v.HistoryLength)
		case "returnImmediately":
			r.Seen(&seen, 4)
			r.Bool(&v.ReturnImmediately)
		case "ifGenerationMatch":
			r.Seen(&seen, 8)
			v.IfGenerationMatch = readGenerationPtr(r)
		case "taskPushNotificationConfig":
			// Rare on the hot path: encoding/json reads it.
			if !r.Null() {
				r.Fail()
			}
		default:
			r.Unknown(key, "acceptedOutputModes", "historyLength", "returnImmediately", "ifGenerationMatch", "taskPushNotificationConfig")
		}
	}
}

func readTask(r *fastjson.Reader, v *Task) {
	if r.Null() || !r.Open('{') {
		return
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "id":
			r.Seen(&seen, 1)
			r.StringTo(&v.ID)
		case "contextId":
			r.Seen(&seen, 2)
			r.StringTo(&v.ContextID)
		case "status":
			r.Seen(&seen, 4)
			readStatus(r, &v.Status)
		case "artifacts":
			r.Seen(&seen, 8)
			v.Artifacts = readSlice(r, readArtifact)
		case "history":
			r.Seen(&seen, 16)
			v.History = readSlice(r, readMessage)
		case "metadata":
			r.Seen(&seen, 32)
			v.Metadata = r.Map()
		case "generation":
			r.Seen(&seen, 64)
			readGeneration(r, &v.Generation)
		default:
			r.Unknown(key, "id", "contextId", "status", "artifacts", "history", "metadata", "generation")
		}
	}
}

// readGeneration hands the raw value to Generation, null included, as
// encoding/json does.
func readGeneration(r *fastjson.Reader, g *Generation) {
	if raw := r.Raw(); raw != nil && g.UnmarshalJSON(raw) != nil {
		r.Fail()
	}
}

// readGenerationPtr reads a *Generation member: null gives nil.
func readGenerationPtr(r *fastjson.Reader) *Generation {
	if r.Null() {
		return nil
	}
	g := new(Generation)
	readGeneration(r, g)
	return g
}

// readSlice reads a []T member: null gives nil, [] an empty slice.
func readSlice[T any](r *fastjson.Reader, read func(*fastjson.Reader, *T)) []T {
	if r.Null() || !r.Open('[') {
		return nil
	}
	out := []T{}
	for n := 0; r.Next(']', &n); {
		var v T
		read(r, &v)
		out = append(out, v)
	}
	return out
}

func readStatus(r *fastjson.Reader, v *TaskStatus) {
	if r.Null() || !r.Open('{') {
		return
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "state":
			r.Seen(&seen, 1)
			// TaskState decodes itself, null included.
			if raw := r.Raw(); raw != nil && v.State.UnmarshalJSON(raw) != nil {
				r.Fail()
			}
		case "message":
			r.Seen(&seen, 2)
			v.Message = readPtr(r, readMessage)
		case "timestamp":
			r.Seen(&seen, 4)
			readTime(r, &v.Timestamp)
		default:
			r.Unknown(key, "state", "message", "timestamp")
		}
	}
}

// readTime hands the raw value to time.Time, as encoding/json does.
func readTime(r *fastjson.Reader, t *time.Time) {
	if raw := r.Raw(); raw != nil && t.UnmarshalJSON(raw) != nil {
		r.Fail()
	}
}

func readMessage(r *fastjson.Reader, v *Message) {
	if r.Null() || !r.Open('{') {
		return
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "messageId":
			r.Seen(&seen, 1)
			r.StringTo(&v.MessageID)
		case "contextId":
			r.Seen(&seen, 2)
			r.StringTo(&v.ContextID)
		case "taskId":
			r.Seen(&seen, 4)
			r.StringTo(&v.TaskID)
		case "role":
			r.Seen(&seen, 8)
			// Role decodes itself, null included.
			if raw := r.Raw(); raw != nil && v.Role.UnmarshalJSON(raw) != nil {
				r.Fail()
			}
		case "parts":
			r.Seen(&seen, 16)
			v.Parts = readSlice(r, readPart)
		case "metadata":
			r.Seen(&seen, 32)
			v.Metadata = r.Map()
		case "extensions":
			r.Seen(&seen, 64)
			v.Extensions = r.Strings()
		case "referenceTaskIds":
			r.Seen(&seen, 128)
			v.ReferenceTaskIDs = r.Strings()
		default:
			r.Unknown(key, "messageId", "contextId", "taskId", "role", "parts", "metadata", "extensions", "referenceTaskIds")
		}
	}
}

// readPart follows Part.UnmarshalJSON: exactly one content member, null
// content members absent except data, whose null is its content.
func readPart(r *fastjson.Reader, p *Part) {
	if !r.Open('{') { // null is a part without content: an error
		return
	}
	var seen uint32
	contents := 0
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "text":
			r.Seen(&seen, 1)
			if !r.Null() {
				p.Text = r.String()
				contents++
			}
		case "raw":
			r.Seen(&seen, 2)
			raw := r.Raw()
			if raw == nil || string(raw) == "null" {
				break
			}
			b, err := decodeBase64JSON(raw)
			if err != nil {
				r.Fail()
			}
			p.Raw = b
			contents++
		case "url":
			r.Seen(&seen, 4)
			if !r.Null() {
				if p.URL = r.String(); p.URL == "" {
					r.Fail()
				}
				contents++
			}
		case "data":
			r.Seen(&seen, 8)
			if raw := r.Raw(); raw != nil {
				p.Data = append(json.RawMessage(nil), raw...)
			}
			contents++
		case "filename":
			r.Seen(&seen, 16)
			r.StringTo(&p.Filename)
		case "mediaType":
			r.Seen(&seen, 32)
			r.StringTo(&p.MediaType)
		case "metadata":
			r.Seen(&seen, 64)
			p.Metadata = r.Map()
		default:
			r.Unknown(key, "text", "raw", "url", "data", "filename", "mediaType", "metadata")
		}
	}
	if contents != 1 {
		r.Fail()
	}
}

func readArtifact(r *fastjson.Reader, v *Artifact) {
	if r.Null() || !r.Open('{') {
		return
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "artifactId":
			r.Seen(&seen, 1)
			r.StringTo(&v.ArtifactID)
		case "name":
			r.Seen(&seen, 2)
			r.StringTo(&v.Name)
		case "description":
			r.Seen(&seen, 4)
			r.StringTo(&v.Description)
		case "parts":
			r.Seen(&seen, 8)
			v.Parts = readSlice(r, readPart)
		case "metadata":
			r.Seen(&seen, 16)
			v.Metadata = r.Map()
		case "extensions":
			r.Seen(&seen, 32)
			v.Extensions = r.Strings()
		default:
			r.Unknown(key, "artifactId", "name", "description", "parts", "metadata", "extensions")
		}
	}
}

func readStatusUpdate(r *fastjson.Reader, v *TaskStatusUpdateEvent) {
	if r.Null() || !r.Open('{') {
		return
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "taskId":
			r.Seen(&seen, 1)
			r.StringTo(&v.TaskID)
		case "contextId":
			r.Seen(&seen, 2)
			r.StringTo(&v.ContextID)
		case "status":
			r.Seen(&seen, 4)
			readStatus(r, &v.Status)
		case "metadata":
			r.Seen(&seen, 8)
			v.Metadata = r.Map()
		case "generation":
			r.Seen(&seen, 16)
			readGeneration(r, &v.Generation)
		default:
			r.Unknown(key, "taskId", "contextId", "status", "metadata", "generation")
		}
	}
}

func readArtifactUpdate(r *fastjson.Reader, v *TaskArtifactUpdateEvent) {
	if r.Null() || !r.Open('{') {
		return
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "taskId":
			r.Seen(&seen, 1)
			r.StringTo(&v.TaskID)
		case "contextId":
			r.Seen(&seen, 2)
			r.StringTo(&v.ContextID)
		case "artifact":
			r.Seen(&seen, 4)
			readArtifact(r, &v.Artifact)
		case "append":
			r.Seen(&seen, 8)
			r.Bool(&v.Append)
		case "lastChunk":
			r.Seen(&seen, 16)
			r.Bool(&v.LastChunk)
		case "metadata":
			r.Seen(&seen, 32)
			v.Metadata = r.Map()
		case "generation":
			r.Seen(&seen, 64)
			readGeneration(r, &v.Generation)
		default:
			r.Unknown(key, "taskId", "contextId", "artifact", "append", "lastChunk", "metadata", "generation")
		}
	}
}
