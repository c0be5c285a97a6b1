package bridge

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// metaSeeds are metadata values as the mesh sends them.
var metaSeeds = []string{
	`{"agent":"leaf","run_path":[{"agent":"router"},{"agent":"leaf"}],"role":"assistant","message":{"role":"assistant","content":"hi","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"output":true,"streaming":true}`,
	`{"agent":"w","tool_name":"t","message":{"role":"tool","content":"r","tool_call_id":"c1","tool_name":"t","name":"n"},"error":"e","stream_error":"s","customized_output":{"k":[1,2]},"action":null}`,
	`{"run_path":[{"agent":"a"}],"callers":[{"name":"r","description":"d"}],"session_values":{"k":{"type":"string","value":"v"}},"input":[{"role":"user","content":"hello"},null,{"role":"user","content":"For context: [r] said: hi","extra":{"a2amesh.adk.context":"r"}}],"streaming":false,"resume_task":"t"}`,
	`{"run_path":[{"agent":"a"}],"callers":[{"name":"r","description":"d","skills":[{"id":"s","name":"S","description":"does s","tags":["t"],"examples":["do s <now>"]},{"id":"","name":"","tags":[],"examples":null},null]},{"name":"q"}],"session_values":{"k":{"type":"string","value":"v"}},"input":[{"role":"user","content":"hello"},null],"streaming":false,"resume_task":"t"}`,
	`{"session_values":{}}`, `{"session_values":null}`, `{}`, `{"run_path":[]}`, `{"input":[]}`,
	`{"agent":1}`, `{"Agent":"x"}`, `{"message":{"role":"user","extra":{}}}`, `{"run_path":[null]}`, `{"message":{"tool_calls":[{"index":1.5}]}}`,
	`{"action":{"exit":true}}`, `{"resume":{"p":"yes"}}`, `{"message":{"tool_calls":[{"index":-0}]}}`,
	`{"input":[{"role":"user","extra":{"a2amesh.adk.context":1}}]}`, `{"input":[{"role":"user","extra":{"a2amesh.adk.context":"r","k":"v"}}]}`,
	`{"message":{"role":"user","extra":{"a2amesh.adk.context":"<&>"}}}`, `{"message":{"role":"user","extra":null}}`,
}

// A context message keeps its mark across the wire, on the fast paths
// both ways: after a transfer it makes up most of a remote agent's input.
func TestContextMarkCrossesTheWire(t *testing.T) {
	marked := &schema.Message{Role: schema.User, Content: "For context: [R] said: <hi>", Extra: map[string]any{adk.ContextMessageKey: "R"}}
	in := &runMeta{Input: []*schema.Message{schema.UserMessage("ask"), marked}}
	if !plainEncodable(marked) {
		t.Fatal("the context mark leaves the writer's fast path")
	}
	b, err := in.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := fastjson.AppendReflect(nil, in); !bytes.Equal(b, want) {
		t.Fatalf("wrote %s\nwant  %s", b, want)
	}
	var plain any
	if err := json.Unmarshal(b, &plain); err != nil {
		t.Fatal(err)
	}
	out, ok := fromPlain[runMeta](plain)
	if !ok {
		t.Fatalf("the reader's fast path declines %s", b)
	}
	if !reflect.DeepEqual(out.Input, in.Input) || adk.IsContext(out.Input[0]) || !adk.IsContext(out.Input[1]) {
		t.Fatalf("read back %v", out.Input)
	}
}

func TestFromPlainTakesTheMeshShapes(t *testing.T) {
	for _, s := range metaSeeds[:8] {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		_, e := fromPlain[eventMeta](v)
		_, r := fromPlain[runMeta](v)
		_, res := fromPlain[resultMeta](v)
		if !e && !r && !res {
			t.Errorf("no fast path took %s", s)
		}
		sameAsRoundTrip[eventMeta](t, v)
		sameAsRoundTrip[runMeta](t, v)
		sameAsRoundTrip[resultMeta](t, v)
	}
}

// FuzzFromPlain checks the direct conversion against the JSON round trip
// it stands for.
func FuzzFromPlain(f *testing.F) {
	for _, s := range metaSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		sameAsRoundTrip[eventMeta](t, v)
		sameAsRoundTrip[runMeta](t, v)
		sameAsRoundTrip[resultMeta](t, v)
	})
}

func sameAsRoundTrip[T any](t *testing.T, v any) {
	t.Helper()
	fast, ok := fromPlain[T](v)
	if !ok {
		return
	}
	b, err := fastjson.AppendAny(nil, v)
	if err != nil {
		t.Fatalf("%T: taken, but the value does not encode: %v", fast, err)
	}
	var slow T
	if err := json.Unmarshal(b, &slow); err != nil {
		t.Fatalf("%T %s: taken, but encoding/json refuses it: %v", fast, b, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%T %s:\n fast %#v\n slow %#v", fast, b, fast, slow)
	}
}

// FuzzMetaAppendJSON checks the writers against encoding/json on values
// decoded from arbitrary JSON.
func FuzzMetaAppendJSON(f *testing.F) {
	for _, s := range metaSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"input":[null,{"role":"user","content":"<&>\u2028","multi_content":[{"type":"text","text":"x"}]}],"session_values":{ "a" : 1 },"resume":{"p":1}}`))
	f.Add([]byte(`{"message":{"role":"assistant","tool_calls":[{"function":{}}],"response_meta":{"finish_reason":"stop"}},"customized_output":[1, 2]}`))
	f.Add([]byte(`{"interrupt":{"data":"q","points":[{"id":"p","agent":"a","run_path":[]}]},"session_values":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sameAsEncodingJSON[eventMeta](t, b)
		sameAsEncodingJSON[runMeta](t, b)
		sameAsEncodingJSON[resultMeta](t, b)
	})
}

func sameAsEncodingJSON[T any, P interface {
	*T
	fastjson.Appender
}](t *testing.T, b []byte) {
	t.Helper()
	v := new(T)
	if json.Unmarshal(b, v) != nil {
		return
	}
	want, werr := fastjson.AppendReflect(nil, v)
	got, gerr := P(v).AppendJSON(nil)
	if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("%T from %s:\n got %s (%v)\nwant %s (%v)", v, b, got, gerr, want, werr)
	}
}

func TestMetaAppendJSONNil(t *testing.T) {
	for _, a := range []fastjson.Appender{(*eventMeta)(nil), (*runMeta)(nil), (*resultMeta)(nil)} {
		if b, err := a.AppendJSON(nil); err != nil || string(b) != "null" {
			t.Errorf("%T: %s %v", a, b, err)
		}
	}
}
