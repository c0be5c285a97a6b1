package supervisor_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/prebuilt/supervisor"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func agent(t *testing.T, name, desc, instruction string, m model.ChatModel, tools ...tool.Tool) adk.Agent {
	t.Helper()
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: name, Description: desc, Instruction: instruction, Model: m, ToolsConfig: adk.ToolsConfig{Tools: tools},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func transfer(to string) *schema.Message {
	return modeltest.CallTool(adk.TransferToAgentToolName, `{"agent_name":"`+to+`"}`)
}

// reportTeam is the seed's report scenario: ReportSupervisor with a
// research agent and a writer.
func reportTeam(t *testing.T, sup, research, writer model.ChatModel) adk.Agent {
	t.Helper()
	team, err := supervisor.New(context.Background(), &supervisor.Config{
		Supervisor: agent(t, "ReportSupervisor", "Coordinates a research and writing team",
			"You coordinate a team. Hand each task to the member that fits it; when every task is done, give the final answer.", sup),
		SubAgents: []adk.Agent{
			agent(t, "ResearchAgent", "Researches a topic: finds facts and sources for a report", "You research.", research),
			agent(t, "WriterAgent", "Writes the report from the research", "You write reports.", writer),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return team
}

func TestReportScenario(t *testing.T) {
	ctx := context.Background()
	sup := modeltest.New(transfer("ResearchAgent"), transfer("WriterAgent"), modeltest.Answer("The report on Go is ready."))
	research := modeltest.New(modeltest.Answer("Go appeared in 2009; it has goroutines."))
	writer := modeltest.New(modeltest.Answer("Report: Go (2009) is built around goroutines."))
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: reportTeam(t, sup, research, writer)})
	evs := adktest.Drain(t, r.Query(ctx, "Research the Go language and write a report"))
	adktest.Expect(t, evs,
		`ReportSupervisor [ReportSupervisor] calls transfer_to_agent{"agent_name":"ResearchAgent"}`,
		`ReportSupervisor [ReportSupervisor] tool transfer_to_agent: successfully transferred to agent [ResearchAgent] => transfer ResearchAgent`,
		`ResearchAgent [ReportSupervisor ResearchAgent] says "Go appeared in 2009; it has goroutines."`,
		`ResearchAgent [ReportSupervisor ResearchAgent] calls transfer_to_agent{"agent_name":"ReportSupervisor"}`,
		`ResearchAgent [ReportSupervisor ResearchAgent] tool transfer_to_agent: successfully transferred to agent [ReportSupervisor] => transfer ReportSupervisor`,
		`ReportSupervisor [ReportSupervisor ResearchAgent ReportSupervisor] calls transfer_to_agent{"agent_name":"WriterAgent"}`,
		`ReportSupervisor [ReportSupervisor ResearchAgent ReportSupervisor] tool transfer_to_agent: successfully transferred to agent [WriterAgent] => transfer WriterAgent`,
		`WriterAgent [ReportSupervisor ResearchAgent ReportSupervisor WriterAgent] says "Report: Go (2009) is built around goroutines."`,
		`WriterAgent [ReportSupervisor ResearchAgent ReportSupervisor WriterAgent] calls transfer_to_agent{"agent_name":"ReportSupervisor"}`,
		`WriterAgent [ReportSupervisor ResearchAgent ReportSupervisor WriterAgent] tool transfer_to_agent: successfully transferred to agent [ReportSupervisor] => transfer ReportSupervisor`,
		`ReportSupervisor [ReportSupervisor ResearchAgent ReportSupervisor WriterAgent ReportSupervisor] says "The report on Go is ready."`,
	)
	// The writer worked from the research; the supervisor saw both.
	if got := adktest.DescribeInput(writer.Calls()[0].Input); !slices.Contains(got, "user: For context: [ResearchAgent] said: Go appeared in 2009; it has goroutines.") {
		t.Fatalf("writer input %q", got)
	}
	if got := adktest.DescribeInput(sup.Calls()[2].Input); !slices.Contains(got, "user: For context: [WriterAgent] said: Report: Go (2009) is built around goroutines.") {
		t.Fatalf("supervisor's last input %q", got)
	}
}

func TestReportScenarioOffline(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: reportTeam(t, m, m, m)})
	evs := adktest.Drain(t, r.Query(ctx, "Research the Go language and write a report"))
	var order []string
	for _, ev := range evs {
		if ev.Action != nil && ev.Action.TransferToAgent != nil {
			order = append(order, ev.AgentName+"->"+ev.Action.TransferToAgent.DestAgentName)
		}
	}
	want := []string{"ReportSupervisor->ResearchAgent", "ResearchAgent->ReportSupervisor",
		"ReportSupervisor->WriterAgent", "WriterAgent->ReportSupervisor"}
	if !slices.Equal(order, want) {
		t.Fatalf("transfers %v in %q", order, adktest.DescribeAll(evs))
	}
	last := adktest.Describe(evs[len(evs)-1])
	if !strings.HasPrefix(last, `ReportSupervisor [ReportSupervisor ResearchAgent ReportSupervisor WriterAgent ReportSupervisor] says "[offline model]`) {
		t.Fatalf("last event %s", last)
	}
}

func TestLayeredSupervisor(t *testing.T) {
	ctx := context.Background()
	mid, err := supervisor.New(ctx, &supervisor.Config{
		Supervisor: agent(t, "Mid", "runs the workers", "", modeltest.New(transfer("Worker"), modeltest.Answer("mid done"))),
		SubAgents:  []adk.Agent{agent(t, "Worker", "works", "", modeltest.New(modeltest.Answer("worked")))},
	})
	if err != nil {
		t.Fatal(err)
	}
	top, err := supervisor.New(ctx, &supervisor.Config{
		Supervisor: agent(t, "Top", "runs everything", "", modeltest.New(transfer("Mid"), modeltest.Answer("top done"))),
		SubAgents:  []adk.Agent{mid, agent(t, "Other", "other work", "", modeltest.New())},
	})
	if err != nil {
		t.Fatal(err)
	}
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: top}).Query(ctx, "go"))
	var lines []string
	for _, ev := range evs {
		if ev.Action == nil { // the answers
			lines = append(lines, adktest.Describe(ev))
		}
	}
	want := []string{
		`Top [Top] calls transfer_to_agent{"agent_name":"Mid"}`,
		`Mid [Top Mid] calls transfer_to_agent{"agent_name":"Worker"}`,
		`Worker [Top Mid Worker] says "worked"`,
		`Worker [Top Mid Worker] calls transfer_to_agent{"agent_name":"Mid"}`,
		`Mid [Top Mid Worker Mid] says "mid done"`,
		`Mid [Top Mid Worker Mid] calls transfer_to_agent{"agent_name":"Top"}`,
		`Top [Top Mid Worker Mid Top] says "top done"`,
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("events\n got %q\nwant %q", lines, want)
	}
}

// projectTeam is the seed's integration project manager: a supervisor over
// a research agent that asks the person for context, a code agent with a
// knowledge base, and a review agent that is a sequential workflow.
func projectTeam(t *testing.T, pm, research, code, reviewer, summarizer model.ChatModel) adk.Agent {
	t.Helper()
	ctx := context.Background()
	ask := mustTool(t, "ask_user", "Ask the person for more context about the project",
		func(ctx context.Context, in struct {
			Question string `json:"question"`
		}) (string, error) {
			if typed, ok := adk.GetResumeData[string](ctx); ok {
				return "the person says: " + typed, nil
			}
			return "", adk.Interrupt(ctx, "The research agent asks: "+in.Question)
		})
	kb := mustTool(t, "knowledge_base", "Looks up code examples and best practices",
		func(_ context.Context, in struct {
			Query string `json:"query"`
		}) (string, error) {
			return "Use context.Context first; wrap errors with %w.", nil
		})
	review, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{
		Name: "ReviewAgent", Description: "Reviews the code: checks it, then summarises the findings",
		SubAgents: []adk.Agent{
			agent(t, "Reviewer", "checks code", "You review code.", reviewer),
			agent(t, "Summarizer", "summarises a review", "You summarise reviews.", summarizer),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	team, err := supervisor.New(ctx, &supervisor.Config{
		Supervisor: agent(t, "ProjectManager", "Runs a software project",
			"You manage a team. Hand each task to the member that fits it; when every task is done, give the final answer.", pm),
		SubAgents: []adk.Agent{
			agent(t, "ResearchAgent", "Researches the project requirements, asking the person for context", "You research.", research, ask),
			agent(t, "CodeAgent", "Writes the code, using a knowledge base", "You write code.", code, kb),
			review,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return team
}

func mustTool[In, Out any](t *testing.T, name, desc string, fn func(context.Context, In) (Out, error)) tool.Tool {
	t.Helper()
	tl, err := tool.FromFunc(name, desc, fn)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestProjectManagerScenario(t *testing.T) {
	ctx := context.Background()
	pm := modeltest.New(transfer("ResearchAgent"), transfer("CodeAgent"), transfer("ReviewAgent"), modeltest.Answer("Project delivered."))
	research := modeltest.New(modeltest.CallTool("ask_user", `{"question":"Which stack?"}`), modeltest.Answer("Requirements: a Go service on NATS."))
	code := modeltest.New(modeltest.CallTool("knowledge_base", `{"query":"go service"}`), modeltest.Answer("func main() {}"))
	reviewer := modeltest.New(modeltest.Answer("Looks fine; add tests."))
	summarizer := modeltest.New(modeltest.Answer("Review: approve with tests."))
	store := &adk.MemoryCheckPointStore{}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: projectTeam(t, pm, research, code, reviewer, summarizer), CheckPointStore: store})

	evs := adktest.Drain(t, r.Query(ctx, "Build a small service", adk.WithCheckPointID("project-1")))
	adktest.Expect(t, evs,
		`ProjectManager [ProjectManager] calls transfer_to_agent{"agent_name":"ResearchAgent"}`,
		`ProjectManager [ProjectManager] tool transfer_to_agent: successfully transferred to agent [ResearchAgent] => transfer ResearchAgent`,
		`ResearchAgent [ProjectManager ResearchAgent] calls ask_user{"question":"Which stack?"}`,
		`ResearchAgent [ProjectManager ResearchAgent] => interrupted`,
	)
	p := adktest.Interrupted(t, evs).Points[0]
	if p.Info != "The research agent asks: Which stack?" || p.ID != "ProjectManager/ResearchAgent#call_ask_user" {
		t.Fatalf("point %+v", p)
	}

	it, err := r.Resume(ctx, "project-1", adk.ResumeWith(p.ID, "Go and NATS"))
	if err != nil {
		t.Fatal(err)
	}
	evs = adktest.Drain(t, it)
	var lines []string
	for _, ev := range evs {
		if ev.Action == nil || ev.Action.TransferToAgent == nil {
			lines = append(lines, adktest.Describe(ev))
		}
	}
	want := []string{
		`ResearchAgent [ProjectManager ResearchAgent] tool ask_user: the person says: Go and NATS`,
		`ResearchAgent [ProjectManager ResearchAgent] says "Requirements: a Go service on NATS."`,
		`ResearchAgent [ProjectManager ResearchAgent] calls transfer_to_agent{"agent_name":"ProjectManager"}`,
		`ProjectManager [ProjectManager ResearchAgent ProjectManager] calls transfer_to_agent{"agent_name":"CodeAgent"}`,
		`CodeAgent [ProjectManager ResearchAgent ProjectManager CodeAgent] calls knowledge_base{"query":"go service"}`,
		`CodeAgent [ProjectManager ResearchAgent ProjectManager CodeAgent] tool knowledge_base: Use context.Context first; wrap errors with %w.`,
		`CodeAgent [ProjectManager ResearchAgent ProjectManager CodeAgent] says "func main() {}"`,
		`CodeAgent [ProjectManager ResearchAgent ProjectManager CodeAgent] calls transfer_to_agent{"agent_name":"ProjectManager"}`,
		`ProjectManager [ProjectManager ResearchAgent ProjectManager CodeAgent ProjectManager] calls transfer_to_agent{"agent_name":"ReviewAgent"}`,
		`Reviewer [ProjectManager ResearchAgent ProjectManager CodeAgent ProjectManager ReviewAgent Reviewer] says "Looks fine; add tests."`,
		`Summarizer [ProjectManager ResearchAgent ProjectManager CodeAgent ProjectManager ReviewAgent Reviewer Summarizer] says "Review: approve with tests."`,
		`ReviewAgent [ProjectManager ResearchAgent ProjectManager CodeAgent ProjectManager ReviewAgent] calls transfer_to_agent{"agent_name":"ProjectManager"}`,
		`ProjectManager [ProjectManager ResearchAgent ProjectManager CodeAgent ProjectManager ReviewAgent ProjectManager] says "Project delivered."`,
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("resumed run\n got:\n  %s\nwant:\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
	// The code agent knew what the person said; the checkpoint is gone.
	if got := adktest.DescribeInput(code.Calls()[0].Input); !slices.Contains(got,
		"user: For context: [ResearchAgent] `ask_user` tool returned result: the person says: Go and NATS") {
		t.Fatalf("code agent input %q", got)
	}
	if _, ok, _ := store.Get(ctx, "project-1"); ok {
		t.Fatal("checkpoint left after the run finished")
	}
}

func TestProjectManagerScenarioOffline(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	dir := t.TempDir()
	run := func() *adk.Runner { // a new Runner and store each time, as after a restart
		store, err := checkpoint.NewFile(dir)
		if err != nil {
			t.Fatal(err)
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: projectTeam(t, m, m, m, m, m), CheckPointStore: store})
	}
	evs := adktest.Drain(t, run().Query(ctx, "Research the project requirements, write the code and review it",
		adk.WithCheckPointID("project-2")))
	p := adktest.Interrupted(t, evs).Points[0]
	if p.Agent != "ResearchAgent" || !strings.HasPrefix(p.Info.(string), "The research agent asks: ") {
		t.Fatalf("point %+v in %q", p, adktest.DescribeAll(evs))
	}
	it, err := run().Resume(ctx, "project-2", adk.ResumeWith(p.ID, "It is a Go service"))
	if err != nil {
		t.Fatal(err)
	}
	evs = adktest.Drain(t, it)
	var order []string
	for _, ev := range evs {
		if ev.Err != nil {
			t.Fatal(ev.Err)
		}
		if ev.Action != nil && ev.Action.TransferToAgent != nil {
			order = append(order, ev.AgentName+"->"+ev.Action.TransferToAgent.DestAgentName)
		}
	}
	want := []string{"ResearchAgent->ProjectManager", "ProjectManager->CodeAgent", "CodeAgent->ProjectManager",
		"ProjectManager->ReviewAgent", "ReviewAgent->ProjectManager"}
	if !slices.Equal(order, want) {
		t.Fatalf("transfers %v in\n  %s", order, strings.Join(adktest.DescribeAll(evs), "\n  "))
	}
	if d := adktest.Describe(evs[1]); !strings.Contains(d, "the person says: It is a Go service") {
		t.Fatalf("the research agent did not answer from the person's input: %s", d)
	}
	last := evs[len(evs)-1]
	if last.AgentName != "ProjectManager" || last.Action != nil {
		t.Fatalf("last event %s", adktest.Describe(last))
	}
}
