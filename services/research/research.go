// Package research is the mesh's research agent: it searches a corpus of
// documents (the project's own docs by default) and reports what they
// say, citing the files.
package research

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/a2amesh/a2amesh"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/adk/tool/search"
)

// Config configures the research agent.
type Config struct {
	// Model is what the agent thinks with; required.
	Model model.ChatModel
	// Corpus holds the .md and .txt documents to search; nil: the
	// project's own docs.
	Corpus fs.FS
}

// New returns the research agent, ResearchAgent.
func New(ctx context.Context, cfg Config) (adk.Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("research: Config.Model is required")
	}
	t, err := Tool(cfg.Corpus)
	if err != nil {
		return nil, err
	}
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "ResearchAgent", Description: "Researches topics by searching the documents and reports the findings",
		Instruction: "You research. Search the documents with search_docs and report what they say, citing the files.",
		Model:       cfg.Model, ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{t}},
	})
	if err != nil {
		return nil, err
	}
	return adk.AgentWithConfig(ctx, a, adk.AgentConfig{Skills: []adk.Skill{skill()}})
}

// Tool returns the agent's search tool, search_docs, over corpus (nil:
// the project's own docs), for agents that research in-process.
func Tool(corpus fs.FS) (tool.Tool, error) {
	if corpus == nil {
		corpus = a2amesh.Docs
	}
	ix, err := search.Build(corpus)
	if err != nil {
		return nil, fmt.Errorf("research: %w", err)
	}
	if ix.Len() == 0 {
		return nil, errors.New("research: the corpus has no .md or .txt documents")
	}
	return search.Tool("search_docs", "Research a topic: search the documents for it", ix), nil
}

// skill is what the agent declares it does, on its card and to the agents
// that transfer to it. Its examples are requests the agent handles with
// the offline model too.
func skill() adk.Skill {
	return adk.Skill{ID: "research-docs", Name: "Research the documents",
		Description: "Researches a topic by searching the documents (by default the project's own docs) and reports " +
			"what they say, citing the files",
		Tags: []string{"research", "docs", "documentation", "search", "find"},
		Examples: []string{"Research checkpoints", "What do the docs say about the gateway?",
			"Search the documentation for push notifications", "Find what the docs say about NATS"}}
}
