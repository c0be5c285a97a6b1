//go:build image

package image

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// initEnv carries a container's spec to the test binary started as the
// container's first process (TestMain hands it to containerInit).
const initEnv = "A2AMESH_IMAGE_TEST_INIT"

// Bounds on the waits, against hanging rather than timing anything: a
// process's "ready at" line, and its exit after SIGTERM, then SIGKILL.
const (
	readyBound = 60 * time.Second
	stopBound  = 15 * time.Second
)

// spec is a process to start from an image's exported files the way a
// container runtime starts one, minus what the runtime adds: the root is
// the image's files alone (no /proc, /dev or /tmp), mounted read-only, with
// the mounts on top, in a mount and PID namespace of its own; the process
// runs as the image's user (no supplementary groups) in its working
// directory, with argv and the environment as given. The network is the
// host's.
type spec struct {
	Root     string
	UID, GID int
	Dir      string
	Args     []string
	Env      []string
	Mounts   []mount
}

// mount puts the host's Source (a file or directory) at Target in the
// root, read-only unless Writable: a volume or a file mounted from a
// ConfigMap. A missing Target is made first, as a runtime does.
type mount struct {
	Source, Target string
	Writable       bool
}

// containerInit runs in the first process of a container: it sets up the
// mounts, enters the root as the user and execs the entrypoint; it returns
// only by exiting.
func containerInit(encoded string) {
	var s spec
	err := json.Unmarshal([]byte(encoded), &s)
	if err == nil {
		err = enter(s)
	}
	fmt.Fprintf(os.Stderr, "container init: %v\n", err)
	os.Exit(127)
}

func enter(s spec) error {
	const rw = syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_NOSUID | syscall.MS_NODEV
	// Private first, so that nothing mounted below reaches the host's
	// mount table; the namespace's mounts go when its last process does.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	for _, m := range s.Mounts {
		if err := mountpoint(m.Source, filepath.Join(s.Root, m.Target)); err != nil {
			return err
		}
	}
	if err := syscall.Mount(s.Root, s.Root, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind the root: %w", err)
	}
	if err := syscall.Mount("", s.Root, "", rw|syscall.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("make the root read-only: %w", err)
	}
	for _, m := range s.Mounts {
		target := filepath.Join(s.Root, m.Target)
		if err := syscall.Mount(m.Source, target, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("mount %s at %s: %w", m.Source, m.Target, err)
		}
		flags := uintptr(rw)
		if !m.Writable {
			flags |= syscall.MS_RDONLY
		}
		if err := syscall.Mount("", target, "", flags, ""); err != nil {
			return fmt.Errorf("remount %s: %w", m.Target, err)
		}
	}
	if err := syscall.Chroot(s.Root); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	if err := os.Chdir(s.Dir); err != nil {
		return fmt.Errorf("the working directory: %w", err)
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(s.GID); err != nil {
		return fmt.Errorf("setgid %d: %w", s.GID, err)
	}
	if err := syscall.Setuid(s.UID); err != nil {
		return fmt.Errorf("setuid %d: %w", s.UID, err)
	}
	return fmt.Errorf("exec %s: %w", s.Args[0], syscall.Exec(s.Args[0], s.Args, s.Env))
}

// mountpoint makes target, a directory or an empty file like source,
// unless it exists.
func mountpoint(source, target string) error {
	fi, err := os.Stat(source)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(target); err == nil {
		return nil
	}
	if fi.IsDir() {
		return os.MkdirAll(target, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.WriteFile(target, nil, 0o644)
}

// container is a running container's first process.
type container struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	// done is closed when the process has exited and its output is read;
	// err is then its exit.
	done chan struct{}
	err  error
	// ready receives the URL of the process's first "<name> ready at
	// <url>" line.
	ready chan string
	mu    sync.Mutex
	out   strings.Builder
}

// run starts s as a container, named name in the test's messages. It is
// stopped (SIGTERM, then SIGKILL) when the test ends, and its output (both
// streams) shown if the test failed.
func run(t *testing.T, name string, s spec) *container {
	t.Helper()
	encoded, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = []string{initEnv + "=" + string(encoded)}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
		// Should the test die first, the container goes with it (and with
		// its first process, everything in its PID namespace).
		Pdeathsig: syscall.SIGKILL,
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &container{t: t, name: name, cmd: cmd, done: make(chan struct{}), ready: make(chan string, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go c.read(&readers, stdout)
	go c.read(&readers, stderr)
	go func() {
		readers.Wait()
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			t.Logf("--- %s output:\n%s", name, c.output())
		}
	})
	return c
}

// read copies the process's output lines into c.out, passing on the first
// "ready at" URL, until r ends.
func (c *container) read(readers *sync.WaitGroup, r io.Reader) {
	defer readers.Done()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		c.mu.Lock()
		c.out.WriteString(line + "\n")
		c.mu.Unlock()
		if _, url, ok := strings.Cut(line, " ready at "); ok {
			select {
			case c.ready <- url:
			default:
			}
		}
	}
}

func (c *container) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// url waits for the process to say it is ready and returns its URL.
func (c *container) url() string {
	c.t.Helper()
	select {
	case url := <-c.ready:
		return url
	case <-c.done:
		c.t.Fatalf("%s exited (%v) before it was ready", c.name, c.err)
	case <-time.After(readyBound):
		c.t.Fatalf("%s not ready after %s", c.name, readyBound)
	}
	return ""
}

// wait waits for the process to exit by itself and returns how it did.
func (c *container) wait() error {
	c.t.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(readyBound):
		c.t.Fatalf("%s still running after %s", c.name, readyBound)
	}
	return nil
}

// stop sends SIGTERM, as a runtime stopping the container does, and
// SIGKILL if the process outlives it by stopBound; it returns how the
// process exited. A process not gone stopBound after SIGKILL fails the
// test.
func (c *container) stop() error {
	select {
	case <-c.done:
		return c.err
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return c.err
	case <-time.After(stopBound):
	}
	_ = c.cmd.Process.Kill()
	select {
	case <-c.done:
		return fmt.Errorf("%s ignored SIGTERM for %s: %w", c.name, stopBound, c.err)
	case <-time.After(stopBound):
		c.t.Errorf("%s (pid %d) not gone %s after SIGKILL", c.name, c.cmd.Process.Pid, stopBound)
		return nil
	}
}
