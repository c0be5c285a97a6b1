// Package interop checks that a2amesh speaks A2A with independent
// implementations: a2a-go v2.4.0's client (1.0 wire, over JSON-RPC and
// over gRPC with grpc-go) and v0.3.15's client (0.3 wire) against our
// servers, our client against a2a-go v2.4.0's server on both wires, and
// @a2a-js/sdk 1.3.0's client against our server over JSON-RPC, HTTP+JSON
// and gRPC, and its agent card signatures against a2a/cardsign's, both
// ways. a2a-go's own gRPC and
// REST servers stand ready as peers (startGoPeer). Every deviation from
// the A2A specification observed in a peer is asserted as a documented
// quirk, so that a peer fixing it (or our side changing) shows up as a
// failing test rather than going unnoticed.
package interop

import (
	"testing"

	"github.com/a2amesh/a2amesh/internal/a2atest"
)

// TestMain fails the run if a test leaves a goroutine behind: a server, a
// stream, an idle connection or a push delivery.
func TestMain(m *testing.M) { a2atest.VerifyTestMain(m) }
