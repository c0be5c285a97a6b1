package bridge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// FuzzDecoder feeds a RemoteAgent's decoder any sequence of A2A events (as
// a remote server might send them, with any metadata): it turns them into
// ADK events or errors, never panics, and leaves no stream open.
func FuzzDecoder(f *testing.F) {
	seeds := []string{
		`[{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}},{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"hi"}]},"lastChunk":true}},{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}]`,
		`[{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"metadata":{"a2amesh.adk.event":{"streaming":true,"output":true,"role":"assistant"}}}},{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"y"}]},"append":true,"lastChunk":true,"metadata":{"a2amesh.adk.event":{"message":{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"f","arguments":"{}"}}]},"stream_error":"boom"}}}}]`,
		`[{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":{"a2amesh.adk.event":{"agent":"A","run_path":[{"agent":"A"}],"output":true,"role":"tool","message":{"role":"tool","content":"r"},"action":{"transfer_to_agent":{"dest_agent_name":"B"}},"customized_output":{"k":1}}}}},{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"?"}]}},"metadata":{"a2amesh.adk.result":{"session_values":{"k":{"type":"int","value":3}},"interrupt":{"data":"q","points":[{"id":"A#1","agent":"A"}]}}}}}]`,
		`[{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_FAILED"},"metadata":{"a2amesh.adk.event":{"error":"bad"},"a2amesh.adk.result":{"session_values":"not an object"}}}}]`,
		`[{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"direct"}]}}]`,
		`[{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":true}},{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_REJECTED"},"metadata":{"a2amesh.adk.event":[1,2]}}}]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	r := &RemoteAgent{name: "Remote", url: "http://127.0.0.1:1/"}
	f.Fuzz(func(t *testing.T, data []byte) {
		var wire []json.RawMessage
		if json.Unmarshal(data, &wire) != nil {
			return
		}
		var events []a2a.Event
		for _, w := range wire {
			var sr a2a.StreamResponse
			if json.Unmarshal(w, &sr) != nil {
				return // the a2a decoder refuses it before the bridge sees it
			}
			ev, err := sr.Event()
			if err != nil {
				return
			}
			events = append(events, ev)
		}
		it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
		d := &decoder{agent: r, ctx: context.Background(), gen: gen, streams: map[string]*schema.StreamWriter[*schema.Message]{}}
		for _, ev := range events {
			if d.event(ev) {
				break
			}
		}
		d.closeStreams(context.Canceled)
		gen.Close()
		for ev, ok := it.Next(); ok; ev, ok = it.Next() {
			if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.IsStreaming {
				// Every stream ends: it was closed, failed or cut above.
				if _, err := ev.Output.MessageOutput.GetMessage(); err != nil {
					continue
				}
			}
		}
	})
}
