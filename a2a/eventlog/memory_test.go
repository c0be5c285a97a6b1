package eventlog_test

import (
	"testing"

	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/eventlog/logtest"
)

func TestMemory(t *testing.T) {
	logtest.Run(t, func(*testing.T) eventlog.Log { return new(eventlog.Memory) })
}
