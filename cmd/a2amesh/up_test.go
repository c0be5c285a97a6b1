package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// upBound is how long the whole mesh may take to come up: ten processes
// (of this race-enabled test binary) on a machine that may be busy.
const upBound = 2 * time.Minute

// `a2amesh up` on ports the kernel picks: the mesh comes up, a worker
// killed meanwhile is restarted and answers again through the gateway, and
// Ctrl-C stops everything.
func TestUp(t *testing.T) {
	out := newOutput()
	cmd := exec.Command(os.Args[0], "up", "--data-dir", t.TempDir(), "--nats-port", "-1", "--base-port", "0")
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "OPENAI_BASE_URL=", "OPENAI_API_KEY=")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(bound):
			t.Errorf("up not reaped %s after SIGKILL", bound)
		}
	})

	ready := time.NewTimer(upBound)
	defer ready.Stop()
	for up := false; !up; {
		select {
		case line := <-out.lines:
			up = strings.Contains(line, "the mesh is up")
		case <-exited:
			t.Fatalf("up exited (%v) before the mesh was up:\n%s", waitErr, out)
		case <-ready.C:
			t.Fatalf("the mesh was not up within %s:\n%s", upBound, out)
		}
	}
	weather := out.await(t, `^  weather +(http://127\.0\.0\.1:(\d+)/)  pid (\d+)`)
	gw := out.await(t, `^  gateway +(http://127\.0\.0\.1:(\d+)/)  pid (\d+)`)
	if weather[2] == "9102" || gw[2] == "9100" {
		t.Fatalf("up --base-port 0 took the default ports: %s, %s", weather[1], gw[1])
	}
	con := out.await(t, `^  console +(http://127\.0\.0\.1:(\d+)/console/)$`)
	out.await(t, `^Open: every service takes any caller, without authentication, on 127\.0\.0\.1 only`)
	if con[2] != gw[2] {
		t.Fatalf("the console %s is not the gateway's (%s)", con[1], gw[1])
	}
	checkConsole(t, con[1])

	if err := syscall.Kill(pidOf(t, weather[2:]), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	out.await(t, `weather stopped; restarting it" .*status="signal: killed"`)
	restarted := pidOf(t, out.await(t, `weather restarted" .*pid=(\d+)`))
	ctx, cancel := context.WithTimeout(context.Background(), upBound)
	defer cancel()
	if err := waitCard(ctx, weather[1], nil); err != nil {
		t.Fatalf("the restarted weather agent does not serve its card: %v\n%s", err, out)
	}
	var answer strings.Builder
	if err := ask(ctx, []string{"--gateway", gw[1], "What's the weather in Oslo?"}, strings.NewReader(""), &answer); err != nil {
		t.Fatalf("ask: %v\n%s\nup's output:\n%s", err, answer.String(), out)
	}
	if !strings.Contains(answer.String(), "[WeatherAgent]") || !strings.Contains(answer.String(), "Oslo") {
		t.Fatalf("the restarted weather agent did not answer:\n%s", answer.String())
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("up ended with %v:\n%s", waitErr, out)
		}
	case <-time.After(bound):
		t.Fatalf("up did not stop within %s of Ctrl-C:\n%s", bound, out)
	}
	if alive(restarted) {
		t.Errorf("the restarted weather agent (pid %d) outlived up", restarted)
	}
	// Up says once that the mesh is open; its services, on loopback, do
	// not warn each.
	if strings.Contains(out.String(), "serving without authentication") {
		t.Errorf("a service warned that it serves without authentication:\n%s", out)
	}
}

// checkConsole fetches the console's page at url.
func checkConsole(t *testing.T, url string) {
	t.Helper()
	hc := &http.Client{Timeout: bound}
	defer hc.CloseIdleConnections()
	res, err := hc.Get(url)
	if err != nil {
		t.Fatalf("the console: %v", err)
	}
	defer res.Body.Close()
	page, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(page), "a2amesh console") {
		t.Fatalf("the console at %s: %s, %v:\n%s", url, res.Status, err, page)
	}
}

func TestMeshAddrs(t *testing.T) {
	tests := []struct {
		base                      int
		gateway, weather, planner string // planner: the flags pointing the planner at its agents
		err                       bool
	}{
		{base: 9100, gateway: "127.0.0.1:9100", weather: "127.0.0.1:9102"},
		{base: 9200, gateway: "127.0.0.1:9200", weather: "127.0.0.1:9202", planner: "--math-url http://127.0.0.1:9204/ --research-url http://127.0.0.1:9205/"},
		{base: -1, err: true},
		{base: 65530, err: true},
	}
	for _, tt := range tests {
		addrs, err := meshAddrs(tt.base)
		if tt.err {
			if err == nil {
				t.Errorf("base %d: no error", tt.base)
			}
			continue
		}
		if err != nil || addrs["gateway"] != tt.gateway || addrs["weather"] != tt.weather {
			t.Errorf("base %d: %v, %v", tt.base, addrs, err)
			continue
		}
		def, _ := findService("planner")
		if got := strings.Join(peerFlags(def, addrs), " "); got != tt.planner {
			t.Errorf("base %d: planner's flags %q, want %q", tt.base, got, tt.planner)
		}
	}
	// Ports the kernel picks: nine of them, all different.
	addrs, err := meshAddrs(0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		seen[a] = true
	}
	if len(seen) != len(meshServices())+1 {
		t.Fatalf("base 0: %v", addrs)
	}
}

// A flag that does nothing with the others given stops up at once.
func TestUpFlagPairs(t *testing.T) {
	t.Setenv("NATS_URL", "")
	err := up(context.Background(), []string{"--nats", "nats://127.0.0.1:4222", "--nats-port", "4333"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--nats-port") {
		t.Fatalf("up --nats --nats-port = %v, want an error naming --nats-port", err)
	}
}
