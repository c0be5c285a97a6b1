package a2a

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// Role identifies the sender of a message.
type Role string

// Roles of the 1.0 wire. The zero Role is unspecified and invalid on the wire.
const (
	RoleUser  Role = "ROLE_USER"
	RoleAgent Role = "ROLE_AGENT"
)

// Valid reports whether r is one of the defined roles.
func (r Role) Valid() bool { return r == RoleUser || r == RoleAgent }

// UnmarshalJSON accepts the enum names and, as ProtoJSON allows, their
// numbers. ROLE_UNSPECIFIED (0) and "" decode to the zero Role, which
// request validation then reports as a missing role.
func (r *Role) UnmarshalJSON(b []byte) error {
	switch s := string(b); s {
	case `"ROLE_USER"`, "1":
		*r = RoleUser
	case `"ROLE_AGENT"`, "2":
		*r = RoleAgent
	case `"ROLE_UNSPECIFIED"`, `""`, "0":
		*r = ""
	default:
		return fmt.Errorf("unknown role %s (want \"ROLE_USER\" or \"ROLE_AGENT\")", s)
	}
	return nil
}

// Message is one unit of communication between a client and an agent.
type Message struct {
	// MessageID is chosen by the message's creator; required.
	MessageID string `json:"messageId"`
	// ContextID groups the message with a conversation. Optional from
	// clients; the server fills it in.
	ContextID string `json:"contextId,omitempty"`
	// TaskID names the task the message continues; empty starts a new task.
	TaskID string `json:"taskId,omitempty"`
	// Role is the sender; required.
	Role Role `json:"role"`
	// Parts is the content; at least one part is required.
	Parts      []Part         `json:"parts"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Extensions []string       `json:"extensions,omitempty"`
	// ReferenceTaskIDs lists other tasks the message refers to for context.
	ReferenceTaskIDs []string `json:"referenceTaskIds,omitempty"`
}

// NewMessage returns a message with a fresh id.
func NewMessage(role Role, parts ...Part) *Message {
	return &Message{MessageID: NewID(), Role: role, Parts: parts}
}

// NewTextMessage returns a message with a fresh id and one text part.
func NewTextMessage(role Role, text string) *Message {
	return NewMessage(role, TextPart(text))
}

// Text returns the concatenation of the message's text parts.
func (m *Message) Text() string { return partsText(m.Parts) }

// TaskIDs implements Event.
func (m *Message) TaskIDs() (taskID, contextID string) { return m.TaskID, m.ContextID }

func (*Message) isEvent() {}

func partsText(parts []Part) string {
	if len(parts) == 1 {
		return parts[0].Text
	}
	var b strings.Builder
	for i := range parts {
		if parts[i].Kind() == PartKindText {
			b.WriteString(parts[i].Text)
		}
	}
	return b.String()
}

// PartKind tells which content a Part carries.
type PartKind uint8

// The kinds of part content.
const (
	PartKindText PartKind = iota
	PartKindRaw
	PartKindURL
	PartKindData
)

func (k PartKind) String() string {
	switch k {
	case PartKindText:
		return "text"
	case PartKindRaw:
		return "raw"
	case PartKindURL:
		return "url"
	case PartKindData:
		return "data"
	}
	return fmt.Sprintf("PartKind(%d)", uint8(k))
}

// Part is one piece of message or artifact content: text, raw bytes, a URL
// to a file, or structured JSON data. Exactly one content field is used; the
// kind is derived from which is set, in this order: Raw (non-nil), URL
// (non-empty), Data (non-nil), otherwise Text. So the zero Part is an empty
// text part, and a Part built with one content field needs no kind tag.
type Part struct {
	Text string
	// Raw holds file bytes; base64 on the wire.
	Raw []byte
	// URL points to file content.
	URL string
	// Data is any JSON value, kept as raw JSON so it passes through unchanged.
	Data json.RawMessage

	Filename  string
	MediaType string
	Metadata  map[string]any
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Text: text} }

// RawPart returns a part holding file bytes.
func RawPart(b []byte, mediaType, filename string) Part {
	if b == nil {
		b = []byte{}
	}
	return Part{Raw: b, MediaType: mediaType, Filename: filename}
}

// URLPart returns a part pointing to file content.
func URLPart(url, mediaType, filename string) Part {
	return Part{URL: url, MediaType: mediaType, Filename: filename}
}

// DataPart returns a part holding v encoded as JSON, with media type
// application/json.
func DataPart(v any) (Part, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Part{}, fmt.Errorf("a2a: encode data part: %w", err)
	}
	return Part{Data: b, MediaType: "application/json"}, nil
}

// Kind reports which content the part carries.
func (p *Part) Kind() PartKind {
	switch {
	case p.Raw != nil:
		return PartKindRaw
	case p.URL != "":
		return PartKindURL
	case p.Data != nil:
		return PartKindData
	}
	return PartKindText
}

// MarshalJSON encodes the part with exactly one content member. A Data
// that is non-nil but empty is an error: it is not JSON.
func (p Part) MarshalJSON() ([]byte, error) {
	if !fastjson.Enabled {
		return marshalPart(&p)
	}
	return appendPart(nil, &p)
}

// partEncode is the JSON of a Part, for builds without the fast paths.
type partEncode struct {
	Text      *string         `json:"text,omitempty"`
	Raw       *[]byte         `json:"raw,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

// marshalPart writes what appendPart writes, with the build's codec.
func marshalPart(p *Part) ([]byte, error) {
	e := partEncode{Filename: p.Filename, MediaType: p.MediaType, Metadata: p.Metadata}
	switch p.Kind() {
	case PartKindText:
		e.Text = &p.Text
	case PartKindRaw:
		e.Raw = &p.Raw
	case PartKindURL:
		e.URL = &p.URL
	case PartKindData:
		if len(p.Data) == 0 {
			return nil, fmt.Errorf("json: error calling MarshalJSON for type a2a.Part: data part holds no JSON")
		}
		e.Data = p.Data
	}
	return fastjson.Marshal(nil, &e)
}

type partDecode struct {
	Text      *string         `json:"text"`
	Raw       json.RawMessage `json:"raw"`
	URL       *string         `json:"url"`
	Data      json.RawMessage `json:"data"`
	Filename  string          `json:"filename"`
	MediaType string          `json:"mediaType"`
	Metadata  map[string]any  `json:"metadata"`
}

// UnmarshalJSON decodes a part, requiring exactly one content member.
// Raw content may use standard or URL-safe base64, padded or not, as
// ProtoJSON allows.
func (p *Part) UnmarshalJSON(b []byte) error {
	var d partDecode
	if err := fastjson.Unmarshal(b, &d); err != nil {
		return err
	}
	*p = Part{Filename: d.Filename, MediaType: d.MediaType, Metadata: d.Metadata}
	n := 0
	if d.Text != nil {
		p.Text = *d.Text
		n++
	}
	if d.Raw != nil && string(d.Raw) != "null" {
		raw, err := decodeBase64JSON(d.Raw)
		if err != nil {
			return fmt.Errorf("raw: %w", err)
		}
		p.Raw = raw
		n++
	}
	if d.URL != nil {
		if *d.URL == "" {
			return fmt.Errorf("url: must not be empty")
		}
		p.URL = *d.URL
		n++
	}
	if d.Data != nil {
		p.Data = d.Data
		n++
	}
	switch n {
	case 0:
		return fmt.Errorf("part has no content: want one of text, raw, url, data")
	case 1:
		return nil
	}
	return fmt.Errorf("part has %d contents: want exactly one of text, raw, url, data", n)
}

// decodeBase64JSON decodes a JSON string holding base64 in any of the
// alphabets and paddings ProtoJSON accepts.
func decodeBase64JSON(b []byte) ([]byte, error) {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("want a base64 string")
	}
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	out, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("invalid base64: %w", err)
	}
	return out, nil
}

// IsJSONObject reports whether raw JSON holds an object.
func IsJSONObject(raw json.RawMessage) bool {
	b := bytes.TrimLeft(raw, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
