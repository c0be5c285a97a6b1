package push

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Memory is a ConfigStore held in process memory. Its zero value is ready
// to use.
type Memory struct {
	mu sync.RWMutex
	// tasks holds each task's configs in first-save order. A task has few
	// webhooks, so a slice scanned linearly beats a map per task.
	tasks map[string][]Config
}

var _ ConfigStore = (*Memory)(nil)

// Save implements ConfigStore.
func (m *Memory) Save(_ context.Context, c Config) error {
	switch {
	case c.TaskID == "":
		return fmt.Errorf("push: cannot save a push notification config without a task id")
	case c.ID == "":
		return fmt.Errorf("push: cannot save a push notification config for task %s without a config id", c.TaskID)
	}
	c = c.clone()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tasks == nil {
		m.tasks = make(map[string][]Config)
	}
	cs := m.tasks[c.TaskID]
	for i := range cs {
		if cs[i].ID == c.ID {
			cs[i] = c
			return nil
		}
	}
	m.tasks[c.TaskID] = append(cs, c)
	return nil
}

// Get implements ConfigStore.
func (m *Memory) Get(_ context.Context, taskID, id string) (Config, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, c := range m.tasks[taskID] {
		if c.ID == id {
			return c.clone(), nil
		}
	}
	return Config{}, fmt.Errorf("%w: task %s has no config %s", ErrNotFound, taskID, id)
}

// List implements ConfigStore.
func (m *Memory) List(_ context.Context, taskID string) ([]Config, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	cs := m.tasks[taskID]
	if len(cs) == 0 {
		return nil, nil
	}
	out := make([]Config, len(cs))
	for i, c := range cs {
		out[i] = c.clone()
	}
	return out, nil
}

// Delete implements ConfigStore.
func (m *Memory) Delete(_ context.Context, taskID, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cs := m.tasks[taskID]
	for i := range cs {
		if cs[i].ID == id {
			// Callers hold clones, so shifting in place is safe;
			// slices.Delete also clears the vacated tail element.
			rest := slices.Delete(cs, i, i+1)
			if len(rest) == 0 {
				delete(m.tasks, taskID)
			} else {
				m.tasks[taskID] = rest
			}
			return nil
		}
	}
	return nil
}

// DeleteTask implements ConfigStore.
func (m *Memory) DeleteTask(_ context.Context, taskID string) error {
	m.mu.Lock()
	delete(m.tasks, taskID)
	m.mu.Unlock()
	return nil
}
