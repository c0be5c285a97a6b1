package server

import (
	"fmt"
	"slices"

	"github.com/a2amesh/a2amesh/a2a"
)

// fold applies an agent event to the task snapshot cur and returns the new
// snapshot and the event as it is logged (ids, timestamps and message
// fields filled in). cur is never modified: snapshots are shared with
// readers, so fold copies what it changes (see apply).
func fold(cur *a2a.Task, ev a2a.Event) (*a2a.Task, a2a.Event, error) {
	if err := normalize(cur, ev); err != nil {
		return nil, nil, err
	}
	next, err := apply(cur, ev)
	return next, ev, err
}

// normalize checks that ev may follow cur and fills in what the agent left
// out: the task's ids, timestamps and message fields. A generation the
// agent set is dropped: the server numbers the task's events
// (generation.go), and shows them only to calls that ask.
func normalize(cur *a2a.Task, ev a2a.Event) error {
	switch e := ev.(type) {
	case *a2a.Task:
		if err := checkIDs(cur, e.ID, e.ContextID); err != nil {
			return err
		}
		e.ID, e.ContextID, e.Generation = cur.ID, cur.ContextID, 0
		if err := a2a.CheckTransition(cur.Status.State, e.Status.State); err != nil {
			return err
		}
		fillStatus(&e.Status, cur.ID, cur.ContextID)
		for i := range e.History {
			fillMessage(&e.History[i], cur.ID, cur.ContextID, "")
		}
		return checkArtifacts(e.Artifacts)

	case *a2a.TaskStatusUpdateEvent:
		if err := checkIDs(cur, e.TaskID, e.ContextID); err != nil {
			return err
		}
		e.TaskID, e.ContextID, e.Generation = cur.ID, cur.ContextID, 0
		if err := a2a.CheckTransition(cur.Status.State, e.Status.State); err != nil {
			return err
		}
		fillStatus(&e.Status, cur.ID, cur.ContextID)
		return nil

	case *a2a.TaskArtifactUpdateEvent:
		if err := checkIDs(cur, e.TaskID, e.ContextID); err != nil {
			return err
		}
		e.TaskID, e.ContextID, e.Generation = cur.ID, cur.ContextID, 0
		if cur.Status.State.Terminal() {
			return fmt.Errorf("artifact update for a task that is already %s", cur.Status.State)
		}
		return checkArtifacts([]a2a.Artifact{e.Artifact})

	case *a2a.Message:
		return fmt.Errorf("a message event is only valid as the whole reply to a new task; report progress with status updates")
	}
	return fmt.Errorf("unknown event type %T", ev)
}

// apply returns the snapshot that follows cur after ev, an event normalize
// accepted, reading ev and writing neither. Slices are extended in place
// only past the end cur sees, which no reader of cur touches; that is safe
// when cur is the latest snapshot of its task, or a private copy.
func apply(cur *a2a.Task, ev a2a.Event) (*a2a.Task, error) {
	switch e := ev.(type) {
	case *a2a.Task:
		return e, nil

	case *a2a.TaskStatusUpdateEvent:
		next := *cur
		if old := cur.Status.Message; old != nil {
			// A superseded status message becomes history, so the
			// conversation stays whole without repeating the current one.
			next.History = append(cur.History, *old)
		}
		next.Status = e.Status
		return &next, nil

	case *a2a.TaskArtifactUpdateEvent:
		next := *cur
		i := slices.IndexFunc(cur.Artifacts, func(a a2a.Artifact) bool { return a.ArtifactID == e.Artifact.ArtifactID })
		switch {
		case i < 0:
			next.Artifacts = append(cur.Artifacts, e.Artifact)
		case e.Append:
			next.Artifacts = slices.Clone(cur.Artifacts)
			merged := &next.Artifacts[i]
			merged.Parts = append(merged.Parts, e.Artifact.Parts...)
			if e.Artifact.Name != "" {
				merged.Name = e.Artifact.Name
			}
			if e.Artifact.Description != "" {
				merged.Description = e.Artifact.Description
			}
			if e.Artifact.Metadata != nil {
				merged.Metadata = e.Artifact.Metadata
			}
		default:
			next.Artifacts = slices.Clone(cur.Artifacts)
			next.Artifacts[i] = e.Artifact
		}
		return &next, nil
	}
	return nil, fmt.Errorf("%T is not an event of a task", ev)
}

func checkIDs(cur *a2a.Task, taskID, contextID string) error {
	if taskID != "" && taskID != cur.ID {
		return fmt.Errorf("event names task %q, but the run is for task %q", taskID, cur.ID)
	}
	if contextID != "" && contextID != cur.ContextID {
		return fmt.Errorf("event names context %q, but task %q is in context %q", contextID, cur.ID, cur.ContextID)
	}
	return nil
}

func checkArtifacts(arts []a2a.Artifact) error {
	for _, a := range arts {
		if a.ArtifactID == "" {
			return fmt.Errorf("artifact has no artifactId")
		}
		if len(a.Parts) == 0 {
			return fmt.Errorf("artifact %q has no parts", a.ArtifactID)
		}
	}
	return nil
}

func fillStatus(s *a2a.TaskStatus, taskID, contextID string) {
	if s.Timestamp.IsZero() {
		s.Timestamp = a2a.Now()
	} else {
		s.Timestamp = s.Timestamp.UTC()
	}
	if s.Message != nil {
		fillMessage(s.Message, taskID, contextID, a2a.RoleAgent)
	}
}

func fillMessage(m *a2a.Message, taskID, contextID string, role a2a.Role) {
	if m.MessageID == "" {
		m.MessageID = a2a.NewID()
	}
	if m.TaskID == "" {
		m.TaskID = taskID
	}
	if m.ContextID == "" {
		m.ContextID = contextID
	}
	if m.Role == "" && role != "" {
		m.Role = role
	}
}
