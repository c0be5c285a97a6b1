package pbconv

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// checkJSONValue wants appendJSONValue and appendJSONStruct, when they
// take js, to write what protojson reads from it, and reports whether
// appendJSONValue took it.
func checkJSONValue(t *testing.T, js []byte) bool {
	t.Helper()
	direct, ok := appendJSONValue(nil, js)
	if ok {
		var want structpb.Value
		if err := want.UnmarshalJSON(js); err != nil {
			t.Fatalf("transcoded %q, which protojson refuses: %v", js, err)
		}
		var got structpb.Value
		if err := proto.Unmarshal(direct, &got); err != nil {
			t.Fatalf("transcoding of %q does not decode: %v", js, err)
		}
		if !proto.Equal(&got, &want) {
			t.Fatalf("transcoding of %q reads as %v, protojson's as %v", js, &got, &want)
		}
	}
	if direct, sok := appendJSONStruct(nil, js); sok {
		var want structpb.Struct
		if err := want.UnmarshalJSON(js); err != nil {
			t.Fatalf("transcoded %q as a Struct, which protojson refuses: %v", js, err)
		}
		var got structpb.Struct
		if err := proto.Unmarshal(direct, &got); err != nil {
			t.Fatalf("Struct transcoding of %q does not decode: %v", js, err)
		}
		if !proto.Equal(&got, &want) {
			t.Fatalf("Struct transcoding of %q reads as %v, protojson's as %v", js, &got, &want)
		}
	}
	return ok
}

func TestJSONValue(t *testing.T) {
	for _, tt := range []struct {
		js   string
		take bool
	}{
		{`null`, true},
		{`true`, true},
		{` false `, true},
		{`0`, true},
		{`-0`, true},
		{`-12.5e-3`, true},
		{`1e308`, true},
		{`""`, true},
		{`"a\"\\\/\b\f\n\r\t\u00e9\u2028"`, true},
		{`"é😀"`, true},
		{`"\ud83d\ude00"`, false}, // escaped surrogates: left to protojson
		{`"\uD800"`, false},
		{`[]`, true},
		{`{}`, true},
		{`{"a":{"b":[1,{"c":null}]},"d":[[],{}]}`, true},
		{`{"a":1,"a":2}`, false}, // protojson refuses a repeated name
		{`{"a\n":1}`, false},     // escaped or non-ASCII names: left to protojson
		{`{"é":1}`, false},
		{`1e400`, false}, // out of range
		{`[1,]`, false},
		{`{"a":1}x`, false},
		{"\"\xff\"", false},
		{`nul`, false},
		{``, false},
	} {
		if got := checkJSONValue(t, []byte(tt.js)); got != tt.take {
			t.Errorf("appendJSONValue(%q) took it: %v, want %v", tt.js, got, tt.take)
		}
	}
}

// FuzzJSONValue wants the JSON the transcoder takes to be written as
// protojson reads it, as a Value and as a Struct.
func FuzzJSONValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",true,null],"b":{"c":2.5}}`, `"\u00e9\n"`, `{"a":1,"a":2}`, `[1e999]`, `-0.0e+1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		checkJSONValue(t, js)
	})
}
