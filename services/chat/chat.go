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
	return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "ChatAgent", Description: "Chats casually about anything: greetings, jokes, small talk",
		Instruction: "You chat in a friendly, brief way.", Model: cfg.Model,
	})
}
