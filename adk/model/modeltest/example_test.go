package modeltest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// A scripted model makes an agent's test exact: it gives its replies in
// order, and Calls shows what the agent sent it each time.
func ExampleNew() {
	ctx := context.Background()
	clock, err := tool.FromFunc("now", "The current time.",
		func(context.Context, struct{}) (string, error) { return "12:00", nil })
	if err != nil {
		log.Fatal(err)
	}
	m := modeltest.New(
		modeltest.CallTool("now", `{}`),
		modeltest.Answer("It is noon."),
	)
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "Clock", Model: m, ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{clock}},
	})
	if err != nil {
		log.Fatal(err)
	}
	events := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "What time is it?")
	for ev, ok := events.Next(); ok; ev, ok = events.Next() {
		if ev.Err != nil {
			log.Fatal(ev.Err)
		}
		if msg := ev.Output.MessageOutput.Message; msg.Content != "" && len(msg.ToolCalls) == 0 {
			fmt.Printf("%s: %s\n", msg.Role, msg.Content)
		}
	}

	for i, call := range m.Calls() {
		last := call.Input[len(call.Input)-1]
		fmt.Printf("call %d ends with a %s message: %s\n", i+1, last.Role, last.Text())
	}
	// Output:
	// tool: 12:00
	// assistant: It is noon.
	// call 1 ends with a user message: What time is it?
	// call 2 ends with a tool message: 12:00
}
