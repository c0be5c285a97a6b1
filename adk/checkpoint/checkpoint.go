// Package checkpoint has the adk.CheckPointStore implementations for one
// process and one machine: Memory, and File (one file per checkpoint,
// written atomically, surviving restarts). Both keep concurrent runs of one
// checkpoint apart (adk.CheckPointLocker); File does so across processes
// too. checkpointtest holds the tests every store must pass.
package checkpoint

import (
	"context"
	"fmt"
	"sync"

	"github.com/a2amesh/a2amesh/adk"
)

// Memory keeps checkpoints in memory. The zero value is ready to use.
type Memory struct {
	mu     sync.Mutex
	data   map[string][]byte
	locked map[string]bool
}

var (
	_ adk.CheckPointStore  = (*Memory)(nil)
	_ adk.CheckPointLocker = (*Memory)(nil)
)

// Get returns a copy of the checkpoint saved under id.
func (m *Memory) Get(_ context.Context, id string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.data[id]
	if !ok {
		return nil, false, nil
	}
	return append([]byte(nil), d...), true, nil
}

// Set saves a copy of data under id.
func (m *Memory) Set(_ context.Context, id string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		m.data = map[string][]byte{}
	}
	m.data[id] = append([]byte(nil), data...)
	return nil
}

// Delete removes the checkpoint saved under id.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.data, id)
	return nil
}

// Lock claims id for one run.
func (m *Memory) Lock(_ context.Context, id string) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locked[id] {
		return nil, fmt.Errorf("%w: %s", adk.ErrCheckPointBusy, id)
	}
	if m.locked == nil {
		m.locked = map[string]bool{}
	}
	m.locked[id] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			delete(m.locked, id)
			m.mu.Unlock()
		})
	}, nil
}
