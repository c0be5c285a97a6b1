package a2a

import (
	"encoding/json"
	"errors"
	"testing"
)

// Generation reads what ProtoJSON writes for an int64 (a string) and what
// JSON writers write (a number), and refuses anything else with the kind of
// value it got.
func TestGenerationUnmarshalJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    Generation
		wantErr string
	}{
		{in: `7`, want: 7},
		{in: `"7"`, want: 7},
		{in: `"-2"`, want: -2},
		{in: `0`, want: 0},
		{in: `null`, want: 41}, // unchanged
		{in: `9223372036854775807`, want: 1<<63 - 1},
		{in: `9223372036854775808`, wantErr: "number 9223372036854775808"},
		{in: `1.5`, wantErr: "number 1.5"},
		{in: `"x"`, wantErr: `string "x"`},
		{in: `""`, wantErr: `string ""`},
		{in: `true`, wantErr: "bool"},
		{in: `{}`, wantErr: "object"},
		{in: `[]`, wantErr: "array"},
		{in: ``, wantErr: "nothing"},
	}
	for _, tt := range tests {
		g := Generation(41)
		err := g.UnmarshalJSON([]byte(tt.in))
		if tt.wantErr != "" {
			var te *json.UnmarshalTypeError
			if !json.Valid([]byte(tt.in)) && tt.in != "" {
				t.Fatalf("bad test input %q", tt.in)
			}
			if ok := errors.As(err, &te); !ok || te.Value != tt.wantErr {
				t.Errorf("UnmarshalJSON(%s) = %v, want a type error for %s", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || g != tt.want {
			t.Errorf("UnmarshalJSON(%s) = %d, %v; want %d", tt.in, g, err, tt.want)
		}
	}
}

// The request fields say which member failed, through encoding/json's
// error context.
func TestGenerationFieldErrors(t *testing.T) {
	var req GetTaskRequest
	err := json.Unmarshal([]byte(`{"id":"t","currentGeneration":"soon"}`), &req)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field != "currentGeneration" {
		t.Fatalf("error %v, want a type error naming currentGeneration", err)
	}
	if err := json.Unmarshal([]byte(`{"id":"t","currentGeneration":"5"}`), &req); err != nil || req.CurrentGeneration == nil || *req.CurrentGeneration != 5 {
		t.Fatalf("currentGeneration \"5\" = %v, %v", req.CurrentGeneration, err)
	}
}
