package a2av03

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/a2amesh/a2amesh/a2a"
)

var stateTo03 = map[a2a.TaskState]string{
	a2a.TaskStateSubmitted:     "submitted",
	a2a.TaskStateWorking:       "working",
	a2a.TaskStateInputRequired: "input-required",
	a2a.TaskStateCompleted:     "completed",
	a2a.TaskStateCanceled:      "canceled",
	a2a.TaskStateFailed:        "failed",
	a2a.TaskStateRejected:      "rejected",
	a2a.TaskStateAuthRequired:  "auth-required",
}

var stateFrom03 = func() map[string]a2a.TaskState {
	m := make(map[string]a2a.TaskState, len(stateTo03)+1)
	for k, v := range stateTo03 {
		m[v] = k
	}
	m["unknown"] = "" // 0.3's "unknown" is 1.0's unspecified
	return m
}()

// State returns the 0.3 name of a task state ("unknown" for the zero state).
func State(s a2a.TaskState) string {
	if v, ok := stateTo03[s]; ok {
		return v
	}
	return "unknown"
}

// ParseState returns the 1.0 state for a 0.3 state name.
func ParseState(s string) (a2a.TaskState, error) {
	v, ok := stateFrom03[s]
	if !ok {
		return "", fmt.Errorf("unknown task state %q (want one of submitted, working, input-required, completed, canceled, failed, rejected, auth-required)", s)
	}
	return v, nil
}

func role(r a2a.Role) string {
	switch r {
	case a2a.RoleUser:
		return "user"
	case a2a.RoleAgent:
		return "agent"
	}
	return ""
}

func parseRole(s string) (a2a.Role, error) {
	switch s {
	case "user":
		return a2a.RoleUser, nil
	case "agent":
		return a2a.RoleAgent, nil
	}
	return "", fmt.Errorf("unknown role %q (want \"user\" or \"agent\")", s)
}

// FromPart converts a part. A text or data part loses its media type and
// file name (0.3 has no place for them); a data value that is not a JSON
// object is wrapped as {"value": v}.
func FromPart(p *a2a.Part) Part {
	out := Part{Metadata: p.Metadata}
	switch p.Kind() {
	case a2a.PartKindText:
		out.Kind = KindText
		text := p.Text
		out.Text = &text
	case a2a.PartKindRaw:
		out.Kind = KindFile
		out.File = &File{Name: p.Filename, MimeType: p.MediaType, Bytes: base64.StdEncoding.EncodeToString(p.Raw)}
	case a2a.PartKindURL:
		out.Kind = KindFile
		out.File = &File{Name: p.Filename, MimeType: p.MediaType, URI: p.URL}
	case a2a.PartKindData:
		out.Kind = KindData
		if a2a.IsJSONObject(p.Data) {
			out.Data = p.Data
		} else {
			out.Data = append(append([]byte(`{"value":`), p.Data...), '}')
		}
	}
	return out
}

// ToPart converts a 0.3 part.
func (p *Part) ToPart() (a2a.Part, error) {
	out := a2a.Part{Metadata: p.Metadata}
	switch p.Kind {
	case KindText:
		if p.Text == nil {
			return out, fmt.Errorf("text part has no text")
		}
		out.Text = *p.Text
	case KindFile:
		f := p.File
		if f == nil {
			return out, fmt.Errorf("file part has no file")
		}
		out.Filename, out.MediaType = f.Name, f.MimeType
		switch {
		case f.Bytes != "" && f.URI != "":
			return out, fmt.Errorf("file has both bytes and uri: want one")
		case f.Bytes == "" && f.URI == "":
			return out, fmt.Errorf("file has neither bytes nor uri: want one")
		case f.URI != "":
			out.URL = f.URI
		default:
			raw, err := base64.StdEncoding.DecodeString(f.Bytes)
			if err != nil {
				if raw, err = base64.RawStdEncoding.DecodeString(f.Bytes); err != nil {
					return out, fmt.Errorf("file.bytes: invalid base64: %w", err)
				}
			}
			out.Raw = raw
		}
	case KindData:
		if !a2a.IsJSONObject(p.Data) {
			return out, fmt.Errorf("data part's data must be a JSON object")
		}
		out.Data = p.Data
	case "":
		return out, fmt.Errorf("part has no kind (want \"text\", \"file\" or \"data\")")
	default:
		return out, fmt.Errorf("unknown part kind %q (want \"text\", \"file\" or \"data\")", p.Kind)
	}
	return out, nil
}

func fromParts(ps []a2a.Part) []Part {
	out := make([]Part, len(ps))
	for i := range ps {
		out[i] = FromPart(&ps[i])
	}
	return out
}

func toParts(ps []Part) ([]a2a.Part, error) {
	out := make([]a2a.Part, len(ps))
	for i := range ps {
		p, err := ps[i].ToPart()
		if err != nil {
			return nil, fmt.Errorf("parts[%d]: %w", i, err)
		}
		out[i] = p
	}
	return out, nil
}

// FromMessage converts a message.
func FromMessage(m *a2a.Message) *Message {
	if m == nil {
		return nil
	}
	return &Message{
		Kind: KindMessage, MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID,
		Role: role(m.Role), Parts: fromParts(m.Parts), Metadata: m.Metadata,
		Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs,
	}
}

// ToMessage converts a 0.3 message.
func (m *Message) ToMessage() (*a2a.Message, error) {
	if m.Kind != "" && m.Kind != KindMessage {
		return nil, fmt.Errorf("kind is %q, want %q", m.Kind, KindMessage)
	}
	r, err := parseRole(m.Role)
	if err != nil {
		return nil, fmt.Errorf("role: %w", err)
	}
	parts, err := toParts(m.Parts)
	if err != nil {
		return nil, err
	}
	return &a2a.Message{
		MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: r, Parts: parts,
		Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs,
	}, nil
}

func fromStatus(s *a2a.TaskStatus) TaskStatus {
	return TaskStatus{State: State(s.State), Message: FromMessage(s.Message), Timestamp: Timestamp{s.Timestamp}}
}

func (s *TaskStatus) toStatus() (a2a.TaskStatus, error) {
	state, err := ParseState(s.State)
	if err != nil {
		return a2a.TaskStatus{}, fmt.Errorf("state: %w", err)
	}
	out := a2a.TaskStatus{State: state, Timestamp: s.Timestamp.Time}
	if s.Message != nil {
		if out.Message, err = s.Message.ToMessage(); err != nil {
			return out, fmt.Errorf("message: %w", err)
		}
	}
	return out, nil
}

// FromArtifact converts an artifact.
func FromArtifact(a *a2a.Artifact) Artifact {
	return Artifact{
		ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
		Parts: fromParts(a.Parts), Metadata: a.Metadata, Extensions: a.Extensions,
	}
}

func (a *Artifact) toArtifact() (a2a.Artifact, error) {
	parts, err := toParts(a.Parts)
	if err != nil {
		return a2a.Artifact{}, err
	}
	return a2a.Artifact{
		ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
		Parts: parts, Metadata: a.Metadata, Extensions: a.Extensions,
	}, nil
}

// FromTask converts a task.
func FromTask(t *a2a.Task) *Task {
	out := &Task{
		Kind: KindTask, ID: t.ID, ContextID: t.ContextID, Status: fromStatus(&t.Status),
		Metadata: t.Metadata,
	}
	if t.Artifacts != nil {
		out.Artifacts = make([]Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			out.Artifacts[i] = FromArtifact(&t.Artifacts[i])
		}
	}
	if t.History != nil {
		out.History = make([]Message, len(t.History))
		for i := range t.History {
			out.History[i] = *FromMessage(&t.History[i])
		}
	}
	return out
}

// ToTask converts a 0.3 task.
func (t *Task) ToTask() (*a2a.Task, error) {
	if t.Kind != "" && t.Kind != KindTask {
		return nil, fmt.Errorf("kind is %q, want %q", t.Kind, KindTask)
	}
	status, err := t.Status.toStatus()
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	out := &a2a.Task{ID: t.ID, ContextID: t.ContextID, Status: status, Metadata: t.Metadata}
	if t.Artifacts != nil {
		out.Artifacts = make([]a2a.Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			if out.Artifacts[i], err = t.Artifacts[i].toArtifact(); err != nil {
				return nil, fmt.Errorf("artifacts[%d]: %w", i, err)
			}
		}
	}
	if t.History != nil {
		out.History = make([]a2a.Message, len(t.History))
		for i := range t.History {
			m, err := t.History[i].ToMessage()
			if err != nil {
				return nil, fmt.Errorf("history[%d]: %w", i, err)
			}
			out.History[i] = *m
		}
	}
	return out, nil
}

// FromEvent returns the 0.3 wire value of an event, ready to encode. A
// status update's "final" flag is set when its state ends the stream
// (terminal or interrupted).
func FromEvent(ev a2a.Event) any {
	switch e := ev.(type) {
	case *a2a.Task:
		return FromTask(e)
	case *a2a.Message:
		return FromMessage(e)
	case *a2a.TaskStatusUpdateEvent:
		return &TaskStatusUpdateEvent{
			Kind: KindStatusUpdate, TaskID: e.TaskID, ContextID: e.ContextID,
			Status: fromStatus(&e.Status), Final: e.Status.State.Settled(), Metadata: e.Metadata,
		}
	case *a2a.TaskArtifactUpdateEvent:
		return &TaskArtifactUpdateEvent{
			Kind: KindArtifactUpdate, TaskID: e.TaskID, ContextID: e.ContextID,
			Artifact: FromArtifact(&e.Artifact), Append: e.Append, LastChunk: e.LastChunk, Metadata: e.Metadata,
		}
	}
	return nil
}

// DecodeEvent decodes a 0.3 event (a message/send result or a stream item)
// by its kind.
func DecodeEvent(data []byte) (a2a.Event, error) {
	var k struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, err
	}
	switch k.Kind {
	case KindTask:
		var t Task
		if err := json.Unmarshal(data, &t); err != nil {
			return nil, err
		}
		return t.ToTask()
	case KindMessage:
		var m Message
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		return m.ToMessage()
	case KindStatusUpdate:
		var e TaskStatusUpdateEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, err
		}
		status, err := e.Status.toStatus()
		if err != nil {
			return nil, fmt.Errorf("status: %w", err)
		}
		return &a2a.TaskStatusUpdateEvent{TaskID: e.TaskID, ContextID: e.ContextID, Status: status, Metadata: e.Metadata}, nil
	case KindArtifactUpdate:
		var e TaskArtifactUpdateEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, err
		}
		art, err := e.Artifact.toArtifact()
		if err != nil {
			return nil, fmt.Errorf("artifact: %w", err)
		}
		return &a2a.TaskArtifactUpdateEvent{
			TaskID: e.TaskID, ContextID: e.ContextID, Artifact: art,
			Append: e.Append, LastChunk: e.LastChunk, Metadata: e.Metadata,
		}, nil
	case "":
		return nil, fmt.Errorf("event has no kind")
	}
	return nil, fmt.Errorf("unknown event kind %q", k.Kind)
}

// FromPushConfig converts a webhook configuration.
func FromPushConfig(c *a2a.TaskPushNotificationConfig) *TaskPushNotificationConfig {
	out := &TaskPushNotificationConfig{
		TaskID:                 c.TaskID,
		PushNotificationConfig: PushNotificationConfig{ID: c.ID, URL: c.URL, Token: c.Token},
	}
	if c.Authentication != nil {
		out.PushNotificationConfig.Authentication = &PushAuthenticationInfo{
			Schemes: []string{c.Authentication.Scheme}, Credentials: c.Authentication.Credentials,
		}
	}
	return out
}

// ToPushConfig converts a 0.3 webhook configuration for a task. As 0.3
// servers do, an empty configuration id defaults to the task id.
func (c *PushNotificationConfig) ToPushConfig(taskID string) *a2a.TaskPushNotificationConfig {
	out := &a2a.TaskPushNotificationConfig{ID: c.ID, TaskID: taskID, URL: c.URL, Token: c.Token}
	if out.ID == "" {
		out.ID = taskID
	}
	if a := c.Authentication; a != nil && (len(a.Schemes) > 0 || a.Credentials != "") {
		out.Authentication = &a2a.AuthenticationInfo{Credentials: a.Credentials}
		if len(a.Schemes) > 0 {
			out.Authentication.Scheme = a.Schemes[0]
		}
	}
	return out
}

// ToSendMessageRequest converts message/send params. An absent "blocking"
// means blocking.
func (p *MessageSendParams) ToSendMessageRequest() (*a2a.SendMessageRequest, error) {
	out := &a2a.SendMessageRequest{Metadata: p.Metadata}
	if p.Message != nil {
		m, err := p.Message.ToMessage()
		if err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		out.Message = m
	}
	if c := p.Configuration; c != nil {
		out.Configuration = &a2a.SendMessageConfiguration{
			AcceptedOutputModes: c.AcceptedOutputModes,
			HistoryLength:       c.HistoryLength,
			ReturnImmediately:   c.Blocking != nil && !*c.Blocking,
		}
		if c.PushNotificationConfig != nil {
			taskID := ""
			if out.Message != nil {
				taskID = out.Message.TaskID
			}
			pc := c.PushNotificationConfig.ToPushConfig(taskID)
			if c.PushNotificationConfig.ID == "" {
				pc.ID = "" // the task id is not known yet; the server fills it in
			}
			out.Configuration.TaskPushNotificationConfig = pc
		}
	}
	return out, nil
}

// FromSendMessageRequest converts a send request to message/send params.
func FromSendMessageRequest(r *a2a.SendMessageRequest) *MessageSendParams {
	out := &MessageSendParams{Message: FromMessage(r.Message), Metadata: r.Metadata}
	if c := r.Configuration; c != nil {
		blocking := !c.ReturnImmediately
		out.Configuration = &MessageSendConfiguration{
			AcceptedOutputModes: c.AcceptedOutputModes,
			HistoryLength:       c.HistoryLength,
			Blocking:            &blocking,
		}
		if c.TaskPushNotificationConfig != nil {
			out.Configuration.PushNotificationConfig = &FromPushConfig(c.TaskPushNotificationConfig).PushNotificationConfig
		}
	}
	return out
}

// ToListTasksRequest converts tasks/list params.
func (p *ListTasksParams) ToListTasksRequest() (*a2a.ListTasksRequest, error) {
	out := &a2a.ListTasksRequest{ContextID: p.ContextID, PageToken: p.PageToken, IncludeArtifacts: p.IncludeArtifacts}
	if p.Status != "" {
		s, err := ParseState(p.Status)
		if err != nil {
			return nil, fmt.Errorf("status: %w", err)
		}
		out.Status = s
	}
	if p.PageSize != 0 {
		n := p.PageSize
		out.PageSize = &n
	}
	out.HistoryLength = p.HistoryLength
	if p.LastUpdatedAfter != nil {
		t := p.LastUpdatedAfter.UTC()
		out.StatusTimestampAfter = &t
	}
	return out, nil
}

// FromListTasksRequest converts a list request to tasks/list params.
func FromListTasksRequest(r *a2a.ListTasksRequest) *ListTasksParams {
	out := &ListTasksParams{ContextID: r.ContextID, PageToken: r.PageToken, IncludeArtifacts: r.IncludeArtifacts}
	if r.Status != "" {
		out.Status = State(r.Status)
	}
	if r.PageSize != nil {
		out.PageSize = *r.PageSize
	}
	out.HistoryLength = r.HistoryLength
	if r.StatusTimestampAfter != nil {
		t := r.StatusTimestampAfter.UTC()
		out.LastUpdatedAfter = &t
	}
	return out
}

// FromListTasksResponse converts a list page.
func FromListTasksResponse(r *a2a.ListTasksResponse) *ListTasksResult {
	out := &ListTasksResult{Tasks: make([]*Task, len(r.Tasks)), TotalSize: r.TotalSize, PageSize: r.PageSize, NextPageToken: r.NextPageToken}
	for i, t := range r.Tasks {
		out.Tasks[i] = FromTask(t)
	}
	return out
}

// ToListTasksResponse converts a tasks/list result.
func (r *ListTasksResult) ToListTasksResponse() (*a2a.ListTasksResponse, error) {
	out := &a2a.ListTasksResponse{Tasks: make([]*a2a.Task, len(r.Tasks)), TotalSize: r.TotalSize, PageSize: r.PageSize, NextPageToken: r.NextPageToken}
	for i, t := range r.Tasks {
		task, err := t.ToTask()
		if err != nil {
			return nil, fmt.Errorf("tasks[%d]: %w", i, err)
		}
		out.Tasks[i] = task
	}
	return out, nil
}
