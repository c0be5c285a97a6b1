package packjson

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

const (
	taskID = "01a21d58-841b-7eef-9333-fa58cb24c610"
	ctxID  = "01a21d58-841b-7ef1-8ffb-6e92a5cf339a"
)

// echoTask is what the echo agent's finished task encodes to.
var echoTask = `{"id":"` + taskID + `","contextId":"` + ctxID + `","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-27T14:11:09.98Z"},` +
	`"artifacts":[{"artifactId":"echo","name":"echo","parts":[{"text":"hello"}]}],"history":[{"messageId":"m-1","contextId":"` + ctxID +
	`","taskId":"` + taskID + `","role":"ROLE_USER","parts":[{"text":"hello"}]}]}`

func TestRoundTrip(t *testing.T) {
	many := make([]string, 400) // more literals than the table holds
	for i := range many {
		many[i] = fmt.Sprintf(`{"k%03d":"v%03d","again":"v%03d"}`, i, i, i)
	}
	tests := []struct {
		name  string
		known []string
		docs  []string
	}{
		{"none", nil, nil},
		{"empty document", nil, []string{""}},
		{"echo task", []string{taskID, ctxID}, []string{echoTask}},
		{"echo task, nothing known", nil, []string{echoTask}},
		{"events sharing a table", []string{taskID}, []string{
			`{"task":{"id":"` + taskID + `","contextId":"` + ctxID + `","status":{"state":"TASK_STATE_SUBMITTED"}}}`,
			`{"artifactUpdate":{"taskId":"` + taskID + `","contextId":"` + ctxID + `","artifact":{"artifactId":"echo","parts":[{"text":"hello"}]},"lastChunk":true}}`,
			`{"statusUpdate":{"taskId":"` + taskID + `","contextId":"` + ctxID + `","status":{"state":"TASK_STATE_COMPLETED"}}}`,
		}},
		{"escapes", []string{`a"b`}, []string{`{"q":"a\"b","bs":"\\","u":"\u00e9\n","e":"","x":"a\"b"}`, `"\\"`}},
		{"names as values, values as names", nil, []string{`{"text":"text","name":"id","TASK_STATE_WORKING":"state","id" :1}`}},
		{"names after anything", nil, []string{`"id":1`, `,"id":2`, `{,"id":3`, `["id":4,"name":5]`, `{"a":{"id":6},"id":7}`}},
		{"numbers and literals", nil, []string{`[1,-2.5e3,true,false,null,{"a":[]}]`}},
		{"non-ASCII", nil, []string{`{"text":"héllo wörld","name":"héllo wörld"}`}},
		{"a full table", nil, []string{strings.Join(many, ",")}},
		{"a long document", nil, []string{`"` + strings.Repeat("x", 300) + `"`, `"` + strings.Repeat("x", 300) + `"`}},
		{"control byte in a string", nil, []string{"{\"a\":\"x\ty\",\"b\":\"x\ty\"}"}},
		{"control byte: kept raw", nil, []string{"{\"a\":\n1}", `{"b":2}`}},
		{"unterminated string: kept raw", nil, []string{`{"a":"b`}},
		{"not JSON", []string{"x"}, []string{`x"x"y\`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := make([][]byte, len(tt.docs))
			total := 0
			for i, d := range tt.docs {
				docs[i] = []byte(d)
				total += len(d)
			}
			pack := Pack([]byte("prefix"), tt.known, docs...)
			if !bytes.HasPrefix(pack, []byte("prefix")) {
				t.Fatalf("Pack overwrote dst: %q", pack)
			}
			got, err := Unpack(pack[len("prefix"):], tt.known)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(docs) {
				t.Fatalf("unpacked %d documents, want %d", len(got), len(docs))
			}
			for i := range docs {
				if !bytes.Equal(got[i], docs[i]) {
					t.Errorf("document %d:\n got %q\nwant %q", i, got[i], docs[i])
				}
			}
			t.Logf("%d bytes packed in %d", total, len(pack)-len("prefix"))
		})
	}
}

// The echo agent's finished task packs into less than a third of its
// JSON with its ids known, into less than half without.
func TestPackedSize(t *testing.T) {
	for _, tt := range []struct {
		known []string
		most  int
	}{
		{[]string{taskID, ctxID}, len(echoTask) / 3},
		{nil, len(echoTask) / 2},
	} {
		if n := len(Pack(nil, tt.known, []byte(echoTask))); n > tt.most {
			t.Errorf("with %d known strings, %d bytes of JSON pack into %d, want at most %d", len(tt.known), len(echoTask), n, tt.most)
		}
	}
}

func TestUnpackCorrupt(t *testing.T) {
	good := Pack(nil, []string{taskID}, []byte(echoTask))
	for _, pack := range [][]byte{
		nil,
		{0x07},
		{formatPacked},                  // no length
		{formatPacked, 1, 5, '{'},       // frame past the end
		{formatPacked, 2, 2, '"', 'a'},  // unterminated string
		{formatPacked, 5, 1, ref2},      // reference cut short
		{formatPacked, 5, 1, ref2 + 1},  // reserved byte
		{formatPacked, 9, 2, ref2, 200}, // past the table
		{formatPacked, 5, 1, 0},         // a member name first
		{formatRaw, 1, 0x80},            // bad frame
		good[:len(good)-1],
	} {
		if docs, err := Unpack(pack, nil); err == nil {
			t.Errorf("Unpack(%q) = %q, want an error", pack, docs)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(echoTask), "x")
	f.Add([]byte(`{"a":"\"","b":"\\"}`), `\"`)
	f.Fuzz(func(t *testing.T, doc []byte, known string) {
		k := []string{known, taskID}
		pack := Pack(nil, k, doc, doc)
		got, err := Unpack(pack, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !bytes.Equal(got[0], doc) || !bytes.Equal(got[1], doc) {
			t.Fatalf("round trip of %q: %q", doc, got)
		}
		_, _ = Unpack(doc, k) // anything: an error, never a panic
	})
}

func BenchmarkPack(b *testing.B) {
	doc := []byte(echoTask)
	known := []string{taskID, ctxID}
	var dst []byte
	for b.Loop() {
		dst = Pack(dst[:0], known, doc)
	}
}

func BenchmarkUnpack(b *testing.B) {
	known := []string{taskID, ctxID}
	pack := Pack(nil, known, []byte(echoTask))
	for b.Loop() {
		if _, err := Unpack(pack, known); err != nil {
			b.Fatal(err)
		}
	}
}
