package interop

// Smoke tests of the a2a-go v2.4.0 peer on a2a-go's own gRPC and REST
// servers (startGoPeer), with a2a-go's own client: the peers our client's
// gRPC and HTTP+JSON bindings are to be tested against.

import (
	"slices"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func TestGoPeer(t *testing.T) {
	ctx := testContext(t)
	peer := startGoPeer(t, true)
	hc := newHTTPClient(t)

	// goSmoke sends a blocking and a streamed message and reads the
	// task back.
	goSmoke := func(t *testing.T, c *a2aclient.Client) *a2ago.Task {
		t.Helper()
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("hello peer")})
		if task.Status.State != a2ago.TaskStateCompleted || goArtifactText(task) != "hello peer" {
			t.Fatalf("SendMessage: %s with echo %q", task.Status.State, goArtifactText(task))
		}
		goCheckEchoStream(t, goCollect(t, c.SendStreamingMessage(ctx, &a2ago.SendMessageRequest{Message: goTextMessage(streamText)})), streamText)
		got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("GetTask: %v, %v", got, err)
		}
		ext, err := c.GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{})
		if err != nil || ext.Name != "goecho-extended" {
			t.Fatalf("GetExtendedAgentCard: %v, %v", ext, err)
		}
		return task
	}
	endpoint := func(t *testing.T, iface *a2ago.AgentInterface) *a2aclient.Client {
		t.Helper()
		c, err := a2aclient.NewFromEndpoints(ctx, []*a2ago.AgentInterface{iface},
			a2aclient.WithRESTTransport(hc),
			a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := c.Destroy(); err != nil {
				t.Errorf("destroy a2a-go client: %v", err)
			}
		})
		return c
	}

	var viaGRPC *a2ago.Task
	t.Run("GRPC", func(t *testing.T) {
		viaGRPC = goSmoke(t, endpoint(t, peer.Card.SupportedInterfaces[1]))
	})
	t.Run("REST", func(t *testing.T) {
		c := endpoint(t, peer.Card.SupportedInterfaces[0])
		goSmoke(t, c)
		if viaGRPC == nil {
			t.Fatal("no task was made over gRPC to read over REST (see the GRPC subtest)")
		}
		got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: viaGRPC.ID})
		if err != nil || got.ID != viaGRPC.ID {
			t.Errorf("the task made over gRPC, over REST: %v, %v", got, err)
		}
	})
	t.Run("Card", func(t *testing.T) {
		card, err := agentcard.NewResolver(hc).Resolve(ctx, peer.RESTURL)
		if err != nil {
			t.Fatal(err)
		}
		var bindings []a2ago.TransportProtocol
		for _, iface := range card.SupportedInterfaces {
			bindings = append(bindings, iface.ProtocolBinding)
		}
		if !slices.Equal(bindings, []a2ago.TransportProtocol{a2ago.TransportProtocolHTTPJSON, a2ago.TransportProtocolGRPC}) {
			t.Errorf("the card names %v, want HTTP+JSON and GRPC", bindings)
		}
	})
}
