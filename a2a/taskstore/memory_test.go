package taskstore_test

import (
	"testing"

	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/a2a/taskstore/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(*testing.T) taskstore.Store { return new(taskstore.Memory) })
}
