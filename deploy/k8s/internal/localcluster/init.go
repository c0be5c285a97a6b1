package localcluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// initEnv carries a container's initSpec to the test binary re-executed
// inside the pod's network namespace; see MaybeInit.
const initEnv = "LOCALCLUSTER_INIT"

// initSpec is what a container runtime does between a pod's sandbox and
// the container's process: the root filesystem, the mounts, the user.
type initSpec struct {
	// Image is the image's root filesystem, never written: the container's
	// root is an overlay on it whose upper layer lives in Dir.
	Image string
	Dir   string
	// ReadOnlyRoot remounts the container's root read-only once the
	// mounts are in place (readOnlyRootFilesystem).
	ReadOnlyRoot bool
	Mounts       []mount
	UID, GID     int
	Argv, Env    []string
	WorkDir      string
	// Hostname is the pod's name, which a pod's processes see as their
	// host name (in a UTS namespace of the pod's own).
	Hostname string
}

type mount struct {
	Source, Target string
	ReadOnly       bool
}

// MaybeInit is the container runtime's half that runs inside the pod: when
// the process was started as a container's init, it sets the container up
// and executes the container's command, never returning; otherwise it
// returns at once. Call it first thing in the TestMain of a test that runs
// a Cluster, whose pods are started as re-executions of the test binary.
func MaybeInit() {
	raw, ok := os.LookupEnv(initEnv)
	if !ok {
		return
	}
	var s initSpec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		fail(fmt.Errorf("decode the container spec: %w", err))
	}
	fail(s.run())
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "localcluster init: %v\n", err)
	os.Exit(127)
}

// run builds the container's root under Dir/root and executes Argv in it.
// `ip netns exec` already put the process in the pod's network namespace
// and in a mount namespace of its own whose mounts don't propagate back,
// so nothing here outlives the container's last process.
func (s *initSpec) run() error {
	runtime.LockOSThread()
	if err := syscall.Unshare(syscall.CLONE_NEWUTS); err != nil {
		return fmt.Errorf("UTS namespace: %w", err)
	}
	if err := syscall.Sethostname([]byte(s.Hostname)); err != nil {
		return fmt.Errorf("host name: %w", err)
	}
	root := filepath.Join(s.Dir, "root")
	upper, work := filepath.Join(s.Dir, "upper"), filepath.Join(s.Dir, "work")
	for _, d := range []string{root, upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", s.Image, upper, work)
	if err := syscall.Mount("overlay", root, "overlay", 0, opts); err != nil {
		return fmt.Errorf("overlay root: %w", err)
	}
	// What a runtime gives every container: /proc, and the few devices
	// programs expect.
	if err := mountAt(root, "/proc", "proc", "proc"); err != nil {
		return err
	}
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"} {
		if err := bindAt(root, mount{Source: dev, Target: dev}); err != nil {
			return err
		}
	}
	for _, m := range s.Mounts {
		if err := bindAt(root, m); err != nil {
			return err
		}
	}
	if s.ReadOnlyRoot {
		if err := syscall.Mount("", root, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("read-only root: %w", err)
		}
	}
	if err := syscall.Chroot(root); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	if err := syscall.Chdir(orRoot(s.WorkDir)); err != nil {
		return fmt.Errorf("chdir: %w", err)
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(s.GID); err != nil {
		return fmt.Errorf("setgid: %w", err)
	}
	if err := syscall.Setuid(s.UID); err != nil {
		return fmt.Errorf("setuid: %w", err)
	}
	if len(s.Argv) == 0 {
		return fmt.Errorf("no command")
	}
	bin, err := lookPath(s.Argv[0], s.Env)
	if err != nil {
		return err
	}
	err = syscall.Exec(bin, s.Argv, s.Env)
	return fmt.Errorf("exec %s: %w", s.Argv[0], err)
}

// lookPath finds a command without a slash on the container's PATH, in
// the container's root, as a runtime does.
func lookPath(cmd string, env []string) (string, error) {
	if strings.Contains(cmd, "/") {
		return cmd, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, cmd)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on PATH %s", cmd, path)
}

func orRoot(dir string) string {
	if dir == "" {
		return "/"
	}
	return dir
}

func mountAt(root, target, source, fstype string) error {
	dst := filepath.Join(root, target)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount(source, dst, fstype, 0, ""); err != nil {
		return fmt.Errorf("mount %s on %s: %w", fstype, target, err)
	}
	return nil
}

// bindAt bind-mounts m.Source on m.Target inside root, making the mount
// point (a file or a directory, like the source) in the overlay's upper
// layer when the image lacks it, as a runtime does.
func bindAt(root string, m mount) error {
	dst := filepath.Join(root, m.Target)
	fi, err := os.Stat(m.Source)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		err = os.MkdirAll(dst, 0o755)
	} else if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
		var f *os.File
		if f, err = os.OpenFile(dst, os.O_CREATE, 0o644); err == nil {
			err = f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("mount point %s: %w", m.Target, err)
	}
	if err := syscall.Mount(m.Source, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s on %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		if err := syscall.Mount("", dst, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("read-only %s: %w", m.Target, err)
		}
	}
	return nil
}
