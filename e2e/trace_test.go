package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/internal/adktest"
	"github.com/a2amesh/a2amesh/natsstore"
)

// collectedSpan is a span as a process exported it.
type collectedSpan struct {
	service             string
	name                string
	kind                tracepb.Span_SpanKind
	traceID, id, parent string
	attrs               map[string]string
}

func (s *collectedSpan) String() string {
	return fmt.Sprintf("%s: %q (%s) %s<-%s", s.service, s.name, strings.TrimPrefix(s.kind.String(), "SPAN_KIND_"), s.id, s.parent)
}

// otlpReceiver is an OTLP/HTTP trace receiver: what the mesh's processes
// export their spans to (POST /v1/traces, protobuf).
type otlpReceiver struct {
	srv   *http.Server
	url   string
	mu    sync.Mutex
	spans []*collectedSpan
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &otlpReceiver{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.export)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = r.srv.Close()
		<-done
	})
	return r
}

func (r *otlpReceiver) export(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var ex coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &ex); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []*collectedSpan
	for _, rs := range ex.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				cs := &collectedSpan{service: service, name: s.GetName(), kind: s.GetKind(), traceID: hex.EncodeToString(s.GetTraceId()),
					id: hex.EncodeToString(s.GetSpanId()), parent: hex.EncodeToString(s.GetParentSpanId()), attrs: map[string]string{}}
				for _, kv := range s.GetAttributes() {
					v := kv.GetValue()
					switch {
					case v.GetStringValue() != "":
						cs.attrs[kv.GetKey()] = v.GetStringValue()
					default:
						cs.attrs[kv.GetKey()] = fmt.Sprint(v.GetIntValue())
					}
				}
				got = append(got, cs)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// of returns the spans of a trace received so far.
func (r *otlpReceiver) of(traceID string) []*collectedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*collectedSpan
	for _, s := range r.spans {
		if s.traceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// TestOneTraceAcrossTheMesh asks one question through the gateway, the
// router, the supervisor and its two workers, each a process exporting
// its spans over OTLP to a receiver in the test, and checks that they
// form one trace, continuing the caller's: the gateway's request span
// under the caller's; under each remote hop (a client span), the called
// process's request span (a server span) and, below it, the agent's run
// and its model calls with their token usage; the transfers between them.
// The task events the agents publish to NATS name the trace too.
func TestOneTraceAcrossTheMesh(t *testing.T) {
	overEveryBinding(t, testOneTraceAcrossTheMesh)
}

func testOneTraceAcrossTheMesh(t *testing.T, m *mesh) {
	rcv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.url)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_always_on")
	started := time.Now().Add(-time.Second)
	_, research := m.service("research")
	_, writer := m.service("writer")
	_, sup := m.service("supervisor", "--research-url", research, "--writer-url", writer)
	_, router := m.service("router")
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
gateway: {name: Mesh}
agents: {router: %q, supervisor: %q}
entry: {agent: router, subAgents: [{agent: supervisor}]}
`, router, sup))

	// The caller's span: the test records none, it only sends its context.
	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: m.remote(gw)}).Query(ctx, "Write a report on checkpoints"))
	if got := transfers(evs); !slices.Contains(got, "RouterAgent->SupervisorAgent") || !slices.Contains(got, "SupervisorAgent->WriterAgent") {
		t.Fatalf("transfers %v in\n  %s", got, strings.Join(adktest.DescribeAll(evs), "\n  "))
	}

	// The processes export every 100 ms; a span may come a little after
	// the answer (a run's last spans end as its stream does).
	var problems []string
	var spans []*collectedSpan
	for deadline := time.Now().Add(30 * time.Second); ; {
		spans = rcv.of(tid.String())
		if problems = traceProblems(spans, sid.String()); len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(problems) > 0 {
		lines := make([]string, len(spans))
		for i, s := range spans {
			lines[i] = s.String()
		}
		sort.Strings(lines)
		t.Fatalf("the trace:\n  %s\n\n%s", strings.Join(lines, "\n  "), strings.Join(problems, "\n"))
	}
	t.Logf("one trace of %d spans across 5 processes", len(spans))

	// The task events each agent published to NATS say which trace they
	// belong to.
	nc, js, err := natsstore.Connect(ctx, m.nats, natsstore.ConnConfig{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	traced := map[string]bool{"Mesh": false, "RouterAgent": false, "SupervisorAgent": false, "ResearchAgent": false, "WriterAgent": false}
	left := len(traced)
	for we, err := range natsstore.Watch(wctx, js, started) {
		if err != nil {
			break // the bound ran out; what is missing is said below
		}
		if seen, ok := traced[we.Agent]; ok && !seen && we.TraceID == tid.String() {
			traced[we.Agent] = true
			if left--; left == 0 {
				break
			}
		}
	}
	for agent, seen := range traced {
		if !seen {
			t.Errorf("no task event of %s on NATS names the trace", agent)
		}
	}
}

// traceProblems says what the spans of the question's trace lack; none
// when they are all there. root is the caller's span.
func traceProblems(spans []*collectedSpan, root string) []string {
	var problems []string
	byID := map[string]*collectedSpan{}
	children := map[string][]*collectedSpan{}
	for _, s := range spans {
		byID[s.id] = s
		children[s.parent] = append(children[s.parent], s)
	}
	// One entry: the gateway's request span, under the caller's.
	if top := children[root]; len(top) != 1 || top[0].service != "gateway" || top[0].kind != tracepb.Span_SPAN_KIND_SERVER {
		problems = append(problems, fmt.Sprintf("under the caller's span: %v, want the gateway's request span (a server span)", top))
	}
	// One tree: every span's parent is in the trace.
	for _, s := range spans {
		if s.parent != root && byID[s.parent] == nil {
			problems = append(problems, fmt.Sprintf("%s: its parent is not in the trace (yet)", s))
		}
	}
	descendants := func(s *collectedSpan) []*collectedSpan {
		var out []*collectedSpan
		queue := []*collectedSpan{s}
		for len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			for _, k := range children[c.id] {
				out = append(out, k)
				queue = append(queue, k)
			}
		}
		return out
	}
	find := func(service, name string) *collectedSpan {
		for _, s := range spans {
			if s.service == service && s.name == name {
				return s
			}
		}
		return nil
	}
	// The hops: who calls whom, and the process of the agent called.
	hops := []struct{ from, agent, to string }{
		{"gateway", "RouterAgent", "router"},
		{"gateway", "SupervisorAgent", "supervisor"},
		{"supervisor", "ResearchAgent", "research"},
		{"supervisor", "WriterAgent", "writer"},
	}
	for _, h := range hops {
		hop := find(h.from, "remote agent "+h.agent)
		if hop == nil {
			problems = append(problems, fmt.Sprintf("%s: no span of its call to %s", h.from, h.agent))
			continue
		}
		if hop.kind != tracepb.Span_SPAN_KIND_CLIENT || hop.attrs["a2amesh.remote.task_id"] == "" {
			problems = append(problems, fmt.Sprintf("%s: a client span with the remote task's id", hop))
		}
		var served *collectedSpan
		for _, c := range children[hop.id] {
			if c.service == h.to && c.kind == tracepb.Span_SPAN_KIND_SERVER {
				served = c
			}
		}
		if served == nil {
			problems = append(problems, fmt.Sprintf("%s: no request span of %s under it", hop, h.to))
			continue
		}
		var run, chat bool
		for _, d := range descendants(served) {
			run = run || d.service == h.to && d.name == "invoke_agent "+h.agent
			chat = chat || d.service == h.to && d.name == "chat offline" && d.attrs["gen_ai.usage.input_tokens"] != "0" && d.attrs["gen_ai.usage.output_tokens"] != ""
		}
		if !run || !chat {
			problems = append(problems, fmt.Sprintf("%s: under the request span of %s, its run %v and a model call with its token usage %v", hop, h.to, run, chat))
		}
	}
	// The gateway carries out the router's transfer: the supervisor runs
	// under the transfer.
	if tr := find("gateway", "transfer RouterAgent -> SupervisorAgent"); tr == nil {
		problems = append(problems, "gateway: no span of the transfer from RouterAgent to SupervisorAgent")
	} else if !slices.ContainsFunc(descendants(tr), func(s *collectedSpan) bool { return s.name == "remote agent SupervisorAgent" }) {
		problems = append(problems, fmt.Sprintf("%s: the call to SupervisorAgent is not under it", tr))
	}
	return problems
}
