package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/deploy"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore"
)

// agents lists the topology's agents (and the gateway) with their cards.
func agents(ctx context.Context, args []string, stdout io.Writer) error {
	f := cli.NewFlags("agents", "A2AMESH")
	path := f.String("topology", "", "mesh topology (empty: deploy/topology.yaml)")
	gw := f.String("gateway", "http://"+gateway.DefaultAddr+"/", "the gateway's URL")
	if err := f.Parse(args); err != nil {
		return err
	}
	var t *gateway.Topology
	var err error
	if *path == "" {
		t, err = gateway.ParseTopology(deploy.Topology)
	} else {
		t, err = gateway.LoadTopology(*path)
	}
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(t.Agents))
	for k := range t.Agents {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	urls := []string{*gw}
	names := []string{"gateway"}
	for _, k := range keys {
		names, urls = append(names, k), append(urls, t.Agents[k])
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tNAME\tURL\tSTATUS\tDESCRIPTION")
	for i, u := range urls {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		card, err := client.Resolve(cctx, u, client.Config{})
		cancel()
		if err != nil {
			row(tw, names[i], "-", u, "down", shortErr(err))
			continue
		}
		row(tw, names[i], card.Name, u, "up", card.Description)
	}
	return tw.Flush()
}

// row writes a table row, each cell on one line and fit for a terminal.
func row(tw io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = safeLine(c)
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
}

func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// tasks lists or shows the gateway's tasks.
func tasks(ctx context.Context, args []string, stdout io.Writer) error {
	f := cli.NewFlags("tasks", "A2AMESH")
	agent := f.String("agent", "http://"+gateway.DefaultAddr+"/", "the agent whose tasks to read (default: the gateway)")
	creds := credentialsFlag(f)
	if err := f.Parse(args); err != nil {
		return err
	}
	rest := f.Args()
	if len(rest) == 0 {
		rest = []string{"list"}
	}
	cr, err := creds()
	if err != nil {
		return err
	}
	c, err := client.New(ctx, *agent, client.Config{Credentials: cr})
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	switch rest[0] {
	case "list":
		res, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tSTATE\tUPDATED\tCONTEXT\tLAST MESSAGE")
		for _, t := range res.Tasks {
			last := ""
			if m := t.Status.Message; m != nil {
				last = oneLine(m.Text())
			} else if n := len(t.Artifacts); n > 0 {
				last = oneLine(t.Artifacts[n-1].Text())
			}
			row(tw, t.ID, stateName(t.Status.State), t.Status.Timestamp.Local().Format(time.TimeOnly), t.ContextID,
				fmt.Sprintf("%.80s", last))
		}
		return tw.Flush()
	case "get":
		if len(rest) < 2 {
			return errors.New("tasks get TASK_ID")
		}
		t, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: rest[1]})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "task %s (context %s): %s\n", safeLine(t.ID), safeLine(t.ContextID), safeLine(stateName(t.Status.State)))
		for _, m := range t.History {
			fmt.Fprintf(stdout, "  %-5s %s\n", safeLine(strings.ToLower(strings.TrimPrefix(string(m.Role), "ROLE_"))), oneLine(m.Text()))
		}
		for _, a := range t.Artifacts {
			fmt.Fprintf(stdout, "  artifact %s: %s\n", safeLine(a.Name), oneLine(a.Text()))
		}
		return nil
	}
	return fmt.Errorf("tasks %s: want list or get", rest[0])
}

func stateName(s a2a.TaskState) string { return strings.TrimPrefix(string(s), "TASK_STATE_") }

// watch follows every task event of the mesh from NATS, each line with
// its agent and task, indented by RunPath.
func watch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := cli.NewFlags("watch", "A2AMESH")
	url := f.StringEnv("nats", "NATS_URL", "nats://127.0.0.1:4222", "the mesh's NATS server")
	since := f.Duration("since", 0, "also show the events of this long ago (0: only new ones)")
	auth := cli.DefineNATSAuth(f)
	if err := f.Parse(args); err != nil {
		return err
	}
	nc, js, err := natsstore.Connect(ctx, *url, natsstore.ConnConfig{Name: "a2amesh watch", Auth: auth.Auth()})
	if err != nil {
		return err
	}
	defer nc.Close()
	// A connection nats.go gives up on ends the watch, saying why.
	ctx, stop := nc.Context(ctx)
	defer stop()
	var from time.Time
	if *since > 0 {
		from = time.Now().Add(-*since)
	}
	fmt.Fprintf(stdout, "watching %s (Ctrl-C stops)\n", *url)
	v := &watchView{w: stdout, renderers: map[string]*renderer{}}
	for we, err := range natsstore.Watch(ctx, js, from) {
		if err != nil {
			fmt.Fprintln(stderr, "watch:", safe(err.Error()))
			continue
		}
		v.show(we)
	}
	if err := context.Cause(ctx); errors.Is(err, natsstore.ErrClosed) {
		return err
	}
	return nil
}

// watchView renders the events of interleaved tasks, each line with its
// agent and task.
type watchView struct {
	w         io.Writer
	renderers map[string]*renderer // by agent and task, while the task runs
}

func (v *watchView) show(we natsstore.WatchedEvent) {
	key := we.Agent + "/" + we.TaskID
	r, ok := v.renderers[key]
	if !ok {
		r = &renderer{w: v.w, prefix: fmt.Sprintf("%-16.16s %-8.8s ", safeLine(we.Agent), safeLine(we.TaskID))}
		v.renderers[key] = r
	}
	r.event(we.Event, we.Agent)
	r.close() // interleaved tasks: every event on its own line
	if s, ok := a2a.StateOf(we.Event); ok && (s.Terminal() || s == a2a.TaskStateInputRequired) {
		delete(v.renderers, key)
	}
}
