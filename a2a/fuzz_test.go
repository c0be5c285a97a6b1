package a2a

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzWire10 feeds arbitrary bytes to the 1.0 decoders of the objects that
// arrive from the network and checks that whatever decodes re-encodes to a
// fixed point: encode(decode(b)) decodes and re-encodes to the same bytes.
func FuzzWire10(f *testing.F) {
	for _, s := range []string{
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"},{"raw":"aGk=","mediaType":"x/y"},{"url":"u"},{"data":{"a":[1,null]}}]},"configuration":{"historyLength":0,"returnImmediately":true}}`,
		`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-01-01T00:00:00Z"}}}`,
		`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":5}}}`,
		`{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":""}]},"append":true}}`,
		`{"parts":[{"raw":"-_-_"}]}`, `{"message":null}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fixedPoint[SendMessageRequest](t, b)
		fixedPoint[StreamResponse](t, b)
		fixedPoint[Message](t, b)
	})
}

func fixedPoint[T any](t *testing.T, b []byte) {
	var v T
	if json.Unmarshal(b, &v) != nil {
		return
	}
	first, err := json.Marshal(&v)
	if err != nil {
		return // e.g. a map holding a value encoding/json cannot re-encode
	}
	var v2 T
	if err := json.Unmarshal(first, &v2); err != nil {
		t.Fatalf("%T: re-decode of own output failed: %v\ninput %q\noutput %s", v, err, b, first)
	}
	second, err := json.Marshal(&v2)
	if err != nil || !bytes.Equal(first, second) {
		t.Fatalf("%T: not a fixed point (%v)\n first %s\nsecond %s", v, err, first, second)
	}
}
