package openai_test

import (
	"context"
	"fmt"
	"io"
	"log"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/openai"
	"github.com/a2amesh/a2amesh/adk/model/openai/openaitest"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// A Model talks to any OpenAI-compatible endpoint: here a local fake from
// openaitest, whose answer tells what it was asked with. In a program,
// openai.ConfigFromEnv reads the endpoint from OPENAI_* variables.
func ExampleModel_Generate() {
	srv := openaitest.NewServer(func(req *goopenai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Reply{
			Content: fmt.Sprintf("%s at temperature %.1f says hello", req.Model, req.Temperature),
			Usage:   schema.Usage{PromptTokens: 12, CompletionTokens: 6, TotalTokens: 18},
		}
	})
	defer srv.Close()

	m, err := openai.New(openai.Config{
		BaseURL:    srv.BaseURL(),
		APIKey:     "sk-example",
		Model:      "gpt-4o-mini",
		HTTPClient: srv.Client(),
	})
	if err != nil {
		log.Fatal(err)
	}
	reply, err := m.Generate(context.Background(),
		[]*schema.Message{schema.UserMessage("Say hello.")},
		model.WithTemperature(0.5))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Content)
	fmt.Println(reply.ResponseMeta.FinishReason, reply.ResponseMeta.Usage.TotalTokens)
	// Output:
	// gpt-4o-mini at temperature 0.5 says hello
	// stop 18
}

// Stream yields the reply as the endpoint sends it: text deltas, then
// tool calls whose arguments arrive in pieces. ConcatMessages joins
// them back into one message.
func ExampleModel_Stream() {
	srv := openaitest.NewServer(func(req *goopenai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Reply{
			Content: "Checking the weather.",
			ToolCalls: []schema.ToolCall{{
				ID: "call_1", Function: schema.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`},
			}},
		}
	})
	defer srv.Close()

	base, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), Model: "gpt-4o-mini", HTTPClient: srv.Client()})
	if err != nil {
		log.Fatal(err)
	}
	m, err := base.WithTools([]*schema.ToolInfo{{
		Name: "get_weather", Desc: "Current weather of a city.",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{"city": {Type: "string"}}),
	}})
	if err != nil {
		log.Fatal(err)
	}

	stream, err := m.Stream(context.Background(), []*schema.Message{schema.UserMessage("Weather in Paris?")})
	if err != nil {
		log.Fatal(err)
	}
	defer stream.Close()
	var chunks []*schema.Message
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if chunk.Content != "" {
			fmt.Printf("%q\n", chunk.Content)
		}
		chunks = append(chunks, chunk)
	}
	reply, err := schema.ConcatMessages(chunks)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Content)
	fmt.Println(reply.ToolCalls[0].Function.Name, reply.ToolCalls[0].Function.Arguments)
	// Output:
	// "Checkin"
	// "g the w"
	// "eather."
	// Checking the weather.
	// get_weather {"city":"Paris"}
}
