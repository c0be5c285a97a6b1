// Package openaitest is a local OpenAI-compatible chat completions server
// for tests: it answers with replies a test scripts, as a whole or as a
// stream whose text and tool-call arguments arrive in several deltas, and
// it can fail with a chosen HTTP status to exercise retries.
package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// Reply is what the server answers to one request.
type Reply struct {
	// Status, when not 0 or 200, fails the request with that HTTP status.
	Status  int
	Content string
	// ToolCalls are the calls the reply asks for.
	ToolCalls []schema.ToolCall
	Usage     schema.Usage
}

// Script decides the reply to each request.
type Script func(req *goopenai.ChatCompletionRequest) Reply

// Server is a running fake endpoint.
type Server struct {
	*httptest.Server
	script Script

	mu       sync.Mutex
	requests []goopenai.ChatCompletionRequest
}

// NewServer starts a server on 127.0.0.1; Close it when done. BaseURL is
// what to give an OpenAI client.
func NewServer(script Script) *Server {
	s := &Server{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the API root to configure clients with.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far.
func (s *Server) Requests() []goopenai.ChatCompletionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]goopenai.ChatCompletionRequest(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req goopenai.ChatCompletionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error"}}`, err), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	reply := s.script(&req)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		fmt.Fprintf(w, `{"error":{"message":"scripted failure %d","type":"server_error"}}`, reply.Status)
		return
	}
	usage := goopenai.Usage{PromptTokens: reply.Usage.PromptTokens, CompletionTokens: reply.Usage.CompletionTokens, TotalTokens: reply.Usage.TotalTokens}
	finish := goopenai.FinishReasonStop
	if len(reply.ToolCalls) > 0 {
		finish = goopenai.FinishReasonToolCalls
	}
	if !req.Stream {
		msg := goopenai.ChatCompletionMessage{Role: "assistant", Content: reply.Content}
		for _, tc := range reply.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, goopenai.ToolCall{ID: tc.ID, Type: goopenai.ToolTypeFunction,
				Function: goopenai.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(goopenai.ChatCompletionResponse{ // a failed write means the client left
			ID: "chatcmpl-test", Object: "chat.completion", Model: req.Model,
			Choices: []goopenai.ChatCompletionChoice{{Message: msg, FinishReason: finish}},
			Usage:   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(delta goopenai.ChatCompletionStreamChoiceDelta, fr goopenai.FinishReason, u *goopenai.Usage) {
		chunk := goopenai.ChatCompletionStreamResponse{ID: "chatcmpl-test", Object: "chat.completion.chunk", Model: req.Model, Usage: u}
		if u == nil {
			chunk.Choices = []goopenai.ChatCompletionStreamChoice{{Delta: delta, FinishReason: fr}}
		}
		b, _ := json.Marshal(chunk) // plain structs always encode
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(goopenai.ChatCompletionStreamChoiceDelta{Role: "assistant"}, "", nil)
	for _, piece := range thirds(reply.Content) {
		send(goopenai.ChatCompletionStreamChoiceDelta{Content: piece}, "", nil)
	}
	for i, tc := range reply.ToolCalls {
		idx := i
		for j, args := range thirds(tc.Function.Arguments) {
			call := goopenai.ToolCall{Index: &idx, Function: goopenai.FunctionCall{Arguments: args}}
			if j == 0 { // the id and the name come with the first delta only
				call.ID, call.Type, call.Function.Name = tc.ID, goopenai.ToolTypeFunction, tc.Function.Name
			}
			send(goopenai.ChatCompletionStreamChoiceDelta{ToolCalls: []goopenai.ToolCall{call}}, "", nil)
		}
	}
	send(goopenai.ChatCompletionStreamChoiceDelta{}, finish, nil)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(goopenai.ChatCompletionStreamChoiceDelta{}, "", &usage)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// thirds cuts s into up to three pieces, so streams carry real deltas.
func thirds(s string) []string {
	if s == "" {
		return nil
	}
	r := []rune(s)
	n := len(r)
	var out []string
	for i := range 3 {
		if p := string(r[i*n/3 : (i+1)*n/3]); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// LastUserText returns the content of the request's last user message.
func LastUserText(req *goopenai.ChatCompletionRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return strings.TrimSpace(req.Messages[i].Content)
		}
	}
	return ""
}
