package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
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

// dial connects to addr. Every read and write on the connection fails
// after deadline, so that a server that stops answering cannot hold a
// load run past its time.
func dial(addr string, deadline time.Time) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, time.Until(deadline))
	if err != nil {
		return nil, err
	}
	if err := c.SetDeadline(deadline); err != nil {
		c.Close()
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
	body := jsonrpcBody(method, text, configuration)
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nA2A-Version: %s\r\nContent-Length: %d\r\n\r\n%s",
		path, host, version, len(body), body)
}

// jsonrpcBody is a JSON-RPC request of method with sendBody's params.
func jsonrpcBody(method, text, configuration string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, sendBody(text, configuration))
}

// sendBody is a SendMessageRequest of a user message of text, with a
// configuration (JSON, "" for none): JSON-RPC's params and HTTP+JSON's
// body.
func sendBody(text, configuration string) string {
	body := fmt.Sprintf(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":%q}]}}`, text)
	if configuration != "" {
		body = body[:len(body)-1] + `,"configuration":` + configuration + `}`
	}
	return body
}

// restRequest builds the bytes of an HTTP+JSON POST of a send to route
// ("/message:send" or "/message:stream" under the interface's path).
func restRequest(host, route, text string) []byte {
	body := sendBody(text, "")
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nA2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s",
		route, host, restContentType, len(body), body)
}

// header is a request header every request of a load run carries: the
// caller's credentials, for a gated server. Over gRPC it is metadata,
// its name in lower case.
type header struct{ name, value string }

// headerFlag is a repeatable flag of "Name: value" headers.
type headerFlag []header

func (f *headerFlag) String() string {
	var s []string
	for _, h := range *f {
		s = append(s, h.name+": "+h.value)
	}
	return strings.Join(s, ", ")
}

func (f *headerFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("%q: a header is \"Name: value\" on one line", v)
	}
	*f = append(*f, header{name, value})
	return nil
}

// withHeaders returns the prepared HTTP request req with hs added after
// its request line.
func withHeaders(req []byte, hs []header) []byte {
	if len(hs) == 0 {
		return req
	}
	line := bytes.IndexByte(req, '\n') + 1
	out := append([]byte(nil), req[:line]...)
	for _, h := range hs {
		out = fmt.Appendf(out, "%s: %s\r\n", h.name, h.value)
	}
	return append(out, req[line:]...)
}

// restContentType is the media type the HTTP+JSON binding asks for (spec §11.1).
const restContentType = "application/a2a+json"

// load sends req over conns connections for d, or until maxRequests were
// sent, and measures every request. A connection that fails is dialled
// again; one that cannot be ends its worker.
func load(ctx context.Context, addr string, req []byte, conns int, d time.Duration, maxRequests int) (result, error) {
	deadline := time.Now().Add(d + callGrace)
	return hammer(ctx, conns, d, maxRequests, func(int) (worker, error) {
		c, err := dial(addr, deadline)
		if err != nil {
			return nil, err
		}
		return &httpWorker{c: c, addr: addr, req: req, deadline: deadline}, nil
	})
}

// httpWorker sends one prepared request at a time on its connection.
type httpWorker struct {
	c        *conn
	addr     string
	req      []byte
	deadline time.Time
}

func (w *httpWorker) call() error {
	_, err := w.c.do(w.req)
	if err == nil || errors.Is(err, errRefused) {
		return err
	}
	w.c.close()
	c, derr := dial(w.addr, w.deadline)
	if derr != nil {
		w.c = nil
		return fmt.Errorf("%w; dial again: %w (%w)", err, derr, errStop)
	}
	w.c = c
	return err
}

func (w *httpWorker) close() {
	if w.c != nil {
		w.c.close()
	}
}
