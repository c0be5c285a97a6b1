package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

// A stopped worker (SIGSTOP: its kernel still accepts connections, nothing
// answers) is a clear failure at the gateway in bounded time, as a killed
// one is: the hop's idle timeout (--hop-idle-timeout) bounds the wait for
// the worker's response.
func TestWorkerStoppedFailsTheCall(t *testing.T) {
	m := newMesh(t)
	_, router := m.service("router")
	weatherProc, weather := m.service("weather")
	path := filepath.Join(m.dir, "topology.yaml")
	topology := fmt.Sprintf(`
version: 1
agents: {router: %q, weather: %q}
entry: {agent: router, subAgents: [{agent: weather}]}
`, router, weather)
	if err := os.WriteFile(path, []byte(topology), 0o644); err != nil {
		t.Fatal(err)
	}
	_, gw := start(t, "gateway", append([]string{"gateway"}, m.args("127.0.0.1:0", "--topology", path, "--hop-idle-timeout", "2s")...)...)
	c := newClient(t, gw)

	if err := weatherProc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Let it go on before the harness stops it.
	t.Cleanup(func() { _ = weatherProc.cmd.Process.Signal(syscall.SIGCONT) })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "What's the weather in Oslo?")})
	if err != nil {
		t.Fatalf("SendMessage to the gateway: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
	}
	task, ok := ev.(*a2a.Task)
	if !ok {
		t.Fatalf("the gateway answered a %T", ev)
	}
	text := ""
	if task.Status.Message != nil {
		text = task.Status.Message.Text()
	}
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(text, "WeatherAgent") || !strings.Contains(text, weather) {
		t.Fatalf("the gateway's task ended %s: %s", task.Status.State, text)
	}
	t.Logf("the failure reached the client %v after the call: %s", time.Since(start).Round(time.Millisecond), text)
}
