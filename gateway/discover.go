package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/bridge"
)

// discovery finds the agents of a topology's nodes, all at once, each
// retried with backoff until it answers or Config.Remote.Wait is up, and
// says which are still missing meanwhile (the gateway's readiness while
// it starts).
type discovery struct {
	mu sync.Mutex
	// missing holds, by agent key, why the agent has not been found yet;
	// a key whose agent has been found is absent.
	missing map[string]string
	urls    map[string]string
}

func newDiscovery(t *Topology) *discovery {
	d := &discovery{missing: map[string]string{}, urls: t.Agents}
	for _, n := range agentNodes(t.Entry, nil) {
		d.missing[n.Agent] = "not reached yet"
	}
	return d
}

// agentNodes appends the agent nodes under n, in the order Build meets
// them.
func agentNodes(n *Node, out []*Node) []*Node {
	switch {
	case n.Agent != "":
		out = append(out, n)
		for _, c := range n.SubAgents {
			out = agentNodes(c, out)
		}
	case n.Supervisor != nil:
		out = agentNodes(n.Supervisor.Supervisor, out)
		for _, c := range n.Supervisor.SubAgents {
			out = agentNodes(c, out)
		}
	case n.PlanExecute != nil:
		out = agentNodes(n.PlanExecute.Executor, out)
	default:
		for _, c := range firstWorkflow(n.Sequential, n.Parallel, n.Loop).Steps {
			out = agentNodes(c, out)
		}
	}
	return out
}

// Missing says which agents have not been found yet and why, "" when
// none: "weather at http://...: connection refused; ...".
func (d *discovery) Missing() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.missing) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("waiting for the mesh's agents: ")
	for i, key := range slices.Sorted(maps.Keys(d.missing)) {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s at %s: %s", key, d.urls[key], d.missing[key])
	}
	return b.String()
}

func (d *discovery) note(key string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		delete(d.missing, key)
	} else if _, still := d.missing[key]; still {
		d.missing[key] = err.Error()
	}
}

// find makes the RemoteAgents of the nodes (rc for each, its URL, name
// and bindings set by configure), all at once.
func (d *discovery) find(ctx context.Context, nodes []*Node, wait time.Duration, configure func(*Node) bridge.RemoteConfig) (map[*Node]*bridge.RemoteAgent, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		found = make(map[*Node]*bridge.RemoteAgent, len(nodes))
		errs  []error
		wg    sync.WaitGroup
	)
	deadline := time.Now().Add(wait)
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := d.findOne(ctx, n.Agent, configure(n), deadline)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				cancel() // the composition fails: stop waiting for the others
				return
			}
			found[n] = a
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		// The first failure, not the cancellations it caused.
		for _, err := range errs {
			if !errors.Is(err, context.Canceled) {
				return nil, err
			}
		}
		return nil, errs[0]
	}
	return found, nil
}

// findOne tries the agent until it answers, or the deadline passes, or a
// try fails in a way no retry fixes (a card naming an origin it may not,
// a card whose signature does not verify).
func (d *discovery) findOne(ctx context.Context, key string, rc bridge.RemoteConfig, deadline time.Time) (*bridge.RemoteAgent, error) {
	rc.Wait = 0 // the retries are here, to note each failure
	pause := 100 * time.Millisecond
	for {
		a, err := bridge.NewRemoteAgent(ctx, rc)
		d.note(key, err)
		if err == nil || errors.Is(err, client.ErrOriginRefused) || errors.Is(err, bridge.ErrCardRefused) || ctx.Err() != nil || !time.Now().Add(pause).Before(deadline) {
			return a, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("bridge: remote agent at %s: %w", rc.URL, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 2*time.Second)
	}
}
