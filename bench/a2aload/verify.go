package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// The load drivers read answers without parsing them; verify checks,
// once before each measurement and with full clients, that the answers
// are the echo agent's, so that no server is measured answering fast
// with an error or with less work than the other.

// echoEvent is one event of an answer, whatever the binding.
type echoEvent struct {
	kind  string // task, statusUpdate, artifactUpdate or message
	state string // a task's or a status update's, as TASK_STATE_COMPLETED
	text  string // the text of a task's artifacts or of an artifact update
}

// streamEvents is how many events the echo agent streams for a send:
// the Task, WORKING, ten artifact chunks, COMPLETED.
const streamEvents = 13

const completed = "TASK_STATE_COMPLETED"

// verify sends sc once over ep, with the headers hs, and checks the
// answer.
func verify(ctx context.Context, ep endpoint, sc scenario, hs []header) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var evs []echoEvent
	var err error
	if ep.binding == bindingGRPC {
		evs, err = answerGRPC(ctx, ep, sc, hs)
	} else {
		evs, err = answerHTTP(ctx, ep, sc, hs)
	}
	if err != nil {
		return err
	}
	return checkEcho(sc, evs)
}

// checkEcho checks the events of an answer to sc: a blocking send's
// completed task echoing the text in its artifact, or a stream of
// streamEvents events from the task to COMPLETED whose artifact chunks
// make up the text.
func checkEcho(sc scenario, evs []echoEvent) error {
	if sc.method == "SendMessage" {
		if len(evs) != 1 || evs[0].kind != "task" || evs[0].state != completed || evs[0].text != sc.text {
			return fmt.Errorf("the answer is %+v, not a completed task echoing %q", evs, sc.text)
		}
		return nil
	}
	if len(evs) != streamEvents {
		return fmt.Errorf("the stream has %d events, not %d: %+v", len(evs), streamEvents, evs)
	}
	last := evs[len(evs)-1]
	if evs[0].kind != "task" || last.kind != "statusUpdate" || last.state != completed {
		return fmt.Errorf("the stream does not go from a task to COMPLETED: %+v", evs)
	}
	var text strings.Builder
	for _, e := range evs {
		if e.kind == "artifactUpdate" {
			text.WriteString(e.text)
		}
	}
	if text.String() != sc.text {
		return fmt.Errorf("the stream's artifact chunks make %q, not %q", text.String(), sc.text)
	}
	return nil
}

// jsonArtifact and jsonEvent are the parts of a StreamResponse (the
// result of a JSON-RPC send, or an HTTP+JSON answer) that checkEcho reads.
type jsonArtifact struct {
	Parts []struct {
		Text string `json:"text"`
	} `json:"parts"`
}

type jsonStatus struct {
	State string `json:"state"`
}

type jsonEvent struct {
	Task *struct {
		Status    jsonStatus     `json:"status"`
		Artifacts []jsonArtifact `json:"artifacts"`
	} `json:"task"`
	StatusUpdate *struct {
		Status jsonStatus `json:"status"`
	} `json:"statusUpdate"`
	ArtifactUpdate *struct {
		Artifact jsonArtifact `json:"artifact"`
	} `json:"artifactUpdate"`
	Message json.RawMessage `json:"message"`
}

func (a jsonArtifact) text() string {
	var b strings.Builder
	for _, p := range a.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (e jsonEvent) echo() echoEvent {
	switch {
	case e.Task != nil:
		var text strings.Builder
		for _, a := range e.Task.Artifacts {
			text.WriteString(a.text())
		}
		return echoEvent{kind: "task", state: e.Task.Status.State, text: text.String()}
	case e.StatusUpdate != nil:
		return echoEvent{kind: "statusUpdate", state: e.StatusUpdate.Status.State}
	case e.ArtifactUpdate != nil:
		return echoEvent{kind: "artifactUpdate", text: e.ArtifactUpdate.Artifact.text()}
	case e.Message != nil:
		return echoEvent{kind: "message"}
	}
	return echoEvent{kind: "unknown"}
}

// answerHTTP sends sc over a JSON binding with net/http, with the headers
// hs, and decodes the answer's events.
func answerHTTP(ctx context.Context, ep endpoint, sc scenario, hs []header) ([]echoEvent, error) {
	jsonrpc := ep.binding == bindingJSONRPC
	url, body, ctype := "http://"+ep.addr+ep.path, jsonrpcBody(sc.method, sc.text, ""), "application/json"
	if !jsonrpc {
		url, body, ctype = url+strings.TrimPrefix(sc.rest, "/"), sendBody(sc.text, ""), restContentType
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("A2A-Version", "1.0")
	for _, h := range hs {
		req.Header.Add(h.name, h.value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s: %.300s", resp.Status, b)
	}
	payloads := [][]byte{b}
	if sc.method == "SendStreamingMessage" {
		payloads = sseData(b)
	}
	var evs []echoEvent
	for _, p := range payloads {
		var ev jsonEvent
		if jsonrpc {
			var env struct {
				Result *jsonEvent       `json:"result"`
				Error  *json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(p, &env); err != nil {
				return nil, fmt.Errorf("%w: %.300s", err, p)
			}
			if env.Result == nil {
				return nil, fmt.Errorf("a JSON-RPC answer without a result: %.300s", p)
			}
			ev = *env.Result
		} else if err := json.Unmarshal(p, &ev); err != nil {
			return nil, fmt.Errorf("%w: %.300s", err, p)
		}
		evs = append(evs, ev.echo())
	}
	return evs, nil
}

// sseData returns the data of each event of an SSE body, its data lines
// joined by newlines.
func sseData(body []byte) [][]byte {
	var events [][]byte
	var cur []byte
	have := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if have {
				events = append(events, cur)
			}
			cur, have = nil, false
			continue
		}
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if have {
				cur = append(cur, '\n')
			}
			cur, have = append(cur, bytes.TrimPrefix(d, []byte(" "))...), true
		}
	}
	if have {
		events = append(events, cur)
	}
	return events
}

// answerGRPC sends sc over gRPC with grpc-go's generated client and
// a2a-go's messages, with the metadata hs, and reads the answer's events.
func answerGRPC(ctx context.Context, ep endpoint, sc scenario, hs []header) ([]echoEvent, error) {
	cc, err := grpc.NewClient(ep.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	c := a2apb.NewA2AServiceClient(cc)
	ctx = metadata.AppendToOutgoingContext(ctx, grpcMetadata(hs)...)
	if sc.grpc == grpcSend {
		resp, err := c.SendMessage(ctx, grpcSendMessage(sc.text))
		if err != nil {
			return nil, err
		}
		if t := resp.GetTask(); t != nil {
			return []echoEvent{pbEvent(&a2apb.StreamResponse{Payload: &a2apb.StreamResponse_Task{Task: t}})}, nil
		}
		return []echoEvent{{kind: "message"}}, nil
	}
	s, err := c.SendStreamingMessage(ctx, grpcSendMessage(sc.text))
	if err != nil {
		return nil, err
	}
	var evs []echoEvent
	for range maxStreamEvents {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return nil, err
		}
		evs = append(evs, pbEvent(r))
	}
	return nil, fmt.Errorf("the stream sent more than %d events", maxStreamEvents)
}

func pbText(a *a2apb.Artifact) string {
	var b strings.Builder
	for _, p := range a.GetParts() {
		b.WriteString(p.GetText())
	}
	return b.String()
}

func pbEvent(r *a2apb.StreamResponse) echoEvent {
	switch p := r.GetPayload().(type) {
	case *a2apb.StreamResponse_Task:
		var text strings.Builder
		for _, a := range p.Task.GetArtifacts() {
			text.WriteString(pbText(a))
		}
		return echoEvent{kind: "task", state: p.Task.GetStatus().GetState().String(), text: text.String()}
	case *a2apb.StreamResponse_StatusUpdate:
		return echoEvent{kind: "statusUpdate", state: p.StatusUpdate.GetStatus().GetState().String()}
	case *a2apb.StreamResponse_ArtifactUpdate:
		return echoEvent{kind: "artifactUpdate", text: pbText(p.ArtifactUpdate.GetArtifact())}
	case *a2apb.StreamResponse_Message:
		return echoEvent{kind: "message"}
	}
	return echoEvent{kind: "unknown"}
}
