// Package a2av03 is the A2A 0.3 JSON wire form: the 0.3 objects with their
// "kind" discriminators, kebab-case task states, lower-case roles, file
// parts, the "final" flag on status updates, the 0.3 method parameters and
// the 0.3 agent card. It converts each object to and from package a2a's
// model, so servers and clients speak 0.3 at the edge and 1.0 inside.
//
// Conversions are lossless where 0.3 can express the 1.0 value. Where it
// cannot, the 1.0 value is mapped to its nearest 0.3 form and the loss is
// documented on the function: a text or data part's media type and file
// name, a data part whose value is not a JSON object (wrapped as
// {"value": v}), and the 1.0-only tenant fields.
package a2av03

import (
	"encoding/json"
	"time"
)

// Discriminator values of the 0.3 "kind" field.
const (
	KindTask           = "task"
	KindMessage        = "message"
	KindStatusUpdate   = "status-update"
	KindArtifactUpdate = "artifact-update"
	KindText           = "text"
	KindFile           = "file"
	KindData           = "data"
)

// Task is the 0.3 Task.
type Task struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
	History   []Message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskStatus is the 0.3 TaskStatus; State is a kebab-case state name.
type TaskStatus struct {
	State     string    `json:"state"`
	Message   *Message  `json:"message,omitempty"`
	Timestamp Timestamp `json:"timestamp,omitzero"`
}

// Message is the 0.3 Message; Role is "user" or "agent".
type Message struct {
	Kind             string         `json:"kind"`
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []Part         `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// Part is the 0.3 Part union, told apart by Kind: "text" uses Text, "file"
// uses File, "data" uses Data (a JSON object).
type Part struct {
	Kind     string          `json:"kind"`
	Text     *string         `json:"text,omitempty"`
	File     *File           `json:"file,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

// File is a 0.3 file part's content: exactly one of Bytes (base64) and URI.
type File struct {
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Bytes    string `json:"bytes,omitempty"`
	URI      string `json:"uri,omitempty"`
}

// Artifact is the 0.3 Artifact.
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// TaskStatusUpdateEvent is the 0.3 status update; Final marks the last
// event of a stream.
type TaskStatusUpdateEvent struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Final     bool           `json:"final"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskArtifactUpdateEvent is the 0.3 artifact update.
type TaskArtifactUpdateEvent struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  Artifact       `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// Timestamp is a 0.3 timestamp. 0.3 peers write ISO 8601 in several
// shapes (with a Z, with an offset, or with no zone at all, which is read
// as UTC); it is always written as RFC 3339 UTC with milliseconds.
type Timestamp struct{ time.Time }

// MarshalJSON writes the time in UTC.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return t.UTC().MarshalJSON()
}

// timestampLayouts are tried in order; the zoneless ones are read as UTC.
var timestampLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"}

// UnmarshalJSON parses the ISO 8601 shapes 0.3 peers produce.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		*t = Timestamp{}
		return nil
	}
	var firstErr error
	for _, layout := range timestampLayouts {
		v, err := time.Parse(layout, s)
		if err == nil {
			t.Time = v.UTC()
			return nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// MessageSendParams is the params of message/send and message/stream.
type MessageSendParams struct {
	Message       *Message                  `json:"message"`
	Configuration *MessageSendConfiguration `json:"configuration,omitempty"`
	Metadata      map[string]any            `json:"metadata,omitempty"`
}

// MessageSendConfiguration is the 0.3 send configuration. Blocking defaults
// to true when absent, as the 0.3 reference servers do.
type MessageSendConfiguration struct {
	AcceptedOutputModes    []string                `json:"acceptedOutputModes,omitempty"`
	HistoryLength          *int                    `json:"historyLength,omitempty"`
	PushNotificationConfig *PushNotificationConfig `json:"pushNotificationConfig,omitempty"`
	Blocking               *bool                   `json:"blocking,omitempty"`
}

// PushNotificationConfig is the 0.3 webhook configuration.
type PushNotificationConfig struct {
	ID             string                  `json:"id,omitempty"`
	URL            string                  `json:"url"`
	Token          string                  `json:"token,omitempty"`
	Authentication *PushAuthenticationInfo `json:"authentication,omitempty"`
}

// PushAuthenticationInfo lists the schemes the webhook accepts; the first
// is used.
type PushAuthenticationInfo struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

// TaskPushNotificationConfig is the params and result of
// tasks/pushNotificationConfig/set, and the result of get and list.
type TaskPushNotificationConfig struct {
	TaskID                 string                 `json:"taskId"`
	PushNotificationConfig PushNotificationConfig `json:"pushNotificationConfig"`
}

// TaskQueryParams is the params of tasks/get.
type TaskQueryParams struct {
	ID            string         `json:"id"`
	HistoryLength *int           `json:"historyLength,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// TaskIDParams is the params of tasks/cancel, tasks/resubscribe and
// tasks/pushNotificationConfig/list.
type TaskIDParams struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// PushConfigParams is the params of tasks/pushNotificationConfig/get (where
// the config id is optional) and /delete (where it is required).
type PushConfigParams struct {
	ID                       string         `json:"id"`
	PushNotificationConfigID string         `json:"pushNotificationConfigId,omitempty"`
	Metadata                 map[string]any `json:"metadata,omitempty"`
}

// ListTasksParams is the params of tasks/list. The method is not in the 0.3
// specification; a2a-go's 0.3 line added it with these snake_case fields,
// and it is served for those clients.
type ListTasksParams struct {
	ContextID        string     `json:"context_id,omitempty"`
	Status           string     `json:"status,omitempty"`
	PageSize         int        `json:"page_size,omitempty"`
	PageToken        string     `json:"page_token,omitempty"`
	HistoryLength    *int       `json:"history_length,omitempty"`
	LastUpdatedAfter *time.Time `json:"last_updated_after,omitempty"`
	IncludeArtifacts bool       `json:"include_artifacts,omitempty"`
}

// ListTasksResult is the result of tasks/list.
type ListTasksResult struct {
	Tasks         []*Task `json:"tasks"`
	TotalSize     int     `json:"total_size"`
	PageSize      int     `json:"page_size"`
	NextPageToken string  `json:"next_page_token"`
}
