// Package chat is the mesh's chat agent: it talks, briefly and in a
// friendly way, about whatever it is asked.
package chat

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
)

// Config configures the chat agent.
type Config struct {
	// Model is what the agent thinks with; required.
	Model model.ChatModel
}

// New returns the chat agent, ChatAgent.
func New(ctx context.Context, cfg Config) (adk.Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("chat: Config.Model is required")
	}
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "ChatAgent", Description: "Chats casually about anything: greetings, jokes, small talk",
		Instruction: "You chat in a friendly, brief way.", Model: cfg.Model,
	})
	if err != nil {
		return nil, err
	}
	return adk.AgentWithConfig(ctx, a, adk.AgentConfig{Skills: []adk.Skill{skill()}})
}

// skill is what the agent declares it does, on its card and to the agents
// that transfer to it. Its examples are requests the agent handles with
// the offline model too.
func skill() adk.Skill {
	return adk.Skill{ID: "small-talk", Name: "Small talk",
		Description: "Greets people and chats casually: hellos, thanks, jokes, small talk",
		Tags:        []string{"chat", "greeting", "hello", "hi", "hey", "morning", "evening", "thanks", "joke", "small talk"},
		Examples:    []string{"Hello there!", "Good morning!", "Tell me a joke", "Thanks for your help!", "Let's chat about jazz"}}
}
