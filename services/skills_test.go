// Package services_test checks what every agent of the mesh declares.
package services_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/adktest"
	"github.com/a2amesh/a2amesh/services/chat"
	"github.com/a2amesh/a2amesh/services/math"
	"github.com/a2amesh/a2amesh/services/planner"
	"github.com/a2amesh/a2amesh/services/research"
	"github.com/a2amesh/a2amesh/services/router"
	"github.com/a2amesh/a2amesh/services/supervisor"
	"github.com/a2amesh/a2amesh/services/weather"
	"github.com/a2amesh/a2amesh/services/writer"
)

// builders make each service's agent with the offline model and no remote
// agent (the planner then calculates and searches in-process).
var builders = map[string]func(ctx context.Context, m model.ChatModel) (adk.Agent, error){
	"weather": func(ctx context.Context, m model.ChatModel) (adk.Agent, error) {
		return weather.New(ctx, weather.Config{Model: m})
	},
	"chat": func(ctx context.Context, m model.ChatModel) (adk.Agent, error) {
		return chat.New(ctx, chat.Config{Model: m})
	},
	"math": func(ctx context.Context, m model.ChatModel) (adk.Agent, error) {
		return math.New(ctx, math.Config{Model: m})
	},
	"research": func(ctx context.Context, m model.ChatModel) (adk.Agent, error) {
		return research.New(ctx, research.Config{Model: m})
	},
	"writer": func(ctx context.Context, m model.ChatModel) (adk.Agent, error) {
		return writer.New(ctx, writer.Config{Model: m})
	},
	"planner": func(ctx context.Context, m model.ChatModel) (adk.Agent, error) {
		return planner.New(ctx, planner.Config{Model: m})
	},
	"router": func(ctx context.Context, m model.ChatModel) (adk.Agent, error) {
		return router.New(ctx, router.Config{Model: m})
	},
	"supervisor": func(ctx context.Context, m model.ChatModel) (adk.Agent, error) {
		r, err := research.New(ctx, research.Config{Model: m})
		if err != nil {
			return nil, err
		}
		w, err := writer.New(ctx, writer.Config{Model: m})
		if err != nil {
			return nil, err
		}
		return supervisor.New(ctx, supervisor.Config{Model: m, Research: r, Writer: w})
	},
}

// build builds the service name's agent with the offline model.
func build(t *testing.T, name string) adk.Agent {
	t.Helper()
	a, err := builders[name](context.Background(), offline.New())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var cited = regexp.MustCompile(`\[1\] (?:docs/[\w.-]+\.md|README\.md) — `)

// Every service's agent declares skills, on its card too, and the
// examples of the skills are requests the agent handles with the offline
// model: it does the work the skill says (the router's, the supervisor's
// and, over remote agents, the planner's are in e2e's TestRouting).
func TestSkillExamplesAreHandled(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		service string
		args    []string
		handled func(evs []*adk.AgentEvent) bool // the example was handled
	}{
		{"weather", nil, func(evs []*adk.AgentEvent) bool {
			return toolSaid(evs, "get_weather", "the weather service is offline")
		}},
		{"chat", nil, func(evs []*adk.AgentEvent) bool { return answerBy(evs, "ChatAgent") }},
		{"math", nil, func(evs []*adk.AgentEvent) bool { return toolSaid(evs, "calculate", " = ") }},
		{"research", nil, func(evs []*adk.AgentEvent) bool { return toolCited(evs, "search_docs") }},
		{"writer", nil, func(evs []*adk.AgentEvent) bool { return answerBy(evs, "WriterAgent") }},
		{"planner", nil, func(evs []*adk.AgentEvent) bool {
			// Every step done with a tool: a calculation or a search.
			steps := 0
			for _, ev := range evs {
				if ev.AgentName == "Executor" && ev.Output != nil && ev.Output.MessageOutput.Role == schema.Tool {
					steps++
				}
			}
			return steps >= 2 && (toolSaid(evs, "calculate", " = ") || toolCited(evs, "search_docs"))
		}},
	} {
		t.Run(tc.service, func(t *testing.T) {
			a := build(t, tc.service)
			skills := adk.SkillsOf(ctx, a)
			if len(skills) == 0 {
				t.Fatal("no skills")
			}
			if card := bridge.Card(ctx, a, "http://127.0.0.1/"); len(card.Skills) != len(skills) || card.Skills[0].ID != skills[0].ID {
				t.Fatalf("the card's skills %+v", card.Skills)
			}
			r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: a})
			for _, s := range skills {
				if s.ID == "" || s.Name == "" || s.Description == "" || len(s.Tags) == 0 || len(s.Examples) == 0 {
					t.Errorf("skill %+v is missing something", s)
				}
				for _, e := range s.Examples {
					evs := adktest.Drain(t, r.Query(ctx, e))
					for _, ev := range evs {
						if ev.Err != nil || ev.Action != nil && ev.Action.Interrupted != nil {
							t.Fatalf("%q: %s", e, adktest.Describe(ev))
						}
					}
					if !tc.handled(evs) {
						t.Errorf("%q is not handled:\n  %s", e, strings.Join(adktest.DescribeAll(evs), "\n  "))
					}
				}
			}
		})
	}
}

// Every service declares skills, whatever agents it has.
func TestEveryServiceDeclaresSkills(t *testing.T) {
	ctx := context.Background()
	for name := range builders {
		a := build(t, name)
		if skills := adk.SkillsOf(ctx, a); len(skills) == 0 || len(skills[0].Examples) == 0 {
			t.Errorf("%s declares %+v", a.Name(ctx), skills)
		}
	}
}

func answerBy(evs []*adk.AgentEvent, agent string) bool {
	last := evs[len(evs)-1]
	return last.AgentName == agent && last.Output != nil && strings.HasPrefix(last.Output.MessageOutput.Message.Content, offline.Label)
}

func toolSaid(evs []*adk.AgentEvent, tool, what string) bool {
	for _, ev := range evs {
		if ev.Output != nil && ev.Output.MessageOutput.ToolName == tool && strings.Contains(ev.Output.MessageOutput.Message.Content, what) {
			return true
		}
	}
	return false
}

func toolCited(evs []*adk.AgentEvent, tool string) bool {
	for _, ev := range evs {
		if ev.Output != nil && ev.Output.MessageOutput.ToolName == tool && cited.MatchString(ev.Output.MessageOutput.Message.Content) {
			return true
		}
	}
	return false
}
