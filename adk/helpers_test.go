package adk_test

import (
	"context"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(helperRole); role != "" {
		os.Exit(runHelper(role, os.Getenv(helperDir)))
	}
	goleak.VerifyTestMain(m)
}

var (
	drain         = adktest.Drain
	describe      = adktest.Describe
	describeAll   = adktest.DescribeAll
	describeInput = adktest.DescribeInput
	interrupted   = adktest.Interrupted
)

func expectEvents(t *testing.T, got []*adk.AgentEvent, want ...string) {
	t.Helper()
	adktest.Expect(t, got, want...)
}

func newAgent(t testing.TB, name, desc, instruction string, m model.ChatModel, tools ...tool.Tool) *adk.ChatModelAgent {
	t.Helper()
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: name, Description: desc, Instruction: instruction, Model: m,
		ToolsConfig: adk.ToolsConfig{Tools: tools},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustTool[In, Out any](t testing.TB, name, desc string, fn func(context.Context, In) (Out, error)) tool.Tool {
	t.Helper()
	tl, err := tool.FromFunc(name, desc, fn)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

type cityIn struct {
	City string `json:"city" desc:"the city"`
}

func weatherTool(t testing.TB) tool.Tool {
	return mustTool(t, "get_weather", "Get the current weather of a city", func(_ context.Context, in cityIn) (string, error) {
		return "the temperature in " + in.City + " is 25°C", nil
	})
}

var (
	answer   = modeltest.Answer
	callTool = modeltest.CallTool
)
