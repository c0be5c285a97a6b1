package adk_test

import (
	"context"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
)

// declaring is an agent of its own kind that declares skills.
type declaring struct{ adk.Agent }

func (declaring) Skills(context.Context) []adk.Skill {
	return []adk.Skill{{ID: "own", Name: "Own"}}
}

func TestSkillsOf(t *testing.T) {
	ctx := context.Background()
	plain := newAgent(t, "Plain", "", "", modeltest.New())
	if got := adk.SkillsOf(ctx, plain); got != nil {
		t.Fatalf("a ChatModelAgent declares %v", got)
	}
	own := declaring{newAgent(t, "Own", "", "", modeltest.New())}
	if got := adk.SkillsOf(ctx, own); len(got) != 1 || got[0].ID != "own" {
		t.Fatalf("a declarer: %v", got)
	}
	// AgentWithConfig forwards what the wrapped agent declares ...
	wrapped, err := adk.AgentWithConfig(ctx, own, adk.AgentConfig{OutputKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if got := adk.SkillsOf(ctx, wrapped); len(got) != 1 || got[0].ID != "own" {
		t.Fatalf("wrapped: %v", got)
	}
	// ... unless its Skills say otherwise, in place.
	given := []adk.Skill{{ID: "a", Name: "A", Tags: []string{"t"}, Examples: []string{"do a"}}, {ID: "b", Name: "B"}}
	if _, err := adk.AgentWithConfig(ctx, wrapped, adk.AgentConfig{Skills: given}); err != nil {
		t.Fatal(err)
	}
	given[0].ID = "changed after" // the agent keeps its own copy
	if got := adk.SkillsOf(ctx, wrapped); len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("Skills: %v", got)
	}
	// A config without skills leaves them; an empty list clears them.
	if _, err := adk.AgentWithConfig(ctx, wrapped, adk.AgentConfig{OutputKey: "k2"}); err != nil {
		t.Fatal(err)
	}
	if got := adk.SkillsOf(ctx, wrapped); len(got) != 2 {
		t.Fatalf("Skills after a config without skills: %v", got)
	}
	if _, err := adk.AgentWithConfig(ctx, wrapped, adk.AgentConfig{Skills: []adk.Skill{}}); err != nil {
		t.Fatal(err)
	}
	if got := adk.SkillsOf(ctx, wrapped); len(got) != 0 {
		t.Fatalf("an empty Skills clears: %v", got)
	}
}

// The transfer instruction lists each target's skills under it, sub-agents
// and caller agents alike, in the format TransferTargetsHeader documents.
func TestTransferInstructionListsSkills(t *testing.T) {
	ctx := context.Background()
	m := modeltest.New(answer("done"))
	weather, err := adk.AgentWithConfig(ctx, newAgent(t, "WeatherAgent", "Answers\nweather questions", "", modeltest.New()),
		adk.AgentConfig{Skills: []adk.Skill{{ID: "weather", Name: "Weather lookup", Description: "Looks up the weather  of a city",
			Tags: []string{"weather", " rain "}, Examples: []string{`What's the "weather" in Oslo?`, "Is it raining\nin Rome?"}}}})
	if err != nil {
		t.Fatal(err)
	}
	chat := newAgent(t, "ChatAgent", "Chats", "", modeltest.New())
	root, err := adk.SetSubAgents(ctx, newAgent(t, "Router", "", "You route.", m), []adk.Agent{weather, chat})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, "hi",
		adk.WithCallerAgents(adk.CallerAgent{Name: "Billing", Description: "Bills", Skills: []adk.Skill{{ID: "invoice"}}})))
	want := "You route.\n\n" +
		"You work in a team of agents. Answer the request yourself when it fits what you do. " +
		"When another agent's description or skills fit it better, call transfer_to_agent with that agent's name, and write nothing else.\n" +
		adk.TransferTargetsHeader + "\n" +
		"- WeatherAgent: Answers weather questions\n" +
		`  Skill "Weather lookup": Looks up the weather of a city` + "\n" +
		"    Tags: weather, rain\n" +
		`    Examples: "What's the \"weather\" in Oslo?", "Is it raining\nin Rome?"` + "\n" +
		"- ChatAgent: Chats\n" +
		"- Billing: Bills\n" +
		`  Skill "invoice"`
	if got := m.Calls()[0].Input[0].Content; got != want {
		t.Fatalf("instruction\n%s\nwant\n%s", got, want)
	}
	if tools := m.Calls()[0].Tools; len(tools) != 1 || tools[0].Name != adk.TransferToAgentToolName {
		t.Fatalf("tools %v", tools)
	}
}

// An agent used as a tool describes itself with its skills, in the lines
// the transfer instruction lists them with; without skills, its
// description is the agent's.
func TestAgentToolListsSkills(t *testing.T) {
	ctx := context.Background()
	weather, err := adk.AgentWithConfig(ctx, newAgent(t, "WeatherAgent", "Answers\nweather questions", "", modeltest.New()),
		adk.AgentConfig{Skills: []adk.Skill{{ID: "weather", Name: "Weather lookup", Description: "Looks up the weather of a city",
			Tags: []string{"weather", "rain"}, Examples: []string{"What's the weather in Oslo?"}}, {ID: "forecast"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		agent adk.Agent
		want  string
	}{
		{weather, "Answers weather questions\n" +
			`  Skill "Weather lookup": Looks up the weather of a city` + "\n" +
			"    Tags: weather, rain\n" +
			`    Examples: "What's the weather in Oslo?"` + "\n" +
			`  Skill "forecast"`},
		{newAgent(t, "ChatAgent", "Chats\ncasually", "", modeltest.New()), "Chats\ncasually"},
	} {
		info, err := adk.NewAgentTool(ctx, tc.agent).Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Desc != tc.want {
			t.Errorf("%s: description\n%s\nwant\n%s", info.Name, info.Desc, tc.want)
		}
	}
}
