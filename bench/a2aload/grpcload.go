package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// The gRPC binding's send methods (lf.a2a.v1.A2AService).
const (
	grpcSend   = "/lf.a2a.v1.A2AService/SendMessage"
	grpcStream = "/lf.a2a.v1.A2AService/SendStreamingMessage"
)

// maxStreamEvents bounds the events read from one stream: the echo
// agent's streams have 13.
const maxStreamEvents = 64

// rawCodec sends prepared protobuf bytes and keeps only the size of what
// comes back, so the gRPC load driver costs the same whichever server
// answers: it neither encodes nor parses a message per call. Requests are
// *[]byte, responses *int.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot send a %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(*b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	n, ok := v.(*int)
	if !ok {
		return fmt.Errorf("rawCodec: cannot receive into a %T", v)
	}
	*n = data.Len()
	return nil
}

// Name is the content-subtype: application/grpc+proto, as any protobuf
// client sends.
func (rawCodec) Name() string { return "proto" }

// grpcSendMessage is the SendMessageRequest of text: the same message
// the JSON bindings send.
func grpcSendMessage(text string) *a2apb.SendMessageRequest {
	return &a2apb.SendMessageRequest{Message: &a2apb.Message{
		MessageId: "m-1",
		Role:      a2apb.Role_ROLE_USER,
		Parts:     []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}},
	}}
}

// grpcSendRequest is grpcSendMessage's bytes on the wire.
func grpcSendRequest(text string) ([]byte, error) {
	return proto.Marshal(grpcSendMessage(text))
}

// dialGRPC opens n client connections to addr with grpc-go, for calls
// with the raw codec. grpc-go connects lazily, on the first call.
func dialGRPC(addr string, n int) ([]*grpc.ClientConn, error) {
	ccs := make([]*grpc.ClientConn, 0, n)
	for range n {
		cc, err := grpc.NewClient(addr,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{})))
		if err != nil {
			closeGRPC(ccs)
			return nil, err
		}
		ccs = append(ccs, cc)
	}
	return ccs, nil
}

// grpcMetadata is the metadata of every call: the A2A version and hs.
func grpcMetadata(hs []header) []string {
	kv := []string{"a2a-version", "1.0"}
	for _, h := range hs {
		kv = append(kv, strings.ToLower(h.name), h.value)
	}
	return kv
}

func closeGRPC(ccs []*grpc.ClientConn) {
	for _, cc := range ccs {
		cc.Close()
	}
}

// loadGRPC makes calls concurrent calls of method (grpcSend or
// grpcStream, whose every event is read) with req and the metadata hs,
// multiplexed over conns HTTP/2 connections, for d or until maxRequests
// were made, and measures every call.
func loadGRPC(ctx context.Context, addr, method string, req []byte, hs []header, calls, conns int, d time.Duration, maxRequests int) (result, error) {
	ccs, err := dialGRPC(addr, conns)
	if err != nil {
		return result{}, err
	}
	defer closeGRPC(ccs)
	// A call still in flight when the time is up may finish within the
	// grace; the service parameter A2A-Version travels as metadata.
	callCtx, cancel := context.WithTimeout(ctx, d+callGrace)
	defer cancel()
	callCtx = metadata.AppendToOutgoingContext(callCtx, grpcMetadata(hs)...)
	return hammer(ctx, calls, d, maxRequests, func(i int) (worker, error) {
		return &grpcWorker{ctx: callCtx, cc: ccs[i%len(ccs)], req: &req, method: method}, nil
	})
}

// grpcWorker makes one call at a time on its connection.
type grpcWorker struct {
	ctx    context.Context
	cc     *grpc.ClientConn
	req    *[]byte
	method string
}

func (w *grpcWorker) call() error {
	if w.method == grpcSend {
		var n int
		return w.cc.Invoke(w.ctx, w.method, w.req, &n)
	}
	ctx, cancel := context.WithCancel(w.ctx) // ends the stream on every path
	defer cancel()
	s, err := w.cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, w.method)
	if err != nil {
		return err
	}
	if err := s.SendMsg(w.req); err != nil {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	for range maxStreamEvents {
		var n int
		if err := s.RecvMsg(&n); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return fmt.Errorf("the stream sent more than %d events", maxStreamEvents)
}

func (w *grpcWorker) close() {}
