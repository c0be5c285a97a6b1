package a2a

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// decodeSeeds are 1.0 payloads of every shape the fast decoder reads.
var decodeSeeds = []string{
	`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"},{"raw":"aGk=","mediaType":"x/y","filename":"f"},{"url":"u"},{"data":{"a":[1,null]}}],"metadata":{"k":{"n":1.5}}},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":0,"returnImmediately":true,"ifGenerationMatch":"3"},"metadata":{"x":"y"},"tenant":"t"}`,
	`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-01-01T00:00:00Z"},"history":[{"messageId":"m","role":2,"parts":[]}],"artifacts":[{"artifactId":"a","name":"n","description":"d","parts":[{"text":""}],"extensions":["e"]}],"metadata":{},"generation":7}}`,
	`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":5,"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}],"referenceTaskIds":["a"],"extensions":null}},"metadata":{"a2amesh.adk.result":{}},"generation":"12"}}`,
	`{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"","metadata":{"m":true}}]},"append":true,"lastChunk":false,"generation":null}}`,
	`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":null}],"kind":"message"}}`,
	`{"parts":[{"raw":"-_-_"}]}`, `{"message":null}`, `{}`, `null`,
	`{"status":{"state":"TASK_STATE_UNSPECIFIED","timestamp":null},"id":"\u00e9"}`,
	`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","url":"b"}]}`,
	`{"messageId":"m","Role":"ROLE_USER"}`, `{"task":{"id":"a"},"task":{"contextId":"b"}}`,
	`{"task":{"generation":1.5}}`, `{"task":{"generation":"x"}}`, `{"statusUpdate":{"generation":true}}`,
	`{"task":{"generation":1,"Generation":2}}`, `{"artifactUpdate":{"generation":"-1"}}`,
	`{"configuration":{"ifGenerationMatch":null}}`, `{"configuration":{"ifGenerationMatch":"9223372036854775808"}}`,
	`{"generation":9223372036854775807}`,
}

// TestFastDecodeTakesSeeds keeps the fast path honest: the ordinary
// payloads must not fall back to encoding/json.
func TestFastDecodeTakesSeeds(t *testing.T) {
	task, err := AppendJSON(nil, StreamResponse{Task: richTask()})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append([]string{string(task)}, append(decodeSeeds[:4], meshEvent)...) {
		r := fastjson.New([]byte(s))
		var v StreamResponse
		readStreamResponse(&r, &v)
		if !r.End() {
			var w SendMessageRequest
			r = fastjson.New([]byte(s))
			readSendRequest(&r, &w)
		}
		if !r.End() {
			t.Errorf("fast path declined %s", s)
		}
	}
}

// FuzzDecode10 checks the fast decoder against encoding/json: the same
// value, and an error exactly when encoding/json has one.
func FuzzDecode10(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameAsStd[StreamResponse](t, b)
		sameAsStd[SendMessageRequest](t, b)
		sameAsStd[Task](t, b)
		sameAsStd[Message](t, b)
		sameAsStd[TaskStatusUpdateEvent](t, b)
		sameAsStd[TaskArtifactUpdateEvent](t, b)
	})
}

func sameAsStd[T any](t *testing.T, b []byte) {
	var fast, std T
	ferr := Unmarshal(b, &fast)
	serr := json.Unmarshal(b, &std)
	if (ferr == nil) != (serr == nil) {
		t.Fatalf("%T %q: fast error %v, encoding/json error %v", fast, b, ferr, serr)
	}
	if ferr == nil && !reflect.DeepEqual(fast, std) {
		t.Fatalf("%T %q:\n fast %#v\n  std %#v", fast, b, fast, std)
	}
}

func TestUnmarshalMatchesEncodingJSON(t *testing.T) {
	for _, s := range decodeSeeds {
		sameAsStd[StreamResponse](t, []byte(s))
		sameAsStd[SendMessageRequest](t, []byte(s))
		sameAsStd[Task](t, []byte(s))
		sameAsStd[Message](t, []byte(s))
	}
}

func BenchmarkDecodeStreamResponse(b *testing.B) {
	data, err := AppendJSON(nil, StreamResponse{Task: richTask()})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v StreamResponse
			if err := Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v StreamResponse
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A bridge event as it travels between agents of the mesh.
const meshEvent = `{"artifactUpdate":{"taskId":"01a1fd2f-fbd1-734b-bda2-d85633dff9e0","contextId":"01a1fd2f-fbd1-734d-a240-cb305d4b39d4","artifact":{"artifactId":"531a599a-1f50-4eb4-a2f7-7d1e33c91490","name":"leaf","parts":[{"text":"hello from leaf"}]},"lastChunk":true,"metadata":{"a2amesh.adk.event":{"agent":"leaf","run_path":[{"agent":"leaf"}],"role":"assistant","message":{"role":"assistant"},"output":true}}}}`

func BenchmarkDecodeMeshEvent(b *testing.B) {
	data := []byte(meshEvent)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v StreamResponse
			if err := Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v StreamResponse
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
