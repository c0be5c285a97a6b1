package restserver_test

import (
	"testing"

	"github.com/a2amesh/a2amesh/internal/a2atest"
)

func TestMain(m *testing.M) { a2atest.VerifyTestMainMounted(m) }
