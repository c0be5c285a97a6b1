package schema_test

import (
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// A conversation is a list of messages; an assistant message may ask for
// tool calls, which tool messages answer by call id.
func ExampleMessage() {
	conversation := []*schema.Message{
		schema.SystemMessage("You are a weather assistant."),
		schema.UserMessage("Weather in Paris?"),
		schema.AssistantMessage("", []schema.ToolCall{{
			ID: "call_1", Type: "function",
			Function: schema.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`},
		}}),
		schema.ToolMessage("sunny, 21°C", "call_1", "get_weather"),
		schema.AssistantMessage("It is sunny in Paris, 21°C.", nil),
	}
	for _, m := range conversation {
		text := m.Text()
		for _, call := range m.ToolCalls {
			text += "calls " + call.Function.Name + " " + call.Function.Arguments
		}
		fmt.Printf("%-9s %s\n", m.Role, text)
	}
	// Output:
	// system    You are a weather assistant.
	// user      Weather in Paris?
	// assistant calls get_weather {"city":"Paris"}
	// tool      sunny, 21°C
	// assistant It is sunny in Paris, 21°C.
}

// A producer sends chunks into a pipe, from any goroutine, and never waits
// for the reader; the reader gets them in order and io.EOF at the end.
func ExamplePipe() {
	r, w := schema.Pipe[*schema.Message]()
	go func() {
		defer w.Close()
		for _, piece := range []string{"It is ", "sunny ", "in Paris."} {
			if w.Send(schema.AssistantMessage(piece, nil)) {
				return // the reader closed the stream
			}
		}
	}()

	defer r.Close()
	for {
		chunk, err := r.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%q\n", chunk.Content)
	}
	// Output:
	// "It is "
	// "sunny "
	// "in Paris."
}

// ConcatMessageStream joins a streamed reply into one message, tool calls
// included: their argument fragments are put back together by index.
func ExampleConcatMessageStream() {
	reply := schema.AssistantMessage("Let me check.", []schema.ToolCall{{
		ID: "call_1", Type: "function",
		Function: schema.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`},
	}})
	chunks := schema.SplitMessage(reply, 3) // what a streaming endpoint sends
	fmt.Println(len(chunks), "chunks")

	whole, err := schema.ConcatMessageStream(schema.FromSlice(chunks))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(whole.Content)
	fmt.Println(whole.ToolCalls[0].Function.Name, whole.ToolCalls[0].Function.Arguments)
	// Output:
	// 6 chunks
	// Let me check.
	// get_weather {"city":"Paris"}
}

// Copy lets several readers consume one stream, each seeing every item.
func ExampleStreamReader_Copy() {
	copies := schema.FromSlice([]string{"a", "b"}).Copy(2)
	for i, r := range copies {
		for {
			s, err := r.Recv()
			if err != nil {
				break
			}
			fmt.Println(i, s)
		}
		r.Close()
	}
	// Output:
	// 0 a
	// 0 b
	// 1 a
	// 1 b
}
