package push

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if goroutines the tests started (servers,
// connections, deliveries) are still running after all tests finished.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
