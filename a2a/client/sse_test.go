package client

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func readAll(t *testing.T, in string, max int) ([]sseEvent, error) {
	t.Helper()
	r := newSSEReader(strings.NewReader(in), max, nil)
	var out []sseEvent
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		ev.Data = bytes.Clone(ev.Data) // it is the reader's until the next event
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
	}{
		{"basic", "id: 1\ndata: {\"a\":1}\n\n", []sseEvent{{"1", []byte(`{"a":1}`)}}},
		{"crlf", "id: 7\r\ndata: x\r\n\r\n", []sseEvent{{"7", []byte("x")}}},
		{"multiline", "data: a\ndata: b\n\n", []sseEvent{{"", []byte("a\nb")}}},
		{"comments and keepalive", ": keep-alive\n\n: x\ndata: y\n\n", []sseEvent{{"", []byte("y")}}},
		{"no space", "data:z\nid:3\n\n", []sseEvent{{"3", []byte("z")}}},
		{"id does not leak", "id: 1\ndata: a\n\ndata: b\n\n", []sseEvent{{"1", []byte("a")}, {"", []byte("b")}}},
		{"event field ignored", "event: message\ndata: m\n\n", []sseEvent{{"", []byte("m")}}},
		{"unterminated last event dropped", "data: a\n\ndata: b\n", []sseEvent{{"", []byte("a")}}},
		{"lone id not dispatched", "id: 5\n\ndata: c\n\n", []sseEvent{{"", []byte("c")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, tt.in, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events %q, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if got[i].ID != tt.want[i].ID || string(got[i].Data) != string(tt.want[i].Data) {
					t.Fatalf("event %d = %q/%q, want %q/%q", i, got[i].ID, got[i].Data, tt.want[i].ID, tt.want[i].Data)
				}
			}
		})
	}
}

func TestSSEReaderLimit(t *testing.T) {
	big := "data: " + strings.Repeat("x", 100) + "\n\n"
	if _, err := readAll(t, big, 50); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("err = %v, want errEventTooLarge", err)
	}
	long := "data: " + strings.Repeat("y", 40<<10) + "\n\n" // longer than the read buffer
	got, err := readAll(t, long, 1<<20)
	if err != nil || len(got) != 1 || len(got[0].Data) != 40<<10 {
		t.Fatalf("long line: %d events, err %v", len(got), err)
	}
	if _, err := readAll(t, long, 20<<10); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("long line over limit: err = %v", err)
	}
}

// FuzzSSEReader checks that no input crashes the reader or yields an event
// over the limit, and that every event has data.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"id: 1\ndata: x\n\n", ": c\r\n\r\ndata:a\ndata:b\n\n", "data", "\n\n\n", "id: \x00\ndata: q\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newSSEReader(strings.NewReader(string(b)), 256, nil)
		for range len(b) + 1 {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > 256 {
				t.Fatalf("event of %d bytes over the 256 limit", len(ev.Data))
			}
		}
		t.Fatalf("more events than input bytes")
	})
}
