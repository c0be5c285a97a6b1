package otlp

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is a test OTLP/HTTP trace receiver: it decodes each export
// with the official message types and keeps it, with its headers.
type collector struct {
	srv *httptest.Server

	mu      sync.Mutex
	reqs    []*coltrace.ExportTraceServiceRequest
	headers []http.Header
	paths   []string
	// fail is how many requests to answer 503 (Retry-After: 0) first.
	fail int
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.fail > 0 {
			c.fail--
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		req := new(coltrace.ExportTraceServiceRequest)
		if err == nil {
			err = proto.Unmarshal(raw, req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.reqs = append(c.reqs, req)
		c.headers = append(c.headers, r.Header.Clone())
		c.paths = append(c.paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// received returns every ResourceSpans received, in a canonical order:
// resources by their encoding, and a resource's scopes by theirs (the
// official exporter's order of both is a map's).
func (c *collector) received(t *testing.T) []*tracepb.ResourceSpans {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []*tracepb.ResourceSpans
	for _, r := range c.reqs {
		all = append(all, r.ResourceSpans...)
	}
	key := func(m proto.Message) string {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, rs := range all {
		slices.SortStableFunc(rs.ScopeSpans, func(a, b *tracepb.ScopeSpans) int {
			return strings.Compare(key(a.Scope)+a.SchemaUrl, key(b.Scope)+b.SchemaUrl)
		})
	}
	slices.SortStableFunc(all, func(a, b *tracepb.ResourceSpans) int {
		return strings.Compare(key(a.Resource)+a.SchemaUrl, key(b.Resource)+b.SchemaUrl)
	})
	return all
}

// testSpans is a batch with every kind of attribute value, events, links,
// statuses, kinds, local and remote parents, dropped counts, and spans of
// two resources and three scopes interleaved; long values make messages
// whose lengths take two and three bytes.
func testSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, err := trace.ParseTraceState("vendor=value,other=x")
	if err != nil {
		t.Fatal(err)
	}
	sc := func(id byte, remote bool, flags trace.TraceFlags, st trace.TraceState) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{id, 1}, TraceFlags: flags, TraceState: st, Remote: remote})
	}
	every := []attribute.KeyValue{
		attribute.String("s", "value"), attribute.String("empty", ""), attribute.String("long", strings.Repeat("x", 20000)),
		attribute.Bool("t", true), attribute.Bool("f", false),
		attribute.Int64("i", -42), attribute.Int64("zero", 0), attribute.Int64("max", 1<<62),
		attribute.Float64("d", 3.25), attribute.Float64("dz", 0),
		attribute.ByteSlice("bytes", []byte{0, 1, 2}), attribute.ByteSlice("nobytes", nil),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{1, -1, 0}),
		attribute.Float64Slice("ds", []float64{0.5, -2}), attribute.StringSlice("ss", []string{"a", "", "c"}),
		attribute.StringSlice("noss", nil),
		attribute.Slice("mixed", attribute.StringValue("a"), attribute.Int64Value(2), attribute.SliceValue(attribute.BoolValue(true)), attribute.MapValue(attribute.String("k", "v"))),
		attribute.Map("map", attribute.String("k", "v"), attribute.Int("n", 1), attribute.Map("inner", attribute.Float64("f", 1.5))),
		attribute.Map("nomap"),
		{Key: "nothing", Value: attribute.Value{}},
	}
	res1 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.37.0", attribute.String("service.name", "one"), attribute.Int("n", 1))
	res2 := resource.NewSchemaless(attribute.String("service.name", "two"), attribute.StringSlice("tags", []string{"a", "b"}))
	scopes := []instrumentation.Scope{
		{Name: "github.com/a2amesh/a2amesh"},
		{Name: "other", Version: "v1.2.3", SchemaURL: "https://opentelemetry.io/schemas/1.26.0", Attributes: attribute.NewSet(attribute.Bool("x", true))},
		{},
	}
	start := time.Date(2026, 11, 27, 12, 0, 0, 123456789, time.UTC)
	var spans []sdktrace.ReadOnlySpan
	for i := range 40 {
		stub := tracetest.SpanStub{
			Name:                 []string{"SendMessage", "a2a.run", "", strings.Repeat("n", 300)}[i%4],
			SpanContext:          sc(byte(i), false, trace.FlagsSampled, ts),
			SpanKind:             trace.SpanKind(i % 7), // 6 is no kind the API has
			StartTime:            start.Add(time.Duration(i) * time.Millisecond),
			EndTime:              start.Add(time.Duration(i+1) * time.Millisecond),
			Resource:             []*resource.Resource{res1, res2}[i%2],
			InstrumentationScope: scopes[i%3],
			DroppedAttributes:    i % 3,
			DroppedEvents:        i % 2,
			DroppedLinks:         i % 5,
		}
		switch i % 4 {
		case 1:
			stub.Parent = sc(200, false, trace.FlagsSampled, trace.TraceState{})
		case 2:
			stub.Parent = sc(201, true, 0, ts)
		}
		switch i % 3 {
		case 0:
			stub.Status = sdktrace.Status{Code: codes.Error, Description: "INTERNAL_ERROR"}
		case 1:
			stub.Status = sdktrace.Status{Code: codes.Ok}
		}
		if i%5 == 0 {
			stub.Attributes = every
			stub.Events = []sdktrace.Event{
				{Name: "exception", Time: start, Attributes: every[:5], DroppedAttributeCount: 2},
				{Name: "", Time: time.Unix(0, 0)},
			}
			stub.Links = []sdktrace.Link{
				{SpanContext: sc(100, true, trace.FlagsSampled, ts), Attributes: every[5:9], DroppedAttributeCount: 1},
				{SpanContext: sc(101, false, 0, trace.TraceState{})},
			}
		} else {
			stub.Attributes = []attribute.KeyValue{attribute.String("a2a.binding", "JSONRPC"), attribute.Int("i", i)}
		}
		spans = append(spans, stub.Snapshot())
	}
	return spans
}

// TestExporterSendsWhatTheOfficialOneSends sends the same batches through
// the official OTLP/HTTP exporter and through exporter, and compares what
// a collector decodes of each.
func TestExporterSendsWhatTheOfficialOneSends(t *testing.T) {
	ctx := context.Background()
	spans := testSpans(t)
	batches := [][]sdktrace.ReadOnlySpan{spans, spans[:1], spans[3:17], {nil, spans[5], nil}, nil}

	official, ours := newCollector(t), newCollector(t)
	oexp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(official.srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	exp, err := newExporter(ctx, otlptracehttp.NewClient(otlptracehttp.WithEndpointURL(ours.srv.URL+"/v1/traces")))
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range batches {
		if err := oexp.ExportSpans(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := exp.ExportSpans(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []sdktrace.SpanExporter{oexp, exp} {
		if err := e.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(ours.reqs) != len(official.reqs) {
		t.Fatalf("requests: %d, the official exporter's %d", len(ours.reqs), len(official.reqs))
	}
	want, got := official.received(t), ours.received(t)
	if len(got) != len(want) {
		t.Fatalf("ResourceSpans: %d, the official exporter's %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("ResourceSpans %d differs:\n got %v\nwant %v", i, got[i], want[i])
		}
	}
	if n := countSpans(got); n != 40+1+14+1 {
		t.Errorf("spans received: %d", n)
	}
}

func countSpans(rss []*tracepb.ResourceSpans) int {
	n := 0
	for _, rs := range rss {
		for _, ss := range rs.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	return n
}

// TestExporterRetries: a batch the collector is too busy to take (503,
// Retry-After) is sent again, as the client's retry settings say.
func TestExporterRetries(t *testing.T) {
	ctx := context.Background()
	c := newCollector(t)
	c.fail = 2
	exp, err := newExporter(ctx, otlptracehttp.NewClient(otlptracehttp.WithEndpointURL(c.srv.URL+"/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: time.Millisecond, MaxInterval: time.Millisecond, MaxElapsedTime: time.Minute})))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Shutdown(ctx) }()
	if err := exp.ExportSpans(ctx, testSpans(t)[:3]); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) != 1 || c.fail != 0 {
		t.Fatalf("requests received: %d, refusals left %d; want 1 after 2 refusals", len(c.reqs), c.fail)
	}
	if n := countSpans(c.reqs[0].ResourceSpans); n != 3 {
		t.Errorf("spans received: %d, want 3", n)
	}
}

// TestTracerProviderExports: the tracer provider the environment asks for
// sends its spans with the client's settings as the environment says
// (endpoint, headers, gzip); what it sends is what was recorded.
func TestTracerProviderExports(t *testing.T) {
	c := newCollector(t)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": c.srv.URL + "/custom/path",
		"OTEL_EXPORTER_OTLP_HEADERS":         "api-key=secret%20one,x-tenant=7",
		"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
		"OTEL_SERVICE_NAME":                  "svc",
	}
	for k, v := range env { // the official client reads the process's environment
		t.Setenv(k, v)
	}
	ctx := context.Background()
	tp, shutdown, err := TracerProvider(ctx, "default", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(ctx, "SendMessage", trace.WithAttributes(attribute.String("a2a.method", "SendMessage")))
	span.End()
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) != 1 {
		t.Fatalf("requests received: %d, want 1", len(c.reqs))
	}
	if c.paths[0] != "/custom/path" {
		t.Errorf("path %s, want the traces endpoint's, /custom/path", c.paths[0])
	}
	h := c.headers[0]
	if h.Get("Api-Key") != "secret one" || h.Get("X-Tenant") != "7" || h.Get("Content-Encoding") != "gzip" || h.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("headers: %v", h)
	}
	rs := c.reqs[0].ResourceSpans
	if len(rs) != 1 || len(rs[0].ScopeSpans) != 1 || len(rs[0].ScopeSpans[0].Spans) != 1 {
		t.Fatalf("received %v", c.reqs[0])
	}
	s := rs[0].ScopeSpans[0].Spans[0]
	if s.Name != "SendMessage" || len(s.Attributes) != 1 || s.Attributes[0].Value.GetStringValue() != "SendMessage" {
		t.Errorf("span %v", s)
	}
	var service string
	for _, kv := range rs[0].Resource.Attributes {
		if kv.Key == "service.name" {
			service = kv.Value.GetStringValue()
		}
	}
	if service != "svc" {
		t.Errorf("service.name %q, want svc", service)
	}
}

// BenchmarkEncode is the cost of encoding a batch of 512 spans like a
// request's (the batch processor's default batch), per span.
func BenchmarkEncode(b *testing.B) {
	res := resource.NewSchemaless(attribute.String("service.name", "echo"))
	scope := instrumentation.Scope{Name: "github.com/a2amesh/a2amesh"}
	tid := trace.TraceID{1}
	spans := make([]sdktrace.ReadOnlySpan, 512)
	for i := range spans {
		spans[i] = tracetest.SpanStub{
			Name:        "SendMessage",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{byte(i), 1}, TraceFlags: trace.FlagsSampled}),
			SpanKind:    trace.SpanKindServer, StartTime: time.Now(), EndTime: time.Now(),
			Attributes: []attribute.KeyValue{attribute.String("a2a.binding", "JSONRPC"), attribute.String("a2a.method", "SendMessage"),
				attribute.String("a2a.task.id", "01a21cf0-3bd5-7a5c-b909-b0ecf09655b1")},
			Resource: res, InstrumentationScope: scope,
		}.Snapshot()
	}
	var e encoder
	var n int
	for b.Loop() {
		n = len(e.encode(spans)[0])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
	b.ReportMetric(float64(n)/float64(len(spans)), "bytes/span")
}
