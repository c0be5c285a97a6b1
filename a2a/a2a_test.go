package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPartJSON(t *testing.T) {
	tests := []struct {
		name string
		part Part
		json string
	}{
		{"text", TextPart("hi"), `{"text":"hi"}`},
		{"empty text", Part{}, `{"text":""}`},
		{"raw", RawPart([]byte{0xff, 0x00}, "image/png", "a.png"), `{"raw":"/wA=","filename":"a.png","mediaType":"image/png"}`},
		{"empty raw", RawPart(nil, "", ""), `{"raw":""}`},
		{"url", URLPart("https://x/y", "text/plain", ""), `{"url":"https://x/y","mediaType":"text/plain"}`},
		{"data object", Part{Data: json.RawMessage(`{"a":1}`)}, `{"data":{"a":1}}`},
		{"data null", Part{Data: json.RawMessage(`null`)}, `{"data":null}`},
		{"metadata", Part{Text: "x", Metadata: map[string]any{"k": "v"}}, `{"text":"x","metadata":{"k":"v"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.part)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.json {
				t.Fatalf("marshal = %s, want %s", b, tt.json)
			}
			var got Part
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.part) {
				t.Fatalf("round trip = %#v, want %#v", got, tt.part)
			}
		})
	}
}

func TestPartDecodeErrors(t *testing.T) {
	tests := map[string]string{
		"no content":       `{"mediaType":"text/plain"}`,
		"two contents":     `{"text":"a","url":"b"}`,
		"empty url":        `{"url":""}`,
		"raw not base64":   `{"raw":"***"}`,
		"raw not a string": `{"raw":5}`,
		"text not string":  `{"text":5}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			var p Part
			if err := json.Unmarshal([]byte(in), &p); err == nil {
				t.Fatalf("decoded %s without error: %#v", in, p)
			}
		})
	}
}

func TestPartRawAcceptsEveryBase64Form(t *testing.T) {
	want := []byte{0xfb, 0xff, 0xfe}
	for _, enc := range []string{"+//+", "-__-", "+//+", "-__-"} {
		var p Part
		if err := json.Unmarshal([]byte(`{"raw":"`+enc+`"}`), &p); err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		if !reflect.DeepEqual(p.Raw, want) {
			t.Fatalf("%s: raw = %x, want %x", enc, p.Raw, want)
		}
	}
	var p Part
	if err := json.Unmarshal([]byte(`{"raw":"aGk="}`), &p); err != nil || string(p.Raw) != "hi" {
		t.Fatalf("padded: %q %v", p.Raw, err)
	}
}

func TestEnumsDecode(t *testing.T) {
	var r Role
	for in, want := range map[string]Role{`"ROLE_USER"`: RoleUser, `2`: RoleAgent, `"ROLE_UNSPECIFIED"`: "", `0`: ""} {
		if err := json.Unmarshal([]byte(in), &r); err != nil || r != want {
			t.Fatalf("role %s = %q, %v", in, r, err)
		}
	}
	for _, bad := range []string{`"user"`, `3`, `null`} {
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Fatalf("role %s decoded", bad)
		}
	}
	var s TaskState
	for in, want := range map[string]TaskState{`"TASK_STATE_WORKING"`: TaskStateWorking, `3`: TaskStateCompleted, `"TASK_STATE_UNSPECIFIED"`: ""} {
		if err := json.Unmarshal([]byte(in), &s); err != nil || s != want {
			t.Fatalf("state %s = %q, %v", in, s, err)
		}
	}
	for _, bad := range []string{`"working"`, `"TASK_STATE_RUNNING"`, `9`, `"`} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Fatalf("state %s decoded", bad)
		}
	}
}

func TestTaskJSONShape(t *testing.T) {
	ts := time.Date(2025, 10, 28, 10, 30, 0, 123_000_000, time.UTC)
	task := &Task{
		ID: "t1", ContextID: "c1",
		Status:    TaskStatus{State: TaskStateCompleted, Timestamp: ts},
		Artifacts: []Artifact{{ArtifactID: "a1", Parts: []Part{TextPart("out")}}},
	}
	b, err := json.Marshal(StreamResponse{Task: task})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-10-28T10:30:00.123Z"},"artifacts":[{"artifactId":"a1","parts":[{"text":"out"}]}]}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back StreamResponse
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	ev, err := back.Event()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ev, task) {
		t.Fatalf("round trip = %#v", ev)
	}
}

func TestStreamResponseEventRequiresOnePayload(t *testing.T) {
	if _, err := (StreamResponse{}).Event(); err == nil {
		t.Fatal("empty stream response accepted")
	}
	two := StreamResponse{Task: &Task{}, Message: &Message{}}
	if _, err := two.Event(); err == nil {
		t.Fatal("two payloads accepted")
	}
	for _, ev := range []Event{&Task{}, &Message{}, &TaskStatusUpdateEvent{}, &TaskArtifactUpdateEvent{}} {
		got, err := Wrap(ev).Event()
		if err != nil || got != ev {
			t.Fatalf("Wrap(%T).Event() = %v, %v", ev, got, err)
		}
	}
}

func TestSecurityRequirementJSON(t *testing.T) {
	r := SecurityRequirement{Schemes: map[string][]string{"google": {"openid", "email"}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"schemes":{"google":{"list":["openid","email"]}}}`; string(b) != want {
		t.Fatalf("got %s want %s", b, want)
	}
	for _, in := range []string{string(b), `{"schemes":{"google":["openid","email"]}}`} {
		var got SecurityRequirement
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("%s decoded to %#v", in, got)
		}
	}
}

func TestCheckTransition(t *testing.T) {
	ok := [][2]TaskState{
		{"", TaskStateSubmitted},
		{TaskStateSubmitted, TaskStateSubmitted},
		{TaskStateSubmitted, TaskStateWorking},
		{TaskStateSubmitted, TaskStateRejected},
		{TaskStateWorking, TaskStateWorking},
		{TaskStateWorking, TaskStateInputRequired},
		{TaskStateInputRequired, TaskStateWorking},
		{TaskStateInputRequired, TaskStateCompleted},
		{TaskStateAuthRequired, TaskStateCanceled},
		{TaskStateWorking, TaskStateFailed},
	}
	for _, c := range ok {
		if err := CheckTransition(c[0], c[1]); err != nil {
			t.Errorf("%s -> %s: %v", c[0], c[1], err)
		}
	}
	bad := [][2]TaskState{
		{TaskStateCompleted, TaskStateWorking},
		{TaskStateCanceled, TaskStateCanceled},
		{TaskStateFailed, TaskStateCompleted},
		{TaskStateRejected, TaskStateSubmitted},
		{TaskStateWorking, TaskStateSubmitted},
		{TaskStateWorking, ""},
		{TaskStateWorking, "TASK_STATE_BOGUS"},
	}
	for _, c := range bad {
		if err := CheckTransition(c[0], c[1]); err == nil {
			t.Errorf("%s -> %s allowed", c[0], c[1])
		}
	}
}

func TestErrors(t *testing.T) {
	cause := errors.New("disk on fire")
	err := fmt.Errorf("handler: %w", Errorf(CodeTaskNotFound, "task %q not found: %w", "t1", cause))
	if !errors.Is(err, ErrTaskNotFound) {
		t.Fatal("errors.Is by code failed")
	}
	if errors.Is(err, ErrTaskNotCancelable) {
		t.Fatal("errors.Is matched another code")
	}
	if !errors.Is(err, cause) {
		t.Fatal("wrapped cause lost")
	}
	e := AsError(err)
	if e.Code != CodeTaskNotFound || !strings.Contains(e.Message, `"t1"`) {
		t.Fatalf("AsError = %#v", e)
	}
	if AsError(cause).Code != CodeInternal {
		t.Fatal("plain error is not internal")
	}
	for code := CodeVersionNotSupported; code <= CodeTaskNotFound; code++ {
		if code.Reason() == "" {
			t.Errorf("code %d has no reason", code)
		}
	}
}

func TestMessageText(t *testing.T) {
	m := NewMessage(RoleUser, TextPart("a"), URLPart("u", "", ""), TextPart("b"))
	if m.Text() != "ab" || m.MessageID == "" {
		t.Fatalf("Text = %q id = %q", m.Text(), m.MessageID)
	}
}
