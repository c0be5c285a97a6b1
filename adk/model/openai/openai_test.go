package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"
	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/openai"
	"github.com/a2amesh/a2amesh/adk/model/openai/openaitest"
	"github.com/a2amesh/a2amesh/adk/schema"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var weatherTool = &schema.ToolInfo{
	Name: "get_weather", Desc: "Weather of a city",
	Params: schema.ObjectSchema(map[string]*schema.JSONSchema{"city": {Type: "string", Description: "the city"}}),
}

func newModel(t *testing.T, srv *openaitest.Server, cfg openai.Config) model.ChatModel {
	t.Helper()
	cfg.BaseURL, cfg.APIKey, cfg.Model = srv.BaseURL(), "test-key", "test-model"
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(hc.CloseIdleConnections)
	cfg.HTTPClient = hc
	m, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func toolCallReply(req *goopenai.ChatCompletionRequest) openaitest.Reply {
	if req.Messages[len(req.Messages)-1].Role == "tool" {
		return openaitest.Reply{Content: "It is sunny in Paris.", Usage: schema.Usage{PromptTokens: 20, CompletionTokens: 6, TotalTokens: 26}}
	}
	return openaitest.Reply{
		ToolCalls: []schema.ToolCall{
			{ID: "call_1", Function: schema.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}},
			{ID: "call_2", Function: schema.FunctionCall{Name: "get_weather", Arguments: `{"city":"Berlin"}`}},
		},
		Usage: schema.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15},
	}
}

func TestGenerateWithTools(t *testing.T) {
	srv := openaitest.NewServer(toolCallReply)
	defer srv.Close()
	m, err := newModel(t, srv, openai.Config{}).WithTools([]*schema.ToolInfo{weatherTool})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	msgs := []*schema.Message{schema.SystemMessage("be brief"), schema.UserMessage("weather in Paris and Berlin?")}
	got, err := m.Generate(ctx, msgs, model.WithTemperature(0.2))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ToolCalls) != 2 || got.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || got.ToolCalls[1].ID != "call_2" {
		t.Fatalf("tool calls = %+v", got.ToolCalls)
	}
	if got.ResponseMeta.FinishReason != "tool_calls" || got.ResponseMeta.Usage.TotalTokens != 15 {
		t.Fatalf("meta = %+v", got.ResponseMeta)
	}
	req := srv.Requests()[0]
	if len(req.Tools) != 1 || req.Tools[0].Function.Name != "get_weather" || req.Model != "test-model" || req.Temperature != 0.2 {
		t.Fatalf("request = %+v", req)
	}
	msgs = append(msgs, got,
		schema.ToolMessage("sunny", "call_1", "get_weather"),
		schema.ToolMessage("rainy", "call_2", "get_weather"))
	final, err := m.Generate(ctx, msgs)
	if err != nil || final.Content != "It is sunny in Paris." || final.Role != schema.Assistant {
		t.Fatalf("final = %+v, %v", final, err)
	}
	sent := srv.Requests()[1].Messages
	if sent[2].ToolCalls[0].ID != "call_1" || sent[3].Role != "tool" || sent[3].ToolCallID != "call_1" {
		t.Fatalf("history sent = %+v", sent)
	}
}

func TestStreamToolCallDeltas(t *testing.T) {
	srv := openaitest.NewServer(toolCallReply)
	defer srv.Close()
	m, _ := newModel(t, srv, openai.Config{}).WithTools([]*schema.ToolInfo{weatherTool})
	s, err := m.Stream(context.Background(), []*schema.Message{schema.UserMessage("weather?")})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []*schema.Message
	for {
		c, err := s.Recv()
		if err != nil {
			break
		}
		chunks = append(chunks, c)
	}
	s.Close()
	if len(chunks) < 6 {
		t.Fatalf("only %d chunks: the arguments did not come in deltas", len(chunks))
	}
	got, err := schema.ConcatMessages(chunks)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ToolCalls) != 2 || got.ToolCalls[0].Function.Name != "get_weather" || got.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` ||
		got.ToolCalls[1].Function.Arguments != `{"city":"Berlin"}` || got.ToolCalls[1].ID != "call_2" {
		t.Fatalf("merged tool calls = %+v", got.ToolCalls)
	}
	if got.ResponseMeta == nil || got.ResponseMeta.FinishReason != "tool_calls" || got.ResponseMeta.Usage == nil || got.ResponseMeta.Usage.TotalTokens != 15 {
		t.Fatalf("meta = %+v", got.ResponseMeta)
	}
	if !srv.Requests()[0].Stream || !srv.Requests()[0].StreamOptions.IncludeUsage {
		t.Fatal("stream request lacks stream options")
	}
}

func TestStreamText(t *testing.T) {
	srv := openaitest.NewServer(func(*goopenai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Reply{Content: "streamed answer text"}
	})
	defer srv.Close()
	s, err := newModel(t, srv, openai.Config{}).Stream(context.Background(), []*schema.Message{schema.UserMessage("hi")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := schema.ConcatMessageStream(s)
	if err != nil || got.Content != "streamed answer text" || got.Role != schema.Assistant {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestRetries(t *testing.T) {
	var calls atomic.Int32
	srv := openaitest.NewServer(func(*goopenai.ChatCompletionRequest) openaitest.Reply {
		switch calls.Add(1) {
		case 1:
			return openaitest.Reply{Status: http.StatusTooManyRequests}
		case 2:
			return openaitest.Reply{Status: http.StatusBadGateway}
		}
		return openaitest.Reply{Content: "third time"}
	})
	defer srv.Close()
	m := newModel(t, srv, openai.Config{BaseBackoff: time.Millisecond})
	got, err := m.Generate(context.Background(), []*schema.Message{schema.UserMessage("hi")})
	if err != nil || got.Content != "third time" || calls.Load() != 3 {
		t.Fatalf("%+v %v after %d calls", got, err, calls.Load())
	}

	calls.Store(0)
	s, err := m.Stream(context.Background(), []*schema.Message{schema.UserMessage("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := schema.ConcatMessageStream(s); err != nil || got.Content != "third time" {
		t.Fatalf("stream after retries: %+v %v", got, err)
	}
}

func TestNoRetryOnClientError(t *testing.T) {
	var calls atomic.Int32
	srv := openaitest.NewServer(func(*goopenai.ChatCompletionRequest) openaitest.Reply {
		calls.Add(1)
		return openaitest.Reply{Status: http.StatusBadRequest}
	})
	defer srv.Close()
	_, err := newModel(t, srv, openai.Config{BaseBackoff: time.Millisecond}).Generate(context.Background(), []*schema.Message{schema.UserMessage("hi")})
	var ae *goopenai.APIError
	if !errors.As(err, &ae) || ae.HTTPStatusCode != 400 || calls.Load() != 1 {
		t.Fatalf("err %v after %d calls", err, calls.Load())
	}
	_, err = newModel(t, srv, openai.Config{MaxRetries: -1}).Generate(context.Background(), []*schema.Message{schema.UserMessage("hi")})
	if err == nil {
		t.Fatal("no error")
	}
}

func TestTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := openaitest.NewServer(func(*goopenai.ChatCompletionRequest) openaitest.Reply {
		<-block
		return openaitest.Reply{Content: "late"}
	})
	defer srv.Close()
	defer close(block)
	_, err := newModel(t, srv, openai.Config{Timeout: 20 * time.Millisecond, MaxRetries: -1}).
		Generate(context.Background(), []*schema.Message{schema.UserMessage("hi")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline", err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_MODEL", "")
	if _, ok := openai.ConfigFromEnv(); ok {
		t.Fatal("no endpoint configured, yet ok")
	}
	t.Setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
	t.Setenv("OPENAI_MODEL", "llama3")
	cfg, ok := openai.ConfigFromEnv()
	if !ok || cfg.Model != "llama3" || cfg.BaseURL != "http://localhost:11434/v1" {
		t.Fatalf("%+v %v", cfg, ok)
	}
	if _, err := openai.New(openai.Config{}); err == nil {
		t.Fatal("model without a name accepted")
	}
}

// TestTemperatureSent checks that the temperature a caller sets reaches
// the endpoint, 0 included: go-openai drops a zero temperature from the
// request (omitempty), and the endpoint would then sample at its default.
func TestTemperatureSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []model.Option
		want *float64 // nil: not sent
	}{
		{"unset", nil, nil},
		{"zero", []model.Option{model.WithTemperature(0)}, ptr(0.0)},
		{"set", []model.Option{model.WithTemperature(0.5)}, ptr(0.5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bodies := make(chan map[string]any, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body map[string]any
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
					t.Errorf("decode request: %v", err)
				}
				bodies <- body
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
			}))
			defer srv.Close()
			m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "m", HTTPClient: srv.Client(), MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Generate(context.Background(), []*schema.Message{schema.UserMessage("hi")}, tc.opts...); err != nil {
				t.Fatal(err)
			}
			got, sent := (<-bodies)["temperature"].(float64)
			switch {
			case tc.want == nil && sent:
				t.Fatalf("temperature %v sent, want none", got)
			case tc.want != nil && !sent:
				t.Fatalf("no temperature sent, want %v", *tc.want)
			case tc.want != nil && math.Abs(got-*tc.want) > 1e-6:
				t.Fatalf("temperature %v sent, want %v", got, *tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
