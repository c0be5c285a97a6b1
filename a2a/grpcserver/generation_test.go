package grpcserver

import (
	"context"
	"testing"

	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/metadata"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/proto/a2apb"
	"github.com/a2amesh/a2amesh/services/echo"
)

// The generation extension over gRPC, read by the generated client as a
// 1.1 peer reads it (the draft's field numbers): the fields and the
// response header a2a-extensions with the extension named in the request
// metadata, none without; ifGenerationMatch refused with ABORTED and an
// ErrorInfo; currentGeneration on GetTask.
func TestGenerations(t *testing.T) {
	card := echo.Card("grpc://127.0.0.1/")
	card.Capabilities.Extensions = []a2a.AgentExtension{{URI: a2a.GenerationExtension}}
	cli := serve(t, server.Config{Card: card})
	for _, tt := range []struct {
		name string
		ctx  context.Context
		on   bool
	}{
		{"with the extension", metadata.AppendToOutgoingContext(t.Context(), ExtensionsKey, "urn:other, "+a2a.GenerationExtension), true},
		{"without it", t.Context(), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := func(what string, got, n int64) {
				t.Helper()
				if !tt.on {
					n = 0
				}
				if got != n {
					t.Errorf("%s: generation %d, want %d", what, got, n)
				}
			}
			var hd metadata.MD
			resp, err := cli.SendMessage(nphttp2.GRPCHeader(tt.ctx, &hd), sendReq("input: x", nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := hd.Get(ExtensionsKey); (len(got) == 1 && got[0] == a2a.GenerationExtension) != tt.on || !tt.on && len(got) > 0 {
				t.Errorf("response header %s = %v", ExtensionsKey, got)
			}
			task := resp.GetTask()
			want("SendMessage", task.GetGeneration(), 2)
			got, err := cli.GetTask(tt.ctx, &a2apb.GetTaskRequest{Id: task.Id, CurrentGeneration: new(int64(1))})
			if err != nil {
				t.Fatal(err)
			}
			want("GetTask", got.GetGeneration(), 2)

			followUp := func(match int64) *a2apb.SendMessageRequest {
				req := sendReq("more", &a2apb.SendMessageConfiguration{IfGenerationMatch: &match})
				req.Message.TaskId = task.Id
				return req
			}
			resp, err = cli.SendMessage(tt.ctx, followUp(1)) // honoured only with the extension
			if tt.on {
				wantStatus(t, err, codes.Aborted, "TASK_GENERATION_MISMATCH")
				st, _ := status.FromError(err)
				for _, d := range st.Details() {
					if info, ok := d.(*errdetails.ErrorInfo); ok && (info.Metadata["currentGeneration"] != "2" || info.Metadata["taskId"] != task.Id) {
						t.Errorf("ErrorInfo metadata %v", info.Metadata)
					}
				}
				resp, err = cli.SendMessage(tt.ctx, followUp(2))
			}
			if err != nil {
				t.Fatal(err)
			}
			want("conditional follow-up", resp.GetTask().GetGeneration(), 5)

			stream, err := cli.SendStreamingMessage(tt.ctx, sendReq("streamed with generations", nil))
			if err != nil {
				t.Fatal(err)
			}
			md, err := stream.Header()
			if err != nil {
				t.Fatal(err)
			}
			if got := md.Get(ExtensionsKey); (len(got) == 1) != tt.on || len(md.Get(FirstEventIDKey)) != 1 {
				t.Errorf("stream header %v", md)
			}
			for i := int64(1); ; i++ {
				item, err := stream.Recv()
				if err != nil {
					if i != 14 {
						t.Fatalf("stream ended after %d events: %v", i-1, err)
					}
					break
				}
				var g int64
				switch {
				case item.GetTask() != nil:
					g = item.GetTask().GetGeneration()
				case item.GetStatusUpdate() != nil:
					g = item.GetStatusUpdate().GetGeneration()
				case item.GetArtifactUpdate() != nil:
					g = item.GetArtifactUpdate().GetGeneration()
				}
				want("streamed event", g, i)
			}

			resp, err = cli.SendMessage(tt.ctx, sendReq("input: y", nil))
			if err != nil {
				t.Fatal(err)
			}
			canceled, err := cli.CancelTask(tt.ctx, &a2apb.CancelTaskRequest{Id: resp.GetTask().GetId()})
			if err != nil {
				t.Fatal(err)
			}
			want("CancelTask", canceled.GetGeneration(), 3)
		})
	}
}
