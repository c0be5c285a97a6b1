package k8s_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/deploy/k8s/render"
	"github.com/a2amesh/a2amesh/gateway"
	natsconf "github.com/nats-io/nats-server/v2/conf"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The policies of who may call whom: every A2A server authenticates its
// callers, the mesh's own calls carry a key the callee admits, the
// credentials are mounted read-only from the Secrets the operator creates,
// and no secret is written in the manifests.

// isServer reports whether c serves A2A: `a2amesh serve NAME` or
// `a2amesh gateway`.
func isServer(c container) bool {
	if !isA2amesh(c.c) {
		return false
	}
	sub := subcommand(c.c)
	return len(sub) > 0 && (sub[0] == "serve" || sub[0] == "gateway")
}

func isGateway(c container) bool { return isServer(c) && subcommand(c.c)[0] == "gateway" }

// authConfig is the gate configuration of a server container, from the
// file its --auth-config names; nil without the flag.
func authConfig(o *render.Objects, c container) (*auth.Config, error) {
	path, _, err := setting(o, c, "auth-config", "A2AMESH_AUTH_CONFIG")
	if err != nil || path == "" {
		return nil, err
	}
	b, err := file(o, c, path)
	if err != nil {
		return nil, err
	}
	cfg, err := auth.ParseConfig([]byte(b))
	if err != nil {
		return nil, fmt.Errorf("%s: --auth-config %s: %w", c, path, err)
	}
	return cfg, nil
}

// hopCredential is what every call of a container to another agent
// carries, from the file its --hop-credentials names; nil without the
// flag.
func hopCredential(o *render.Objects, c container) (*gateway.Credential, error) {
	path, _, err := setting(o, c, "hop-credentials", "A2AMESH_HOP_CREDENTIALS")
	if err != nil || path == "" {
		return nil, err
	}
	b, err := file(o, c, path)
	if err != nil {
		return nil, err
	}
	var cr gateway.Credential
	if err := yaml.UnmarshalStrict([]byte(b), &cr); err != nil {
		return nil, fmt.Errorf("%s: --hop-credentials %s: %w", c, path, err)
	}
	return &cr, nil
}

// secretSource says which Secret and key a secret comes from, in a
// container that reads it from the file at path or the environment
// variable env (one of them is given).
func secretSource(c container, path, env string) (string, error) {
	if path != "" {
		m, err := mountedAt(c, path)
		if err != nil {
			return "", err
		}
		if m.volume.Secret == nil {
			return "", fmt.Errorf("%s: %s is not in a Secret", c, path)
		}
		return "Secret " + m.volume.Secret.SecretName + ", key " + m.key, nil
	}
	i := slices.IndexFunc(c.c.Env, func(e corev1.EnvVar) bool { return e.Name == env })
	if i < 0 || c.c.Env[i].ValueFrom == nil || c.c.Env[i].ValueFrom.SecretKeyRef == nil {
		return "", fmt.Errorf("%s: $%s is not from a Secret", c, env)
	}
	ref := c.c.Env[i].ValueFrom.SecretKeyRef
	return "Secret " + ref.Name + ", key " + ref.Key, nil
}

// checkAuthConfigured: every A2A server has an --auth-config, which it
// can read: a ConfigMap's file that parses as the command parses it
// (unknown fields refused).
func checkAuthConfigured(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		if !isServer(c) {
			continue
		}
		cfg, err := authConfig(o, c)
		switch {
		case err != nil:
			bad = append(bad, err.Error())
		case cfg == nil:
			bad = append(bad, fmt.Sprintf("%s: no --auth-config (A2AMESH_AUTH_CONFIG): it would admit every caller as the anonymous one", c))
		}
	}
	return bad
}

// checkNotOpen: no A2A server admits a caller without a credential: each
// has an --auth-config that takes some credential, admits no anonymous
// caller and whose policy is not in dry run (which refuses nothing).
func checkNotOpen(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		if !isServer(c) {
			continue
		}
		cfg, err := authConfig(o, c)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		if cfg == nil {
			bad = append(bad, fmt.Sprintf("%s: open: no --auth-config", c))
			continue
		}
		if cfg.Anonymous {
			bad = append(bad, fmt.Sprintf("%s: open: its --auth-config admits callers without credentials (anonymous: true)", c))
		}
		if cfg.Policy.DryRun {
			bad = append(bad, fmt.Sprintf("%s: its policy is in dry run, which refuses nothing", c))
		}
		n := len(cfg.JWT)
		if cfg.APIKeys != nil {
			n += len(cfg.APIKeys.Keys)
		}
		if cfg.MTLS != nil {
			n++
		}
		if n == 0 {
			bad = append(bad, fmt.Sprintf("%s: its --auth-config takes no credential (no API key, JWT issuer or mTLS): it would not start", c))
		}
	}
	return bad
}

// credentialFile is a file a container reads a credential or its
// configuration from.
type credentialFile struct {
	what, path string
	// secret: the file holds a secret, which only a Secret may hold.
	secret bool
}

// credentialFiles lists the files c reads credentials from, and the
// environment variables it reads secrets from (by what needs them).
func credentialFiles(o *render.Objects, c container) (files []credentialFile, envs map[string]string) {
	envs = map[string]string{}
	for _, s := range []struct{ flag, env string }{{"auth-config", "A2AMESH_AUTH_CONFIG"}, {"hop-credentials", "A2AMESH_HOP_CREDENTIALS"},
		{"signing-key", "A2AMESH_SIGNING_KEY"}, {"nats-password-file", "A2AMESH_NATS_PASSWORD_FILE"}, {"nats-token-file", "A2AMESH_NATS_TOKEN_FILE"},
		{"nats-creds", "A2AMESH_NATS_CREDS"}, {"nats-nkey", "A2AMESH_NATS_NKEY"}, {"nats-tls-key", "A2AMESH_NATS_TLS_KEY"}} {
		if p, _, _ := setting(o, c, s.flag, s.env); p != "" {
			files = append(files, credentialFile{"--" + s.flag, p, s.flag != "auth-config" && s.flag != "hop-credentials"})
		}
	}
	if cfg, err := authConfig(o, c); err == nil && cfg != nil {
		if cfg.APIKeys != nil {
			for _, k := range cfg.APIKeys.Keys {
				if k.KeyFile != "" {
					files = append(files, credentialFile{"API key " + k.Name, k.KeyFile, true})
				}
				if k.KeyEnv != "" {
					envs[k.KeyEnv] = "API key " + k.Name
				}
			}
		}
		for _, j := range cfg.JWT {
			if j.KeysFile != "" {
				files = append(files, credentialFile{"the keys of issuer " + j.Issuer, j.KeysFile, false})
			}
		}
	}
	creds := map[string]*gateway.Credential{}
	if cr, err := hopCredential(o, c); err == nil && cr != nil {
		creds["--hop-credentials"] = cr
	}
	if isGateway(c) {
		if t, err := topology(o, c); err == nil {
			for key, cr := range t.Credentials {
				creds["the topology's credentials."+key] = cr
			}
		}
	}
	for _, what := range slices.Sorted(maps.Keys(creds)) {
		if cr := creds[what]; cr.SecretFile != "" {
			files = append(files, credentialFile{what + "'s secret", cr.SecretFile, true})
		} else if cr.SecretEnv != "" {
			envs[cr.SecretEnv] = what + "'s secret"
		}
	}
	return files, envs
}

// checkCredentialsMounted: every file of credentials or of their
// configuration a server names (its --auth-config, --hop-credentials,
// --signing-key, and the key files they name) is mounted read-only from
// a ConfigMap of the output or a Secret it references; a secret only from
// a Secret, which no pod may do without (not optional: the pod does not
// start without it) and which is not mounted by subPath (such a mount
// never sees the Secret change). A secret in the environment comes from a
// Secret too.
func checkCredentialsMounted(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		if !isServer(c) {
			continue
		}
		files, envs := credentialFiles(o, c)
		for _, f := range files {
			m, err := mountedAt(c, f.path)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s (%s)", err, f.what))
				continue
			}
			if !m.mount.ReadOnly {
				bad = append(bad, fmt.Sprintf("%s: %s (%s) is on a writable mount of volume %s", c, f.path, f.what, m.mount.Name))
			}
			switch v := m.volume; {
			case v.Secret != nil:
				if isTrue(v.Secret.Optional) {
					bad = append(bad, fmt.Sprintf("%s: %s (%s): Secret %s is optional: the pod would start without it", c, f.path, f.what, v.Secret.SecretName))
				}
				if m.mount.SubPath != "" {
					bad = append(bad, fmt.Sprintf("%s: %s (%s) is mounted by subPath, which never sees Secret %s change", c, f.path, f.what, v.Secret.SecretName))
				}
			case v.ConfigMap != nil && f.secret:
				bad = append(bad, fmt.Sprintf("%s: %s (%s) is in ConfigMap %s: a secret belongs in a Secret", c, f.path, f.what, v.ConfigMap.Name))
			case v.ConfigMap != nil:
				if isTrue(v.ConfigMap.Optional) {
					bad = append(bad, fmt.Sprintf("%s: %s (%s): ConfigMap %s is optional", c, f.path, f.what, v.ConfigMap.Name))
				}
				if _, err := file(o, c, f.path); err != nil {
					bad = append(bad, fmt.Sprintf("%s (%s)", err, f.what))
				}
			default:
				bad = append(bad, fmt.Sprintf("%s: %s (%s) is on volume %s, neither a ConfigMap nor a Secret", c, f.path, f.what, m.mount.Name))
			}
		}
		for _, env := range slices.Sorted(maps.Keys(envs)) {
			if _, err := secretSource(c, "", env); err != nil {
				bad = append(bad, fmt.Sprintf("%s (%s)", err, envs[env]))
				continue
			}
			i := slices.IndexFunc(c.c.Env, func(e corev1.EnvVar) bool { return e.Name == env })
			if isTrue(c.c.Env[i].ValueFrom.SecretKeyRef.Optional) {
				bad = append(bad, fmt.Sprintf("%s: $%s (%s) is from an optional Secret key", c, env, envs[env]))
			}
		}
	}
	return bad
}

// secretName matches the names of settings that hold secrets (flags,
// environment variables, configuration keys): a key, a token, a secret,
// a password.
var secretName = regexp.MustCompile(`(?i)(^|[-_.])(api[-_]?key|key|token|secret|password|passwd)($|[-_.])`)

// assignment is a "name: value" or "name=value" line of a configuration
// file, commented out or not.
var assignment = regexp.MustCompile(`^\s*(?:#\s*)?(?:-\s+)?"?([A-Za-z0-9_.-]+)"?\s*[:=]\s*(\S.*)$`)

// reference is a value that names an environment variable rather than
// holding a secret: NATS's configuration's $NAME, whose source
// checkNATSAuth follows to a Secret.
var reference = regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*$`)

// checkSecretsStayOut: no secret is written in the manifests: the output
// has no Secret (the operator creates them; one in the repository would
// have its value there and the same in every cluster), no ConfigMap holds
// a private key or a secret-named setting with a value, and no container
// is given a secret-named flag or variable with a value of its own rather
// than a Secret's (secretKeyRef, or the path of a file in a Secret's
// volume).
func checkSecretsStayOut(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, s := range o.Secrets {
		bad = append(bad, fmt.Sprintf("Secret %s is in the manifests: its value would be in the repository, the same in every cluster; reference it and let the operator create it", s.Name))
	}
	for _, cm := range o.ConfigMaps {
		for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
			v := cm.Data[key]
			if strings.Contains(v, "PRIVATE KEY-----") {
				bad = append(bad, fmt.Sprintf("ConfigMap %s, %s: a private key", cm.Name, key))
			}
			for i, line := range strings.Split(v, "\n") {
				if m := assignment.FindStringSubmatch(line); m != nil && secretName.MatchString(m[1]) && !reference.MatchString(strings.TrimSpace(m[2])) {
					bad = append(bad, fmt.Sprintf("ConfigMap %s, %s, line %d: %s has a value: a secret belongs in a Secret", cm.Name, key, i+1, m[1]))
				}
			}
		}
		for key, v := range cm.BinaryData {
			if strings.Contains(string(v), "PRIVATE KEY-----") {
				bad = append(bad, fmt.Sprintf("ConfigMap %s, %s: a private key", cm.Name, key))
			}
		}
	}
	inSecret := func(c container, v string) bool {
		m, err := mountedAt(c, v)
		return strings.HasPrefix(v, "/") && err == nil && m.volume.Secret != nil
	}
	for _, c := range containers(o) {
		for _, e := range c.c.Env {
			if !secretName.MatchString(e.Name) {
				continue
			}
			switch {
			case e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil:
				bad = append(bad, fmt.Sprintf("%s: $%s is from ConfigMap %s: a secret belongs in a Secret", c, e.Name, e.ValueFrom.ConfigMapKeyRef.Name))
			case e.Value != "" && !inSecret(c, e.Value):
				bad = append(bad, fmt.Sprintf("%s: $%s has a value of its own, not a Secret's", c, e.Name))
			}
		}
		for _, f := range parseArgs(append(slices.Clone(c.c.Command), c.c.Args...)) {
			if secretName.MatchString(f.name) && f.value != "" && !inSecret(c, f.value) {
				bad = append(bad, fmt.Sprintf("%s: --%s is given a value on the command line, not a Secret's", c, f.name))
			}
		}
	}
	return bad
}

// natsPassword is a password of NATS's configuration: the Secret and key
// it comes from ("" when it does not come from a required one), and why
// not.
func natsPassword(c container, v any) (source, why string) {
	s, _ := v.(string)
	secret, key, ok := strings.Cut(strings.TrimPrefix(s, "secret-of-"), "~")
	if !ok || !strings.HasPrefix(s, "secret-of-") {
		return "", "is not from a Secret (by a $VARIABLE of the server's environment)"
	}
	for _, e := range c.c.Env {
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil && ref.SecretKeyRef.Name == secret && ref.SecretKeyRef.Key == key {
			if isTrue(ref.SecretKeyRef.Optional) {
				return "", fmt.Sprintf("is from an optional Secret key ($%s): the server would start without it", e.Name)
			}
			return "Secret " + secret + ", key " + key, ""
		}
	}
	return "", "is from no Secret key of the server's environment"
}

// natsConfigParsed is NATS's configuration as nats-server reads it, its
// includes in place and the variables of its environment set, each value
// from a Secret reading "secret-of-SECRET~KEY".
func natsConfigParsed(o *render.Objects) (container, map[string]any, error) {
	c, conf, err := natsConfig(o)
	if err != nil {
		return c, nil, err
	}
	env, err := withSecretSources(o).Env(c.w, c.c.Name, c.pod())
	if err != nil {
		return c, nil, err
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	m, err := natsconf.Parse(expandConf(conf, vars))
	if err != nil {
		return c, nil, fmt.Errorf("%s: its configuration: %w", c, err)
	}
	return c, m, nil
}

// withSecretSources is o with every Secret a pod references, each value
// naming its Secret and key.
func withSecretSources(o *render.Objects) *render.Objects {
	with := *o
	with.Secrets = nil
	for name, keys := range operatorSecrets {
		data := map[string][]byte{}
		for _, k := range keys {
			data[k] = []byte("secret-of-" + name + "~" + k) // "~" in no name, and safe in a URL
		}
		with.Secrets = append(with.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data})
	}
	return &with
}

// checkNATSAuth: NATS admits no client without a credential: its
// configuration lists users, each with a password from a Secret the
// server does not start without and with permissions, and lets no one in
// as a default user; a cluster's servers route only with a password of a
// Secret too, which every route carries. Every agent and the gateway
// connect as one of the users, with its password from the same Secret.
func checkNATSAuth(_ *meta, _ string, o *render.Objects) []string {
	c, m, err := natsConfigParsed(o)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	authz, _ := m["authorization"].(map[string]any)
	users, _ := authz["users"].([]any)
	if len(users) == 0 {
		return []string{fmt.Sprintf("%s: its configuration has no authorization users: NATS admits every client that reaches it", c)}
	}
	if _, ok := m["no_auth_user"]; ok {
		bad = append(bad, fmt.Sprintf("%s: no_auth_user admits a client without a credential", c))
	}
	sources := map[string]string{} // user -> its password's Secret and key
	for _, u := range users {
		um, _ := u.(map[string]any)
		name, _ := um["user"].(string)
		src, why := natsPassword(c, um["password"])
		if why != "" {
			bad = append(bad, fmt.Sprintf("%s: NATS user %q: its password %s", c, name, why))
		}
		if _, ok := um["permissions"]; !ok {
			bad = append(bad, fmt.Sprintf("%s: NATS user %q has no permissions: it may publish and subscribe to anything", c, name))
		}
		sources[name] = src
	}
	if cl, ok := m["cluster"].(map[string]any); ok {
		ca, _ := cl["authorization"].(map[string]any)
		user, _ := ca["user"].(string)
		src, why := natsPassword(c, ca["password"])
		if why != "" {
			bad = append(bad, fmt.Sprintf("%s: the cluster's route password %s: a server that reaches the cluster port joins the cluster", c, why))
		}
		routes, _ := cl["routes"].([]any)
		for _, r := range routes {
			u, err := url.Parse(fmt.Sprint(r))
			if err != nil || u.User == nil || u.User.Username() != user || u.User.String() != user+":"+fmt.Sprint(ca["password"]) {
				bad = append(bad, fmt.Sprintf("%s: route %s does not carry the cluster's user and password (%s)", c, urlWithoutPassword(fmt.Sprint(r)), src))
			}
		}
	}
	for _, a := range containers(o) {
		if nats, _, _ := setting(o, a, "nats", "NATS_URL"); !isA2amesh(a.c) || nats == "" {
			continue
		}
		user, _, err := setting(o, a, "nats-user", "A2AMESH_NATS_USER")
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		want, ok := sources[user]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: connects to NATS as %q, which is no user of NATS's (--nats-user, A2AMESH_NATS_USER)", a, user))
			continue
		case want == "":
			continue // NATS's side is said above
		}
		path, _, _ := setting(o, a, "nats-password-file", "A2AMESH_NATS_PASSWORD_FILE")
		if path == "" {
			bad = append(bad, fmt.Sprintf("%s: no --nats-password-file (A2AMESH_NATS_PASSWORD_FILE): NATS refuses it", a))
			continue
		}
		if got, err := secretSource(a, path, ""); err != nil {
			bad = append(bad, fmt.Sprintf("%s (its NATS password)", err))
		} else if got != want {
			bad = append(bad, fmt.Sprintf("%s: its NATS password %s is from %s, NATS's for %s from %s", a, path, got, user, want))
		}
	}
	return bad
}

// urlWithoutPassword is a URL for a message.
func urlWithoutPassword(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return "(a URL that does not parse)"
}

// checkGatewaySigns: the gateway signs its card, which other teams
// import, with a key from a Secret.
func checkGatewaySigns(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	n := 0
	for _, c := range containers(o) {
		if !isGateway(c) {
			continue
		}
		n++
		p, _, err := setting(o, c, "signing-key", "A2AMESH_SIGNING_KEY")
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		if p == "" {
			bad = append(bad, fmt.Sprintf("%s: no --signing-key (A2AMESH_SIGNING_KEY): its card, which other teams import, would be unsigned", c))
			continue
		}
		if _, err := secretSource(c, p, ""); err != nil {
			bad = append(bad, fmt.Sprintf("%s (the signing key)", err))
		}
	}
	if n == 0 {
		bad = append(bad, "no gateway")
	}
	return bad
}

// checkGatewayLimits: the gateway limits how often each client calls, so
// that no one client takes every run of the mesh.
func checkGatewayLimits(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		if !isGateway(c) {
			continue
		}
		cfg, err := authConfig(o, c)
		switch {
		case err != nil:
			bad = append(bad, err.Error())
		case cfg == nil || cfg.Limits.PerPrincipal.PerSecond <= 0:
			bad = append(bad, fmt.Sprintf("%s: no rate limit per client (limits.perPrincipal in its --auth-config)", c))
		}
	}
	return bad
}

// hopMethods are the methods a hop calls on the agent it runs: the run,
// its resumption, its cancel, the listing of the context's tasks.
var hopMethods = []string{"SendMessage", "SendStreamingMessage", "SubscribeToTask", "GetTask", "ListTasks", "CancelTask"}

// checkHopsAuthenticated: every call an A2A server makes to another
// carries a credential the callee's gate admits for every method a hop
// calls. For an API key: the caller sends it in the header the callee
// reads, from the same Secret and key as one of the callee's keys, and
// the callee's policy grants that key's scopes (its own gate, from the
// parsed --auth-config, decides). A bearer kind needs a callee that takes
// JWTs; which tokens it accepts depends on the issuer, not the manifests.
func checkHopsAuthenticated(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	servers := map[string]container{} // by workload
	for _, c := range containers(o) {
		if isServer(c) {
			servers[c.w.Name] = c
		}
	}
	for _, c := range containers(o) {
		if !isServer(c) {
			continue
		}
		us, err := calls(o, c)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		// The gateway's topology may say per agent what to carry.
		perURL := map[string]*gateway.Credential{}
		if isGateway(c) {
			if t, err := topology(o, c); err == nil {
				for key, u := range t.Agents {
					if cr := t.Credentials[key]; cr != nil {
						perURL[u] = cr
					}
				}
			}
		}
		hop, err := hopCredential(o, c)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		for _, u := range us {
			eps, _, _ := resolve(o, u)
			for _, ep := range eps {
				callee, ok := servers[ep.workload]
				if !ok {
					continue
				}
				cr := hop
				if perURL[u.String()] != nil {
					cr = perURL[u.String()]
				}
				if why := admitted(o, c, cr, callee); why != "" {
					bad = append(bad, fmt.Sprintf("%s calls %s at %s: %s", c, ep.workload, u, why))
				}
			}
		}
	}
	return bad
}

// admitted says why callee's gate would refuse the calls of caller
// carrying cr, "" when it admits them.
func admitted(o *render.Objects, caller container, cr *gateway.Credential, callee container) string {
	cfg, err := authConfig(o, callee)
	if err != nil || cfg == nil {
		return "" // the callee's own policies say it
	}
	if cr == nil {
		return "it carries no credential (no --hop-credentials), which the callee refuses"
	}
	if cr.Kind != gateway.CredentialAPIKey {
		if len(cfg.JWT) == 0 {
			return fmt.Sprintf("it carries a %s token, and the callee takes no JWT", cr.Kind)
		}
		return ""
	}
	// Every secret stands for itself: a value per Secret and key, which
	// the caller sends and the callee's keys hold.
	value := func(source string) string { return "the value of " + source }
	src, err := secretSource(caller, cr.SecretFile, cr.SecretEnv)
	if err != nil {
		return err.Error()
	}
	if cfg.APIKeys == nil {
		return "it carries an API key, and the callee takes none"
	}
	var keys []auth.APIKey
	for _, k := range cfg.APIKeys.Keys {
		s, err := secretSource(callee, k.KeyFile, k.KeyEnv)
		if err != nil {
			continue // checkCredentialsMounted says it
		}
		keys = append(keys, auth.APIKey{Key: value(s), Name: k.Name, Tenant: k.Tenant, Scopes: k.Scopes})
	}
	authn, err := auth.NewAPIKeys(auth.APIKeysConfig{Header: cfg.APIKeys.Header, Keys: keys})
	if err != nil {
		return fmt.Sprintf("the callee's API keys: %v", err)
	}
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{authn}, AllowAnonymous: cfg.Anonymous,
		Policy: cfg.Policy, Audit: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Sprintf("the callee's gate: %v", err)
	}
	header := cr.Header
	if header == "" {
		header = "X-API-Key"
	}
	creds := auth.Credentials{Header: func(name string) string {
		if strings.EqualFold(name, header) {
			return value(src)
		}
		return ""
	}}
	for _, m := range hopMethods {
		if _, err := gate.Admit(context.Background(), m, creds); err != nil {
			return fmt.Sprintf("the key from %s in header %s is refused: %v", src, header, err)
		}
	}
	return ""
}

// TestCommentedJWTExample: the OpenID Connect issuer that
// base/auth/gateway-auth.yaml shows commented out is, uncommented, one the
// gateway takes (docs/deploy.md#security tells operators to do so).
func TestCommentedJWTExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(render.Dir(), "base", "auth", "gateway-auth.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for line := range strings.SplitSeq(string(b), "\n") {
		switch {
		case line == "# jwt:":
			in = true
		case in && !strings.HasPrefix(line, "#   "):
			in = false
		}
		if in {
			line = strings.TrimPrefix(line, "# ")
		}
		out = append(out, line)
	}
	cfg, err := auth.ParseConfig([]byte(strings.Join(out, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.JWT) != 1 {
		t.Fatalf("%d JWT issuers uncommented, want 1", len(cfg.JWT))
	}
	// The gate it makes, without the API keys, whose files are the pod's.
	cfg.APIKeys = nil
	if _, err := cfg.Gate(nil, slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("the uncommented issuer: %v", err)
	}
}
