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

// Weather answers questions about the weather with a lookup tool.
func Weather() service.Def {
	return service.Def{Name: "weather", Summary: "answers weather questions", Addr: "127.0.0.1:9102",
		Setup: func(f *cli.Flags) service.Build {
			endpoint := f.String("weather-endpoint", "", "HTTP endpoint answering GET ?city=<city> with the weather (empty: offline)")
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				return chatAgent(ctx, env, "WeatherAgent", "Answers questions about the weather in a city",
					"You answer questions about the weather. Look it up with get_weather; never guess.",
					weather.Tool(weather.Config{Endpoint: *endpoint}))
			}
		}}
}

// Chat talks.
func Chat() service.Def {
	return service.Def{Name: "chat", Summary: "chats", Addr: "127.0.0.1:9103",
		Setup: func(*cli.Flags) service.Build {
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				return chatAgent(ctx, env, "ChatAgent", "Chats casually about anything: greetings, jokes, small talk",
					"You chat in a friendly, brief way.")
			}
		}}
}

// Math calculates with an expression evaluator.
func Math() service.Def {
	return service.Def{Name: "math", Summary: "calculates", Addr: "127.0.0.1:9104",
		Setup: func(*cli.Flags) service.Build {
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				return chatAgent(ctx, env, "MathAgent", "Calculates: arithmetic and math expressions",
					"You calculate. Evaluate every expression with the calculate tool and give the result.", calc.Tool())
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
				return chatAgent(ctx, env, "ResearchAgent", "Researches topics by searching the documents and reports the findings",
					"You research. Search the documents with search_docs and report what they say, citing the files.", searchTool(ix))
			}
		}}
}

// Writer writes.
func Writer() service.Def {
	return service.Def{Name: "writer", Summary: "writes reports", Addr: "127.0.0.1:9106",
		Setup: func(*cli.Flags) service.Build {
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) {
				return chatAgent(ctx, env, "WriterAgent", "Writes reports and summaries from the findings it is given",
					"You write clear, short reports from the findings in the conversation. When the request leaves open who the report is for or what it must cover, ask the person with ask_user first.",
					ask.Tool("Ask the person a question, when the request leaves something open"))
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
				boss, err := chatAgent(ctx, env, "SupervisorAgent", "Coordinates research and writing: researches a topic, then writes a report on it",
					"You coordinate a team. Hand each task to the member that fits it, one at a time; when every task is done, give the final answer.")
				if err != nil {
					return nil, err
				}
				return supervisor.New(ctx, &supervisor.Config{Supervisor: boss, SubAgents: []adk.Agent{r, w}})
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
				return planexecute.New(ctx, &planexecute.Config{Name: "PlannerAgent",
					Description: "Plans multi-step tasks and carries them out step by step: calculations and research",
					Planner:     p, Executor: e, Replanner: r})
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
				if err != nil {
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
