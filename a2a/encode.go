package a2a

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// AppendJSON appends the 1.0 JSON encoding of v to dst. For the values a
// server sends most (a *Task, *Message, *Artifact, the two update events, a
// StreamResponse, a *SendMessageRequest) it writes exactly the bytes
// encoding/json writes with HTML escaping off, without reflection; other
// values go through encoding/json.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	if !fastjson.Enabled {
		return fastjson.Marshal(dst, v)
	}
	switch x := v.(type) {
	case *Task:
		return appendTask(dst, x)
	case *Message:
		return appendMessage(dst, x)
	case *Artifact:
		return appendArtifact(dst, x)
	case *TaskStatusUpdateEvent:
		return appendStatusUpdate(dst, x)
	case *TaskArtifactUpdateEvent:
		return appendArtifactUpdate(dst, x)
	case StreamResponse:
		return appendStreamResponse(dst, &x)
	case *StreamResponse:
		return appendStreamResponse(dst, x)
	case *SendMessageRequest:
		return appendSendRequest(dst, x)
	}
	return fastjson.AppendAny(dst, v)
}

func appendStreamResponse(dst []byte, r *StreamResponse) ([]byte, error) {
	var err error
	dst = append(dst, '{')
	comma := false
	field := func(name string) {
		if comma {
			dst = append(dst, ',')
		}
		comma = true
		dst = append(dst, name...)
	}
	if r.Task != nil {
		field(`"task":`)
		if dst, err = appendTask(dst, r.Task); err != nil {
			return dst, err
		}
	}
	if r.Message != nil {
		field(`"message":`)
		if dst, err = appendMessage(dst, r.Message); err != nil {
			return dst, err
		}
	}
	if r.StatusUpdate != nil {
		field(`"statusUpdate":`)
		if dst, err = appendStatusUpdate(dst, r.StatusUpdate); err != nil {
			return dst, err
		}
	}
	if r.ArtifactUpdate != nil {
		field(`"artifactUpdate":`)
		if dst, err = appendArtifactUpdate(dst, r.ArtifactUpdate); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendSendRequest(dst []byte, r *SendMessageRequest) ([]byte, error) {
	var err error
	dst = append(dst, '{')
	if r.Tenant != "" {
		dst = append(dst, `"tenant":`...)
		dst = fastjson.AppendString(dst, r.Tenant)
		dst = append(dst, ',')
	}
	dst = append(dst, `"message":`...)
	if r.Message == nil {
		dst = append(dst, "null"...)
	} else if dst, err = appendMessage(dst, r.Message); err != nil {
		return dst, err
	}
	if r.Configuration != nil {
		// Rarer, and holding push settings: encoding/json writes it.
		dst = append(dst, `,"configuration":`...)
		if dst, err = fastjson.AppendAny(dst, r.Configuration); err != nil {
			return dst, err
		}
	}
	if dst, err = appendMetadata(dst, r.Metadata); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

func appendTask(dst []byte, t *Task) ([]byte, error) {
	var err error
	dst = append(dst, `{"id":`...)
	dst = fastjson.AppendString(dst, t.ID)
	dst = append(dst, `,"contextId":`...)
	dst = fastjson.AppendString(dst, t.ContextID)
	dst = append(dst, `,"status":`...)
	if dst, err = appendStatus(dst, &t.Status); err != nil {
		return dst, err
	}
	if len(t.Artifacts) > 0 {
		dst = append(dst, `,"artifacts":[`...)
		for i := range t.Artifacts {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendArtifact(dst, &t.Artifacts[i]); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	if len(t.History) > 0 {
		dst = append(dst, `,"history":[`...)
		for i := range t.History {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendMessage(dst, &t.History[i]); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	if dst, err = appendMetadata(dst, t.Metadata); err != nil {
		return dst, err
	}
	dst = appendGeneration(dst, t.Generation)
	return append(dst, '}'), nil
}

// appendGeneration writes ,"generation":n for a known generation.
func appendGeneration(dst []byte, g Generation) []byte {
	if g == 0 {
		return dst
	}
	dst = append(dst, `,"generation":`...)
	return strconv.AppendInt(dst, int64(g), 10)
}

func appendStatus(dst []byte, s *TaskStatus) ([]byte, error) {
	var err error
	dst = append(dst, `{"state":`...)
	dst = fastjson.AppendString(dst, string(s.State))
	if s.Message != nil {
		dst = append(dst, `,"message":`...)
		if dst, err = appendMessage(dst, s.Message); err != nil {
			return dst, err
		}
	}
	if !s.Timestamp.IsZero() {
		dst = append(dst, `,"timestamp":`...)
		if dst, err = appendTime(dst, s.Timestamp); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendTime writes what time.Time.MarshalJSON writes.
func appendTime(dst []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, fmt.Errorf("json: error calling MarshalJSON for type time.Time: year %d outside of range [0,9999]", y)
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), nil
}

func appendMessage(dst []byte, m *Message) ([]byte, error) {
	var err error
	dst = append(dst, `{"messageId":`...)
	dst = fastjson.AppendString(dst, m.MessageID)
	if m.ContextID != "" {
		dst = append(dst, `,"contextId":`...)
		dst = fastjson.AppendString(dst, m.ContextID)
	}
	if m.TaskID != "" {
		dst = append(dst, `,"taskId":`...)
		dst = fastjson.AppendString(dst, m.TaskID)
	}
	dst = append(dst, `,"role":`...)
	dst = fastjson.AppendString(dst, string(m.Role))
	dst = append(dst, `,"parts":`...)
	if dst, err = appendParts(dst, m.Parts); err != nil {
		return dst, err
	}
	if dst, err = appendMetadata(dst, m.Metadata); err != nil {
		return dst, err
	}
	dst = appendStrings(dst, `,"extensions":`, m.Extensions)
	dst = appendStrings(dst, `,"referenceTaskIds":`, m.ReferenceTaskIDs)
	return append(dst, '}'), nil
}

func appendArtifact(dst []byte, a *Artifact) ([]byte, error) {
	var err error
	dst = append(dst, `{"artifactId":`...)
	dst = fastjson.AppendString(dst, a.ArtifactID)
	if a.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = fastjson.AppendString(dst, a.Name)
	}
	if a.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = fastjson.AppendString(dst, a.Description)
	}
	dst = append(dst, `,"parts":`...)
	if dst, err = appendParts(dst, a.Parts); err != nil {
		return dst, err
	}
	if dst, err = appendMetadata(dst, a.Metadata); err != nil {
		return dst, err
	}
	dst = appendStrings(dst, `,"extensions":`, a.Extensions)
	return append(dst, '}'), nil
}

func appendStatusUpdate(dst []byte, e *TaskStatusUpdateEvent) ([]byte, error) {
	var err error
	dst = append(dst, `{"taskId":`...)
	dst = fastjson.AppendString(dst, e.TaskID)
	dst = append(dst, `,"contextId":`...)
	dst = fastjson.AppendString(dst, e.ContextID)
	dst = append(dst, `,"status":`...)
	if dst, err = appendStatus(dst, &e.Status); err != nil {
		return dst, err
	}
	if dst, err = appendMetadata(dst, e.Metadata); err != nil {
		return dst, err
	}
	dst = appendGeneration(dst, e.Generation)
	return append(dst, '}'), nil
}

func appendArtifactUpdate(dst []byte, e *TaskArtifactUpdateEvent) ([]byte, error) {
	var err error
	dst = append(dst, `{"taskId":`...)
	dst = fastjson.AppendString(dst, e.TaskID)
	dst = append(dst, `,"contextId":`...)
	dst = fastjson.AppendString(dst, e.ContextID)
	dst = append(dst, `,"artifact":`...)
	if dst, err = appendArtifact(dst, &e.Artifact); err != nil {
		return dst, err
	}
	if e.Append {
		dst = append(dst, `,"append":true`...)
	}
	if e.LastChunk {
		dst = append(dst, `,"lastChunk":true`...)
	}
	if dst, err = appendMetadata(dst, e.Metadata); err != nil {
		return dst, err
	}
	dst = appendGeneration(dst, e.Generation)
	return append(dst, '}'), nil
}

func appendParts(dst []byte, parts []Part) ([]byte, error) {
	if parts == nil {
		return append(dst, "null"...), nil
	}
	var err error
	dst = append(dst, '[')
	for i := range parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendPart(dst, &parts[i]); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

func appendPart(dst []byte, p *Part) ([]byte, error) {
	var err error
	dst = append(dst, '{')
	switch p.Kind() {
	case PartKindText:
		dst = append(dst, `"text":`...)
		dst = fastjson.AppendString(dst, p.Text)
	case PartKindRaw:
		dst = append(dst, `"raw":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, p.Raw)
		dst = append(dst, '"')
	case PartKindURL:
		dst = append(dst, `"url":`...)
		dst = fastjson.AppendString(dst, p.URL)
	case PartKindData:
		if len(p.Data) == 0 {
			// Only a nil Data is absent; an empty one is invalid JSON.
			return dst, fmt.Errorf("json: error calling MarshalJSON for type a2a.Part: data part holds no JSON")
		}
		dst = append(dst, `"data":`...)
		buf := bytes.NewBuffer(dst)
		if err := json.Compact(buf, p.Data); err != nil {
			return dst, fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err)
		}
		dst = buf.Bytes()
	}
	if p.Filename != "" {
		dst = append(dst, `,"filename":`...)
		dst = fastjson.AppendString(dst, p.Filename)
	}
	if p.MediaType != "" {
		dst = append(dst, `,"mediaType":`...)
		dst = fastjson.AppendString(dst, p.MediaType)
	}
	if dst, err = appendMetadata(dst, p.Metadata); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendMetadata writes ,"metadata":{...} for a non-empty map.
func appendMetadata(dst []byte, m map[string]any) ([]byte, error) {
	if len(m) == 0 {
		return dst, nil
	}
	dst = append(dst, `,"metadata":`...)
	return fastjson.AppendAny(dst, m)
}

func appendStrings(dst []byte, field string, ss []string) []byte {
	if len(ss) == 0 {
		return dst
	}
	dst = append(dst, field...)
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = fastjson.AppendString(dst, s)
	}
	return append(dst, ']')
}
