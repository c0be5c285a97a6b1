package bridge_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

var invoiceSkills = []adk.Skill{
	{ID: "invoices", Name: "Invoices", Description: "Finds invoices and their totals", Tags: []string{"invoice", "billing"},
		Examples: []string{"What is the total of invoice 1234?", `Which invoices are "overdue"?`}},
	{ID: "refunds", Name: "Refunds"},
}

// An agent's declared skills are its card's, and a RemoteAgent declares
// them again; an agent that declares none has today's one skill.
func TestCardSkills(t *testing.T) {
	ctx := context.Background()
	plain := agent(t, "Plain", "does plain things", modeltest.New())
	if got := bridge.Card(ctx, plain, "http://x/").Skills; !reflect.DeepEqual(got,
		[]a2a.AgentSkill{{ID: "Plain", Name: "Plain", Description: "does plain things", Tags: []string{"adk"}}}) {
		t.Fatalf("skills of an agent that declares none: %+v", got)
	}
	declaring, err := adk.AgentWithConfig(ctx, agent(t, "InvoiceAgent", "Answers billing questions", modeltest.New()),
		adk.AgentConfig{Skills: invoiceSkills})
	if err != nil {
		t.Fatal(err)
	}
	card := bridge.Card(ctx, declaring, "http://x/")
	want := []a2a.AgentSkill{
		{ID: "invoices", Name: "Invoices", Description: "Finds invoices and their totals", Tags: []string{"invoice", "billing"},
			Examples: []string{"What is the total of invoice 1234?", `Which invoices are "overdue"?`}},
		{ID: "refunds", Name: "Refunds", Tags: []string{}},
	}
	if !reflect.DeepEqual(card.Skills, want) {
		t.Fatalf("card skills %+v", card.Skills)
	}
	r := remote(t, serveAgent(t, declaring))
	if got := adk.SkillsOf(ctx, r); !reflect.DeepEqual(got, []adk.Skill{invoiceSkills[0], {ID: "refunds", Name: "Refunds", Tags: []string{}}}) {
		t.Fatalf("the remote agent declares %+v", got)
	}
}

// A remote agent's model sees the skills of the caller's agents it may
// transfer to: they cross the wire with the run.
func TestCallerSkillsCrossTheWire(t *testing.T) {
	ctx := context.Background()
	m := modeltest.New(answer("done"))
	url := serveAgent(t, agent(t, "RouterAgent", "Routes requests", m))
	invoices, err := adk.AgentWithConfig(ctx, agent(t, "InvoiceAgent", "Answers billing questions", modeltest.New()),
		adk.AgentConfig{Skills: invoiceSkills})
	if err != nil {
		t.Fatal(err)
	}
	root, err := adk.SetSubAgents(ctx, remote(t, url), []adk.Agent{invoices})
	if err != nil {
		t.Fatal(err)
	}
	adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, "What do I owe?"))
	sys := m.Calls()[0].Input[0]
	if sys.Role != schema.System || !strings.HasSuffix(sys.Content, "- InvoiceAgent: Answers billing questions\n"+
		`  Skill "Invoices": Finds invoices and their totals`+"\n"+
		"    Tags: invoice, billing\n"+
		`    Examples: "What is the total of invoice 1234?", "Which invoices are \"overdue\"?"`+"\n"+
		`  Skill "Refunds"`) {
		t.Fatalf("the remote router's instruction:\n%s", sys.Content)
	}
}
