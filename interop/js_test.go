package interop

// @a2a-js/sdk 1.3.0's client against the a2amesh server over each of its
// bindings (JSON-RPC, HTTP+JSON, gRPC), through js/interop.mjs run by
// Node.js.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

// allowSkipEnv names the variable that lets a run skip tests whose peer is
// missing: a comma-separated list of peers ("node"). Without it a missing
// Node.js fails the JS interop test, so that a run that did not test
// @a2a-js/sdk cannot pass for one that did.
const allowSkipEnv = "A2AMESH_ALLOW_SKIP"

// jsSDK is the package js/package.json pins, and its version.
const (
	jsSDK        = "@a2a-js/sdk"
	jsSDKVersion = "1.3.0"
)

// Bounds of the external commands: installing the SDK (a few seconds when
// npm's cache is warm) and one run of the script.
const (
	npmTimeout  = 5 * time.Minute
	nodeTimeout = 60 * time.Second
)

// jsSummary is the line interop.mjs prints.
type jsSummary struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	Card  struct {
		Name            string   `json:"name"`
		Interfaces      []string `json:"interfaces"`
		ProtocolVersion string   `json:"protocolVersion"`
		Binding         string   `json:"binding"`
	} `json:"card"`
	Send struct {
		TaskID string `json:"taskId"`
		State  string `json:"state"`
		Echo   string `json:"echo"`
	} `json:"send"`
	Stream struct {
		Events int      `json:"events"`
		Kinds  []string `json:"kinds"`
		Text   string   `json:"text"`
	} `json:"stream"`
	Get struct {
		TaskID     string `json:"taskId"`
		State      string `json:"state"`
		Echo       string `json:"echo"`
		History    int    `json:"history"`
		HistoryAt0 int    `json:"historyAt0"`
	} `json:"get"`
	Cancel struct {
		TaskID string `json:"taskId"`
		State  string `json:"state"`
		After  string `json:"after"`
	} `json:"cancel"`
	Subscribe struct {
		TaskID string   `json:"taskId"`
		Kinds  []string `json:"kinds"`
	} `json:"subscribe"`
	NotFound struct {
		Name         string `json:"name"`
		Reason       string `json:"reason"`
		Transport    string `json:"transport"`
		Code         int    `json:"code"`
		TaskNotFound bool   `json:"taskNotFound"`
	} `json:"notFound"`
}

// jsRun is one run of interop.mjs: the server, the binding the SDK is
// told to prefer ("" for none: it takes the card's first), the binding it
// must pick, and how that binding carries TaskNotFound (spec §5.4: gRPC
// NOT_FOUND, HTTP 404, JSON-RPC -32001).
type jsRun struct {
	srv          *ourServer
	prefer       string
	binding      string
	transport    string
	notFoundCode int
}

func TestJSClient(t *testing.T) {
	// Reading the package's files lets go test's result cache notice when
	// they change (it does not see what node reads).
	for _, name := range []string{"interop.mjs", "common.mjs", "package.json", "package-lock.json"} {
		if _, err := os.ReadFile(filepath.Join("js", name)); err != nil {
			t.Fatal(err)
		}
	}
	node, npm := requireNode(t)
	dir := installJSDeps(t, npm)
	// Without a preference the SDK takes the card's first interface:
	// JSON-RPC on the one server, HTTP+JSON on the other. serve's card
	// lists JSON-RPC, HTTP+JSON, gRPC in that order, so the SDK is told to
	// prefer gRPC there.
	for _, tc := range []jsRun{
		{srv: startOurServer(t, ourOptions{}), binding: a2a.BindingJSONRPC, transport: "jsonrpc", notFoundCode: int(a2a.CodeTaskNotFound)},
		{srv: startOurRESTServer(t, "", nil, false), binding: a2a.BindingHTTPJSON, transport: "rest", notFoundCode: http.StatusNotFound},
		{srv: startServe(t, nil), prefer: a2a.BindingGRPC, binding: a2a.BindingGRPC, transport: "grpc", notFoundCode: int(codes.NotFound)},
	} {
		t.Run(tc.binding, func(t *testing.T) { runJSClient(t, node, dir, tc) })
	}
}

// startServe serves the holding echo agent with serve.NewExecutor,
// JSON-RPC and HTTP+JSON on one port and gRPC on another, behind gate
// (nil: open), until the test ends: the server a deployment runs, with
// the card it makes.
func startServe(t *testing.T, gate *auth.Gate) *ourServer {
	t.Helper()
	ln, url := a2atest.Listen(t)
	agent := &holdingEcho{Executor: &echo.Executor{SlowChunks: slowChunks, SlowInterval: slowInterval}}
	s, err := serve.NewExecutor(testContext(t), agent, echo.Card(url), serve.Config{
		Listener: ln, GRPCAddr: "127.0.0.1:0", ShutdownGrace: 100 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), Gate: gate,
	})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("the server at %s did not stop within 15 s", url)
		}
	})
	return &ourServer{URL: s.URL(), Handler: s.Handler(), agent: agent}
}

// runJS runs node on script with args in dir, stdin (nil: none) as its
// input, and decodes the JSON summary every script prints as its last line
// of output into sum. It fails the test when node does not finish within
// nodeTimeout, prints no summary, or exits non-zero (the script found a
// mismatch, which the summary's error names).
func runJS(t *testing.T, node, dir string, stdin []byte, sum any, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testContext(t), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.WaitDelay = 5 * time.Second // for the output, should node leave a process holding it
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("node %s did not finish within %s\nstdout: %s\nstderr: %s", script, nodeTimeout, stdout.Bytes(), stderr.Bytes())
	}
	line := lastLine(stdout.String())
	if err := json.Unmarshal([]byte(line), sum); err != nil {
		t.Fatalf("node %s (%v) printed no JSON summary: %v\nstdout: %s\nstderr: %s", script, runErr, err, stdout.Bytes(), stderr.Bytes())
	}
	if runErr != nil {
		t.Fatalf("node %s failed (%v)\nsummary: %s\nstderr: %s", script, runErr, line, stderr.Bytes())
	}
}

// runJSClient runs interop.mjs against run.srv and checks what it reports.
func runJSClient(t *testing.T, node, dir string, run jsRun) {
	ctx := testContext(t)
	args := []string{"--held", holdPrefix}
	if run.prefer != "" {
		args = append(args, "--prefer", run.prefer)
	}
	var sum jsSummary
	runJS(t, node, dir, nil, &sum, "interop.mjs", append(args, run.srv.URL)...)
	if !sum.OK {
		t.Fatalf("@a2a-js/sdk interop: %s", sum.Error)
	}
	t.Logf("the SDK picked %s among %v", sum.Card.Binding, sum.Card.Interfaces)

	if sum.Card.Name != "echo" || sum.Card.ProtocolVersion != a2a.Version || sum.Card.Binding != run.binding {
		t.Errorf("card %+v, want echo over %s 1.0", sum.Card, run.binding)
	}
	if sum.Send.State != "TASK_STATE_COMPLETED" || sum.Send.Echo != "hello from a2a-js" {
		t.Errorf("send %+v", sum.Send)
	}
	want := []string{"task", "status:TASK_STATE_WORKING"}
	for range 10 {
		want = append(want, "artifact")
	}
	want = append(want, "status:TASK_STATE_COMPLETED")
	if sum.Stream.Events != 13 || !slices.Equal(sum.Stream.Kinds, want) || sum.Stream.Text != streamText {
		t.Errorf("stream %+v, want the 13 events %v carrying %q", sum.Stream, want, streamText)
	}
	if sum.Get.TaskID != sum.Send.TaskID || sum.Get.State != "TASK_STATE_COMPLETED" || sum.Get.Echo != sum.Send.Echo || sum.Get.History == 0 || sum.Get.HistoryAt0 != 0 {
		t.Errorf("get %+v", sum.Get)
	}
	if sum.Cancel.TaskID == "" || sum.Cancel.State != "TASK_STATE_CANCELED" || sum.Cancel.After != "TASK_STATE_CANCELED" {
		t.Errorf("cancel %+v", sum.Cancel)
	}
	if wantSub := []string{"task", "status:TASK_STATE_CANCELED"}; sum.Subscribe.TaskID == "" || !slices.Equal(sum.Subscribe.Kinds, wantSub) {
		t.Errorf("subscribe %+v, want the events %v", sum.Subscribe, wantSub)
	}
	if nf := sum.NotFound; !nf.TaskNotFound || nf.Reason != "TASK_NOT_FOUND" || nf.Transport != run.transport || nf.Code != run.notFoundCode {
		t.Errorf("GetTask of a missing task: the SDK raised %+v, want TaskNotFoundError (TASK_NOT_FOUND) from its %s transport with code %d", nf, run.transport, run.notFoundCode)
	}
	// The tasks the SDK reported are ours.
	task, err := run.srv.Handler.GetTask(ctx, &a2a.GetTaskRequest{ID: sum.Send.TaskID})
	if err != nil || task.Status.State != a2a.TaskStateCompleted || artifactText(task) != "hello from a2a-js" {
		t.Errorf("our server's view of task %s: %v, %v", sum.Send.TaskID, task, err)
	}
	for _, id := range []string{sum.Cancel.TaskID, sum.Subscribe.TaskID} {
		if task, err := run.srv.Handler.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); err != nil || task.Status.State != a2a.TaskStateCanceled {
			t.Errorf("our server's view of the canceled task %s: %v, %v", id, task, err)
		}
	}
}

// requireNode returns node (20 or newer) and the command that runs npm:
// those on PATH, else a Node.js it fetches from the npm registry into the
// user's cache directory (provisionNode). When neither can be had the test
// fails, saying what to install, unless A2AMESH_ALLOW_SKIP names node: then
// it is skipped.
func requireNode(t *testing.T) (node string, npm []string) {
	t.Helper()
	node, npmPath, why := nodeOnPath()
	if why == "" {
		return node, []string{npmPath}
	}
	node, npm, err := provisionNode()
	if err != nil {
		jsUnavailable(t, fmt.Sprintf("the @a2a-js/sdk interop test needs Node.js: %s, and fetching Node.js %s from the npm registry failed: %v; install Node.js 20+ with npm (e.g. apt-get install nodejs npm) and put node and npm on PATH", why, nodeBuilds[runtime.GOOS+"/"+runtime.GOARCH].version, err))
	}
	t.Logf("%s; using Node.js from the npm registry at %s", why, node)
	return node, npm
}

// nodeOnPath finds node (20 or newer) and npm on PATH, or says why not.
func nodeOnPath() (node, npm, why string) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", "", "node is not on PATH"
	}
	if npm, err = exec.LookPath("npm"); err != nil {
		return "", "", "npm is not on PATH"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "", "", fmt.Sprintf("node --version failed: %v", err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _, _ := strings.Cut(v, ".")
	if n, err := strconv.Atoi(major); err != nil || n < 20 {
		return "", "", fmt.Sprintf("the node on PATH is version %s", v)
	}
	return node, npm, ""
}

// jsUnavailable fails the test for want of what it needs (msg says what),
// or skips it where A2AMESH_ALLOW_SKIP names node.
func jsUnavailable(t *testing.T, msg string) {
	t.Helper()
	if slices.ContainsFunc(strings.Split(os.Getenv(allowSkipEnv), ","), func(p string) bool { return strings.TrimSpace(p) == "node" }) {
		t.Skipf("%s (skipped: %s names node)", msg, allowSkipEnv)
	}
	t.Fatalf("%s; or set %s=node to skip this test", msg, allowSkipEnv)
}

// installJSDeps makes sure js/node_modules holds the locked packages (the
// pinned SDK and its gRPC peers) and returns the js directory. node_modules is kept between runs (it is gitignored);
// when it is missing or stale, the dependencies are installed with npm ci
// (npm install when there is no lock file) in a temporary copy of the
// package next to it, which then replaces it in one rename, so that an
// interrupted install never leaves a half-filled node_modules behind.
func installJSDeps(t *testing.T, npm []string) string {
	t.Helper()
	dir, err := filepath.Abs("js")
	if err != nil {
		t.Fatal(err)
	}
	if jsDepsInstalled(dir) {
		return dir
	}
	tmp, err := os.MkdirTemp(dir, ".npm-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	args := []string{"ci"}
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) && name == "package-lock.json" {
			args = []string{"install"}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args = append(args, "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	// The install has a bound of its own, longer than a test's: npm may
	// have to fetch the packages.
	ctx, cancel := context.WithTimeout(context.Background(), npmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm[0], append(npm[1:], args...)...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		jsUnavailable(t, fmt.Sprintf("npm %s in a copy of %s: %v (within %s); it installs %s@%s from the npm registry, once\n%s",
			strings.Join(args, " "), dir, err, npmTimeout, jsSDK, jsSDKVersion, out))
	}
	modules := filepath.Join(dir, "node_modules")
	if jsDepsInstalled(dir) {
		return dir // a concurrent run installed them meanwhile
	}
	if err := os.RemoveAll(modules); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tmp, "node_modules"), modules); err != nil && !jsDepsInstalled(dir) {
		t.Fatalf("moving the installed packages into %s: %v", modules, err)
	}
	if !jsDepsInstalled(dir) {
		t.Fatalf("npm %s did not install the packages js/package-lock.json locks (%s@%s and its gRPC peers) into %s", args[0], jsSDK, jsSDKVersion, modules)
	}
	return dir
}

// jsDepsInstalled reports whether dir/node_modules holds every package of
// the lock file at its locked version (or, without a lock file, the
// dependencies package.json pins), so that a node_modules installed from
// an older lock is replaced.
func jsDepsInstalled(dir string) bool {
	want, err := lockedPackages(dir)
	if err != nil || len(want) == 0 {
		return false
	}
	for path, version := range want {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path), "package.json"))
		if err != nil {
			return false
		}
		var pkg struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(b, &pkg) != nil || pkg.Version != version {
			return false
		}
	}
	return true
}

// lockedPackages returns the packages dir's package-lock.json installs, by
// their path under dir ("node_modules/@a2a-js/sdk"), with their versions;
// without a lock file, package.json's dependencies.
func lockedPackages(dir string) (map[string]string, error) {
	want := make(map[string]string)
	b, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if errors.Is(err, os.ErrNotExist) {
		if b, err = os.ReadFile(filepath.Join(dir, "package.json")); err != nil {
			return nil, err
		}
		var pkg struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			return nil, fmt.Errorf("package.json: %w", err)
		}
		for name, version := range pkg.Dependencies {
			want["node_modules/"+name] = version
		}
		return want, nil
	}
	if err != nil {
		return nil, err
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return nil, fmt.Errorf("package-lock.json: %w", err)
	}
	for path, p := range lock.Packages {
		if path != "" { // the root: the package itself
			want[path] = p.Version
		}
	}
	return want, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
