package main

import (
	"os"
	"testing"

	"github.com/a2amesh/a2amesh/internal/a2atest"
)

// asMainEnv makes the test binary the a2amesh command, for TestUp: up
// starts its processes as os.Executable(), which is then this binary too.
const asMainEnv = "A2AMESH_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	a2atest.VerifyTestMain(m)
}
