package schema

import (
	"errors"
	"io"
	"reflect"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func drain[T any](t *testing.T, r *StreamReader[T]) ([]T, error) {
	t.Helper()
	var out []T
	for {
		v, err := r.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, v)
	}
}

func TestPipe(t *testing.T) {
	r, w := Pipe[int]()
	go func() {
		for i := range 100 {
			w.Send(i)
		}
		w.Close()
	}()
	got, err := drain(t, r)
	if err != nil || len(got) != 100 || got[99] != 99 {
		t.Fatalf("got %d items, err %v", len(got), err)
	}

	r, w = Pipe[int]()
	w.Send(1)
	boom := errors.New("boom")
	w.Fail(boom)
	got, err = drain(t, r)
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Fatalf("failed stream: %v %v", got, err)
	}

	r, w = Pipe[int]()
	r.Close()
	if closed := w.Send(1); !closed {
		t.Fatal("Send after the reader closed did not report it")
	}
	if _, err := r.Recv(); !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("Recv after Close = %v", err)
	}
}

func TestPipeWriterNeverBlocks(t *testing.T) {
	r, w := Pipe[int]()
	for i := range 10000 { // nobody reads yet
		w.Send(i)
	}
	w.Close()
	got, err := drain(t, r)
	if err != nil || len(got) != 10000 {
		t.Fatalf("%d items, %v", len(got), err)
	}
}

func TestFromSliceAndFailed(t *testing.T) {
	got, err := drain(t, FromSlice([]string{"a", "b"}))
	if err != nil || !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("%v %v", got, err)
	}
	boom := errors.New("boom")
	if _, err := FailedStream[int](boom).Recv(); !errors.Is(err, boom) {
		t.Fatal(err)
	}
}

func TestCopy(t *testing.T) {
	r, w := Pipe[int]()
	copies := r.Copy(3)
	var wg sync.WaitGroup
	results := make([][]int, 3)
	for i, c := range copies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := drain(t, c)
			if err != nil {
				t.Error(err)
			}
			results[i] = got
		}()
	}
	for i := range 500 {
		w.Send(i)
	}
	w.Close()
	wg.Wait()
	for i, got := range results {
		if len(got) != 500 || got[0] != 0 || got[499] != 499 {
			t.Fatalf("copy %d got %d items", i, len(got))
		}
	}
}

func TestCopyCloseOneAndAll(t *testing.T) {
	r, w := Pipe[int]()
	copies := r.Copy(2)
	copies[0].Close()
	w.Send(1)
	w.Close()
	got, err := drain(t, copies[1])
	if err != nil || !reflect.DeepEqual(got, []int{1}) {
		t.Fatalf("remaining copy got %v, %v", got, err)
	}
	copies[1].Close()

	r, w = Pipe[int]()
	copies = r.Copy(2)
	copies[0].Close()
	copies[1].Close()
	if closed := w.Send(1); !closed {
		t.Fatal("closing every copy did not close the source")
	}
	copies[0].Close() // twice is fine
}

func intp(i int) *int { return &i }

func TestConcatMessages(t *testing.T) {
	chunks := []*Message{
		{Role: Assistant, Content: "Hel"},
		{Content: "lo", ToolCalls: []ToolCall{{Index: intp(0), ID: "c1", Type: "function", Function: FunctionCall{Name: "get_weather", Arguments: `{"ci`}}}},
		{ToolCalls: []ToolCall{{Index: intp(1), ID: "c2", Function: FunctionCall{Name: "clock", Arguments: `{}`}}}},
		{ToolCalls: []ToolCall{{Index: intp(0), Function: FunctionCall{Arguments: `ty":"Paris"}`}}}},
		{ResponseMeta: &ResponseMeta{FinishReason: "tool_calls", Usage: &Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}}, Extra: map[string]any{"k": 1}},
	}
	got, err := ConcatMessages(chunks)
	if err != nil {
		t.Fatal(err)
	}
	want := &Message{
		Role: Assistant, Content: "Hello",
		ToolCalls: []ToolCall{
			{Index: intp(0), ID: "c1", Type: "function", Function: FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}},
			{Index: intp(1), ID: "c2", Function: FunctionCall{Name: "clock", Arguments: `{}`}},
		},
		ResponseMeta: &ResponseMeta{FinishReason: "tool_calls", Usage: &Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}},
		Extra:        map[string]any{"k": 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if _, err := ConcatMessages([]*Message{{Role: User}, {Role: Assistant}}); err == nil {
		t.Fatal("mixed roles concatenated")
	}
	if _, err := ConcatMessages(nil); err == nil {
		t.Fatal("no chunks concatenated")
	}
	m, err := ConcatMessageStream(FromSlice(chunks))
	if err != nil || m.Content != "Hello" {
		t.Fatalf("stream: %v %v", m, err)
	}
}

func TestCopyOfCopy(t *testing.T) {
	r, w := Pipe[int]()
	first := r.Copy(2)
	w.Send(1)
	if v, _ := first[0].Recv(); v != 1 {
		t.Fatal("first copy")
	}
	// Copying a copy that has read item 1 yields copies that start after it.
	second := first[0].Copy(2)
	w.Send(2)
	w.Close()
	for i, c := range second {
		if got, err := drain(t, c); err != nil || !reflect.DeepEqual(got, []int{2}) {
			t.Fatalf("copy %d of the copy got %v, %v", i, got, err)
		}
	}
	if got, err := drain(t, first[1]); err != nil || !reflect.DeepEqual(got, []int{1, 2}) {
		t.Fatalf("the other copy got %v, %v", got, err)
	}

	// Closing every reader, copies of copies included, closes the source.
	r, w = Pipe[int]()
	first = r.Copy(2)
	second = first[1].Copy(3)
	first[0].Close()
	for _, c := range second {
		c.Close()
	}
	if closed := w.Send(1); !closed {
		t.Fatal("the source stayed open")
	}
	// Copies of a closed copy are closed.
	for _, c := range first[0].Copy(2) {
		if _, err := c.Recv(); !errors.Is(err, ErrStreamClosed) {
			t.Fatalf("copy of a closed copy: %v", err)
		}
	}
}

func TestSplitMessageRoundTrip(t *testing.T) {
	msg := &Message{Role: Assistant, Content: "héllo, wörld", ToolCalls: []ToolCall{
		{ID: "a", Type: "function", Function: FunctionCall{Name: "f", Arguments: `{"x":1}`}},
		{ID: "b", Type: "function", Function: FunctionCall{Name: "g", Arguments: `{}`}},
	}}
	for _, pieces := range []int{1, 3, 50} {
		chunks := SplitMessage(msg, pieces)
		got, err := ConcatMessages(chunks)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != msg.Content || len(got.ToolCalls) != 2 || got.ToolCalls[0].Function != msg.ToolCalls[0].Function ||
			got.ToolCalls[1].ID != "b" || got.ResponseMeta.FinishReason != "tool_calls" {
			t.Fatalf("%d pieces: %+v", pieces, got)
		}
	}
}
