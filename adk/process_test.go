package adk_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// The environment variables that make this test binary a helper process
// (see TestMain): the role and the checkpoint directory.
const (
	helperRole = "A2AMESH_ADK_HELPER"
	helperDir  = "A2AMESH_ADK_HELPER_DIR"
)

// processTree is the agent tree both processes build: a router that
// transfers to a booker whose tool asks the person. In the "hold" role the
// tool, resumed, says so on stdout and waits for stdin to close.
func processTree(dir string, hold bool) (*adk.Runner, error) {
	store, err := checkpoint.NewFile(dir)
	if err != nil {
		return nil, err
	}
	ask, err := tool.FromFunc("ask_user", "asks", func(ctx context.Context, in askIn) (string, error) {
		typed, ok := adk.GetResumeData[string](ctx)
		if !ok {
			return "", adk.Interrupt(ctx, in.Question)
		}
		if hold {
			fmt.Println("resumed")
			_, _ = io.Copy(io.Discard, os.Stdin)
		}
		return "the person said " + typed, nil
	})
	if err != nil {
		return nil, err
	}
	booker, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{Name: "Booker", Description: "books",
		Model: modeltest.FromScript(func(_ context.Context, _ int, in []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
			if last := in[len(in)-1]; last.Role == schema.Tool {
				return answer("Booked: " + last.Content), nil
			}
			return callTool("ask_user", `{"question":"Which day?"}`), nil
		}),
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{ask}}})
	if err != nil {
		return nil, err
	}
	router, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{Name: "Router", Description: "routes",
		Model: modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
			return callTool(adk.TransferToAgentToolName, `{"agent_name":"Booker"}`), nil
		})})
	if err != nil {
		return nil, err
	}
	root, err := adk.SetSubAgents(context.Background(), router, []adk.Agent{booker})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(context.Background(), adk.RunnerConfig{Agent: root, CheckPointStore: store}), nil
}

// runHelper is a helper process's whole life: "interrupt" runs until the
// interrupt and exits; "hold" resumes and holds the run open.
func runHelper(role, dir string) int {
	r, err := processTree(dir, role == "hold")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	var it *adk.AsyncIterator[*adk.AgentEvent]
	switch role {
	case "interrupt":
		it = r.Query(ctx, "book a table", adk.WithCheckPointID("booking"))
	case "hold":
		if it, err = r.Resume(ctx, "booking", adk.ResumeWith("Router/Booker#call_ask_user", "Friday")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	for ev, ok := it.Next(); ok; ev, ok = it.Next() {
		if ev.Err != nil {
			fmt.Fprintln(os.Stderr, ev.Err)
			return 1
		}
	}
	return 0
}

func helper(t *testing.T, role, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperRole+"="+role, helperDir+"="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// A checkpoint outlives the process that made it, and two processes
// cannot run it at once; a process that dies holding it frees it.
func TestCheckpointAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	if err := helper(t, "interrupt", dir).Run(); err != nil {
		t.Fatalf("the first process: %v", err)
	}

	// A second process resumes and holds the run open.
	hold := helper(t, "hold", dir)
	stdin, err := hold.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := hold.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "resumed\n" {
		t.Fatalf("the holding process said %q, %v", line, err)
	}

	r, err := processTree(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := r.Resume(ctx, "booking"); !errors.Is(err, adk.ErrCheckPointBusy) {
		t.Fatalf("resuming while another process runs the checkpoint: %v", err)
	}
	// The holder dies without finishing: its lock goes with it, its
	// checkpoint stays.
	if err := hold.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = hold.Wait()

	// The process is gone once Wait returns, and its lock with it.
	it, err := r.Resume(ctx, "booking", adk.ResumeWith("Router/Booker#call_ask_user", "Saturday"))
	if err != nil {
		t.Fatal(err)
	}
	expectEvents(t, drain(t, it),
		`Booker [Router Booker] tool ask_user: the person said Saturday`,
		`Booker [Router Booker] says "Booked: the person said Saturday"`,
	)
	if _, err := r.Resume(ctx, "booking"); !errors.Is(err, adk.ErrCheckPointNotFound) {
		t.Fatalf("after the run finished: %v", err)
	}
}
