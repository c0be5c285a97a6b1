// Package openai is a model.ChatModel for any OpenAI-compatible chat
// completions endpoint (OpenAI, Ollama, vLLM, DeepSeek, Ark, ...), built on
// github.com/sashabaranov/go-openai: replies and streams, tool calls (also
// streamed), token usage, per-request timeouts, and retries with backoff on
// rate limits and server errors.
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// Config configures a Model. Model is required; zero values elsewhere are
// defaults.
type Config struct {
	APIKey string
	// BaseURL is the endpoint's API root, e.g. "https://api.openai.com/v1"
	// or "http://localhost:11434/v1"; empty means OpenAI's.
	BaseURL string
	Model   string
	// HTTPClient sends the requests; nil means a client of its own.
	HTTPClient *http.Client
	// Timeout bounds one request (for a stream: until its first chunk);
	// 0 means 60 s.
	Timeout time.Duration
	// MaxRetries is how many times a request failing with 429 or 5xx (or
	// a network error) is retried; 0 means 3, negative means never.
	MaxRetries int
	// BaseBackoff is the longest first wait between tries (with full
	// jitter, doubling each retry up to 30 s); 0 means 500 ms.
	BaseBackoff time.Duration
}

// ConfigFromEnv reads OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL.
// ok reports whether an endpoint is configured (a model name, and a key or
// a base URL), so callers can fall back to the offline model.
func ConfigFromEnv() (cfg Config, ok bool) {
	cfg = Config{APIKey: os.Getenv("OPENAI_API_KEY"), BaseURL: os.Getenv("OPENAI_BASE_URL"), Model: os.Getenv("OPENAI_MODEL")}
	if cfg.Model == "" && cfg.APIKey != "" {
		cfg.Model = "gpt-4o-mini"
	}
	return cfg, cfg.Model != "" && (cfg.APIKey != "" || cfg.BaseURL != "")
}

// Model is a ChatModel on an OpenAI-compatible endpoint.
type Model struct {
	client *goopenai.Client
	cfg    Config
	tools  []goopenai.Tool
}

var _ model.ChatModel = (*Model)(nil)

// ModelName returns Config.Model (model.Named).
func (m *Model) ModelName() string { return m.cfg.Model }

// New returns a Model.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("openai: Config.Model is required")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	if cfg.BaseBackoff == 0 {
		cfg.BaseBackoff = 500 * time.Millisecond
	}
	cc := goopenai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		cc.BaseURL = cfg.BaseURL
	}
	if cfg.HTTPClient != nil {
		cc.HTTPClient = cfg.HTTPClient
	}
	return &Model{client: goopenai.NewClientWithConfig(cc), cfg: cfg}, nil
}

// WithTools implements model.ChatModel.
func (m *Model) WithTools(tools []*schema.ToolInfo) (model.ChatModel, error) {
	out := *m
	out.tools = make([]goopenai.Tool, len(tools))
	for i, t := range tools {
		def := &goopenai.FunctionDefinition{Name: t.Name, Description: t.Desc}
		if t.Params != nil {
			def.Parameters = t.Params
		} else {
			def.Parameters = &schema.JSONSchema{Type: "object", Properties: map[string]*schema.JSONSchema{}}
		}
		out.tools[i] = goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: def}
	}
	return &out, nil
}

func (m *Model) request(input []*schema.Message, opts []model.Option, stream bool) (goopenai.ChatCompletionRequest, error) {
	o := model.Apply(opts)
	req := goopenai.ChatCompletionRequest{Model: m.cfg.Model, Tools: m.tools, Stream: stream, Stop: o.Stop, MaxTokens: o.MaxTokens}
	if o.Model != "" {
		req.Model = o.Model
	}
	if o.Temperature != nil {
		req.Temperature = *o.Temperature
		if req.Temperature == 0 {
			// go-openai omits a zero temperature (omitempty), and the
			// endpoint would then sample at its default; the smallest
			// float32 above 0 is sent instead and samples as 0 does.
			req.Temperature = math.SmallestNonzeroFloat32
		}
	}
	if stream {
		req.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	}
	req.Messages = make([]goopenai.ChatCompletionMessage, len(input))
	for i, msg := range input {
		cm, err := toOpenAI(msg)
		if err != nil {
			return req, fmt.Errorf("openai: message %d: %w", i, err)
		}
		req.Messages[i] = cm
	}
	return req, nil
}

// Generate implements model.ChatModel.
func (m *Model) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	req, err := m.request(input, opts, false)
	if err != nil {
		return nil, err
	}
	var resp goopenai.ChatCompletionResponse
	err = m.retry(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
		defer cancel()
		var err error
		resp, err = m.client.CreateChatCompletion(ctx, req)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("openai: chat completion: %w", err)
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("openai: chat completion returned no choices")
	}
	c := resp.Choices[0]
	out := fromOpenAI(c.Message)
	out.ResponseMeta = &schema.ResponseMeta{FinishReason: string(c.FinishReason), Usage: usage(&resp.Usage)}
	return out, nil
}

// Stream implements model.ChatModel. The request is retried until the
// stream opens; a stream that fails midway ends with that error.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	req, err := m.request(input, opts, true)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var stream *goopenai.ChatCompletionStream
	err = m.retry(ctx, func(ctx context.Context) error {
		opened := make(chan struct{})
		timer := time.AfterFunc(m.cfg.Timeout, func() {
			select {
			case <-opened:
			default:
				cancel() // no first response within the timeout
			}
		})
		defer timer.Stop()
		var err error
		stream, err = m.client.CreateChatCompletionStream(ctx, req)
		close(opened)
		return err
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("openai: chat completion stream: %w", err)
	}
	r, w := schema.Pipe[*schema.Message]()
	w.OnReaderClose(cancel) // stop reading the response at once
	go func() {
		defer cancel()
		defer stream.Close()
		for {
			chunk, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				w.Close()
				return
			}
			if err != nil {
				w.Fail(fmt.Errorf("openai: chat completion stream: %w", err))
				return
			}
			if msg := fromChunk(&chunk); msg != nil && w.Send(msg) {
				return // the reader closed the stream
			}
		}
	}()
	return r, nil
}

// retry calls do until it succeeds, fails for good, or retries run out.
func (m *Model) retry(ctx context.Context, do func(context.Context) error) error {
	backoff := m.cfg.BaseBackoff
	for attempt := 0; ; attempt++ {
		err := do(ctx)
		if err == nil || attempt >= m.cfg.MaxRetries || !retryable(err) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(rand.N(backoff) + time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// retryable reports whether err is worth trying again: rate limiting, a
// server error, or a network failure.
func retryable(err error) bool {
	var ae *goopenai.APIError
	if errors.As(err, &ae) {
		return ae.HTTPStatusCode == http.StatusTooManyRequests || ae.HTTPStatusCode >= 500
	}
	var re *goopenai.RequestError
	if errors.As(err, &re) {
		return re.HTTPStatusCode == http.StatusTooManyRequests || re.HTTPStatusCode >= 500 || re.HTTPStatusCode == 0
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

func toOpenAI(m *schema.Message) (goopenai.ChatCompletionMessage, error) {
	out := goopenai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
	if len(m.MultiContent) > 0 {
		if m.Content != "" {
			out.MultiContent = append(out.MultiContent, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: m.Content})
			out.Content = ""
		}
		for _, p := range m.MultiContent {
			switch p.Type {
			case schema.ContentText:
				out.MultiContent = append(out.MultiContent, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: p.Text})
			case schema.ContentImageURL:
				out.MultiContent = append(out.MultiContent, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeImageURL, ImageURL: &goopenai.ChatMessageImageURL{URL: p.URL}})
			default:
				return out, fmt.Errorf("content part of type %q is not supported by the chat completions API", p.Type)
			}
		}
	}
	for _, tc := range m.ToolCalls {
		typ := goopenai.ToolType(tc.Type)
		if typ == "" {
			typ = goopenai.ToolTypeFunction
		}
		out.ToolCalls = append(out.ToolCalls, goopenai.ToolCall{
			ID: tc.ID, Type: typ,
			Function: goopenai.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments},
		})
	}
	return out, nil
}

func fromOpenAI(m goopenai.ChatCompletionMessage) *schema.Message {
	out := &schema.Message{Role: schema.Role(m.Role), Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
	for i, tc := range m.ToolCalls {
		idx := i
		if tc.Index != nil {
			idx = *tc.Index
		}
		out.ToolCalls = append(out.ToolCalls, schema.ToolCall{
			Index: &idx, ID: tc.ID, Type: string(tc.Type),
			Function: schema.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments},
		})
	}
	return out
}

func fromChunk(c *goopenai.ChatCompletionStreamResponse) *schema.Message {
	out := &schema.Message{}
	if len(c.Choices) > 0 {
		d := c.Choices[0].Delta
		out.Role, out.Content = schema.Role(d.Role), d.Content
		for _, tc := range d.ToolCalls {
			var idx *int
			if tc.Index != nil {
				i := *tc.Index
				idx = &i
			}
			out.ToolCalls = append(out.ToolCalls, schema.ToolCall{
				Index: idx, ID: tc.ID, Type: string(tc.Type),
				Function: schema.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments},
			})
		}
		if fr := c.Choices[0].FinishReason; fr != "" {
			out.ResponseMeta = &schema.ResponseMeta{FinishReason: string(fr)}
		}
	}
	if c.Usage != nil {
		if out.ResponseMeta == nil {
			out.ResponseMeta = &schema.ResponseMeta{}
		}
		out.ResponseMeta.Usage = usage(c.Usage)
	}
	if out.Role == "" && out.Content == "" && out.ToolCalls == nil && out.ResponseMeta == nil {
		return nil
	}
	if out.Role == "" {
		out.Role = schema.Assistant
	}
	return out
}

func usage(u *goopenai.Usage) *schema.Usage {
	if u == nil || u.TotalTokens == 0 && u.PromptTokens == 0 && u.CompletionTokens == 0 {
		return nil
	}
	return &schema.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}
