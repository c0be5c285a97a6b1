package server

import (
	"reflect"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
)

func TestFoldCopiesOnWrite(t *testing.T) {
	cur := &a2a.Task{
		ID: "t", ContextID: "c",
		Status:    a2a.TaskStatus{State: a2a.TaskStateWorking, Message: a2a.NewTextMessage(a2a.RoleAgent, "thinking")},
		Artifacts: []a2a.Artifact{{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("1")}}},
		History:   []a2a.Message{*a2a.NewTextMessage(a2a.RoleUser, "q")},
	}
	before := *cur
	beforeArts := append([]a2a.Artifact(nil), cur.Artifacts...)

	chunk := a2a.NewArtifactUpdate("", "", a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("2")}}, true, false)
	next, logged, err := fold(cur, chunk)
	if err != nil {
		t.Fatal(err)
	}
	if got := next.Artifacts[0].Text(); got != "12" {
		t.Fatalf("appended artifact = %q", got)
	}
	if logged.(*a2a.TaskArtifactUpdateEvent).TaskID != "t" {
		t.Fatal("event ids not filled in")
	}
	if !reflect.DeepEqual(*cur, before) || !reflect.DeepEqual(cur.Artifacts, beforeArts) {
		t.Fatal("fold modified the snapshot it read")
	}

	replace := a2a.NewArtifactUpdate("t", "c", a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("new")}}, false, true)
	next2, _, err := fold(next, replace)
	if err != nil || next2.Artifacts[0].Text() != "new" || next.Artifacts[0].Text() != "12" {
		t.Fatalf("replace: %v %q %q", err, next2.Artifacts[0].Text(), next.Artifacts[0].Text())
	}
	other := a2a.NewArtifactUpdate("t", "c", a2a.Artifact{ArtifactID: "b", Parts: []a2a.Part{a2a.TextPart("x")}}, false, true)
	next3, _, err := fold(next2, other)
	if err != nil || len(next3.Artifacts) != 2 || len(next2.Artifacts) != 1 {
		t.Fatalf("new artifact: %v", err)
	}

	done := a2a.NewStatusUpdate("t", "c", a2a.TaskStateCompleted, a2a.NewTextMessage(a2a.RoleAgent, "done"))
	next4, _, err := fold(next3, done)
	if err != nil {
		t.Fatal(err)
	}
	if len(next4.History) != 2 || next4.History[1].Text() != "thinking" || next4.Status.Message.Text() != "done" {
		t.Fatalf("superseded status message not moved to history: %+v", next4.History)
	}
	if len(next3.History) != 1 {
		t.Fatal("history of the earlier snapshot changed")
	}
	if _, _, err := fold(next4, other); err == nil {
		t.Fatal("artifact accepted on a terminal task")
	}
	if _, _, err := fold(next3, a2a.NewArtifactUpdate("t", "c", a2a.Artifact{ArtifactID: "", Parts: []a2a.Part{a2a.TextPart("x")}}, false, false)); err == nil {
		t.Fatal("artifact without id accepted")
	}
	if _, _, err := fold(next3, a2a.NewArtifactUpdate("t", "c", a2a.Artifact{ArtifactID: "z"}, false, false)); err == nil {
		t.Fatal("artifact without parts accepted")
	}
}
