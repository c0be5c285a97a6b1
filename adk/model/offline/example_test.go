package offline_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// Without tools the offline model restates the request, labelled so that
// nobody takes it for a language model's answer.
func ExampleModel_Generate() {
	m := offline.New()
	reply, err := m.Generate(context.Background(), []*schema.Message{
		schema.SystemMessage("You are a helpful assistant."),
		schema.UserMessage("What is the capital of France?"),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Content)
	// Output:
	// [offline model] You asked: What is the capital of France?
}

// Given tools, it calls the one that fits the request when it finds every
// required argument in it; given that tool's result, it answers with it.
func ExampleModel_WithTools() {
	ctx := context.Background()
	weather := &schema.ToolInfo{
		Name: "get_weather",
		Desc: "Current weather of a city.",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{
			"city": {Type: "string", Description: "the city"},
		}),
	}
	m, err := offline.New().WithTools([]*schema.ToolInfo{weather})
	if err != nil {
		log.Fatal(err)
	}

	conversation := []*schema.Message{schema.UserMessage("What's the weather in Lisbon?")}
	call, err := m.Generate(ctx, conversation)
	if err != nil {
		log.Fatal(err)
	}
	tc := call.ToolCalls[0]
	fmt.Println(tc.Function.Name, tc.Function.Arguments)

	conversation = append(conversation, call, schema.ToolMessage("sunny, 24°C", tc.ID, tc.Function.Name))
	answer, err := m.Generate(ctx, conversation)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer.Content)
	// Output:
	// get_weather {"city":"Lisbon"}
	// [offline model] sunny, 24°C
}
