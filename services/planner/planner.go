// Package planner is the mesh's planner agent: plan-execute-replan over
// multi-step tasks, carried out with the math and research agents as
// tools, or the same tools in-process.
package planner

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/prebuilt/planexecute"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/adk/tool/calc"
	"github.com/a2amesh/a2amesh/services/research"
)

// Config configures the planner agent.
type Config struct {
	// Model is what the planner, executor and replanner think with;
	// required.
	Model model.ChatModel
	// Math and Research are agents the executor calls as tools (local or
	// remote); nil: it calculates, or searches the project's docs,
	// in-process.
	Math, Research adk.Agent
}

// New returns the planner agent, PlannerAgent.
func New(ctx context.Context, cfg Config) (adk.Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("planner: Config.Model is required")
	}
	var tools []tool.Tool
	if cfg.Math != nil {
		tools = append(tools, adk.NewAgentTool(ctx, cfg.Math))
	} else {
		tools = append(tools, calc.Tool())
	}
	if cfg.Research != nil {
		tools = append(tools, adk.NewAgentTool(ctx, cfg.Research))
	} else {
		t, err := research.Tool(nil)
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	p, err := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{Model: cfg.Model})
	if err != nil {
		return nil, err
	}
	e, err := planexecute.NewExecutor(ctx, &planexecute.ExecutorConfig{Model: cfg.Model, ToolsConfig: adk.ToolsConfig{Tools: tools}})
	if err != nil {
		return nil, err
	}
	r, err := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{Model: cfg.Model})
	if err != nil {
		return nil, err
	}
	pe, err := planexecute.New(ctx, &planexecute.Config{Name: "PlannerAgent",
		Description: "Plans multi-step tasks and carries them out step by step: calculations and research",
		Planner:     p, Executor: e, Replanner: r})
	if err != nil {
		return nil, err
	}
	return adk.AgentWithOptions(ctx, pe, adk.WithSkills(skill()))
}

// skill is what the agent declares it does, on its card and to the agents
// that transfer to it. Its examples are requests the agent handles with
// the offline model too.
func skill() adk.Skill {
	return adk.Skill{ID: "plan-and-execute", Name: "Plan and carry out",
		Description: "Plans a task of several steps and carries the steps out one by one, calculating with the math " +
			"agent and researching with the research agent, revising the plan as results come in",
		Tags: []string{"plan", "steps", "multi-step", "calculate", "research"},
		Examples: []string{"Make a plan: calculate 15% of 80, then research checkpoints",
			"Plan these steps: research the gateway, then calculate 2 to the power of 10",
			"Plan: calculate 2 + 3, then calculate 4 * 5"}}
}
