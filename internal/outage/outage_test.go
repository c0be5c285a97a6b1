package outage

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errDown = errors.New("down")

func TestOutlast(t *testing.T) {
	errRefused := errors.New("refused")
	transient := func(err error) bool { return errors.Is(err, errDown) }
	tests := []struct {
		name      string
		results   []error // op's answers, in turn; the last repeats
		limit     time.Duration
		want      error
		wantCalls int
		notified  bool
	}{
		{"succeeds at once", []error{nil}, time.Minute, nil, 1, false},
		{"refused at once", []error{errRefused}, time.Minute, errRefused, 1, false},
		{"rides out an outage", []error{errDown, errDown, nil}, time.Minute, nil, 3, true},
		{"refused after an outage", []error{errDown, errRefused}, time.Minute, errRefused, 2, true},
		{"gives up after the limit", []error{errDown}, 0, errDown, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, notified := 0, 0
			err := Outlast(context.Background(), tt.limit, transient, func(error) { notified++ }, func() error {
				r := tt.results[min(calls, len(tt.results)-1)]
				calls++
				return r
			})
			if !errors.Is(err, tt.want) && err != tt.want {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if calls != tt.wantCalls || (notified == 1) != tt.notified || notified > 1 {
				t.Fatalf("%d calls, notified %d times", calls, notified)
			}
		})
	}
}

func TestOutlastStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Outlast(ctx, time.Hour, func(error) bool { return true }, nil, func() error {
		if calls++; calls == 2 {
			cancel()
		}
		return errDown
	})
	if !errors.Is(err, errDown) || calls != 2 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}
