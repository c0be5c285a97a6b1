package push

import (
	"context"
	"net/http"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/telemetry"
)

// TestNotifyCounted: each notification is counted once, by how it ended.
func TestNotifyCounted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		allow   []string // the networks the guard lets the sender reach
		outcome string
	}{
		{"delivered", http.StatusOK, []string{"127.0.0.0/8"}, "delivered"},
		{"refused by the receiver", http.StatusBadRequest, []string{"127.0.0.0/8"}, "failed"},
		{"not taken after the retries", http.StatusServiceUnavailable, []string{"127.0.0.0/8"}, "failed"},
		{"destination not allowed", http.StatusOK, nil, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel, err := telemetry.New(telemetry.Config{})
			if err != nil {
				t.Fatal(err)
			}
			h := newHook(t, statuses(tc.status))
			s := newSender(t)
			s.Guard = netguard.Guard{Allow: tc.allow}
			s.MaxAttempts, s.Telemetry = 2, tel
			_ = s.Notify(context.Background(), hookConfig(h.url()), statusEvent(a2a.TaskStateWorking), nil)
			families, err := tel.Registry().Gather()
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]float64{}
			for _, f := range families {
				if f.GetName() != "a2a_push_deliveries_total" {
					continue
				}
				for _, m := range f.Metric {
					counts[m.Label[0].GetValue()] = m.GetCounter().GetValue()
				}
			}
			if len(counts) != 1 || counts[tc.outcome] != 1 {
				t.Errorf("a2a_push_deliveries_total by outcome = %v, want %s: 1", counts, tc.outcome)
			}
		})
	}
}
