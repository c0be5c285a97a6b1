package main

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// callGrace is how long a request in flight when a load run's time is up
// may take to finish before it counts as failed.
const callGrace = 10 * time.Second

// result is what one load run measured.
type result struct {
	Requests int
	Errors   int
	// Refused counts the requests answered with a JSON-RPC error (also
	// in Requests and Latencies).
	Refused   int
	Elapsed   time.Duration
	Latencies []time.Duration // sorted
}

func (r result) rate() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

func (r result) pct(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.Latencies[min(len(r.Latencies)-1, int(p*float64(len(r.Latencies))))]
}

// worker makes one request at a time, on a connection or a stream slot
// of its own.
type worker interface {
	// call makes one request and waits for its whole answer. errRefused
	// is an answer that said no; an error wrapping errStop ends the
	// worker; any other error counts as a failed request.
	call() error
	close()
}

// errStop marks a worker's error after which it cannot go on.
var errStop = errors.New("the worker stops")

// hammer runs n workers, the ith opened by open(i) on its own goroutine, making requests one after
// the other until d has passed or maxRequests were sent, and times every
// request.
func hammer(ctx context.Context, n int, d time.Duration, maxRequests int, open func(i int) (worker, error)) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var sent atomic.Int64
	var wg sync.WaitGroup
	lat := make([][]time.Duration, n)
	errs := make([]int, n)
	refused := make([]int, n)
	var firstErr error
	var errOnce sync.Once
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			w, err := open(i)
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				return
			}
			defer w.close()
			mine := make([]time.Duration, 0, 4096)
			defer func() { lat[i] = mine }()
			for ctx.Err() == nil && sent.Add(1) <= int64(maxRequests) {
				t0 := time.Now()
				err := w.call()
				if errors.Is(err, errRefused) {
					refused[i]++
					err = nil
				}
				if err != nil {
					errs[i]++
					errOnce.Do(func() { firstErr = err })
					if errors.Is(err, errStop) {
						return
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
		})
	}
	wg.Wait()
	res := result{Elapsed: time.Since(start)}
	for i := range lat {
		res.Latencies = append(res.Latencies, lat[i]...)
		res.Errors += errs[i]
		res.Refused += refused[i]
	}
	res.Requests = len(res.Latencies)
	slices.Sort(res.Latencies)
	if res.Requests == 0 && firstErr != nil {
		return res, firstErr
	}
	return res, nil
}
