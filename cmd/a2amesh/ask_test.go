package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
)

// TestCredentials: ask and tasks call an agent that takes an API key with
// the credential --credentials names, and are refused without it.
func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := write("key", "a-key-of-the-test-only\n")
	authConfig := write("auth.yaml", "apiKeys:\n  keys:\n    - name: tester\n      keyFile: "+key+"\n")
	creds := write("creds.yaml", "kind: apiKey\nsecretFile: "+key+"\n")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serveService(ctx, "echo", []string{"--addr", "127.0.0.1:0", "--log-level", "error", "--auth-config", authConfig}, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v", err)
	}
	go io.Copy(io.Discard, pr)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "echo ready at ")
	if !ok {
		t.Fatalf("ready line %q", line)
	}

	var out strings.Builder
	if err := ask(ctx, []string{"--gateway", url, "--credentials", creds, "hello there"}, strings.NewReader(""), &out); err != nil {
		t.Fatalf("ask with the key: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "hello there") {
		t.Errorf("ask with the key: no echo in\n%s", out.String())
	}
	out.Reset()
	if err := tasks(ctx, []string{"--agent", url, "--credentials", creds, "list"}, &out); err != nil || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("tasks list with the key: %v, want the header and the one task:\n%s", err, out.String())
	}
	for name, run := range map[string]func() error{
		"ask":   func() error { return ask(ctx, []string{"--gateway", url, "hello"}, strings.NewReader(""), io.Discard) },
		"tasks": func() error { return tasks(ctx, []string{"--agent", url, "list"}, io.Discard) },
	} {
		var e *a2a.Error
		if err := run(); !errors.As(err, &e) || e.Code != a2a.CodeUnauthenticated {
			t.Errorf("%s without --credentials: %v, want unauthenticated", name, err)
		}
	}
	if err := ask(ctx, []string{"--gateway", url, "--credentials", filepath.Join(dir, "none.yaml"), "hello"}, strings.NewReader(""), io.Discard); err == nil || !strings.Contains(err.Error(), "--credentials") {
		t.Errorf("ask with a missing credentials file: %v, want an error naming --credentials", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
