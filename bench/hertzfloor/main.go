// Command hertzfloor is the benchmark floor: a bare JSON-RPC echo on Hertz
// that answers SendMessage and SendStreamingMessage with replies shaped
// like an A2A server's (fresh ids, timestamps, the echoed text) but keeps
// no tasks, no event log and runs no agent. An A2A server cannot be faster
// than this on the same wire; benchmarks report ratios against it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"strconv"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/app/server"
	"github.com/cloudwego/hertz/pkg/network/standard"
	"github.com/cloudwego/hertz/pkg/protocol/sse"
	"github.com/google/uuid"

	"github.com/a2amesh/a2amesh/a2a"
)

type request struct {
	ID     json.RawMessage        `json:"id"`
	Method string                 `json:"method"`
	Params a2a.SendMessageRequest `json:"params"`
}

type response struct {
	JSONRPC string             `json:"jsonrpc"`
	ID      json.RawMessage    `json:"id"`
	Result  a2a.StreamResponse `json:"result"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9101", "address to listen on")
	flag.Parse()
	// The transport a2amesh's servers run on (httpbind.HertzOptions).
	h := server.New(server.WithHostPorts(*addr), server.WithDisablePrintRoute(true), server.WithTransport(standard.NewTransporter))
	h.POST("/", serve)
	h.Spin()
}

func serve(_ context.Context, c *app.RequestContext) {
	var req request
	if err := json.Unmarshal(c.Request.Body(), &req); err != nil || req.Params.Message == nil {
		c.Data(200, "application/json", []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`))
		return
	}
	msg := req.Params.Message
	text := msg.Text()
	taskID, ctxID := uuid.NewString(), uuid.NewString()
	msg.TaskID, msg.ContextID = taskID, ctxID
	art := a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.TextPart(text)}}
	if req.Method != "SendStreamingMessage" {
		task := &a2a.Task{ID: taskID, ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: a2a.Now()},
			Artifacts: []a2a.Artifact{art}, History: []a2a.Message{*msg}}
		b, _ := json.Marshal(response{"2.0", req.ID, a2a.StreamResponse{Task: task}})
		c.Data(200, "application/json", b)
		return
	}
	w := sse.NewWriter(c)
	events := []a2a.StreamResponse{
		{Task: &a2a.Task{ID: taskID, ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: a2a.Now()}, History: []a2a.Message{*msg}}},
		{StatusUpdate: a2a.NewStatusUpdate(taskID, ctxID, a2a.TaskStateWorking, nil)},
	}
	runes := []rune(text)
	for i := range 10 {
		chunk := a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.TextPart(string(runes[i*len(runes)/10 : (i+1)*len(runes)/10]))}}
		events = append(events, a2a.StreamResponse{ArtifactUpdate: a2a.NewArtifactUpdate(taskID, ctxID, chunk, i > 0, i == 9)})
	}
	events = append(events, a2a.StreamResponse{StatusUpdate: a2a.NewStatusUpdate(taskID, ctxID, a2a.TaskStateCompleted, nil)})
	for i, ev := range events {
		b, _ := json.Marshal(response{"2.0", req.ID, ev})
		if err := w.WriteEvent(strconv.Itoa(i+1), "", b); err != nil {
			log.Printf("stream: %v", err)
			return
		}
	}
}
