package a2av03

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzWire03 feeds arbitrary bytes to the 0.3 decoders and checks that a
// decoded event or send request survives 0.3 -> 1.0 -> 0.3 -> 1.0 -> 0.3
// as the same bytes after the first conversion.
func FuzzWire03(f *testing.F) {
	for _, s := range []string{
		`{"kind":"task","id":"t","contextId":"c","status":{"state":"working","timestamp":"2025-01-01T00:00:00.123456"},"history":[{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}]}]}`,
		`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"completed"},"final":true}`,
		`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"file","file":{"bytes":"aGk=","name":"n"}},{"kind":"data","data":{"k":1}}]}}`,
		`{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"file","file":{"uri":"https://x"}}]}`,
		`{"message":{"kind":"message","messageId":"m","role":"user","parts":[]},"configuration":{"blocking":true,"pushNotificationConfig":{"url":"u","authentication":{"schemes":[]}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if ev, err := DecodeEvent(b); err == nil {
			first, err := json.Marshal(FromEvent(ev))
			if err != nil {
				return
			}
			ev2, err := DecodeEvent(first)
			if err != nil {
				t.Fatalf("re-decode failed: %v\ninput %q\noutput %s", err, b, first)
			}
			second, _ := json.Marshal(FromEvent(ev2))
			if !bytes.Equal(first, second) {
				t.Fatalf("not a fixed point\n first %s\nsecond %s", first, second)
			}
		}
		var p MessageSendParams
		if json.Unmarshal(b, &p) == nil {
			if req, err := p.ToSendMessageRequest(); err == nil {
				if _, err := json.Marshal(FromSendMessageRequest(req)); err != nil {
					t.Logf("unencodable: %v", err)
				}
			}
		}
	})
}
