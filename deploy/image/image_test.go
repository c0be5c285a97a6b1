//go:build image

package image

import (
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io/fs"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk/model/openai/openaitest"
	"github.com/a2amesh/a2amesh/deploy"
	"github.com/a2amesh/a2amesh/gateway"
)

// allowSkipEnv names the variable that lets a run skip tests whose tools
// are missing, a comma-separated list ("podman"), as in the interop tests:
// without it a machine that cannot build the image fails the test, so that
// a run that did not prove the image cannot pass for one that did.
const allowSkipEnv = "A2AMESH_ALLOW_SKIP"

// Bounds against hanging: `make image` (compiling the binary from a cold
// cache is the slow case), one podman command, and the requests.
const (
	buildBound   = 15 * time.Minute
	podmanBound  = 2 * time.Minute
	requestBound = time.Minute
)

// Where the image keeps its CA bundle, and the certificates `make image`
// puts there by default: Debian's (package ca-certificates), without what
// this machine added to its own bundle.
const (
	caBundle  = "/etc/ssl/certs/ca-certificates.crt"
	debianCAs = "/usr/share/ca-certificates/mozilla/*.crt"
)

func TestMain(m *testing.M) {
	if s, ok := os.LookupEnv(initEnv); ok {
		containerInit(s) // the first process of a container: never returns
	}
	os.Exit(m.Run())
}

// TestImage builds the image with `make image`, checks its configuration
// and files, and serves from its files as a runtime would with the root
// file system read-only: the default command, the echo agent, the gateway
// in front of it with a topology mounted read-only, and the chat agent
// calling an OpenAI-compatible endpoint over TLS with its checkpoints on
// a volume.
func TestImage(t *testing.T) {
	requirePodman(t)
	ref := build(t)
	cfg := inspect(t, ref)
	root := export(t, ref)
	checkConfig(t, cfg)
	checkFiles(t, root)
	base := baseSpec(t, cfg, root)

	t.Run("default command", func(t *testing.T) {
		s := base
		s.Args = slices.Concat(cfg.Entrypoint, cfg.Cmd)
		c := run(t, "a2amesh "+strings.Join(cfg.Cmd, " "), s)
		if err := c.wait(); err != nil {
			t.Fatalf("%s: %v", strings.Join(s.Args, " "), err)
		}
		if !strings.Contains(c.output(), "a2amesh serve NAME") {
			t.Errorf("%s printed no usage", strings.Join(s.Args, " "))
		}
	})

	t.Run("echo, and the gateway in front of it", func(t *testing.T) {
		echo := base
		echo.Args = slices.Concat(cfg.Entrypoint, []string{"serve", "echo", "--addr", "127.0.0.1:0"})
		echoC := run(t, "echo", echo)
		echoURL := echoC.url()
		ask(t, echoURL, "hello from the image", "hello from the image")

		// The topology as deploy/k8s mounts it: a ConfigMap's directory at
		// /etc/a2amesh, read-only.
		topology := t.TempDir()
		if err := os.WriteFile(filepath.Join(topology, "topology.yaml"), fmt.Appendf(nil, "version: 1\nagents:\n  echo: %s\nentry:\n  agent: echo\n", echoURL), 0o644); err != nil {
			t.Fatal(err)
		}
		gw := base
		gw.Args = slices.Concat(cfg.Entrypoint, []string{"gateway", "--addr", "127.0.0.1:0", "--topology", "/etc/a2amesh/topology.yaml"})
		gw.Mounts = []mount{{Source: topology, Target: "/etc/a2amesh"}}
		gwC := run(t, "gateway", gw)
		ask(t, gwC.url(), "hello through the gateway", "hello through the gateway")

		// Stopped as a runtime stops a container: SIGTERM to its first
		// process.
		for _, c := range []*container{gwC, echoC} {
			if err := c.stop(); err != nil {
				t.Errorf("%s after SIGTERM: %v", c.name, err)
			}
		}
	})

	t.Run("model over TLS, checkpoints on a volume", func(t *testing.T) {
		const reply = "Hello from the model, over TLS"
		model := openaitest.NewServer(func(*goopenai.ChatCompletionRequest) openaitest.Reply {
			return openaitest.Reply{Content: reply}
		})
		defer model.Close()
		// openaitest serves plain HTTP; its handler serves here over TLS.
		endpoint := httptest.NewTLSServer(model.Config.Handler)
		defer endpoint.Close()
		// The endpoint's certificate joins the image's bundle (checked
		// above; the last use of these files), so the model is reached
		// only if the binary trusts the bundle where the image keeps it.
		trust(t, filepath.Join(root, caBundle), endpoint.Certificate())
		// An emptyDir: a fresh directory anyone may write.
		data := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(data, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(data, 0o777); err != nil { // past the umask
			t.Fatal(err)
		}
		chat := base
		chat.Args = slices.Concat(cfg.Entrypoint, []string{"serve", "chat", "--addr", "127.0.0.1:0", "--data-dir", "/data"})
		chat.Env = append(slices.Clip(base.Env), "OPENAI_BASE_URL="+endpoint.URL+"/v1", "OPENAI_API_KEY=test", "OPENAI_MODEL=test")
		chat.Mounts = []mount{{Source: data, Target: "/data", Writable: true}}
		c := run(t, "chat", chat)
		ask(t, c.url(), "Hello!", reply)
		if n := len(model.Requests()); n == 0 {
			t.Error("the model endpoint got no request")
		}
		// The checkpoint store made its directory on the volume, as the
		// image's user.
		fi, err := os.Stat(filepath.Join(data, "chat", "checkpoints"))
		if err != nil {
			t.Fatalf("the chat agent's checkpoint directory on the volume: %v", err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != base.UID {
			t.Errorf("the checkpoint directory is uid %d's, want the image user's, %d", st.Uid, base.UID)
		}
		if err := c.stop(); err != nil {
			t.Errorf("chat after SIGTERM: %v", err)
		}
	})
}

// requirePodman fails the test, saying what is missing, where podman
// cannot build the image as root, or skips it where A2AMESH_ALLOW_SKIP
// names podman.
func requirePodman(t *testing.T) {
	t.Helper()
	var why string
	if _, err := exec.LookPath("podman"); err != nil {
		why = "podman is not on PATH (apt-get install podman)"
	} else if os.Geteuid() != 0 {
		why = "it needs root, for podman's storage and for the mounts and chroot that stand in for a container runtime"
	}
	if why == "" {
		return
	}
	if slices.ContainsFunc(strings.Split(os.Getenv(allowSkipEnv), ","), func(p string) bool { return strings.TrimSpace(p) == "podman" }) {
		t.Skipf("the image test cannot run: %s (skipped: %s names podman)", why, allowSkipEnv)
	}
	t.Fatalf("the image test cannot run: %s; or set %s=podman to skip it", why, allowSkipEnv)
}

// podman runs podman args and returns its output.
func podman(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), podmanBound)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "podman", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// build runs `make image` from the repository's root, with a tag and a
// context directory of the test's own, and returns the image's name. The
// image is removed when the test ends.
func build(t *testing.T) string {
	t.Helper()
	ref := fmt.Sprintf("localhost/a2amesh-image-test:%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), buildBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-C", "../..", "image",
		"CONTAINER=podman", "IMAGE="+ref, "IMAGE_DIR="+filepath.Join(t.TempDir(), "context"))
	t.Cleanup(func() { exec.Command("podman", "rmi", "--force", "--ignore", ref).Run() })
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("make image built %s in %s", ref, time.Since(start).Round(time.Millisecond))
	return ref
}

// imageConfig is what the image says about the process it runs (the OCI
// image config, as podman image inspect shows it).
type imageConfig struct {
	User         string
	Env          []string
	Entrypoint   []string
	Cmd          []string
	WorkingDir   string
	ExposedPorts map[string]struct{}
	Volumes      map[string]struct{}
	Labels       map[string]string
}

func inspect(t *testing.T, ref string) imageConfig {
	t.Helper()
	var images []struct{ Config imageConfig }
	if err := json.Unmarshal([]byte(podman(t, "image", "inspect", ref)), &images); err != nil || len(images) != 1 {
		t.Fatalf("podman image inspect %s: %d images, %v", ref, len(images), err)
	}
	return images[0].Config
}

// export returns a directory holding the image's files as a container of
// it has them, owners and modes kept: podman export of a container
// created from it (and removed), unpacked.
func export(t *testing.T, ref string) string {
	t.Helper()
	id := podman(t, "create", ref)
	t.Cleanup(func() { exec.Command("podman", "rm", "--force", "--ignore", id).Run() })
	archive := filepath.Join(t.TempDir(), "image.tar")
	podman(t, "export", "--output", archive, id)
	root := filepath.Join(t.TempDir(), "root")
	// The image does not say what "/" is; runtimes make it 0755.
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "--extract", "--same-permissions", "--same-owner", "--numeric-owner",
		"--file", archive, "--directory", root).CombinedOutput(); err != nil {
		t.Fatalf("unpack the image: %v\n%s", err, out)
	}
	return root
}

// checkConfig checks what the image runs and as whom, its volume, ports
// and labels.
func checkConfig(t *testing.T, cfg imageConfig) {
	t.Helper()
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"user", cfg.User, "65532:65532"},
		{"entrypoint", cfg.Entrypoint, []string{"/a2amesh"}},
		{"command", cfg.Cmd, []string{"help"}},
		{"working directory", cfg.WorkingDir, "/data"},
		{"volumes", cfg.Volumes, map[string]struct{}{"/data": {}}},
		{"exposed ports", cfg.ExposedPorts, map[string]struct{}{"9100-9108/tcp": {}}},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("the image's %s: %v, want %v", c.what, c.got, c.want)
		}
	}
	// The ports cover the gateway's and every agent's of the default mesh.
	top, err := gateway.ParseTopology(deploy.Topology)
	if err != nil {
		t.Fatal(err)
	}
	addrs := []string{gateway.DefaultAddr}
	for _, u := range top.Agents {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, pu.Host)
	}
	for _, addr := range addrs {
		_, port, _ := net.SplitHostPort(addr)
		if n, _ := strconv.Atoi(port); n < 9100 || n > 9108 {
			t.Errorf("the default mesh listens on %s, outside the exposed ports", addr)
		}
	}
	revision := "unknown"
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		revision = strings.TrimSpace(string(out))
	}
	for _, name := range []string{"title", "description", "source", "licenses", "version", "revision"} {
		key := "org.opencontainers.image." + name
		switch got := cfg.Labels[key]; {
		case got == "":
			t.Errorf("the image has no label %s", key)
		case name == "revision" && got != revision:
			t.Errorf("label %s = %q, want %q (git rev-parse HEAD)", key, got, revision)
		}
	}
}

// checkFiles checks that the image holds its files and nothing else (no
// shell, no package database), with the owners and modes that keep all
// but /data read-only to the user; that the binary is static; and that
// the CA bundle holds Debian's certificates and no others.
func checkFiles(t *testing.T, root string) {
	t.Helper()
	type entry struct {
		mode     fs.FileMode
		uid, gid uint32
	}
	want := map[string]entry{
		"a2amesh":                           {0o755, 0, 0},
		"data":                              {fs.ModeDir | 0o755, 65532, 65532},
		"etc":                               {fs.ModeDir | 0o755, 0, 0},
		"etc/group":                         {0o644, 0, 0},
		"etc/passwd":                        {0o644, 0, 0},
		"etc/ssl":                           {fs.ModeDir | 0o755, 0, 0},
		"etc/ssl/certs":                     {fs.ModeDir | 0o755, 0, 0},
		"etc/ssl/certs/ca-certificates.crt": {0o644, 0, 0},
	}
	got := map[string]entry{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(root, path)
		got[rel] = entry{fi.Mode(), st.Uid, st.Gid}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	for p := range got {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range slices.Compact(paths) {
		g, ok := got[p]
		w, wanted := want[p]
		switch {
		case !wanted:
			t.Errorf("the image holds /%s (%v, %d:%d), which it should not", p, g.mode, g.uid, g.gid)
		case !ok:
			t.Errorf("the image lacks /%s", p)
		case g != w:
			t.Errorf("/%s is %v, owned by %d:%d; want %v, %d:%d", p, g.mode, g.uid, g.gid, w.mode, w.uid, w.gid)
		}
	}

	bin, err := elf.Open(filepath.Join(root, "a2amesh"))
	if err != nil {
		t.Fatalf("the binary: %v", err)
	}
	defer bin.Close()
	if libs, _ := bin.ImportedLibraries(); len(libs) > 0 || slices.ContainsFunc(bin.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
		t.Errorf("the binary is not static: it needs %v and an interpreter", libs)
	}

	bundle, err := os.ReadFile(filepath.Join(root, caBundle))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(debianCAs)
	if err != nil || len(files) == 0 {
		t.Fatalf("Debian's CA certificates, %s: %d files, %v (apt-get install ca-certificates)", debianCAs, len(files), err)
	}
	var debian []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		debian = append(debian, b...)
	}
	if got, want := certificates(t, bundle), certificates(t, debian); !slices.Equal(got, want) {
		t.Errorf("the image's %s holds %d certificates, not the %d of %s", caBundle, len(got), len(want), debianCAs)
	}
}

// certificates returns the DER of the certificates in a PEM bundle, sorted.
func certificates(t *testing.T, bundle []byte) []string {
	t.Helper()
	var out []string
	for {
		var b *pem.Block
		if b, bundle = pem.Decode(bundle); b == nil {
			break
		}
		if _, err := x509.ParseCertificate(b.Bytes); b.Type != "CERTIFICATE" || err != nil {
			t.Fatalf("a %s block in a CA bundle: %v", b.Type, err)
		}
		out = append(out, string(b.Bytes))
	}
	if len(bytes.TrimSpace(bundle)) > 0 {
		t.Fatalf("a CA bundle ends in %d bytes of no certificate", len(bundle))
	}
	slices.Sort(out)
	return out
}

// baseSpec is how a runtime starts the image: as its user (who has an
// entry in its /etc/passwd and /etc/group, whose home is HOME), in its
// working directory, with its environment.
func baseSpec(t *testing.T, cfg imageConfig, root string) spec {
	t.Helper()
	uidS, gidS, _ := strings.Cut(cfg.User, ":")
	uid, err1 := strconv.Atoi(uidS)
	gid, err2 := strconv.Atoi(gidS)
	if err1 != nil || err2 != nil || uid == 0 || gid == 0 {
		t.Fatalf("the image's user %q: want numeric uid:gid, neither root's", cfg.User)
	}
	home := ""
	for _, f := range [][2]string{{"passwd", uidS}, {"group", gidS}} {
		b, err := os.ReadFile(filepath.Join(root, "etc", f[0]))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for line := range strings.Lines(string(b)) {
			fields := strings.Split(strings.TrimSpace(line), ":")
			if len(fields) >= 3 && fields[2] == f[1] {
				found = true
				if f[0] == "passwd" && len(fields) == 7 {
					home = fields[5]
				}
			}
		}
		if !found {
			t.Errorf("the image's /etc/%s has no entry for %s", f[0], f[1])
		}
	}
	return spec{Root: root, UID: uid, GID: gid, Dir: cfg.WorkingDir, Env: append(slices.Clip(cfg.Env), "HOME="+home)}
}

// ask sends text to the agent at url over its card's preferred binding
// and checks that the task completes with want in its artifacts.
func ask(t *testing.T, url, text, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestBound)
	defer cancel()
	c, err := client.New(ctx, url, client.Config{})
	if err != nil {
		t.Fatalf("the card at %s: %v", url, err)
	}
	ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, text)})
	if err != nil {
		t.Fatalf("SendMessage to %s: %v", url, err)
	}
	task, ok := ev.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage to %s: a %T, want a task", url, ev)
	}
	var got strings.Builder
	for _, a := range task.Artifacts {
		got.WriteString(a.Text())
	}
	if task.Status.State != a2a.TaskStateCompleted || !strings.Contains(got.String(), want) {
		var status string
		if task.Status.Message != nil {
			status = task.Status.Message.Text()
		}
		t.Fatalf("%s answered %q with a task %s (%q), artifacts %q; want completed, with %q", url, text, task.Status.State, status, got.String(), want)
	}
}

// trust appends cert to the PEM bundle at path.
func trust(t *testing.T, path string, cert *x509.Certificate) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = pem.Encode(f, &pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}
