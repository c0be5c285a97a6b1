package a2a

import (
	"reflect"
	"testing"

	"github.com/a2amesh/a2amesh/internal/fastjson"
	"github.com/a2amesh/a2amesh/internal/fastjson/fastjsontest"
)

// handedToEncodingJSON are the fields the fast decoder leaves whole to
// encoding/json: a value holding one is read there instead.
var handedToEncodingJSON = []string{"a2a.SendMessageConfiguration.TaskPushNotificationConfig"}

// TestFastPathsHandleEveryField fills every exported field of each type
// AppendJSON and Unmarshal handle without reflection (and of every type
// within: Part, TaskStatus, SendMessageConfiguration) and checks that the
// fast encoder writes what encoding/json writes and that the fast decoder
// reads encoding/json's output back into the value. A field added to a
// wire type and not to encode.go and decode.go fails it. Part is a union:
// a value holds one part per content field.
func TestFastPathsHandleEveryField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func(*testing.T, *fastjsontest.Filler, bool)
	}{
		{"Task", checkFields(readTask)},
		{"Message", checkFields(readMessage)},
		{"Artifact", checkFields(readArtifact)},
		{"TaskStatusUpdateEvent", checkFields(readStatusUpdate)},
		{"TaskArtifactUpdateEvent", checkFields(readArtifactUpdate)},
		{"StreamResponse", checkFields(readStreamResponse)},
		{"SendMessageRequest", checkFields(readSendRequest)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every field: the result must be right, wherever it is made.
			tc.check(t, filler(), false)
			// All but the fields left to encoding/json: the fast path
			// must also take the value.
			tc.check(t, filler(handedToEncodingJSON...), true)
		})
	}
}

func filler(skip ...string) *fastjsontest.Filler {
	return &fastjsontest.Filler{
		Values: map[reflect.Type]any{
			reflect.TypeFor[Role]():      RoleAgent,
			reflect.TypeFor[TaskState](): TaskStateInputRequired,
		},
		Unions: map[reflect.Type][]string{reflect.TypeFor[Part](): {"Text", "Raw", "URL", "Data"}},
		Skip:   skip,
	}
}

func checkFields[T any](read func(*fastjson.Reader, *T)) func(*testing.T, *fastjsontest.Filler, bool) {
	return func(t *testing.T, f *fastjsontest.Filler, mustTake bool) {
		want := new(T)
		if err := f.Fill(want); err != nil {
			t.Fatal(err)
		}
		std, err := fastjson.AppendReflect(nil, want)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := AppendJSON(nil, want)
		if err != nil {
			t.Fatalf("AppendJSON: %v", err)
		}
		if err := fastjsontest.SameJSON(fast, std); err != nil {
			t.Errorf("AppendJSON(%T) differs from encoding/json:\n%v", want, err)
		}

		r := fastjson.New(std)
		got := new(T)
		read(&r, got)
		switch {
		case r.End():
			if d := fastjsontest.Diff(got, want); d != "" {
				t.Errorf("the fast decoder reads %T differently from encoding/json's encoding:\n%s", want, d)
			}
		case mustTake:
			t.Errorf("the fast decoder declines %s", std)
		}
		got = new(T)
		if err := Unmarshal(std, got); err != nil {
			t.Fatalf("Unmarshal: %v", err)
		}
		if d := fastjsontest.Diff(got, want); d != "" {
			t.Errorf("Unmarshal reads %T differently from encoding/json's encoding:\n%s", want, d)
		}
	}
}
