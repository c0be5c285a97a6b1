// Package catalog defines the mesh's agent services: what each agent is,
// its tools, the flags it takes and the agents it calls. Each
// services/<name> command serves one; `a2amesh serve <name>` serves any.
package catalog

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/a2amesh/a2amesh"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/prebuilt/planexecute"
	"github.com/a2amesh/a2amesh/adk/prebuilt/supervisor"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/tools/ask"
	"github.com/a2amesh/a2amesh/tools/calc"
	"github.com/a2amesh/a2amesh/tools/search"
	"github.com/a2amesh/a2amesh/tools/weather"
)

// All lists the services, in the order `a2amesh up` starts them (agents
// before the agents that call them).
func All() []service.Def {
	return []service.Def{Weather(), Chat(), Math(), Research(), Writer(), Supervisor(), Planner(), Router()}
}

// Find returns the service named name.
func Find(name string) (service.Def, bool) {
	for _, d := range All() {
		if d.Name == name {
			return d, true
		}
	}
	return service.Def{}, false
}

func chatAgent(ctx context.Context, env *service.Env, name, desc, instruction string, tools ...tool.Tool) (adk.Agent, error) {
	return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: name, Description: desc, Instruction: instruction, Model: env.Model,
		ToolsConfig: adk.ToolsConfig{Tools: tools},
	})
}

// declaring returns the agent a (or err) declaring skills, which its card
// carries and the agents that transfer to it read. The examples of the
// skills are requests the agent answers with the offline model too.
func declaring(ctx context.Context, a adk.Agent, err error, skills ...adk.Skill) (adk.Agent, error) {
	if err != nil {
		return nil, err
	}
	return adk.AgentWithOptions(ctx, a, adk.WithSkills(skills...))
}

// The skills of the services' agents.
var (
	weatherSkill = adk.Skill{ID: "current-weather", Name: "Current weather",
		Description: "Looks up the current weather of a city with the weather service; with no service configured it says " +
			"the weather service is offline rather than guess",
		Tags: []string{"weather", "temperature", "hot", "cold", "sunny", "rain", "snow", "wind", "city"},
		Examples: []string{"What's the weather in Beijing?", "Is it raining in London?",
			"What's the temperature in Oslo right now?", "How windy is it in Chicago?"}}
	chatSkill = adk.Skill{ID: "small-talk", Name: "Small talk",
		Description: "Greets people and chats casually: hellos, thanks, jokes, small talk",
		Tags:        []string{"chat", "greeting", "hello", "hi", "hey", "morning", "evening", "thanks", "joke", "small talk"},
		Examples:    []string{"Hello there!", "Good morning!", "Tell me a joke", "Thanks for your help!", "Let's chat about jazz"}}
	mathSkill = adk.Skill{ID: "calculate", Name: "Calculate",
		Description: "Works out arithmetic written in symbols or in words with an exact expression evaluator: " +
			"+ - * / ^, percentages, powers, roots and functions",
		Tags: []string{"math", "arithmetic", "calculate", "percent", "square root", "power"},
		Examples: []string{"What is (17 + 25) * 3?", "How much is 12 percent of 250?", "What is seven times eight?",
			"What is the square root of 144?", "2 to the power of 10", "Divide 100 by 8", "Calculate 1.5 * 40"}}
	researchSkill = adk.Skill{ID: "research-docs", Name: "Research the documents",
		Description: "Researches a topic by searching the documents (by default the project's own docs) and reports " +
			"what they say, citing the files",
		Tags: []string{"research", "docs", "documentation", "search", "find"},
		Examples: []string{"Research checkpoints", "What do the docs say about the gateway?",
			"Search the documentation for push notifications", "Find what the docs say about NATS"}}
	writerSkill = adk.Skill{ID: "write-from-findings", Name: "Write from findings",
		Description: "Writes a clear, short report or summary from the findings or notes it is given, in the request " +
			"or by other agents; may ask the person who the report is for",
		Tags: []string{"write", "summary", "summarize", "draft", "notes", "findings"},
		Examples: []string{
			"Summarize these findings: checkpoints are saved after every step, and a resumed run continues from the last one",
			"Write a short summary of these notes: the gateway retries a failed hop, then fails the task",
			"Turn these findings into a report: the mesh runs eight agents and a gateway"}}
	supervisorSkill = adk.Skill{ID: "research-and-report", Name: "Research and report",
		Description: "Writes a report on a topic: the research agent researches it in the documents, then the writer " +
			"writes the report from the findings",
		Tags: []string{"report", "research", "write", "topic"},
		Examples: []string{"Write a report on checkpoints", "Research the gateway and write a report",
			"Prepare a report about push notifications"}}
	plannerSkill = adk.Skill{ID: "plan-and-execute", Name: "Plan and carry out",
		Description: "Plans a task of several steps and carries the steps out one by one, calculating with the math " +
			"agent and researching with the research agent, revising the plan as results come in",
		Tags: []string{"plan", "steps", "multi-step", "calculate", "research"},
		Examples: []string{"Make a plan: calculate 15% of 80, then research checkpoints",
			"Plan these steps: research the gateway, then calculate 2 to the power of 10",
			"Plan: calculate 2 + 3, then calculate 4 * 5"}}
	routerSkill = adk.Skill{ID: "route", Name: "Route requests",
		Description: "Hands each request to the agent whose skills fit it; answers itself only when no agent fits",
		Tags:        []string{"routing", "mesh"},
		Examples: []string{"What's the weather in Beijing?", "How much is 12 percent of 250?",
			"Write a report on checkpoints"}}
)

// Weather answers questions about the weather with a lookup tool.
func Weather() service.Def {
	return service.Def{Name: "weather", Summary: "answers weather questions", Addr: "127.0.0.1:9102",
		Setup: func(f *cli.Flags) service.Build {
			endpoint := f.String("weather-endpoint", "", "HTTP endpoint answering GET ?city=<city> with the weather (empty: offline)")
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				a, err := chatAgent(ctx, env, "WeatherAgent", "Answers questions about the weather in a city",
					"You answer questions about the weather. Look it up with get_weather; never guess.",
					weather.Tool(weather.Config{Endpoint: *endpoint}))
				return declaring(ctx, a, err, weatherSkill)
			}
		}}
}

// Chat talks.
func Chat() service.Def {
	return service.Def{Name: "chat", Summary: "chats", Addr: "127.0.0.1:9103",
		Setup: func(*cli.Flags) service.Build {
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				a, err := chatAgent(ctx, env, "ChatAgent", "Chats casually about anything: greetings, jokes, small talk",
					"You chat in a friendly, brief way.")
				return declaring(ctx, a, err, chatSkill)
			}
		}}
}

// Math calculates with an expression evaluator.
func Math() service.Def {
	return service.Def{Name: "math", Summary: "calculates", Addr: "127.0.0.1:9104",
		Setup: func(*cli.Flags) service.Build {
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				a, err := chatAgent(ctx, env, "MathAgent", "Calculates: arithmetic and math expressions",
					"You calculate. Evaluate every expression with the calculate tool and give the result.", calc.Tool())
				return declaring(ctx, a, err, mathSkill)
			}
		}}
}

// corpus is the research agent's documents: a directory, or the project's
// own docs.
func corpus(dir string) (*search.Index, error) {
	var fsys fs.FS = a2amesh.Docs
	if dir != "" {
		fsys = os.DirFS(dir)
	}
	ix, err := search.Build(fsys)
	if err != nil {
		return nil, err
	}
	if ix.Len() == 0 {
		return nil, fmt.Errorf("the corpus %q has no .md or .txt documents", dir)
	}
	return ix, nil
}

func searchTool(ix *search.Index) tool.Tool {
	return search.Tool("search_docs", "Research a topic: search the documents for it", ix)
}

// Research searches a document corpus.
func Research() service.Def {
	return service.Def{Name: "research", Summary: "researches topics in a document corpus", Addr: "127.0.0.1:9105",
		Setup: func(f *cli.Flags) service.Build {
			dir := f.String("corpus", "", "directory of .md and .txt documents to search (empty: the project's own docs)")
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				ix, err := corpus(*dir)
				if err != nil {
					return nil, err
				}
				a, err := chatAgent(ctx, env, "ResearchAgent", "Researches topics by searching the documents and reports the findings",
					"You research. Search the documents with search_docs and report what they say, citing the files.", searchTool(ix))
				return declaring(ctx, a, err, researchSkill)
			}
		}}
}

// Writer writes.
func Writer() service.Def {
	return service.Def{Name: "writer", Summary: "writes reports", Addr: "127.0.0.1:9106",
		Setup: func(*cli.Flags) service.Build {
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				// The instruction does not name the ask tool: the offline
				// model would take that for "always ask".
				a, err := chatAgent(ctx, env, "WriterAgent", "Writes reports and summaries from the findings it is given",
					"You write clear, short reports from the findings in the conversation. When the request leaves open who the report is for or what it must cover, ask the person first.",
					ask.Tool("Ask the person a question, when the request leaves something open"))
				return declaring(ctx, a, err, writerSkill)
			}
		}}
}

// Supervisor runs research and writing as a supervisor over the research
// and writer agents.
func Supervisor() service.Def {
	return service.Def{Name: "supervisor", Summary: "supervises research and writing", Addr: "127.0.0.1:9107",
		Setup: func(f *cli.Flags) service.Build {
			research := f.String("research-url", "http://127.0.0.1:9105/", "the research agent")
			writer := f.String("writer-url", "http://127.0.0.1:9106/", "the writer agent")
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				r, err := env.Remote(ctx, *research)
				if err != nil {
					return nil, err
				}
				w, err := env.Remote(ctx, *writer)
				if err != nil {
					return nil, err
				}
				// The instruction names the team in the order of the work,
				// which the offline model follows too.
				boss, err := chatAgent(ctx, env, "SupervisorAgent", "Coordinates research and writing: researches a topic, then writes a report on it",
					fmt.Sprintf("You coordinate a team. For a report, first hand the topic to %s to research it, then to %s to write the report "+
						"from the findings; hand any other task to the member that fits it, one at a time. When every task is done, give the final answer.",
						r.Name(ctx), w.Name(ctx)))
				if err != nil {
					return nil, err
				}
				sup, err := supervisor.New(ctx, &supervisor.Config{Supervisor: boss, SubAgents: []adk.Agent{r, w}})
				return declaring(ctx, sup, err, supervisorSkill)
			}
		}}
}

// Planner plans multi-step tasks and carries them out with the math and
// research agents as tools (or the same tools in-process when no URL is
// given).
func Planner() service.Def {
	return service.Def{Name: "planner", Summary: "plans and executes multi-step tasks", Addr: "127.0.0.1:9108",
		Setup: func(f *cli.Flags) service.Build {
			mathURL := f.String("math-url", "http://127.0.0.1:9104/", "the math agent, used as a tool (empty: calculate in-process)")
			researchURL := f.String("research-url", "http://127.0.0.1:9105/", "the research agent, used as a tool (empty: search in-process)")
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				var tools []tool.Tool
				if *mathURL != "" {
					m, err := env.Remote(ctx, *mathURL)
					if err != nil {
						return nil, err
					}
					tools = append(tools, adk.NewAgentTool(ctx, m))
				} else {
					tools = append(tools, calc.Tool())
				}
				if *researchURL != "" {
					r, err := env.Remote(ctx, *researchURL)
					if err != nil {
						return nil, err
					}
					tools = append(tools, adk.NewAgentTool(ctx, r))
				} else {
					ix, err := corpus("")
					if err != nil {
						return nil, err
					}
					tools = append(tools, searchTool(ix))
				}
				p, err := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{Model: env.Model})
				if err != nil {
					return nil, err
				}
				e, err := planexecute.NewExecutor(ctx, &planexecute.ExecutorConfig{Model: env.Model, ToolsConfig: adk.ToolsConfig{Tools: tools}})
				if err != nil {
					return nil, err
				}
				r, err := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{Model: env.Model})
				if err != nil {
					return nil, err
				}
				pe, err := planexecute.New(ctx, &planexecute.Config{Name: "PlannerAgent",
					Description: "Plans multi-step tasks and carries them out step by step: calculations and research",
					Planner:     p, Executor: e, Replanner: r})
				return declaring(ctx, pe, err, plannerSkill)
			}
		}}
}

// Router routes each request to the agent that can answer it: its
// sub-agents (given by URL), or the agents a caller offers it.
func Router() service.Def {
	return service.Def{Name: "router", Summary: "routes requests to the agents that can answer them", Addr: "127.0.0.1:9101",
		Setup: func(f *cli.Flags) service.Build {
			agents := f.String("agents", "", "comma-separated URLs of the agents to route to (empty: those a caller offers)")
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				r, err := chatAgent(ctx, env, "RouterAgent", "Routes each request to the agent that can answer it",
					"You route requests. Answer only what no other agent fits.")
				if r, err = declaring(ctx, r, err, routerSkill); err != nil {
					return nil, err
				}
				urls := cli.SplitList(*agents)
				if len(urls) == 0 {
					return r, nil
				}
				subs := make([]adk.Agent, len(urls))
				for i, u := range urls {
					if subs[i], err = env.Remote(ctx, u); err != nil {
						return nil, err
					}
				}
				return adk.SetSubAgents(ctx, r, subs)
			}
		}}
}
