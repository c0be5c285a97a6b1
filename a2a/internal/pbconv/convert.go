// Package pbconv converts between the a2a data model and the wire forms of
// the gRPC binding: the protobuf messages generated in proto/a2apb, and
// gRPC statuses. The binding's server (a2a/grpcserver) and client
// (a2a/grpcclient) share it, so that what one encodes the other decodes.
package pbconv

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/proto/a2apb"
)

// Conversions between the a2a data model and the generated protobuf types.
// Both directions exist for every type that crosses the wire either way, so
// each can be checked by a round trip. The pb-to-a2a direction of request
// types returns an error, with the field path, for what the JSON decoder
// would refuse too (a part without content, an unknown enum number);
// everything else is the handler's to validate, as for the other bindings.
//
// Struct and Value carry numbers as doubles: integers beyond 2^53 in
// metadata or data parts lose precision on this binding, as the
// specification's proto prescribes.

// --- metadata and data ---

// StructToPB returns m as a Struct; nil for a nil map.
func StructToPB(m map[string]any) (*structpb.Struct, error) {
	if m == nil {
		return nil, nil
	}
	s, err := structpb.NewStruct(m)
	if err == nil {
		return s, nil
	}
	// NewStruct knows only the types JSON decoding yields; values built
	// in Go (a []string, a struct) go through their JSON form.
	b, jerr := json.Marshal(m)
	if jerr != nil {
		return nil, fmt.Errorf("encode metadata: %w", jerr)
	}
	s = new(structpb.Struct)
	if err := s.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	return s, nil
}

// StructFromPB returns s as a map, as AsMap does; nil for a nil Struct.
// Protobuf strings are UTF-8, but a peer may send bytes that are not:
// keys and strings holding them get U+FFFD in their place, as
// encoding/json reads them on the JSON bindings, so that the map is what
// the other bindings and the stores (JSON) carry and writes back as read.
func StructFromPB(s *structpb.Struct) map[string]any {
	if s == nil {
		return nil
	}
	m := s.AsMap()
	validMap(m)
	return m
}

func validMap(m map[string]any) {
	for k, v := range m {
		if !utf8.ValidString(k) {
			delete(m, k)
			k = strings.ToValidUTF8(k, "\uFFFD")
		}
		m[k] = validValue(v)
	}
}

func validValue(v any) any {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return strings.ToValidUTF8(x, "\uFFFD")
		}
	case map[string]any:
		validMap(x)
	case []any:
		for i := range x {
			x[i] = validValue(x[i])
		}
	}
	return v
}

// valueToPB returns raw JSON as a Value.
func valueToPB(raw json.RawMessage) (*structpb.Value, error) {
	v := new(structpb.Value)
	if err := v.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("data part holds no valid JSON: %w", err)
	}
	return v, nil
}

// valueFromPB returns v as compact JSON. encoding/json rather than
// protojson, whose output is deliberately unstable.
func valueFromPB(v *structpb.Value) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	// Invalid UTF-8 becomes U+FFFD itself, as in StructFromPB, rather than
	// encoding/json's \ufffd escape: the bytes then read back as written.
	b, err := json.Marshal(validValue(v.AsInterface()))
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return b, nil
}

func timeToPB(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func timeFromPB(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

func IntPtrFromPB(n *int32) *int {
	if n == nil {
		return nil
	}
	v := int(*n)
	return &v
}

func IntPtrToPB(n *int) *int32 {
	if n == nil {
		return nil
	}
	v := clamp32(*n)
	return &v
}

func clamp32(n int) int32 {
	return int32(max(math.MinInt32, min(n, math.MaxInt32)))
}

func generationPtrFromPB(n *int64) *a2a.Generation {
	if n == nil {
		return nil
	}
	g := a2a.Generation(*n)
	return &g
}

func generationPtrToPB(g *a2a.Generation) *int64 {
	if g == nil {
		return nil
	}
	n := int64(*g)
	return &n
}

// --- enums ---

func roleToPB(r a2a.Role) a2apb.Role {
	switch r {
	case a2a.RoleUser:
		return a2apb.Role_ROLE_USER
	case a2a.RoleAgent:
		return a2apb.Role_ROLE_AGENT
	}
	return a2apb.Role_ROLE_UNSPECIFIED
}

// roleFromPB returns the zero Role for ROLE_UNSPECIFIED, which the handler
// reports as a missing role.
func roleFromPB(r a2apb.Role) (a2a.Role, error) {
	switch r {
	case a2apb.Role_ROLE_UNSPECIFIED:
		return "", nil
	case a2apb.Role_ROLE_USER:
		return a2a.RoleUser, nil
	case a2apb.Role_ROLE_AGENT:
		return a2a.RoleAgent, nil
	}
	return "", fmt.Errorf("unknown role %d (want ROLE_USER or ROLE_AGENT)", r)
}

func stateToPB(s a2a.TaskState) a2apb.TaskState {
	if v, ok := a2apb.TaskState_value[string(s)]; ok {
		return a2apb.TaskState(v)
	}
	return a2apb.TaskState_TASK_STATE_UNSPECIFIED
}

// stateFromPB returns the zero TaskState for TASK_STATE_UNSPECIFIED.
func stateFromPB(s a2apb.TaskState) (a2a.TaskState, error) {
	if s == a2apb.TaskState_TASK_STATE_UNSPECIFIED {
		return "", nil
	}
	if name, ok := a2apb.TaskState_name[int32(s)]; ok {
		return a2a.TaskState(name), nil
	}
	return "", fmt.Errorf("unknown task state %d", s)
}

// --- parts, messages, artifacts ---

func partToPB(p *a2a.Part) (*a2apb.Part, error) {
	md, err := StructToPB(p.Metadata)
	if err != nil {
		return nil, err
	}
	out := &a2apb.Part{Metadata: md, Filename: p.Filename, MediaType: p.MediaType}
	switch p.Kind() {
	case a2a.PartKindRaw:
		out.Content = &a2apb.Part_Raw{Raw: p.Raw}
	case a2a.PartKindURL:
		out.Content = &a2apb.Part_Url{Url: p.URL}
	case a2a.PartKindData:
		v, err := valueToPB(p.Data)
		if err != nil {
			return nil, err
		}
		out.Content = &a2apb.Part_Data{Data: v}
	default:
		out.Content = &a2apb.Part_Text{Text: p.Text}
	}
	return out, nil
}

// partFromPB reads a part. In a server's answer (answer), a part without
// content is an empty text part: prutal (v0.1.3), the protobuf codec of
// Kitex's generated code, omits a oneof member that holds its zero value,
// so an empty text reaches the peer so. In a request the part is refused,
// as the JSON bindings refuse it.
func partFromPB(p *a2apb.Part, answer bool) (a2a.Part, error) {
	if p == nil {
		return a2a.Part{}, fmt.Errorf("part is null")
	}
	out := a2a.Part{Filename: p.Filename, MediaType: p.MediaType, Metadata: StructFromPB(p.Metadata)}
	switch c := p.Content.(type) {
	case *a2apb.Part_Text:
		out.Text = c.Text
	case *a2apb.Part_Raw:
		out.Raw = c.Raw
		if out.Raw == nil { // an empty file is still a file
			out.Raw = []byte{}
		}
	case *a2apb.Part_Url:
		if c.Url == "" {
			return a2a.Part{}, fmt.Errorf("url: must not be empty")
		}
		out.URL = c.Url
	case *a2apb.Part_Data:
		raw, err := valueFromPB(c.Data)
		if err != nil {
			return a2a.Part{}, err
		}
		out.Data = raw
	default:
		if !answer {
			return a2a.Part{}, fmt.Errorf("part has no content: want one of text, raw, url, data")
		}
	}
	return out, nil
}

func partsToPB(ps []a2a.Part) ([]*a2apb.Part, error) {
	if ps == nil {
		return nil, nil
	}
	out := make([]*a2apb.Part, len(ps))
	for i := range ps {
		p, err := partToPB(&ps[i])
		if err != nil {
			return nil, fmt.Errorf("parts[%d]: %w", i, err)
		}
		out[i] = p
	}
	return out, nil
}

func partsFromPB(ps []*a2apb.Part, answer bool) ([]a2a.Part, error) {
	if ps == nil {
		return nil, nil
	}
	out := make([]a2a.Part, len(ps))
	for i, p := range ps {
		v, err := partFromPB(p, answer)
		if err != nil {
			return nil, fmt.Errorf("parts[%d].%w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

func messageToPB(m *a2a.Message) (*a2apb.Message, error) {
	if m == nil {
		return nil, nil
	}
	parts, err := partsToPB(m.Parts)
	if err != nil {
		return nil, err
	}
	md, err := StructToPB(m.Metadata)
	if err != nil {
		return nil, err
	}
	return &a2apb.Message{
		MessageId: m.MessageID, ContextId: m.ContextID, TaskId: m.TaskID,
		Role: roleToPB(m.Role), Parts: parts, Metadata: md,
		Extensions: m.Extensions, ReferenceTaskIds: m.ReferenceTaskIDs,
	}, nil
}

// messageFromPB reads a message, of a server's answer or not (partFromPB).
func messageFromPB(m *a2apb.Message, answer bool) (*a2a.Message, error) {
	if m == nil {
		return nil, nil
	}
	role, err := roleFromPB(m.Role)
	if err != nil {
		return nil, fmt.Errorf("role: %w", err)
	}
	parts, err := partsFromPB(m.Parts, answer)
	if err != nil {
		return nil, err
	}
	return &a2a.Message{
		MessageID: m.MessageId, ContextID: m.ContextId, TaskID: m.TaskId,
		Role: role, Parts: parts, Metadata: StructFromPB(m.Metadata),
		Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIds,
	}, nil
}

func artifactToPB(a *a2a.Artifact) (*a2apb.Artifact, error) {
	parts, err := partsToPB(a.Parts)
	if err != nil {
		return nil, err
	}
	md, err := StructToPB(a.Metadata)
	if err != nil {
		return nil, err
	}
	return &a2apb.Artifact{
		ArtifactId: a.ArtifactID, Name: a.Name, Description: a.Description,
		Parts: parts, Metadata: md, Extensions: a.Extensions,
	}, nil
}

func artifactFromPB(a *a2apb.Artifact) (a2a.Artifact, error) {
	if a == nil {
		return a2a.Artifact{}, nil
	}
	parts, err := partsFromPB(a.Parts, true)
	if err != nil {
		return a2a.Artifact{}, err
	}
	return a2a.Artifact{
		ArtifactID: a.ArtifactId, Name: a.Name, Description: a.Description,
		Parts: parts, Metadata: StructFromPB(a.Metadata), Extensions: a.Extensions,
	}, nil
}

// --- tasks and events ---

func statusToPB(s *a2a.TaskStatus) (*a2apb.TaskStatus, error) {
	msg, err := messageToPB(s.Message)
	if err != nil {
		return nil, fmt.Errorf("message.%w", err)
	}
	return &a2apb.TaskStatus{State: stateToPB(s.State), Message: msg, Timestamp: timeToPB(s.Timestamp)}, nil
}

func statusFromPB(s *a2apb.TaskStatus) (a2a.TaskStatus, error) {
	if s == nil {
		return a2a.TaskStatus{}, nil
	}
	state, err := stateFromPB(s.State)
	if err != nil {
		return a2a.TaskStatus{}, fmt.Errorf("state: %w", err)
	}
	msg, err := messageFromPB(s.Message, true)
	if err != nil {
		return a2a.TaskStatus{}, fmt.Errorf("message.%w", err)
	}
	return a2a.TaskStatus{State: state, Message: msg, Timestamp: timeFromPB(s.Timestamp)}, nil
}

func TaskToPB(t *a2a.Task) (*a2apb.Task, error) {
	if t == nil {
		return nil, nil
	}
	st, err := statusToPB(&t.Status)
	if err != nil {
		return nil, fmt.Errorf("status.%w", err)
	}
	out := &a2apb.Task{Id: t.ID, ContextId: t.ContextID, Status: st, Generation: int64(t.Generation)}
	if t.Artifacts != nil {
		out.Artifacts = make([]*a2apb.Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			if out.Artifacts[i], err = artifactToPB(&t.Artifacts[i]); err != nil {
				return nil, fmt.Errorf("artifacts[%d].%w", i, err)
			}
		}
	}
	if t.History != nil {
		out.History = make([]*a2apb.Message, len(t.History))
		for i := range t.History {
			if out.History[i], err = messageToPB(&t.History[i]); err != nil {
				return nil, fmt.Errorf("history[%d].%w", i, err)
			}
		}
	}
	if out.Metadata, err = StructToPB(t.Metadata); err != nil {
		return nil, err
	}
	return out, nil
}

func TaskFromPB(t *a2apb.Task) (*a2a.Task, error) {
	if t == nil {
		return nil, nil
	}
	st, err := statusFromPB(t.Status)
	if err != nil {
		return nil, fmt.Errorf("status.%w", err)
	}
	out := &a2a.Task{ID: t.Id, ContextID: t.ContextId, Status: st, Metadata: StructFromPB(t.Metadata), Generation: a2a.Generation(t.Generation)}
	if t.Artifacts != nil {
		out.Artifacts = make([]a2a.Artifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			if out.Artifacts[i], err = artifactFromPB(a); err != nil {
				return nil, fmt.Errorf("artifacts[%d].%w", i, err)
			}
		}
	}
	if t.History != nil {
		out.History = make([]a2a.Message, len(t.History))
		for i, m := range t.History {
			v, err := messageFromPB(m, true)
			if err != nil {
				return nil, fmt.Errorf("history[%d].%w", i, err)
			}
			if v != nil {
				out.History[i] = *v
			}
		}
	}
	return out, nil
}

func statusUpdateToPB(e *a2a.TaskStatusUpdateEvent) (*a2apb.TaskStatusUpdateEvent, error) {
	st, err := statusToPB(&e.Status)
	if err != nil {
		return nil, fmt.Errorf("status.%w", err)
	}
	md, err := StructToPB(e.Metadata)
	if err != nil {
		return nil, err
	}
	return &a2apb.TaskStatusUpdateEvent{TaskId: e.TaskID, ContextId: e.ContextID, Status: st, Metadata: md, Generation: int64(e.Generation)}, nil
}

func statusUpdateFromPB(e *a2apb.TaskStatusUpdateEvent) (*a2a.TaskStatusUpdateEvent, error) {
	st, err := statusFromPB(e.Status)
	if err != nil {
		return nil, fmt.Errorf("status.%w", err)
	}
	return &a2a.TaskStatusUpdateEvent{TaskID: e.TaskId, ContextID: e.ContextId, Status: st, Metadata: StructFromPB(e.Metadata), Generation: a2a.Generation(e.Generation)}, nil
}

func artifactUpdateToPB(e *a2a.TaskArtifactUpdateEvent) (*a2apb.TaskArtifactUpdateEvent, error) {
	a, err := artifactToPB(&e.Artifact)
	if err != nil {
		return nil, fmt.Errorf("artifact.%w", err)
	}
	md, err := StructToPB(e.Metadata)
	if err != nil {
		return nil, err
	}
	return &a2apb.TaskArtifactUpdateEvent{
		TaskId: e.TaskID, ContextId: e.ContextID, Artifact: a,
		Append: e.Append, LastChunk: e.LastChunk, Metadata: md, Generation: int64(e.Generation),
	}, nil
}

func artifactUpdateFromPB(e *a2apb.TaskArtifactUpdateEvent) (*a2a.TaskArtifactUpdateEvent, error) {
	a, err := artifactFromPB(e.Artifact)
	if err != nil {
		return nil, fmt.Errorf("artifact.%w", err)
	}
	return &a2a.TaskArtifactUpdateEvent{
		TaskID: e.TaskId, ContextID: e.ContextId, Artifact: a,
		Append: e.Append, LastChunk: e.LastChunk, Metadata: StructFromPB(e.Metadata), Generation: a2a.Generation(e.Generation),
	}, nil
}

// EventToPB wraps an event as a stream item.
func EventToPB(ev a2a.Event) (*a2apb.StreamResponse, error) {
	var err error
	out := new(a2apb.StreamResponse)
	switch e := ev.(type) {
	case *a2a.Task:
		var t *a2apb.Task
		t, err = TaskToPB(e)
		out.Payload = &a2apb.StreamResponse_Task{Task: t}
	case *a2a.Message:
		var m *a2apb.Message
		m, err = messageToPB(e)
		out.Payload = &a2apb.StreamResponse_Message{Message: m}
	case *a2a.TaskStatusUpdateEvent:
		var u *a2apb.TaskStatusUpdateEvent
		u, err = statusUpdateToPB(e)
		out.Payload = &a2apb.StreamResponse_StatusUpdate{StatusUpdate: u}
	case *a2a.TaskArtifactUpdateEvent:
		var u *a2apb.TaskArtifactUpdateEvent
		u, err = artifactUpdateToPB(e)
		out.Payload = &a2apb.StreamResponse_ArtifactUpdate{ArtifactUpdate: u}
	default:
		return nil, fmt.Errorf("event of type %T has no wire form", ev)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EventFromPB unwraps a stream item.
func EventFromPB(r *a2apb.StreamResponse) (a2a.Event, error) {
	switch p := r.GetPayload().(type) {
	case *a2apb.StreamResponse_Task:
		if p.Task != nil {
			return TaskFromPB(p.Task)
		}
	case *a2apb.StreamResponse_Message:
		if p.Message != nil {
			return messageFromPB(p.Message, true)
		}
	case *a2apb.StreamResponse_StatusUpdate:
		if p.StatusUpdate != nil {
			return statusUpdateFromPB(p.StatusUpdate)
		}
	case *a2apb.StreamResponse_ArtifactUpdate:
		if p.ArtifactUpdate != nil {
			return artifactUpdateFromPB(p.ArtifactUpdate)
		}
	}
	return nil, fmt.Errorf("stream response has no payload: want one of task, message, status_update, artifact_update")
}

// SendResponseToPB wraps SendMessage's result, a task or a direct reply.
func SendResponseToPB(ev a2a.Event) (*a2apb.SendMessageResponse, error) {
	switch e := ev.(type) {
	case *a2a.Task:
		t, err := TaskToPB(e)
		if err != nil {
			return nil, err
		}
		return &a2apb.SendMessageResponse{Payload: &a2apb.SendMessageResponse_Task{Task: t}}, nil
	case *a2a.Message:
		m, err := messageToPB(e)
		if err != nil {
			return nil, err
		}
		return &a2apb.SendMessageResponse{Payload: &a2apb.SendMessageResponse_Message{Message: m}}, nil
	}
	return nil, fmt.Errorf("SendMessage result of type %T is neither a task nor a message", ev)
}

// SendResponseFromPB unwraps SendMessage's result, a task or a direct
// reply.
func SendResponseFromPB(r *a2apb.SendMessageResponse) (a2a.Event, error) {
	switch p := r.GetPayload().(type) {
	case *a2apb.SendMessageResponse_Task:
		if p.Task != nil {
			return TaskFromPB(p.Task)
		}
	case *a2apb.SendMessageResponse_Message:
		if p.Message != nil {
			return messageFromPB(p.Message, true)
		}
	}
	return nil, fmt.Errorf("SendMessage response has no payload: want a task or a message")
}

// --- requests ---

func SendRequestToPB(r *a2a.SendMessageRequest) (*a2apb.SendMessageRequest, error) {
	msg, err := messageToPB(r.Message)
	if err != nil {
		return nil, fmt.Errorf("message.%w", err)
	}
	md, err := StructToPB(r.Metadata)
	if err != nil {
		return nil, err
	}
	out := &a2apb.SendMessageRequest{Tenant: r.Tenant, Message: msg, Metadata: md}
	if c := r.Configuration; c != nil {
		out.Configuration = &a2apb.SendMessageConfiguration{
			AcceptedOutputModes:        c.AcceptedOutputModes,
			TaskPushNotificationConfig: PushConfigToPB(c.TaskPushNotificationConfig),
			HistoryLength:              IntPtrToPB(c.HistoryLength),
			ReturnImmediately:          c.ReturnImmediately,
			IfGenerationMatch:          generationPtrToPB(c.IfGenerationMatch),
		}
	}
	return out, nil
}

func SendRequestFromPB(r *a2apb.SendMessageRequest) (*a2a.SendMessageRequest, error) {
	msg, err := messageFromPB(r.Message, false)
	if err != nil {
		return nil, fmt.Errorf("message.%w", err)
	}
	out := &a2a.SendMessageRequest{Tenant: r.Tenant, Message: msg, Metadata: StructFromPB(r.Metadata)}
	if c := r.Configuration; c != nil {
		out.Configuration = &a2a.SendMessageConfiguration{
			AcceptedOutputModes:        c.AcceptedOutputModes,
			TaskPushNotificationConfig: PushConfigFromPB(c.TaskPushNotificationConfig),
			HistoryLength:              IntPtrFromPB(c.HistoryLength),
			ReturnImmediately:          c.ReturnImmediately,
			IfGenerationMatch:          generationPtrFromPB(c.IfGenerationMatch),
		}
	}
	return out, nil
}

func GetTaskRequestToPB(r *a2a.GetTaskRequest) *a2apb.GetTaskRequest {
	return &a2apb.GetTaskRequest{Tenant: r.Tenant, Id: r.ID, HistoryLength: IntPtrToPB(r.HistoryLength),
		CurrentGeneration: generationPtrToPB(r.CurrentGeneration)}
}

func GetTaskRequestFromPB(r *a2apb.GetTaskRequest) *a2a.GetTaskRequest {
	return &a2a.GetTaskRequest{Tenant: r.Tenant, ID: r.Id, HistoryLength: IntPtrFromPB(r.HistoryLength),
		CurrentGeneration: generationPtrFromPB(r.CurrentGeneration)}
}

func ListTasksRequestToPB(r *a2a.ListTasksRequest) *a2apb.ListTasksRequest {
	out := &a2apb.ListTasksRequest{
		Tenant: r.Tenant, ContextId: r.ContextID, Status: stateToPB(r.Status),
		PageSize: IntPtrToPB(r.PageSize), PageToken: r.PageToken,
		HistoryLength: IntPtrToPB(r.HistoryLength),
	}
	if r.StatusTimestampAfter != nil {
		out.StatusTimestampAfter = timestamppb.New(*r.StatusTimestampAfter)
	}
	if r.IncludeArtifacts {
		out.IncludeArtifacts = &r.IncludeArtifacts
	}
	return out
}

func ListTasksRequestFromPB(r *a2apb.ListTasksRequest) (*a2a.ListTasksRequest, error) {
	state, err := stateFromPB(r.Status)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	out := &a2a.ListTasksRequest{
		Tenant: r.Tenant, ContextID: r.ContextId, Status: state,
		PageSize: IntPtrFromPB(r.PageSize), PageToken: r.PageToken,
		HistoryLength: IntPtrFromPB(r.HistoryLength), IncludeArtifacts: r.GetIncludeArtifacts(),
	}
	if r.StatusTimestampAfter != nil {
		t := r.StatusTimestampAfter.AsTime()
		out.StatusTimestampAfter = &t
	}
	return out, nil
}

func ListTasksResponseToPB(r *a2a.ListTasksResponse) (*a2apb.ListTasksResponse, error) {
	out := &a2apb.ListTasksResponse{
		Tasks:         make([]*a2apb.Task, len(r.Tasks)),
		NextPageToken: r.NextPageToken, PageSize: clamp32(r.PageSize), TotalSize: clamp32(r.TotalSize),
	}
	for i, t := range r.Tasks {
		var err error
		if out.Tasks[i], err = TaskToPB(t); err != nil {
			return nil, fmt.Errorf("tasks[%d].%w", i, err)
		}
	}
	return out, nil
}

func ListTasksResponseFromPB(r *a2apb.ListTasksResponse) (*a2a.ListTasksResponse, error) {
	out := &a2a.ListTasksResponse{
		Tasks:         make([]*a2a.Task, len(r.Tasks)),
		NextPageToken: r.NextPageToken, PageSize: int(r.PageSize), TotalSize: int(r.TotalSize),
	}
	for i, t := range r.Tasks {
		var err error
		if out.Tasks[i], err = TaskFromPB(t); err != nil {
			return nil, fmt.Errorf("tasks[%d].%w", i, err)
		}
	}
	return out, nil
}

// --- push notification configs ---

func PushConfigToPB(c *a2a.TaskPushNotificationConfig) *a2apb.TaskPushNotificationConfig {
	if c == nil {
		return nil
	}
	out := &a2apb.TaskPushNotificationConfig{Tenant: c.Tenant, Id: c.ID, TaskId: c.TaskID, Url: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		out.Authentication = &a2apb.AuthenticationInfo{Scheme: a.Scheme, Credentials: a.Credentials}
	}
	return out
}

func PushConfigFromPB(c *a2apb.TaskPushNotificationConfig) *a2a.TaskPushNotificationConfig {
	if c == nil {
		return nil
	}
	out := &a2a.TaskPushNotificationConfig{Tenant: c.Tenant, ID: c.Id, TaskID: c.TaskId, URL: c.Url, Token: c.Token}
	if a := c.Authentication; a != nil {
		out.Authentication = &a2a.AuthenticationInfo{Scheme: a.Scheme, Credentials: a.Credentials}
	}
	return out
}

func ListPushConfigsResponseToPB(r *a2a.ListTaskPushNotificationConfigsResponse) *a2apb.ListTaskPushNotificationConfigsResponse {
	out := &a2apb.ListTaskPushNotificationConfigsResponse{
		Configs:       make([]*a2apb.TaskPushNotificationConfig, len(r.Configs)),
		NextPageToken: r.NextPageToken,
	}
	for i := range r.Configs {
		out.Configs[i] = PushConfigToPB(&r.Configs[i])
	}
	return out
}

func ListPushConfigsResponseFromPB(r *a2apb.ListTaskPushNotificationConfigsResponse) *a2a.ListTaskPushNotificationConfigsResponse {
	out := &a2a.ListTaskPushNotificationConfigsResponse{
		Configs:       make([]a2a.TaskPushNotificationConfig, len(r.Configs)),
		NextPageToken: r.NextPageToken,
	}
	for i, c := range r.Configs {
		if v := PushConfigFromPB(c); v != nil {
			out.Configs[i] = *v
		}
	}
	return out
}
