package bench

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"github.com/cloudwego/hertz/pkg/common/config"
	"github.com/cloudwego/hertz/pkg/common/ut"
	"github.com/cloudwego/hertz/pkg/route"

	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
)

// BenchmarkHTTPSendMessage is a blocking send through each HTTP binding's
// code, on Hertz and mounted in net/http, without the network: the request
// is handed to the Hertz engine in process (hertz's ut.PerformRequest), or
// to the binding's ServeHTTP with an httptest recorder, so what is
// measured is the binding (headers, body, decoding, the Handler,
// encoding), not the loopback.
func BenchmarkHTTPSendMessage(b *testing.B) {
	ctx := context.Background()
	h, err := server.New(server.Config{Card: echo.Card("http://bench/"), Executor: new(echo.Executor), Retention: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	rpc, err := jsonrpcserver.New(h, jsonrpcserver.Config{AllowedHosts: []string{"*"}})
	if err != nil {
		b.Fatal(err)
	}
	rest, err := restserver.New(h, restserver.Config{JSONRPC: rpc, AllowedHosts: []string{"*"}})
	if err != nil {
		b.Fatal(err)
	}
	engine := route.NewEngine(config.NewOptions(rest.HertzOptions()))
	rest.Register(engine)

	for _, bb := range []struct {
		name, path, body string
	}{
		{"binding=jsonrpc", "/", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`},
		{"binding=rest", "/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hello"}]}}`},
	} {
		b.Run("mount=hertz/"+bb.name, func(b *testing.B) {
			body := []byte(bb.body)
			b.ReportAllocs()
			for b.Loop() {
				r := ut.PerformRequest(engine, "POST", "http://bench"+bb.path, &ut.Body{Body: bytes.NewReader(body), Len: len(body)},
					ut.Header{Key: "Content-Type", Value: "application/json"}, ut.Header{Key: "A2A-Version", Value: "1.0"})
				if r.Code != 200 || !bytes.Contains(r.Body.Bytes(), []byte("TASK_STATE_COMPLETED")) {
					b.Fatalf("HTTP %d: %s", r.Code, r.Body.Bytes())
				}
			}
		})
		b.Run("mount=nethttp/"+bb.name, func(b *testing.B) {
			body := []byte(bb.body)
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "http://bench"+bb.path, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("A2A-Version", "1.0")
				r := httptest.NewRecorder()
				rest.ServeHTTP(r, req)
				if r.Code != 200 || !bytes.Contains(r.Body.Bytes(), []byte("TASK_STATE_COMPLETED")) {
					b.Fatalf("HTTP %d: %s", r.Code, r.Body.Bytes())
				}
			}
		})
	}
}
