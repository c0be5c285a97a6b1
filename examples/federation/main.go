// Command federation shows two teams' agents composed by one gateway.
//
// The billing team serves its invoices agent, the logistics team its
// parcel-tracking agent: each is an A2A server of its own, as each team
// would run in its own process (here, to keep the example one program,
// they share one). Neither team knows about the other. A third team, the
// platform team, composes them: it serves the mesh's router agent and
// writes a topology that puts the router at the entry, with both teams'
// agents as the agents it may transfer to. The gateway serves that
// composition as one A2A agent, and a client asks it one question for
// each team.
//
// The router picks the agent by what the agents declare on their cards:
// their names, descriptions and skills, with example requests. No rule in
// the gateway says which question goes where.
//
//	go run ./examples/federation
//
// It runs on the offline model, so it needs no model endpoint.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/router"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// The two questions, one for each team, phrased as a person would.
var questions = []string{
	"Has invoice 1042 been paid yet?",
	"Where is my parcel 5531 right now?",
}

func run(ctx context.Context, out io.Writer) error {
	// Everything the program serves stops when run returns: servers ends
	// once every server has shut down.
	ctx, cancel := context.WithCancel(ctx)
	var servers sync.WaitGroup
	defer servers.Wait()
	defer cancel()

	// The servers' logs would drown the output; a real service keeps them.
	quiet := slog.New(slog.DiscardHandler)
	start := func(agent adk.Agent) (string, error) {
		srv, err := serve.New(ctx, agent, serve.Config{Logger: quiet})
		if err != nil {
			return "", err
		}
		servers.Go(func() { srv.Serve(ctx) })
		return srv.URL(), nil
	}

	// 1. The billing team serves its invoices agent.
	invoices, err := invoiceAgent(ctx)
	if err != nil {
		return err
	}
	invoicesURL, err := start(invoices)
	if err != nil {
		return err
	}

	// 2. The logistics team serves its parcel-tracking agent.
	shipping, err := shippingAgent(ctx)
	if err != nil {
		return err
	}
	shippingURL, err := start(shipping)
	if err != nil {
		return err
	}

	// 3. The platform team serves the router, and composes the three
	// agents by their URLs: the router at the entry, the teams' agents
	// as its sub-agents. This value is what a topology file says
	// (docs/gateway.md):
	//
	//	version: 1
	//	gateway: {name: Company}
	//	agents: {router: ..., invoices: ..., shipping: ...}
	//	entry:
	//	  agent: router
	//	  subAgents: [{agent: invoices}, {agent: shipping}]
	rt, err := router.New(ctx, router.Config{Model: offline.New()})
	if err != nil {
		return err
	}
	routerURL, err := start(rt)
	if err != nil {
		return err
	}
	topology := &gateway.Topology{
		Version: 1,
		Agents:  map[string]string{"router": routerURL, "invoices": invoicesURL, "shipping": shippingURL},
		Entry: &gateway.Node{Agent: "router", SubAgents: []*gateway.Node{
			{Agent: "invoices"},
			{Agent: "shipping"},
		}},
	}
	topology.Gateway.Name = "Company"
	topology.Gateway.Description = "One entry to the billing and logistics teams' agents"

	// The gateway calls the agents over HTTP. Its calls share one client,
	// whose idle connections are closed when the program is done, so
	// that nothing is left running.
	hops := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hops.CloseIdleConnections()
	gw, err := gateway.New(ctx, topology, gateway.Config{
		Remote: bridge.RemoteConfig{HTTPClient: hops},
		Serve:  serve.Config{Logger: quiet},
	})
	if err != nil {
		return err
	}
	servers.Go(func() { gw.Serve(ctx) })

	// 4. Anyone asks the gateway, as they would ask any A2A agent.
	c, err := client.New(ctx, gw.URL(), client.Config{})
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	fmt.Fprintf(out, "asking %s: %s\n", c.Card().Name, c.Card().Description)
	for _, q := range questions {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, q)})
		if err != nil {
			return err
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 {
			return fmt.Errorf("%q: unexpected result %#v", q, res)
		}
		// Each artifact is named after the agent that produced it; the
		// last one is the answer.
		answer := task.Artifacts[len(task.Artifacts)-1]
		fmt.Fprintf(out, "\nQ: %s\n%s answered: %s\n", q, answer.Name, answer.Text())
	}
	return nil
}

// number is the argument of both teams' tools.
type number struct {
	Number int `json:"number" desc:"the number, as the request gives it"`
}

// invoiceAgent is the billing team's agent. Its tool looks invoices up in
// the team's books (here, a map); its skill tells other agents, and the
// router, what it does, with examples of what people ask it.
func invoiceAgent(ctx context.Context) (adk.Agent, error) {
	books := map[int]string{
		1042: "1,250.00 EUR, due 31 March, paid on 28 March",
		2001: "830.00 EUR, due 30 April, not paid yet",
	}
	find, err := tool.FromFunc("find_invoice", "Find an invoice by its number: the amount, when it is due and whether it is paid",
		func(_ context.Context, in number) (string, error) {
			if inv, ok := books[in.Number]; ok {
				return fmt.Sprintf("invoice %d: %s", in.Number, inv), nil
			}
			return fmt.Sprintf("there is no invoice %d", in.Number), nil
		})
	if err != nil {
		return nil, err
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "InvoiceAgent", Description: "Answers questions about customer invoices",
		Instruction: "You answer questions about invoices. Look them up with find_invoice.",
		Model:       offline.New(), ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{find}},
	})
	if err != nil {
		return nil, err
	}
	return adk.AgentWithConfig(ctx, agent, adk.AgentConfig{Skills: []adk.Skill{{
		ID: "invoice-status", Name: "Invoice status",
		Description: "Looks up a customer invoice by its number: the amount, the due date and whether it is paid",
		Tags:        []string{"billing", "invoice", "payment", "paid", "amount", "due"},
		Examples:    []string{"Is invoice 2001 paid?", "How much is invoice 1042?", "When is invoice 2001 due?"},
	}}})
}

// shippingAgent is the logistics team's agent, made the same way: a tool
// of the team's own, and a skill that says what it is for.
func shippingAgent(ctx context.Context) (adk.Agent, error) {
	parcels := map[int]string{
		5531: "left the Rotterdam depot this morning; out for delivery, arriving today by 18:00",
		7788: "waiting for pickup at the sender",
	}
	track, err := tool.FromFunc("track_parcel", "Track a parcel by its tracking number: where it is and when it arrives",
		func(_ context.Context, in number) (string, error) {
			if where, ok := parcels[in.Number]; ok {
				return fmt.Sprintf("parcel %d: %s", in.Number, where), nil
			}
			return fmt.Sprintf("there is no parcel %d", in.Number), nil
		})
	if err != nil {
		return nil, err
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "ShippingAgent", Description: "Tracks parcels and deliveries",
		Instruction: "You track parcels. Look them up with track_parcel.",
		Model:       offline.New(), ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{track}},
	})
	if err != nil {
		return nil, err
	}
	return adk.AgentWithConfig(ctx, agent, adk.AgentConfig{Skills: []adk.Skill{{
		ID: "parcel-tracking", Name: "Parcel tracking",
		Description: "Tracks a parcel by its tracking number: where it is now and when it will be delivered",
		Tags:        []string{"shipping", "parcel", "package", "delivery", "tracking", "shipment"},
		Examples:    []string{"Track parcel 7788", "When will package 7788 arrive?", "Has shipment 5531 been delivered?"},
	}}})
}
