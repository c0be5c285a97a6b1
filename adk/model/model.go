// Package model is the chat-model interface the agents call: generate a
// reply or stream it, optionally with tools the model may call. Its
// implementations: openai (any OpenAI-compatible endpoint), offline (a
// deterministic rule-based stand-in), modeltest (scripted, for tests).
package model

import (
	"context"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// ChatModel generates assistant messages from a conversation. It is safe
// for concurrent use.
type ChatModel interface {
	// Generate returns the model's reply to input.
	Generate(ctx context.Context, input []*schema.Message, opts ...Option) (*schema.Message, error)
	// Stream returns the reply as a stream of chunks; schema.ConcatMessages
	// joins them. Closing the stream early stops the model.
	Stream(ctx context.Context, input []*schema.Message, opts ...Option) (*schema.StreamReader[*schema.Message], error)
	// WithTools returns a model that may call the tools; the receiver is
	// unchanged.
	WithTools(tools []*schema.ToolInfo) (ChatModel, error)
}

// Named is a ChatModel that knows the name of the model it calls
// ("gpt-4o-mini"), which names the model's calls in traces and metrics
// (those of a model that is not Named: "unknown"; model.WithModel wins
// over both).
type Named interface {
	ModelName() string
}

// Options tune one model call; nil and zero fields leave the model's
// defaults.
type Options struct {
	Model       string
	Temperature *float32
	MaxTokens   int
	Stop        []string
}

// Option sets an Options field.
type Option func(*Options)

// WithModel picks the model by name.
func WithModel(name string) Option { return func(o *Options) { o.Model = name } }

// WithTemperature sets the sampling temperature.
func WithTemperature(t float32) Option { return func(o *Options) { o.Temperature = &t } }

// WithMaxTokens caps the reply's length.
func WithMaxTokens(n int) Option { return func(o *Options) { o.MaxTokens = n } }

// WithStop sets stop sequences.
func WithStop(stop ...string) Option { return func(o *Options) { o.Stop = stop } }

// Apply returns the options set by opts.
func Apply(opts []Option) Options {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
