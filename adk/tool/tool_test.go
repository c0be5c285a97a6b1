package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type weatherIn struct {
	City  string   `json:"city" desc:"the city to look up"`
	Unit  string   `json:"unit,omitempty" enum:"celsius,fahrenheit"`
	Days  int      `json:"days,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	Inner struct {
		Flag bool `json:"flag"`
	} `json:"inner,omitempty"`
	hidden string
}

type weatherOut struct {
	Summary string  `json:"summary"`
	Temp    float64 `json:"temp"`
}

func TestFromFuncSchema(t *testing.T) {
	tl, err := tool.FromFunc("get_weather", "Weather of a city", func(_ context.Context, in weatherIn) (weatherOut, error) {
		return weatherOut{Summary: "sunny in " + in.City, Temp: 21.5}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := tl.Info(context.Background())
	b, _ := json.Marshal(info.Params)
	want := `{"type":"object","properties":{"city":{"type":"string","description":"the city to look up"},"days":{"type":"integer"},"inner":{"type":"object","properties":{"flag":{"type":"boolean"}},"required":["flag"]},"tags":{"type":"array","items":{"type":"string"}},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}`
	if string(b) != want {
		t.Fatalf("schema\n got %s\nwant %s", b, want)
	}
	out, err := tl.Run(context.Background(), `{"city":"Paris"}`)
	if err != nil || out != `{"summary":"sunny in Paris","temp":21.5}` {
		t.Fatalf("%s %v", out, err)
	}
	if _, err := tl.Run(context.Background(), `{"city":5}`); err == nil {
		t.Fatal("bad arguments accepted")
	}
	if _, err := tool.FromFunc("bad", "", func(context.Context, string) (string, error) { return "", nil }); err == nil {
		t.Fatal("non-struct argument type accepted")
	}
	if _, err := tool.FromFunc("bad", "", func(context.Context, struct{ C chan int }) (string, error) { return "", nil }); err == nil {
		t.Fatal("channel field accepted")
	}
}

func TestNode(t *testing.T) {
	// The three slow calls wait for one another: run one by one, they would
	// never finish (the context's deadline fails the test instead).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var arrived sync.WaitGroup
	arrived.Add(3)
	allThere := make(chan struct{})
	go func() { arrived.Wait(); close(allThere) }()
	slow, _ := tool.FromFunc("slow", "waits", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		arrived.Done()
		select {
		case <-allThere:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if in.N == 3 {
			return "", errors.New("three is bad")
		}
		return strings.Repeat("x", in.N), nil
	})
	boom, _ := tool.FromFunc("boom", "panics", func(context.Context, struct{}) (string, error) { panic("kaboom") })
	node, err := tool.NewNode(ctx, []tool.Tool{slow, boom})
	if err != nil {
		t.Fatal(err)
	}
	calls := []schema.ToolCall{
		{ID: "a", Function: schema.FunctionCall{Name: "slow", Arguments: `{"n":1}`}},
		{ID: "b", Function: schema.FunctionCall{Name: "slow", Arguments: `{"n":2}`}},
		{ID: "c", Function: schema.FunctionCall{Name: "slow", Arguments: `{"n":3}`}},
		{ID: "d", Function: schema.FunctionCall{Name: "boom"}},
		{ID: "e", Function: schema.FunctionCall{Name: "nope"}},
	}
	got, err := node.Run(ctx, calls, nil)
	var pe *tool.PanicError
	if !errors.As(err, &pe) || pe.Tool != "boom" || pe.Value != "kaboom" || len(pe.Stack) == 0 {
		t.Fatalf("the panic came back as %v", err)
	}
	want := []string{"x", "xx", "error: three is bad", "error: tool boom panicked: kaboom", `error: there is no tool "nope"; the tools are boom, slow`}
	for i, m := range got {
		if m.Role != schema.Tool || m.ToolCallID != calls[i].ID || m.ToolName != calls[i].Function.Name || m.Content != want[i] {
			t.Errorf("result %d = %+v, want %q", i, m, want[i])
		}
	}
	if _, err := tool.NewNode(ctx, []tool.Tool{slow, slow}); err == nil {
		t.Fatal("duplicate tool names accepted")
	}
}
