package client_test

import (
	"testing"

	"github.com/a2amesh/a2amesh/internal/a2atest"
)

// TestMain fails the run if a test leaves a goroutine behind: a server, a
// stream, a connection or a push delivery. It serves the package's internal
// tests (sse_test.go) too.
func TestMain(m *testing.M) { a2atest.VerifyTestMain(m) }
