package httpbind

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// recorder is a StreamBody in memory.
type recorder struct {
	bytes.Buffer
	flushes int
}

func (r *recorder) Flush() error { r.flushes++; return nil }

// streamTo is an Exchange whose stream is a recorder: the rest of the
// Exchange is not used by EventWriter.
type streamTo struct {
	Exchange
	body *recorder
}

func (x streamTo) Stream() StreamBody { return x.body }

func TestEventFormat(t *testing.T) {
	for _, tt := range []struct {
		name, id, event, data, want string
	}{
		{"data", "", "", `{"a":1}`, "data: {\"a\":1}\n\n"},
		{"id and data", "7", "", `{}`, "id: 7\ndata: {}\n\n"},
		{"typed", "", "error", `{"error":{}}`, "event: error\ndata: {\"error\":{}}\n\n"},
		{"line breaks", "1", "", "a\nb\r\nc\rd", "id: 1\ndata: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"no data", "2", "", "", "id: 2\n\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := new(recorder)
			w := NewEventWriter(streamTo{body: rec}, time.Hour)
			defer w.Close()
			if err := w.Event(tt.id, tt.event, []byte(tt.data), true); err != nil {
				t.Fatal(err)
			}
			if got := rec.String(); got != tt.want {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
		})
	}
}

// The last event is not flushed by the writer (the server ends the body
// and flushes it); nothing is written after Close.
func TestEventWriterEnd(t *testing.T) {
	rec := new(recorder)
	w := NewEventWriter(streamTo{body: rec}, time.Hour)
	if err := w.Event("1", "", []byte("{}"), true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if rec.flushes != 0 {
		t.Errorf("%d flushes of the last event", rec.flushes)
	}
	if err := w.Event("2", "", []byte("{}"), true); !errors.Is(err, errStreamClosed) {
		t.Errorf("an event after Close: %v", err)
	}
	if rec.String() != "id: 1\ndata: {}\n\n" {
		t.Errorf("wrote %q", rec.String())
	}
}
