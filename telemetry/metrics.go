package telemetry

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are a2amesh's Prometheus instruments. Names follow Prometheus's
// conventions: a2a_ for what the protocol defines (requests, tasks,
// webhooks), a2amesh_ for the mesh's own parts; base units (seconds);
// _total on counters.
type metrics struct {
	requests        *prometheus.CounterVec   // binding, method, code
	requestDuration *prometheus.HistogramVec // binding, method
	tasks           *prometheus.CounterVec   // state
	remote          *prometheus.HistogramVec // agent, method, code
	events          prometheus.Counter
	publish         *prometheus.HistogramVec // result
	model           *prometheus.HistogramVec // model, result
	tokens          *prometheus.CounterVec   // model, kind
	push            *prometheus.CounterVec   // outcome
}

func newMetrics(r prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "a2a_server_requests_total",
			Help: "A2A requests served, by binding, method and result code (OK, or the A2A error's name)."},
			[]string{"binding", "method", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "a2a_server_request_duration_seconds",
			Help: "Time from an A2A request's arrival to its answer (for a stream, to its end), by binding and method.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)},
			[]string{"binding", "method"}),
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "a2a_server_task_states_total",
			Help: "Tasks that reached a state, by state (TASK_STATE_...)."}, []string{"state"}),
		remote: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "a2amesh_remote_agent_request_duration_seconds",
			Help: "Time a call to a remote agent took, by agent, method and result code.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)},
			[]string{"agent", "method", "code"}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "a2amesh_task_events_total",
			Help: "Task events committed to the task stores."}),
		publish: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "a2amesh_nats_publish_duration_seconds",
			Help: "Time an acknowledged JetStream publish of task events took, by result (ok, error).", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)},
			[]string{"result"}),
		model: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "a2amesh_model_request_duration_seconds",
			Help: "Time a chat model call took, by model and result (ok, error).", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)},
			[]string{"model", "result"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "a2amesh_model_tokens_total",
			Help: "Tokens chat models reported, by model and kind (prompt, completion)."}, []string{"model", "kind"}),
		push: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "a2a_push_deliveries_total",
			Help: "Push notification deliveries, by outcome (delivered, failed, refused)."}, []string{"outcome"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.requestDuration, m.tasks, m.remote, m.events, m.publish, m.model, m.tokens, m.push} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
	}
	return m, nil
}

// MetricsHandler serves the metrics in Prometheus's exposition formats;
// 404 for the nil *Telemetry.
func (t *Telemetry) MetricsHandler() http.Handler {
	if t == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
}

// Request records an A2A request a binding served: code is "OK" or the
// A2A error's name.
func (t *Telemetry) Request(binding, method, code string, took time.Duration) {
	if t == nil {
		return
	}
	t.metrics.requests.WithLabelValues(binding, method, code).Inc()
	t.metrics.requestDuration.WithLabelValues(binding, method).Observe(took.Seconds())
}

// TaskState records a task reaching state.
func (t *Telemetry) TaskState(state string) {
	if t == nil {
		return
	}
	t.metrics.tasks.WithLabelValues(state).Inc()
}

// Remote records a call to a remote agent.
func (t *Telemetry) Remote(agent, method, code string, took time.Duration) {
	if t == nil {
		return
	}
	t.metrics.remote.WithLabelValues(agent, method, code).Observe(took.Seconds())
}

// Events records n task events committed.
func (t *Telemetry) Events(n int) {
	if t == nil {
		return
	}
	t.metrics.events.Add(float64(n))
}

// Publish records an acknowledged JetStream publish of task events.
func (t *Telemetry) Publish(took time.Duration, err error) {
	if t == nil {
		return
	}
	t.metrics.publish.WithLabelValues(result(err)).Observe(took.Seconds())
}

// Model records a chat model call and the tokens it reported.
func (t *Telemetry) Model(model string, took time.Duration, promptTokens, completionTokens int, err error) {
	if t == nil {
		return
	}
	t.metrics.model.WithLabelValues(model, result(err)).Observe(took.Seconds())
	if promptTokens > 0 {
		t.metrics.tokens.WithLabelValues(model, "prompt").Add(float64(promptTokens))
	}
	if completionTokens > 0 {
		t.metrics.tokens.WithLabelValues(model, "completion").Add(float64(completionTokens))
	}
}

// Push records a push notification delivery: delivered, failed (the
// receiver did not take it after the retries) or refused (not sent: the
// URL is not allowed).
func (t *Telemetry) Push(outcome string) {
	if t == nil {
		return
	}
	t.metrics.push.WithLabelValues(outcome).Inc()
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
