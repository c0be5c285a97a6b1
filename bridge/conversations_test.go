package bridge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// clock is a time the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func contents(msgs []*schema.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

func mustLoad(t *testing.T, m *MemoryConversations, id string) []string {
	t.Helper()
	msgs, err := m.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return contents(msgs)
}

func mustAppend(t *testing.T, m *MemoryConversations, id string, msgs ...*schema.Message) {
	t.Helper()
	if err := m.Append(context.Background(), id, msgs...); err != nil {
		t.Fatal(err)
	}
}

// The bytes a conversation holds, as the messages' text counts them: at
// most what the store counts.
func held(t *testing.T, m *MemoryConversations, ids ...string) (n int64) {
	t.Helper()
	for _, id := range ids {
		for _, c := range mustLoad(t, m, id) {
			n += int64(len(c))
		}
	}
	return n
}

// A conversation keeps its last MaxMessages messages, oldest first.
func TestConversationKeepsItsLastMessages(t *testing.T) {
	m := &MemoryConversations{MaxMessages: 4}
	for i := range 5 {
		mustAppend(t, m, "c", schema.UserMessage(fmt.Sprint("q", i)), schema.AssistantMessage(fmt.Sprint("a", i), nil))
	}
	if got := strings.Join(mustLoad(t, m, "c"), " "); got != "q3 a3 q4 a4" {
		t.Fatalf("conversation %q", got)
	}
	if got := mustLoad(t, m, "other"); got != nil {
		t.Fatalf("an unknown context has %q", got)
	}
}

// One message larger than a conversation may hold is not kept, and the
// conversation stays within its bytes.
func TestConversationBytes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int64 // MaxContextBytes
		msgs  []*schema.Message
		want  []string // the messages kept, by their first two bytes
	}{
		{"a huge question", 0, []*schema.Message{schema.UserMessage(strings.Repeat("q", 2<<20)), schema.AssistantMessage("no", nil)},
			[]string{"no"}},
		{"huge tool arguments", 64 << 10, []*schema.Message{
			schema.UserMessage("book"),
			schema.AssistantMessage("", []schema.ToolCall{{ID: "1", Function: schema.FunctionCall{Name: "book", Arguments: strings.Repeat("x", 100<<10)}}}),
			schema.AssistantMessage("booked", nil)},
			[]string{"bo"}},
		{"a huge image", 64 << 10, []*schema.Message{
			{Role: schema.User, Content: "look", MultiContent: []schema.ContentPart{{Type: schema.ContentImageURL, URL: "data:image/png;base64," + strings.Repeat("A", 100<<10)}}},
			schema.AssistantMessage("nice", nil)},
			[]string{"ni"}},
		{"many turns", 64 << 10, func() (msgs []*schema.Message) {
			for i := range 20 {
				msgs = append(msgs, schema.UserMessage(fmt.Sprintf("%02d%s", i, strings.Repeat("q", 12<<10))))
			}
			return msgs
		}(), []string{"15", "16", "17", "18", "19"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &MemoryConversations{MaxContextBytes: tc.limit}
			mustAppend(t, m, "c", tc.msgs...)
			var got []string
			for _, c := range mustLoad(t, m, "c") {
				got = append(got, c[:min(2, len(c))])
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("kept %q, want %q", got, tc.want)
			}
			limit := tc.limit
			if limit == 0 {
				limit = 1 << 20
			}
			if m.bytes > limit || held(t, m, "c") > m.bytes {
				t.Fatalf("%d bytes counted (%d of text), more than %d", m.bytes, held(t, m, "c"), limit)
			}
		})
	}
}

// All conversations together stay within MaxBytes: the least recently
// appended go first.
func TestConversationsBytes(t *testing.T) {
	const limit = 1 << 20
	m := &MemoryConversations{MaxBytes: limit}
	var ids []string
	for i := range 100 {
		id := fmt.Sprint("c", i)
		ids = append(ids, id)
		mustAppend(t, m, id, schema.UserMessage(strings.Repeat("q", 60<<10)), schema.AssistantMessage(id, nil))
		if m.bytes > limit {
			t.Fatalf("after %d contexts: %d bytes counted, more than %d", i+1, m.bytes, limit)
		}
	}
	if got := held(t, m, ids...); got > m.bytes || got < limit/2 {
		t.Fatalf("%d bytes of text held, %d counted", got, m.bytes)
	}
	if got := mustLoad(t, m, "c99"); len(got) != 2 || got[1] != "c99" {
		t.Fatalf("the latest conversation: %d messages", len(got))
	}
	if got := mustLoad(t, m, "c0"); got != nil {
		t.Fatalf("the first conversation is still there: %d messages", len(got))
	}
	if len(m.byID) > 16 {
		t.Fatalf("%d conversations of about 60 KiB kept in %d bytes", len(m.byID), limit)
	}
}

// A conversation not appended to for MaxAge is forgotten, and its memory
// goes at the next call, whichever context it names.
func TestConversationsAge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		maxAge time.Duration
		want   time.Duration // 0: never forgotten
	}{
		{"default", 0, 10 * time.Minute},
		{"an hour", time.Hour, time.Hour},
		{"no limit", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
			m := &MemoryConversations{MaxAge: tc.maxAge, now: clk.now}
			start := clk.t
			mustAppend(t, m, "old", schema.UserMessage("q"), schema.AssistantMessage("a", nil))
			clk.t = start.Add(time.Minute)
			mustAppend(t, m, "new", schema.UserMessage("q"), schema.AssistantMessage("a", nil))
			if tc.want == 0 {
				clk.t = start.Add(24 * 365 * time.Hour)
				if len(mustLoad(t, m, "old")) != 2 || len(mustLoad(t, m, "new")) != 2 {
					t.Fatal("a conversation was forgotten without an age limit")
				}
				return
			}
			clk.t = start.Add(tc.want - time.Nanosecond)
			if len(mustLoad(t, m, "old")) != 2 {
				t.Fatal("forgotten before its age")
			}
			clk.t = start.Add(tc.want)
			if got := mustLoad(t, m, "old"); got != nil {
				t.Fatalf("still there at its age: %q", got)
			}
			if len(mustLoad(t, m, "new")) != 2 {
				t.Fatal("the newer conversation went too")
			}
			// Appending again makes a conversation young again.
			mustAppend(t, m, "new", schema.UserMessage("q2"))
			clk.t = start.Add(time.Minute + tc.want)
			if len(mustLoad(t, m, "new")) != 3 {
				t.Fatal("forgotten though appended to")
			}
			clk.t = clk.t.Add(tc.want)
			if got := mustLoad(t, m, "unknown"); got != nil || len(m.byID) != 0 || m.bytes != 0 {
				t.Fatalf("%d conversations and %d bytes left", len(m.byID), m.bytes)
			}
		})
	}
}
