package tool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// Node runs the tool calls of one model turn.
type Node struct {
	tools map[string]Tool
	infos []*schema.ToolInfo
	names []string
}

// NewNode returns a Node for the tools; their names must be unique.
func NewNode(ctx context.Context, tools []Tool) (*Node, error) {
	n := &Node{tools: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		info, err := t.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("tool info: %w", err)
		}
		if _, dup := n.tools[info.Name]; dup {
			return nil, fmt.Errorf("two tools are named %q", info.Name)
		}
		n.tools[info.Name] = t
		n.infos = append(n.infos, info)
		n.names = append(n.names, info.Name)
	}
	slices.Sort(n.names)
	return n, nil
}

// Infos describes the node's tools, in the order given.
func (n *Node) Infos() []*schema.ToolInfo { return n.infos }

// Has reports whether the node has a tool of that name.
func (n *Node) Has(name string) bool { _, ok := n.tools[name]; return ok }

// Run executes the calls concurrently and returns one tool message per
// call, in call order. A call that fails (an unknown tool, bad arguments,
// an error, a panic) gets a result that says so, for the model to read;
// nothing a tool does stops the others. ctxFor, when not nil, gives each
// call a context of its own derived from ctx.
func (n *Node) Run(ctx context.Context, calls []schema.ToolCall, ctxFor func(ctx context.Context, i int) context.Context) []*schema.Message {
	out := make([]*schema.Message, len(calls))
	run := func(i int) {
		cctx := ctx
		if ctxFor != nil {
			cctx = ctxFor(ctx, i)
		}
		out[i] = n.call(cctx, &calls[i])
	}
	if len(calls) == 1 {
		run(0) // the common case needs no goroutine
		return out
	}
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(i)
		}()
	}
	wg.Wait()
	return out
}

func (n *Node) call(ctx context.Context, c *schema.ToolCall) (msg *schema.Message) {
	name := c.Function.Name
	defer func() {
		if p := recover(); p != nil {
			msg = schema.ToolMessage(fmt.Sprintf("error: tool %s failed: panic: %v", name, p), c.ID, name)
		}
	}()
	t, ok := n.tools[name]
	if !ok {
		return schema.ToolMessage(fmt.Sprintf("error: there is no tool %q; the tools are %s", name, strings.Join(n.names, ", ")), c.ID, name)
	}
	result, err := t.Run(ctx, c.Function.Arguments)
	if err != nil {
		return schema.ToolMessage("error: "+err.Error(), c.ID, name)
	}
	return schema.ToolMessage(result, c.ID, name)
}
