package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/internal/cli"
)

// credentialsFlag defines --credentials, what a command's calls to an
// agent carry, and returns what reads it: nil without the flag, for an
// open agent such as those of `a2amesh up`.
func credentialsFlag(f *cli.Flags) func() (client.Credentials, error) {
	path := f.String("credentials", "",
		"file (YAML or JSON) of the credential to call with, in the gateway topology's credentials format: kind apiKey or bearer, the secret by secretFile or secretEnv (docs/deploy.md#security); empty: none")
	return func() (client.Credentials, error) {
		if *path == "" {
			return nil, nil
		}
		c, err := gateway.LoadCredentials(*path)
		if err != nil {
			return nil, fmt.Errorf("--credentials: %w", err)
		}
		return c, nil
	}
}

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ", ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// ask sends a question to the gateway and streams the task's events as a
// tree. When the mesh asks something (INPUT_REQUIRED), the answer comes
// from --answer or the terminal, and the task goes on. Ctrl-C cancels the
// task, through every agent it reached.
func ask(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	f := cli.NewFlags("ask", "A2AMESH")
	gw := f.String("gateway", "http://"+gateway.DefaultAddr+"/", "the gateway's URL")
	creds := credentialsFlag(f)
	contextID := f.String("context", "", "continue the conversation of this context id")
	var answers stringList
	f.Var(&answers, "answer", "answer the mesh's questions with this, in order, instead of asking the terminal (repeatable)")
	if err := f.Parse(args); err != nil {
		return err
	}
	question := strings.TrimSpace(strings.Join(f.Args(), " "))
	if question == "" {
		return errors.New(`ask what? a2amesh ask "What's the weather in Beijing?"`)
	}
	cr, err := creds()
	if err != nil {
		return err
	}
	c, err := client.New(ctx, *gw, client.Config{Credentials: cr})
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()

	msg := a2a.NewTextMessage(a2a.RoleUser, question)
	msg.ContextID = *contextID
	req := &a2a.SendMessageRequest{Message: msg}
	r := &renderer{w: stdout}
	terminal := bufio.NewReader(stdin)
	var inputs map[string]any // the answers of the last follow-up, by interrupt point
	for {
		end, err := follow(ctx, c, req, r)
		if errors.Is(err, errLostTask) {
			// The gateway restarted and forgot the task; its checkpoint
			// did not: a new task resumes the run.
			fmt.Fprintln(stdout, "· the gateway no longer knows the task; resuming it from its checkpoint")
			resume := a2a.NewTextMessage(a2a.RoleUser, req.Message.Text())
			resume.ContextID = req.Message.ContextID
			req = &a2a.SendMessageRequest{Message: resume, Metadata: map[string]any{
				bridge.KeyRun: map[string]any{"resume_task": req.Message.TaskID, "resume": inputs},
			}}
			continue
		}
		if err != nil {
			return err
		}
		switch end.state {
		case a2a.TaskStateCompleted:
			id := safeLine(end.contextID)
			fmt.Fprintf(stdout, "· context %s (--context %s continues the conversation)\n", id, id)
			return nil
		case a2a.TaskStateInputRequired:
			var answer string
			if len(answers) > 0 {
				answer, answers = answers[0], answers[1:]
				fmt.Fprintf(stdout, "? %s\n> %s\n", safe(end.question), answer)
			} else {
				fmt.Fprintf(stdout, "? %s\n> ", safe(end.question))
				line, err := terminal.ReadString('\n')
				if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
					return fmt.Errorf("no answer: %w", err)
				}
				answer = strings.TrimSpace(line)
			}
			// The gateway gives a follow-up's text to every interrupted
			// point; the ids are kept for a resume after a restart.
			reply := a2a.NewTextMessage(a2a.RoleUser, answer)
			reply.TaskID, reply.ContextID = end.taskID, end.contextID
			inputs = map[string]any{}
			for _, id := range end.points {
				inputs[id] = answer
			}
			req = &a2a.SendMessageRequest{Message: reply}
		default:
			return exitError(1)
		}
	}
}

// errLostTask: a follow-up named a task the gateway does not know.
var errLostTask = errors.New("the task is not known")

// ending is how a stream ended.
type ending struct {
	taskID, contextID string
	state             a2a.TaskState
	question          string
	points            []string
}

// follow sends req, renders the stream, and returns how the task ended.
func follow(ctx context.Context, c *client.Client, req *a2a.SendMessageRequest, r *renderer) (ending, error) {
	end := ending{taskID: req.Message.TaskID, contextID: req.Message.ContextID}
	// The stream is not tied to ctx: Ctrl-C cancels the task instead, and
	// the stream shows it end.
	streamCtx, stopStream := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStream()
	var taskID atomic.Value // the task's id, once known, for a Ctrl-C
	taskID.Store(end.taskID)
	stopWatching := context.AfterFunc(ctx, func() {
		if id := taskID.Load().(string); id != "" {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _ = c.CancelTask(cctx, &a2a.CancelTaskRequest{ID: id}) // the stream reports the outcome
		}
		time.AfterFunc(15*time.Second, stopStream)
	})
	defer stopWatching()
	for ev, err := range c.SendStreamingMessage(streamCtx, req) {
		if err != nil {
			if req.Message.TaskID != "" && errors.Is(err, a2a.ErrTaskNotFound) {
				return end, errLostTask
			}
			return end, err
		}
		r.event(ev.Event, c.Card().Name)
		if id, _ := ev.Event.TaskIDs(); id != "" {
			taskID.Store(id)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			end.taskID, end.contextID, end.state = e.ID, e.ContextID, e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			end.taskID, end.contextID, end.state = e.TaskID, e.ContextID, e.Status.State
			if m := e.Status.Message; m != nil && e.Status.State == a2a.TaskStateInputRequired {
				end.question, end.points = m.Text(), pointIDs(m.Metadata)
			}
		case *a2a.Message:
			end.state = a2a.TaskStateCompleted
		}
	}
	r.close()
	return end, nil
}

func pointIDs(meta map[string]any) []string {
	raw, ok := meta[bridge.KeyPoints]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var points []struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(b, &points) != nil {
		return nil
	}
	ids := make([]string, len(points))
	for i, p := range points {
		ids[i] = p.ID
	}
	return ids
}
