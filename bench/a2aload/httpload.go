package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// conn is a minimal HTTP/1.1 keep-alive client connection. A load driver
// on the same two cores as the server must spend as little CPU as it can,
// and net/http's client costs several times more per request than the
// protocol work it would measure.
type conn struct {
	c  net.Conn
	br *bufio.Reader
}

func dial(addr string) (*conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, br: bufio.NewReaderSize(c, 64<<10)}, nil
}

// do sends one prepared request and reads the whole response, returning
// the body size. It understands Content-Length and chunked bodies. A
// JSON-RPC error answer (HTTP 200, a body with an "error" member) is
// errRefused.
func (c *conn) do(req []byte) (int, error) {
	if _, err := c.c.Write(req); err != nil {
		return 0, err
	}
	status, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(status) < 12 || string(status[9:12]) != "200" {
		return 0, fmt.Errorf("HTTP status %q", bytes.TrimSpace(status))
	}
	length, chunked := -1, false
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		k, v, _ := bytes.Cut(line, []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			length, _ = strconv.Atoi(string(v))
		case bytes.EqualFold(k, []byte("Transfer-Encoding")) && bytes.EqualFold(v, []byte("chunked")):
			chunked = true
		}
	}
	if !chunked {
		if length < 0 {
			return 0, errors.New("response without length")
		}
		head, _ := c.br.Peek(min(length, 64))
		refused := bytes.Contains(head, []byte(`"error":`))
		if _, err := c.br.Discard(length); err != nil || !refused {
			return length, err
		}
		return length, errRefused
	}
	total := 0
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return total, err
		}
		size, err := strconv.ParseInt(string(bytes.TrimRight(bytes.SplitN(line, []byte(";"), 2)[0], "\r\n")), 16, 64)
		if err != nil {
			return total, fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			for { // trailers, then the blank line
				l, err := c.br.ReadSlice('\n')
				if err != nil {
					return total, err
				}
				if len(bytes.TrimRight(l, "\r\n")) == 0 {
					return total, nil
				}
			}
		}
		if _, err := c.br.Discard(int(size) + 2); err != nil {
			return total, err
		}
		total += int(size)
	}
}

func (c *conn) close() { c.c.Close() }

// errRefused is a JSON-RPC error answer: the server is up and said no.
var errRefused = errors.New("the server answered with a JSON-RPC error")

// request builds the bytes of a JSON-RPC POST.
func request(host, path, method, version, text string) []byte {
	return requestWith(host, path, method, version, text, "")
}

// requestWith is request with a send's configuration (JSON, "" for none).
func requestWith(host, path, method, version, text, configuration string) []byte {
	params := fmt.Sprintf(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":%q}]}}`, text)
	if configuration != "" {
		params = params[:len(params)-1] + `,"configuration":` + configuration + `}`
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params)
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nA2A-Version: %s\r\nContent-Length: %d\r\n\r\n%s",
		path, host, version, len(body), body)
}

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

// load sends req over conns connections for d, or until maxRequests were
// sent, and measures every request.
func load(ctx context.Context, addr string, req []byte, conns int, d time.Duration, maxRequests int) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var sent atomic.Int64
	var wg sync.WaitGroup
	lat := make([][]time.Duration, conns)
	errs := make([]int, conns)
	refused := make([]int, conns)
	var firstErr error
	var errOnce sync.Once
	start := time.Now()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(addr)
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				return
			}
			defer c.close()
			mine := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil && sent.Add(1) <= int64(maxRequests) {
				t0 := time.Now()
				_, err := c.do(req)
				if errors.Is(err, errRefused) {
					refused[i]++
					err = nil
				}
				if err != nil {
					errs[i]++
					errOnce.Do(func() { firstErr = err })
					if c, err = dial(addr); err != nil {
						return
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			lat[i] = mine
		}()
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
