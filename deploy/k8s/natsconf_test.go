package k8s_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/a2amesh/a2amesh/deploy/k8s/render"
)

// natsServer builds the module's nats-server once for the tests that run
// it: the static binary the rollout test's NATS image holds.
var natsServer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "a2amesh-nats-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "nats-server")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/nats-io/nats-server/v2")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "build nats-server: " + e.err.Error() + "\n" + e.out }

// Every overlay's NATS configuration is one nats-server accepts
// (`nats-server -t`), with the environment its pods give it: a setting
// out of nats-server's bounds would otherwise surface only as pods that
// exit at start.
func TestNATSConfigsLoad(t *testing.T) {
	bin, err := natsServer()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range render.Overlays() {
		t.Run(name, func(t *testing.T) {
			o, err := render.Overlay(name)
			if err != nil {
				t.Fatal(err)
			}
			w, ok := o.Workload("StatefulSet", "nats")
			if !ok {
				t.Fatal("no StatefulSet nats")
			}
			c := render.Container(&w.Template.Spec, "nats")
			// The configuration and the files beside it (what it
			// includes), as the pod mounts them.
			dir, conf := t.TempDir(), ""
			for _, vm := range c.VolumeMounts {
				for _, v := range w.Template.Spec.Volumes {
					if v.Name != vm.Name || v.ConfigMap == nil || filepath.Dir(confPath(c.Command)) != vm.MountPath {
						continue
					}
					cm := o.ConfigMap(v.ConfigMap.Name)
					if cm == nil {
						t.Fatalf("no ConfigMap %s", v.ConfigMap.Name)
					}
					for k, data := range cm.Data {
						if err := os.WriteFile(filepath.Join(dir, k), []byte(data), 0o644); err != nil {
							t.Fatal(err)
						}
						if filepath.Join(vm.MountPath, k) == confPath(c.Command) {
							conf = k
						}
					}
				}
			}
			if conf == "" {
				t.Fatalf("the configuration %s is in no mounted ConfigMap", confPath(c.Command))
			}
			file := filepath.Join(dir, conf)
			// The environment, the operator's Secrets in it.
			env, err := withOperatorSecrets(o).Env(w, c.Name, w.Name+"-0")
			if err != nil {
				t.Fatal(err)
			}
			check := exec.Command(bin, "-t", "-c", file)
			check.Env = env
			if out, err := check.CombinedOutput(); err != nil {
				t.Errorf("nats-server refuses the %s overlay's configuration: %v\n%s", name, err, out)
			}
		})
	}
}

// confPath is the --config (or -c) argument of a nats-server command.
func confPath(cmd []string) string {
	for i, a := range cmd {
		if (a == "--config" || a == "-c") && i+1 < len(cmd) {
			return cmd[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			return v
		}
	}
	return ""
}
