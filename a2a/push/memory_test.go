package push_test

import (
	"testing"

	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/push/pushtest"
)

func TestMemory(t *testing.T) {
	pushtest.Run(t, func(*testing.T) push.ConfigStore { return new(push.Memory) })
}
