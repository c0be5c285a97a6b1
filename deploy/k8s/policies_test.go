package k8s_test

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/deploy"
	"github.com/a2amesh/a2amesh/deploy/k8s/render"
	"github.com/a2amesh/a2amesh/gateway"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
)

// policies are the rules every overlay keeps, each with variants that
// break it.
func policies() []policy {
	return []policy{
		{name: "one namespace", check: checkNamespace, breaks: []variant{
			{"an object outside it", "prod", "", map[string]string{"hpa.yaml": strings.Replace(weatherHPA, "  namespace: a2amesh\n", "", 1)}},
		}},
		{name: "probes", check: checkProbes, breaks: []variant{
			{"no readiness probe", "dev", patches(agentPatch("weather", "readinessProbe: null")), nil},
			{"probe on an undeclared port", "prod", patches(agentPatch("gateway", "livenessProbe:\n  httpGet:\n    port: metrics")), nil},
			{"liveness on /readyz", "dev", patches(agentPatch("chat", "livenessProbe:\n  httpGet:\n    path: /readyz")), nil},
		}},
		{name: "resources", check: checkResources, breaks: []variant{
			{"no limits", "dev", patches(jsonPatch("Deployment", "math", "- op: remove\n  path: /spec/template/spec/containers/0/resources/limits")), nil},
			{"request over limit", "prod", patches(containerPatch("StatefulSet", "nats", "nats", "resources:\n  requests:\n    memory: 4Gi")), nil},
		}},
		{name: "non-root", check: checkNonRoot, breaks: []variant{
			{"root user", "dev", patches(agentPatch("chat", "securityContext:\n  runAsUser: 0")), nil},
			{"runAsNonRoot off", "prod", patches(containerPatch("StatefulSet", "nats", "nats", "securityContext:\n  runAsNonRoot: false")), nil},
			{"privilege escalation", "dev", patches(agentPatch("writer", "securityContext:\n  allowPrivilegeEscalation: true")), nil},
			{"no seccomp profile", "dev", patches(podPatch("Deployment", "router", "securityContext:\n  seccompProfile: null")), nil},
		}},
		{name: "read-only root filesystem", check: checkReadOnlyRoot, breaks: []variant{
			{"writable root", "dev", patches(agentPatch("writer", "securityContext:\n  readOnlyRootFilesystem: false")), nil},
		}},
		{name: "no capabilities", check: checkCapabilities, breaks: []variant{
			{"a capability added", "prod", patches(agentPatch("planner", "securityContext:\n  capabilities:\n    add: [NET_BIND_SERVICE]")), nil},
			{"not all dropped", "dev", patches(jsonPatch("StatefulSet", "nats", "- op: replace\n  path: /spec/template/spec/containers/0/securityContext/capabilities/drop\n  value: [NET_RAW]")), nil},
		}},
		{name: "no API credentials or service links", check: checkNoAPIAccess, breaks: []variant{
			{"token mounted", "dev", patches(podPatch("Deployment", "router", "automountServiceAccountToken: true")), nil},
			{"service links", "prod", patches(podPatch("Deployment", "research", "enableServiceLinks: true")), nil},
		}},
		{name: "images pinned", check: checkImages, breaks: []variant{
			{"latest", "prod", "images:\n  - name: ghcr.io/a2amesh/a2amesh\n    newTag: latest\n", nil},
			{"untagged", "dev", patches(containerPatch("StatefulSet", "nats", "nats", "image: docker.io/library/nats")), nil},
		}},
		{name: "services select pods and ports", check: checkServices, breaks: []variant{
			{"selects nothing", "dev", patches(smp("apiVersion: v1\nkind: Service\nmetadata:\n  name: weather\nspec:\n  selector:\n    app.kubernetes.io/name: wether")), nil},
			{"targets an undeclared port", "prod", patches(jsonPatch("Service", "nats", "- op: replace\n  path: /spec/ports/0/targetPort\n  value: clients")), nil},
		}},
		{name: "references resolve", check: checkReferences, breaks: []variant{
			{"missing ConfigMap", "dev", patches(jsonPatch("Deployment", "gateway", "- op: replace\n  path: /spec/template/spec/volumes/2/configMap/name\n  value: gateway-topo")), nil},
			{"missing key", "prod", patches(jsonPatch("Deployment", "gateway", "- op: replace\n  path: /spec/template/spec/volumes/2/configMap/items/0/key\n  value: mesh.yaml")), nil},
			{"required Secret", "dev", patches(agentPatch("chat", "env:\n  - name: OPENAI_API_KEY\n    valueFrom:\n      secretKeyRef:\n        name: a2amesh-model\n        key: OPENAI_API_KEY\n        optional: false")), nil},
			{"missing service account", "prod", patches(deleteObject("v1", "ServiceAccount", "math")), nil},
			{"autoscaler of nothing", "prod", patches(jsonPatch("HorizontalPodAutoscaler", "chat", "- op: replace\n  path: /spec/scaleTargetRef/name\n  value: chatter")), nil},
		}},
		{name: "GOMEMLIMIT from the memory limit", check: checkGOMEMLIMIT, breaks: []variant{
			{"a fixed value", "dev", patches(agentPatch("weather", "env:\n  - name: GOMEMLIMIT\n    value: \"250000000\"")), nil},
			{"none", "prod", patches(containerPatch("StatefulSet", "nats", "nats", "env:\n  - name: GOMEMLIMIT\n    $patch: delete")), nil},
			{"the whole limit in KiB", "dev", patches(agentPatch("math", "env:\n  - name: A2AMESH_MEMORY_LIMIT_MIB\n    valueFrom:\n      resourceFieldRef:\n        divisor: 1Ki")), nil},
		}},
		{name: "network policies allow exactly the mesh's calls", check: checkNetwork, breaks: []variant{
			{"an agent open to all", "dev", patches(jsonPatch("NetworkPolicy", "math", "- op: replace\n  path: /spec/ingress/0/from\n  value: [{podSelector: {}}]")), nil},
			{"a caller left out", "prod", patches(jsonPatch("NetworkPolicy", "writer", "- op: remove\n  path: /spec/ingress/0/from/1")), nil},
			{"no policy and no default deny", "dev", patches(deleteObject("networking.k8s.io/v1", "NetworkPolicy", "chat"), deleteObject("networking.k8s.io/v1", "NetworkPolicy", "default-deny-ingress")), nil},
			{"an agent open to other namespaces", "prod", patches(jsonPatch("NetworkPolicy", "weather", "- op: add\n  path: /spec/ingress/0/from/-\n  value: {namespaceSelector: {}}")), nil},
			{"NATS open to itself", "dev", "", map[string]string{"nats-self.yaml": natsSelfPolicy}},
		}},
		{name: "callers use the card's URL", check: checkCardURLs, breaks: []variant{
			{"the card names the long name", "dev", patches(jsonPatch("Deployment", "weather", "- op: replace\n  path: /spec/template/spec/containers/0/args/3\n  value: --public-url=http://weather.a2amesh.svc:9102/")), nil},
			{"no public URL", "prod", patches(jsonPatch("Deployment", "research", "- op: remove\n  path: /spec/template/spec/containers/0/args/3")), nil},
		}},
		{name: "the gateway composes the default mesh", check: checkTopology, breaks: []variant{
			{"an agent left out", "dev", "configMapGenerator:\n  - name: gateway-topology\n    behavior: replace\n    literals:\n      - |-\n        topology.yaml=version: 1\n        agents:\n          router: http://router:9101/\n        entry:\n          agent: router\n", nil},
		}},
		{name: "agents call the agents they need at their Services", check: checkPeerFlags, breaks: []variant{
			{"supervisor without writer", "dev", patches(jsonPatch("Deployment", "supervisor", "- op: remove\n  path: /spec/template/spec/containers/0/args/6")), nil},
			{"planner calls the wrong agent", "prod", patches(jsonPatch("Deployment", "planner", "- op: replace\n  path: /spec/template/spec/containers/0/args/5\n  value: --math-url=http://chat:9103/")), nil},
		}},
		{name: "flags exist", check: checkFlagsExist, breaks: []variant{
			{"a misspelt flag", "dev", patches(jsonPatch("Deployment", "supervisor", "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --reserch-url=http://research:9105/")), nil},
		}},
		{name: "replicas and shared state", check: checkReplicas, breaks: []variant{
			{"one replica in prod", "prod", patches(jsonPatch("HorizontalPodAutoscaler", "weather", "- op: replace\n  path: /spec/minReplicas\n  value: 1")), nil},
			{"replicas beside an autoscaler", "prod", patches(smp("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  replicas: 3")), nil},
			{"state in memory", "dev", patches(agentPatch("chat", "env:\n  - name: A2AMESH_STATE\n    value: memory")), nil},
			{"an autoscaler in dev", "dev", "", map[string]string{"hpa.yaml": weatherHPA}},
		}},
		{name: "NATS cluster", check: checkNATS, breaks: []variant{
			{"five servers, three routes", "prod", patches(smp("apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: nats\nspec:\n  replicas: 5")), nil},
			{"a cluster on emptyDir", "prod", patches(jsonPatch("StatefulSet", "nats", "- op: remove\n  path: /spec/volumeClaimTemplates\n- op: add\n  path: /spec/template/spec/volumes/-\n  value: {name: data, emptyDir: {}}")), nil},
			{"even servers", "prod", patches(smp("apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: nats\nspec:\n  replicas: 2")), nil},
			{"servers sharing a node", "prod", patches(jsonPatch("StatefulSet", "nats", "- op: replace\n  path: /spec/template/spec/topologySpreadConstraints/0/whenUnsatisfiable\n  value: ScheduleAnyway")), nil},
		}},
		{name: "drain fits the grace period", check: checkDrain, breaks: []variant{
			{"grace too short", "dev", patches(podPatch("Deployment", "gateway", "terminationGracePeriodSeconds: 20")), nil},
			{"lame duck too long", "prod", patches(podPatch("StatefulSet", "nats", "terminationGracePeriodSeconds: 25")), nil},
			{"no drain timeout", "dev", patches(jsonPatch("Deployment", "chat", "- op: remove\n  path: /spec/template/spec/containers/0/args/4")), nil},
		}},
		{name: "disruption budgets and spread", check: checkDisruption, breaks: []variant{
			{"no budget", "prod", patches(deleteObject("policy/v1", "PodDisruptionBudget", "chat")), nil},
			{"a budget that blocks drains", "dev", patches(smp("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: nats\nspec:\n  maxUnavailable: null\n  minAvailable: 1")), nil},
			{"no spread", "prod", patches(podPatch("Deployment", "weather", "topologySpreadConstraints: null")), nil},
			{"a constraint without skew", "prod", patches(podPatch("StatefulSet", "nats", "topologySpreadConstraints:\n  - topologyKey: topology.kubernetes.io/region\n    whenUnsatisfiable: DoNotSchedule")), nil},
		}},
		{name: "selectors own their pods", check: checkSelectors, breaks: []variant{
			{"a selector over every pod", "dev", patches(jsonPatch("Deployment", "chat", "- op: replace\n  path: /spec/selector/matchLabels\n  value: {app.kubernetes.io/part-of: a2amesh}")), nil},
		}},
		{name: "every A2A server has an --auth-config it can read", check: checkAuthConfigured, breaks: []variant{
			{"an agent without", "dev", patches(agentPatch("weather", "env:\n  - name: A2AMESH_AUTH_CONFIG\n    $patch: delete")), nil},
			{"the gateway without", "prod", patches(agentPatch("gateway", "env:\n  - name: A2AMESH_AUTH_CONFIG\n    $patch: delete")), nil},
			{"a misspelt field", "dev", configFile("agent-auth", "agent-auth.yaml", meshKeys+"polcy:\n  rules: []\n"), nil},
		}},
		{name: "no A2A server runs open", check: checkNotOpen, breaks: []variant{
			{"anonymous callers", "dev", configFile("agent-auth", "agent-auth.yaml", "anonymous: true\n"+meshKeys), nil},
			{"a policy in dry run", "prod", configFile("gateway-auth", "gateway-auth.yaml", clientKeys+"policy:\n  dryRun: true\n  rules:\n    - {methods: [\"*\"], scopes: [\"a2amesh:call\"]}\n"+clientLimits), nil},
			{"no credential", "dev", configFile("agent-auth", "agent-auth.yaml", "policy:\n  rules:\n    - {methods: [\"*\"], scopes: [\"a2amesh:mesh\"]}\n"), nil},
			{"no --auth-config", "prod", patches(agentPatch("planner", "env:\n  - name: A2AMESH_AUTH_CONFIG\n    $patch: delete")), nil},
		}},
		{name: "credentials are mounted read-only from ConfigMaps and Secrets", check: checkCredentialsMounted, breaks: []variant{
			{"the mesh key writable", "dev", patches(agentPatch("math", "volumeMounts:\n  - mountPath: /var/run/secrets/a2amesh/mesh-key\n    readOnly: false")), nil},
			{"an optional Secret", "prod", patches(podPatch("Deployment", "gateway", "volumes:\n  - name: signing-key\n    secret:\n      secretName: a2amesh-signing-key\n      optional: true")), nil},
			{"a key file nothing mounts", "dev", configFile("agent-auth", "agent-auth.yaml", strings.Replace(meshKeys, "mesh-key/key", "mesh/key", 1)), nil},
			{"a key in a ConfigMap", "prod", patches(podPatch("Deployment", "gateway", "volumes:\n  - name: client-keys\n    secret: null\n    configMap:\n      name: gateway-auth")), nil},
			{"a Secret by subPath", "dev", patches(agentPatch("gateway", "volumeMounts:\n  - name: signing-key\n    mountPath: /var/run/secrets/a2amesh/signing-key/key.pem\n    subPath: key.pem\n    readOnly: true")), nil},
		}},
		{name: "secrets stay out of the manifests", check: checkSecretsStayOut, breaks: []variant{
			{"a Secret in the manifests", "prod", "secretGenerator:\n  - name: a2amesh-mesh-key\n    literals:\n      - key=not-so-secret-after-all\n", nil},
			{"a key in the environment", "dev", patches(agentPatch("chat", "env:\n  - name: OPENAI_API_KEY\n    value: sk-in-the-manifest\n    valueFrom: null")), nil},
			{"a key on the command line", "prod", patches(jsonPatch("Deployment", "chat", "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --openai-api-key=sk-in-the-manifest")), nil},
			{"a private key in a ConfigMap", "dev", "configMapGenerator:\n  - name: stray\n    literals:\n      - |-\n" + indent("key.pem=-----BEGIN "+"PRIVATE KEY-----\nAAAA\n-----END "+"PRIVATE KEY-----", 8), nil},
			{"a token in a ConfigMap", "prod", configFile("hop-credentials", "hop-credentials.yaml", "kind: bearer\ntoken: in-the-manifest\nsecretFile: /var/run/secrets/a2amesh/mesh-key/key\n"), nil},
		}},
		{name: "the gateway signs its card", check: checkGatewaySigns, breaks: []variant{
			{"no signing key", "prod", patches(agentPatch("gateway", "env:\n  - name: A2AMESH_SIGNING_KEY\n    $patch: delete")), nil},
			{"a key from an emptyDir", "dev", patches(podPatch("Deployment", "gateway", "volumes:\n  - name: signing-key\n    secret: null\n    emptyDir: {}")), nil},
		}},
		{name: "the gateway limits each client", check: checkGatewayLimits, breaks: []variant{
			{"no limits", "prod", configFile("gateway-auth", "gateway-auth.yaml", clientKeys+"policy:\n  rules:\n    - {methods: [\"*\"], scopes: [\"a2amesh:call\"]}\n"), nil},
		}},
		{name: "the mesh's calls carry a key the callee admits", check: checkHopsAuthenticated, breaks: []variant{
			{"supervisor without", "dev", patches(agentPatch("supervisor", "env:\n  - name: A2AMESH_HOP_CREDENTIALS\n    $patch: delete")), nil},
			{"the gateway's key from another Secret", "prod", patches(podPatch("Deployment", "gateway", "volumes:\n  - name: mesh-key\n    secret:\n      secretName: a2amesh-old-mesh-key")), nil},
			{"a scope the key lacks", "dev", configFile("agent-auth", "agent-auth.yaml", meshKeys+"policy:\n  rules:\n    - {methods: [\"*\"], scopes: [admin]}\n"), nil},
			{"another header", "prod", configFile("hop-credentials", "hop-credentials.yaml", "kind: apiKey\nheader: X-Mesh-Key\nsecretFile: /var/run/secrets/a2amesh/mesh-key/key\n"), nil},
			{"a bearer token to agents that take none", "dev", configFile("hop-credentials", "hop-credentials.yaml", "kind: bearer\nsecretFile: /var/run/secrets/a2amesh/mesh-key/key\n"), nil},
		}},
		{name: "NATS admits the mesh alone", check: checkNATSAuth, breaks: []variant{
			{"NATS without authorization", "dev", "configMapGenerator:\n  - name: nats-config\n    behavior: merge\n    literals:\n      - auth.conf=# anyone\n", nil},
			{"a password in the configuration", "prod", "configMapGenerator:\n  - name: nats-config\n    behavior: merge\n    literals:\n      - |-\n" + indent("auth.conf=authorization {\n  users: [{user: a2amesh, password: in-the-manifest, permissions: {publish: [\">\"]}}]\n}", 8), nil},
			{"a password from an optional Secret", "dev", patches(containerPatch("StatefulSet", "nats", "nats", "env:\n  - name: A2AMESH_NATS_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: a2amesh-nats\n        key: password\n        optional: true")), nil},
			{"an agent without the NATS password", "prod", patches(agentPatch("weather", "env:\n  - name: A2AMESH_NATS_PASSWORD_FILE\n    $patch: delete")), nil},
			{"the gateway's password from another Secret", "dev", patches(podPatch("Deployment", "gateway", "volumes:\n  - name: nats-password\n    secret:\n      secretName: a2amesh-mesh-key\n      items:\n        - {key: key, path: password}")), nil},
			{"routes without the password", "prod", patches(containerPatch("StatefulSet", "nats", "nats", "env:\n  - name: A2AMESH_NATS_ROUTES\n    value: \"[nats://nats-0.nats-headless:6222, nats://nats-1.nats-headless:6222, nats://nats-2.nats-headless:6222]\"")), nil},
		}},
		{name: "the gateway is the front door", check: checkFrontDoor, breaks: []variant{
			{"the card names the Service", "prod", patches(agentPatch("gateway", "env:\n  - name: GATEWAY_PUBLIC_URL\n    value: http://gateway:9100/")), nil},
			{"the card names another port", "dev", patches(agentPatch("gateway", "env:\n  - name: GATEWAY_PUBLIC_URL\n    value: http://127.0.0.1:8080/")), nil},
			{"an agent behind the Ingress", "prod", patches(jsonPatch("Ingress", "gateway", "- op: add\n  path: /spec/rules/0/http/paths/-\n  value: {path: /weather, pathType: Prefix, backend: {service: {name: weather, port: {name: http}}}}")), nil},
		}},
	}
}

// The parts of the base's auth files (base/auth) that variants keep.
const (
	meshKeys     = "apiKeys:\n  keys:\n    - name: mesh\n      scopes: [\"a2amesh:mesh\"]\n      keyFile: /var/run/secrets/a2amesh/mesh-key/key\n"
	clientKeys   = "apiKeys:\n  keys:\n    - name: client\n      scopes: [\"a2amesh:call\"]\n      keyFile: /var/run/secrets/a2amesh/client-keys/client\n"
	clientLimits = "limits:\n  perPrincipal: {perSecond: 20, burst: 40}\n"
)

// natsSelfPolicy lets NATS servers reach each other's client port.
const natsSelfPolicy = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: nats-self
  namespace: a2amesh
spec:
  podSelector:
    matchLabels:
      app.kubernetes.io/name: nats
  policyTypes: [Ingress]
  ingress:
    - from:
        - podSelector:
            matchLabels:
              app.kubernetes.io/name: nats
      ports:
        - port: client
`

// weatherHPA scales weather's Deployment, as overlays/prod's hpa.yaml does.
const weatherHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: weather
  namespace: a2amesh
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: weather
  minReplicas: 2
  maxReplicas: 6
`

// checkNamespace: everything is in the one Namespace the output creates.
func checkNamespace(_ *meta, _ string, o *render.Objects) []string {
	if len(o.Namespaces) != 1 {
		return []string{fmt.Sprintf("%d Namespaces, want 1", len(o.Namespaces))}
	}
	var bad []string
	for _, obj := range o.All {
		m, err := apimeta.Accessor(obj)
		if err != nil {
			return []string{err.Error()}
		}
		if _, ns := obj.(*corev1.Namespace); !ns && m.GetNamespace() != o.Namespaces[0].Name {
			bad = append(bad, fmt.Sprintf("%T %s is in namespace %q, not %s", obj, m.GetName(), m.GetNamespace(), o.Namespaces[0].Name))
		}
	}
	return bad
}

// isTrue reports whether an optional bool is set and true.
func isTrue(b *bool) bool { return b != nil && *b }

func checkProbes(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		probes := map[string]*corev1.Probe{"liveness": c.c.LivenessProbe, "readiness": c.c.ReadinessProbe, "startup": c.c.StartupProbe}
		for _, kind := range []string{"liveness", "readiness"} {
			if probes[kind] == nil {
				bad = append(bad, fmt.Sprintf("%s: no %s probe", c, kind))
			}
		}
		for _, kind := range slices.Sorted(maps.Keys(probes)) {
			p := probes[kind]
			if p == nil || p.HTTPGet == nil {
				continue
			}
			if !declaresPort(c.c, p.HTTPGet.Port.String()) {
				bad = append(bad, fmt.Sprintf("%s: the %s probe asks port %s, which the container does not declare", c, kind, p.HTTPGet.Port.String()))
			}
			// The a2amesh command serves /healthz (alive) and /readyz
			// (taking work; not while draining) on its HTTP port.
			want := map[string]string{"liveness": "/healthz", "readiness": "/readyz", "startup": "/healthz"}[kind]
			if isA2amesh(c.c) && p.HTTPGet.Path != want {
				bad = append(bad, fmt.Sprintf("%s: the %s probe asks %s, want %s", c, kind, p.HTTPGet.Path, want))
			}
		}
	}
	return bad
}

// declaresPort reports whether c declares a port by that name or number.
func declaresPort(c *corev1.Container, port string) bool {
	return slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
		return p.Name == port || strconv.Itoa(int(p.ContainerPort)) == port
	})
}

func checkResources(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.c.Resources.Requests[r]
			lim, hasLim := c.c.Resources.Limits[r]
			switch {
			case !hasReq:
				bad = append(bad, fmt.Sprintf("%s: no %s request", c, r))
			case !hasLim:
				bad = append(bad, fmt.Sprintf("%s: no %s limit", c, r))
			case req.Cmp(lim) > 0:
				bad = append(bad, fmt.Sprintf("%s: %s request %s over its limit %s", c, r, req.String(), lim.String()))
			}
		}
	}
	return bad
}

// securityContexts returns c's pod's and its own security context, never nil.
func securityContexts(c container) (*corev1.PodSecurityContext, *corev1.SecurityContext) {
	pod, own := c.w.Template.Spec.SecurityContext, c.c.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	if own == nil {
		own = &corev1.SecurityContext{}
	}
	return pod, own
}

func checkNonRoot(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		pod, own := securityContexts(c)
		// The container's settings override the pod's.
		nonRoot, user, seccomp := pod.RunAsNonRoot, pod.RunAsUser, pod.SeccompProfile
		if own.RunAsNonRoot != nil {
			nonRoot = own.RunAsNonRoot
		}
		if own.RunAsUser != nil {
			user = own.RunAsUser
		}
		if own.SeccompProfile != nil {
			seccomp = own.SeccompProfile
		}
		if !isTrue(nonRoot) {
			bad = append(bad, fmt.Sprintf("%s: runAsNonRoot is not true", c))
		}
		// The image's user (65532) is non-root; an explicit one must be too.
		if user != nil && *user == 0 {
			bad = append(bad, fmt.Sprintf("%s: runs as user 0", c))
		}
		if own.AllowPrivilegeEscalation == nil || *own.AllowPrivilegeEscalation {
			bad = append(bad, fmt.Sprintf("%s: allowPrivilegeEscalation is not false", c))
		}
		if isTrue(own.Privileged) {
			bad = append(bad, fmt.Sprintf("%s: privileged", c))
		}
		if seccomp == nil || (seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault && seccomp.Type != corev1.SeccompProfileTypeLocalhost) {
			bad = append(bad, fmt.Sprintf("%s: no RuntimeDefault (or Localhost) seccomp profile", c))
		}
	}
	return bad
}

func checkReadOnlyRoot(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		if _, own := securityContexts(c); !isTrue(own.ReadOnlyRootFilesystem) {
			bad = append(bad, fmt.Sprintf("%s: readOnlyRootFilesystem is not true", c))
		}
	}
	return bad
}

func checkCapabilities(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		_, own := securityContexts(c)
		caps := own.Capabilities
		if caps == nil || !slices.Contains(caps.Drop, "ALL") {
			bad = append(bad, fmt.Sprintf("%s: does not drop ALL capabilities", c))
		}
		if caps != nil && len(caps.Add) > 0 {
			bad = append(bad, fmt.Sprintf("%s: adds capabilities %v", c, caps.Add))
		}
	}
	return bad
}

func checkNoAPIAccess(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, w := range o.Workloads() {
		spec := &w.Template.Spec
		mount := spec.AutomountServiceAccountToken
		if mount == nil {
			// The pod's field unset: its ServiceAccount's decides.
			for _, sa := range o.ServiceAccounts {
				if sa.Name == spec.ServiceAccountName {
					mount = sa.AutomountServiceAccountToken
				}
			}
		}
		if mount == nil || *mount {
			bad = append(bad, fmt.Sprintf("%s %s: mounts a service account token (nothing here calls the Kubernetes API)", w.Kind, w.Name))
		}
		if spec.ServiceAccountName == "" || spec.ServiceAccountName == "default" {
			bad = append(bad, fmt.Sprintf("%s %s: runs as the namespace's default service account", w.Kind, w.Name))
		}
		// Service links put <SERVICE>_PORT and the like in the
		// environment, where the a2amesh flags read theirs.
		if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
			bad = append(bad, fmt.Sprintf("%s %s: enableServiceLinks is not false", w.Kind, w.Name))
		}
	}
	for _, sa := range o.ServiceAccounts {
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			bad = append(bad, fmt.Sprintf("ServiceAccount %s: automountServiceAccountToken is not false", sa.Name))
		}
	}
	return bad
}

func checkImages(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		_, tag, digest := imageRef(c.c.Image)
		switch {
		case tag == "" && digest == "":
			bad = append(bad, fmt.Sprintf("%s: image %s has no tag", c, c.c.Image))
		case tag == "latest":
			bad = append(bad, fmt.Sprintf("%s: image %s is tagged latest", c, c.c.Image))
		}
	}
	return bad
}

func checkServices(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, svc := range o.Services {
		var sel []render.Workload
		for _, w := range o.Workloads() {
			if w.Namespace == svc.Namespace && selects(svc.Spec.Selector, w.Template.Labels) {
				sel = append(sel, w)
			}
		}
		if len(sel) == 0 {
			bad = append(bad, fmt.Sprintf("Service %s selects the pods of no workload", svc.Name))
			continue
		}
		for _, p := range svc.Spec.Ports {
			for _, w := range sel {
				if _, ok := targetPort(w, p); !ok {
					bad = append(bad, fmt.Sprintf("Service %s port %s targets %s, which %s %s does not declare", svc.Name, p.Name, p.TargetPort.String(), w.Kind, w.Name))
				}
			}
		}
	}
	return bad
}

// checkReferences: every ConfigMap and key a pod reads exists in the
// output, and every Secret key its environment reads, but for one marked
// optional: the model's credentials (a2amesh-model), which the operator
// creates or not (without them the agents run the offline model). The
// Secrets pods mount are the operator's too, required
// (checkCredentialsMounted). Service accounts, the autoscalers' and
// budgets' targets and the Ingress's backends exist too.
func checkReferences(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		if _, err := envMap(o, c); err != nil {
			bad = append(bad, err.Error())
		}
		for _, e := range c.c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && isTrue(e.ValueFrom.ConfigMapKeyRef.Optional) {
				bad = append(bad, fmt.Sprintf("%s: env %s: an optional ConfigMap key: every ConfigMap is in the output", c, e.Name))
			}
		}
		for _, m := range c.c.VolumeMounts {
			if !slices.ContainsFunc(c.w.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) && !claimed(c.w, m.Name) {
				bad = append(bad, fmt.Sprintf("%s: mounts volume %s, which the pod does not have", c, m.Name))
			}
		}
	}
	for _, w := range o.Workloads() {
		spec := &w.Template.Spec
		if spec.ServiceAccountName != "" && !slices.ContainsFunc(o.ServiceAccounts, func(sa *corev1.ServiceAccount) bool { return sa.Name == spec.ServiceAccountName }) {
			bad = append(bad, fmt.Sprintf("%s %s: no ServiceAccount %s", w.Kind, w.Name, spec.ServiceAccountName))
		}
		for _, v := range spec.Volumes {
			if v.ConfigMap == nil {
				continue
			}
			cm := o.ConfigMap(v.ConfigMap.Name)
			if cm == nil {
				bad = append(bad, fmt.Sprintf("%s %s: volume %s: no ConfigMap %s", w.Kind, w.Name, v.Name, v.ConfigMap.Name))
				continue
			}
			for _, item := range v.ConfigMap.Items {
				if _, ok := cm.Data[item.Key]; !ok {
					bad = append(bad, fmt.Sprintf("%s %s: volume %s: ConfigMap %s has no key %s", w.Kind, w.Name, v.Name, cm.Name, item.Key))
				}
			}
		}
	}
	for _, h := range o.HPAs {
		if _, ok := o.Workload(h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name); !ok {
			bad = append(bad, fmt.Sprintf("HorizontalPodAutoscaler %s: no %s %s", h.Name, h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name))
		}
	}
	for _, ing := range o.Ingresses {
		for _, r := range ing.Spec.Rules {
			for _, p := range r.HTTP.Paths {
				s := p.Backend.Service
				svc := o.Service(s.Name)
				if svc == nil || !slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool {
					return sp.Name == s.Port.Name && s.Port.Name != "" || sp.Port == s.Port.Number && s.Port.Number != 0
				}) {
					bad = append(bad, fmt.Sprintf("Ingress %s: no Service %s with port %s%d", ing.Name, s.Name, s.Port.Name, s.Port.Number))
				}
			}
		}
	}
	return bad
}

// claimed reports whether a StatefulSet's volume claim template names the
// volume.
func claimed(w render.Workload, volume string) bool {
	ss, ok := w.Object.(*appsv1.StatefulSet)
	return ok && slices.ContainsFunc(ss.Spec.VolumeClaimTemplates, func(p corev1.PersistentVolumeClaim) bool { return p.Name == volume })
}

// checkGOMEMLIMIT: every container runs a Go program (a2amesh,
// nats-server) with GOMEMLIMIT between 90 % and 100 % of its memory limit,
// taken from the limit: with the limit doubled it doubles.
func checkGOMEMLIMIT(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		limit, ok := c.c.Resources.Limits[corev1.ResourceMemory]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: no memory limit", c))
			continue
		}
		got, err := gomemlimit(o, c)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		if lim := limit.Value(); got > lim || got < lim*9/10 {
			bad = append(bad, fmt.Sprintf("%s: GOMEMLIMIT %d is %.1f%% of the memory limit %s, want 90-100%%", c, got, 100*float64(got)/float64(lim), limit.String()))
			continue
		}
		// The same pod with twice the limit.
		tmpl := c.w.Template.DeepCopy()
		twice := *resource.NewQuantity(2*limit.Value(), resource.BinarySI)
		render.Container(&tmpl.Spec, c.c.Name).Resources.Limits[corev1.ResourceMemory] = twice
		w2 := c.w
		w2.Template = tmpl
		got2, err := gomemlimit(o, container{w2, render.Container(&tmpl.Spec, c.c.Name)})
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		if got2 < 2*got-2*1<<20 || got2 > 2*got+2*1<<20 {
			bad = append(bad, fmt.Sprintf("%s: GOMEMLIMIT is %d with the memory limit at %s and %d at %s: not taken from the limit", c, got, limit.String(), got2, twice.String()))
		}
	}
	return bad
}

// gomemlimit returns c's GOMEMLIMIT in bytes.
func gomemlimit(o *render.Objects, c container) (int64, error) {
	vars, err := envMap(o, c)
	if err != nil {
		return 0, err
	}
	v, ok := vars["GOMEMLIMIT"]
	if !ok {
		return 0, fmt.Errorf("%s: no GOMEMLIMIT", c)
	}
	n, err := parseByteCount(v)
	if err != nil {
		return 0, fmt.Errorf("%s: GOMEMLIMIT=%q: %w", c, v, err)
	}
	return n, nil
}

// parseByteCount reads a byte count as the Go runtime reads GOMEMLIMIT: a
// decimal number with an optional unit, B, KiB, MiB, GiB or TiB.
func parseByteCount(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = n, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a byte count the Go runtime reads (digits and B, KiB, MiB, GiB or TiB)")
	}
	return n << shift, nil
}

// checkNetwork: the calls the pods make (the URLs on their command lines,
// in their environment and in the files they are told to read: the
// gateway's topology, NATS's routes) are exactly the connections the
// NetworkPolicies let through between the namespace's pods; and only the
// pods an Ingress routes to take connections from outside the namespace.
func checkNetwork(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	want := map[string]bool{}
	for _, c := range containers(o) {
		us, err := calls(o, c)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		for _, u := range us {
			eps, inCluster, err := resolve(o, u)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s calls %s", c, err))
			}
			if !inCluster {
				continue
			}
			for _, ep := range eps {
				want[c.w.Name+" -> "+ep.String()] = true
			}
		}
	}
	allowed := map[string]bool{}
	for _, dst := range o.Workloads() {
		for _, dc := range dst.Template.Spec.Containers {
			for _, port := range dc.Ports {
				for _, src := range o.Workloads() {
					ok, err := admits(o, src, dst, port)
					if err != nil {
						return append(bad, err.Error())
					}
					if ok {
						allowed[src.Name+" -> "+endpoint{dst.Name, port.ContainerPort}.String()] = true
					}
				}
			}
		}
	}
	for _, e := range slices.Sorted(maps.Keys(want)) {
		if !allowed[e] {
			bad = append(bad, "the mesh calls "+e+", which the NetworkPolicies refuse")
		}
	}
	for _, e := range slices.Sorted(maps.Keys(allowed)) {
		if !want[e] {
			bad = append(bad, "the NetworkPolicies allow "+e+", which nothing calls")
		}
	}
	// From outside: only the Ingress's backends.
	front := map[string]bool{}
	for _, ing := range o.Ingresses {
		for _, r := range ing.Spec.Rules {
			for _, p := range r.HTTP.Paths {
				if svc := o.Service(p.Backend.Service.Name); svc != nil {
					for _, w := range o.Workloads() {
						if selects(svc.Spec.Selector, w.Template.Labels) {
							front[w.Name] = true
						}
					}
				}
			}
		}
	}
	for _, w := range o.Workloads() {
		for _, np := range o.NetworkPolicies {
			if sel, _ := ingressPolicyFor(np, w); !sel {
				continue
			}
			for _, rule := range np.Spec.Ingress {
				if admitsOutsiders(np, rule) && !front[w.Name] {
					bad = append(bad, fmt.Sprintf("NetworkPolicy %s lets pods of other namespaces (or addresses) reach %s %s, which no Ingress routes to", np.Name, w.Kind, w.Name))
				}
			}
		}
	}
	return bad
}

// checkCardURLs: every agent is called at the origin its card names (its
// --public-url): a client refuses an interface on another origin than the
// card it fetched.
func checkCardURLs(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	cards := map[string]string{} // workload -> origin of its card's URL
	for _, c := range containers(o) {
		if !isA2amesh(c.c) {
			continue
		}
		u, err := publicURL(o, c)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		pu, err := url.Parse(u)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: --public-url %q: %v", c, u, err))
			continue
		}
		cards[c.w.Name] = origin(pu)
	}
	for _, c := range containers(o) {
		us, err := calls(o, c)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		for _, u := range us {
			eps, _, _ := resolve(o, u)
			for _, ep := range eps {
				if card, ok := cards[ep.workload]; ok && card != origin(u) {
					bad = append(bad, fmt.Sprintf("%s calls %s at %s, but its card names %s", c, ep.workload, u, card))
				}
			}
		}
	}
	return bad
}

// origin is a URL's scheme, host and port, as the a2amesh client compares
// them.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// checkTopology: the gateway composes what `a2amesh up` composes
// (deploy/topology.yaml), with every agent at a Service of the output.
func checkTopology(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	def, err := gateway.ParseTopology(deploy.Topology)
	if err != nil {
		return []string{err.Error()}
	}
	n := 0
	for _, c := range containers(o) {
		if !isA2amesh(c.c) || subcommand(c.c)[0] != "gateway" {
			continue
		}
		n++
		t, err := topology(o, c)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		for key, u := range t.Agents {
			pu, err := url.Parse(u)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: agent %s at %q: %v", c, key, u, err))
				continue
			}
			if _, inCluster, err := resolve(o, pu); err != nil || !inCluster {
				bad = append(bad, fmt.Sprintf("%s: agent %s at %s is no Service of the mesh (%v)", c, key, u, err))
			}
		}
		if !slices.Equal(slices.Sorted(maps.Keys(t.Agents)), slices.Sorted(maps.Keys(def.Agents))) {
			bad = append(bad, fmt.Sprintf("%s: the topology's agents are %v, deploy/topology.yaml's %v", c, slices.Sorted(maps.Keys(t.Agents)), slices.Sorted(maps.Keys(def.Agents))))
		}
		a, b := *t, *def
		a.Agents, b.Agents = nil, nil
		if !reflect.DeepEqual(a, b) {
			bad = append(bad, fmt.Sprintf("%s: the topology composes the agents otherwise than deploy/topology.yaml", c))
		}
	}
	if n == 0 {
		bad = append(bad, "no gateway")
	}
	return bad
}

// checkPeerFlags: an agent's flag whose default is another agent's
// default URL (as `a2amesh serve NAME -h` says: the agents it calls, as
// `a2amesh up` wires them) is set, to that agent's Service.
func checkPeerFlags(m *meta, _ string, o *render.Objects) []string {
	var bad []string
	// Where each agent listens by default, and the Deployment serving it.
	agentAt := map[string]string{}
	deployment := map[string]string{}
	for _, c := range containers(o) {
		if sub := subcommand(c.c); isA2amesh(c.c) && sub[0] == "serve" {
			flags, err := m.flags.of(sub...)
			if err != nil {
				return []string{err.Error()}
			}
			agentAt[flags["addr"]] = sub[1]
			deployment[sub[1]] = c.w.Name
		}
	}
	for _, c := range containers(o) {
		sub := subcommand(c.c)
		if !isA2amesh(c.c) || sub[0] != "serve" {
			continue
		}
		flags, _ := m.flags.of(sub...)
		for _, name := range slices.Sorted(maps.Keys(flags)) {
			def, err := url.Parse(flags[name])
			if err != nil || def.Scheme != "http" || agentAt[def.Host] == "" {
				continue
			}
			peer := agentAt[def.Host]
			v, ok, err := setting(o, c, name, "")
			if err != nil {
				bad = append(bad, err.Error())
				continue
			}
			if !ok {
				bad = append(bad, fmt.Sprintf("%s: --%s is not set: %s would call %s at %s, its default, inside its own pod", c, name, sub[1], peer, flags[name]))
				continue
			}
			u, err := url.Parse(v)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: --%s=%s: %v", c, name, v, err))
				continue
			}
			eps, _, err := resolve(o, u)
			if err != nil || len(eps) != 1 || eps[0].workload != deployment[peer] {
				bad = append(bad, fmt.Sprintf("%s: --%s=%s does not reach %s's Deployment %s", c, name, v, peer, deployment[peer]))
			}
		}
	}
	return bad
}

// checkFlagsExist: every flag an a2amesh container is given is one its
// subcommand has.
func checkFlagsExist(m *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		if !isA2amesh(c.c) {
			continue
		}
		sub := subcommand(c.c)
		flags, err := m.flags.of(sub...)
		if err != nil {
			return []string{err.Error()}
		}
		for _, f := range parseArgs(c.c.Args) {
			if _, ok := flags[f.name]; ok {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s: a2amesh %s has no flag --%s", c, strings.Join(sub, " "), f.name))
		}
	}
	return bad
}

// checkReplicas: dev runs one of everything; prod at least two of each
// agent and of the gateway, by their autoscalers (the Deployments name no
// count that applying again would reset), and three NATS servers; and
// every agent keeps its state on NATS, so that any replica serves any
// task and a task outlives its replica.
func checkReplicas(_ *meta, overlay string, o *render.Objects) []string {
	var bad []string
	for _, w := range o.Workloads() {
		switch {
		case overlay == "dev" && w.Replicas != 1:
			bad = append(bad, fmt.Sprintf("%s %s: %d replicas in dev, want 1", w.Kind, w.Name, w.Replicas))
		case overlay == "prod" && w.Kind == "Deployment" && w.Replicas < 2:
			bad = append(bad, fmt.Sprintf("%s %s: %d replicas in prod, want 2 or more", w.Kind, w.Name, w.Replicas))
		case overlay == "prod" && w.Kind == "StatefulSet" && w.Replicas != 3:
			bad = append(bad, fmt.Sprintf("%s %s: %d replicas in prod, want 3", w.Kind, w.Name, w.Replicas))
		}
	}
	if overlay == "dev" && len(o.HPAs) > 0 {
		bad = append(bad, "an autoscaler in dev")
	}
	for _, h := range o.HPAs {
		if d, ok := o.Workload(h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name); ok {
			if dep, ok := d.Object.(*appsv1.Deployment); ok && dep.Spec.Replicas != nil {
				bad = append(bad, fmt.Sprintf("Deployment %s names %d replicas beside its autoscaler: applying the manifests again would undo its scaling", dep.Name, *dep.Spec.Replicas))
			}
		}
	}
	for _, c := range containers(o) {
		if !isA2amesh(c.c) {
			continue
		}
		state, _, err := setting(o, c, "state", "A2AMESH_STATE")
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		nats, _, _ := setting(o, c, "nats", "NATS_URL")
		if state != "nats" || nats == "" {
			bad = append(bad, fmt.Sprintf("%s: state %q on NATS %q, want the state on NATS", c, state, nats))
		}
	}
	return bad
}

var (
	confRoutes    = regexp.MustCompile(`nats://(?:[^@\s/]+@)?([a-z0-9.-]+):(\d+)`)
	confStoreDir  = regexp.MustCompile(`(?m)^\s*store_dir:\s*(\S+)`)
	confName      = regexp.MustCompile(`(?m)^server_name:\s*\$(\w+)\s*$`)
	confClusterPt = regexp.MustCompile(`(?s)cluster\s*\{.*?\bport:\s*(\d+)`)
	confDuration  = regexp.MustCompile(`(?m)^(lame_duck_grace_period|lame_duck_duration):\s*(\S+)`)
	confInclude   = regexp.MustCompile(`(?m)^\s*include\s+"?([^"\s]+)"?\s*$`)
	confVariable  = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)
)

// natsConfig returns the NATS container and its configuration file, the
// files it includes in their place.
func natsConfig(o *render.Objects) (container, string, error) {
	for _, c := range containers(o) {
		if c.c.Name != "nats" {
			continue
		}
		path, ok := flagValue(c.c.Command, "config")
		if !ok {
			return c, "", fmt.Errorf("%s: no --config", c)
		}
		conf, err := file(o, c, path)
		if err != nil {
			return c, "", err
		}
		var errs []error
		conf = confInclude.ReplaceAllStringFunc(conf, func(line string) string {
			// nats-server takes an include's path from the including
			// file's directory.
			inc, err := file(o, c, filepath.Join(filepath.Dir(path), confInclude.FindStringSubmatch(line)[1]))
			errs = append(errs, err)
			return inc
		})
		return c, conf, errors.Join(errs...)
	}
	return container{}, "", fmt.Errorf("no NATS container")
}

// expandConf replaces the variables of a NATS configuration that the
// environment env sets with their values, as nats-server does.
func expandConf(conf string, env map[string]string) string {
	return confVariable.ReplaceAllStringFunc(conf, func(ref string) string {
		if v, ok := env[ref[1:]]; ok {
			return v
		}
		return ref
	})
}

// checkNATS: the servers' routes name exactly the StatefulSet's pods at
// their cluster port (none for one server), an odd count for a quorum;
// each server names itself after its pod; JetStream's store is on a
// volume claimed per pod when there are several (on the pod's emptyDir
// for one, in dev).
func checkNATS(_ *meta, _ string, o *render.Objects) []string {
	c, conf, err := natsConfig(o)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	ss := c.w.Object.(*appsv1.StatefulSet)
	n := c.w.Replicas
	if n > 1 && n%2 == 0 {
		bad = append(bad, fmt.Sprintf("%d NATS servers: an even count tolerates no more failures than one fewer", n))
	}
	if n > 1 && !slices.ContainsFunc(c.w.Template.Spec.TopologySpreadConstraints, func(t corev1.TopologySpreadConstraint) bool {
		return t.TopologyKey == "kubernetes.io/hostname" && t.WhenUnsatisfiable == corev1.DoNotSchedule && t.MaxSkew == 1
	}) {
		bad = append(bad, fmt.Sprintf("%s: NATS servers may share a node (no DoNotSchedule spread over kubernetes.io/hostname): losing it could lose the quorum", c))
	}
	var want []string
	if n > 1 {
		pm := confClusterPt.FindStringSubmatch(conf)
		if pm == nil {
			return append(bad, "no cluster port in the NATS configuration")
		}
		if !declaresPort(c.c, pm[1]) {
			bad = append(bad, fmt.Sprintf("%s: the cluster port %s is not declared", c, pm[1]))
		}
		for i := range n {
			want = append(want, fmt.Sprintf("%s-%d.%s:%s", ss.Name, i, ss.Spec.ServiceName, pm[1]))
		}
	}
	env, err := envMap(o, c)
	if err != nil {
		return append(bad, err.Error())
	}
	var got []string
	for _, m := range confRoutes.FindAllStringSubmatch(expandConf(conf, env), -1) {
		got = append(got, m[1]+":"+m[2])
	}
	if !slices.Equal(got, want) {
		bad = append(bad, fmt.Sprintf("the NATS routes are %v, want %v (the StatefulSet's %d pods)", got, want, n))
	}
	if hs := o.Service(ss.Spec.ServiceName); hs == nil || hs.Spec.ClusterIP != corev1.ClusterIPNone || !hs.Spec.PublishNotReadyAddresses {
		bad = append(bad, fmt.Sprintf("StatefulSet %s: its Service %s is not headless with unready addresses published (the servers find each other before they are ready)", ss.Name, ss.Spec.ServiceName))
	}
	if m := confName.FindStringSubmatch(conf); m == nil {
		bad = append(bad, "the NATS servers are not named after their pods (server_name: $POD_NAME)")
	} else if env[m[1]] != c.pod() {
		bad = append(bad, fmt.Sprintf("%s: $%s is not the pod's name", c, m[1]))
	}
	dir := confStoreDir.FindStringSubmatch(conf)
	if dir == nil {
		return append(bad, "no JetStream store_dir in the NATS configuration")
	}
	i := slices.IndexFunc(c.c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == dir[1] })
	switch {
	case i < 0:
		bad = append(bad, fmt.Sprintf("%s: nothing mounted at JetStream's store_dir %s (the root file system is read-only)", c, dir[1]))
	case n > 1 && !claimed(c.w, c.c.VolumeMounts[i].Name):
		bad = append(bad, fmt.Sprintf("%s: JetStream's store_dir %s is not on a persistent volume claimed per pod", c, dir[1]))
	}
	return bad
}

// checkDrain: each pod's grace period covers its preStop hook and the
// drain after it, with 10 s to spare: the a2amesh command's preStop sleep
// and --drain-timeout, NATS's lame-duck grace and duration.
func checkDrain(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, c := range containers(o) {
		grace := 30 * time.Second
		if g := c.w.Template.Spec.TerminationGracePeriodSeconds; g != nil {
			grace = time.Duration(*g) * time.Second
		}
		var need time.Duration
		switch {
		case isA2amesh(c.c):
			if l := c.c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
				need += time.Duration(l.PreStop.Sleep.Seconds) * time.Second
			}
			v, ok := flagValue(c.c.Args, "drain-timeout")
			d, err := time.ParseDuration(v)
			if !ok || err != nil {
				bad = append(bad, fmt.Sprintf("%s: no --drain-timeout: the drain would be the command's default, not bounded by the grace period here", c))
				continue
			}
			need += d
		case c.c.Name == "nats":
			_, conf, err := natsConfig(o)
			if err != nil {
				bad = append(bad, err.Error())
				continue
			}
			for _, m := range confDuration.FindAllStringSubmatch(conf, -1) {
				d, err := time.ParseDuration(m[2])
				if err != nil {
					bad = append(bad, fmt.Sprintf("NATS %s %s: %v", m[1], m[2], err))
				}
				need += d
			}
			if c.c.Lifecycle == nil || c.c.Lifecycle.PreStop == nil {
				bad = append(bad, fmt.Sprintf("%s: no preStop hook to enter lame-duck mode", c))
			}
		}
		if need+10*time.Second > grace {
			bad = append(bad, fmt.Sprintf("%s: a grace period of %s for a drain of %s, want at least 10s more", c, grace, need))
		}
	}
	return bad
}

// checkDisruption: every workload has one PodDisruptionBudget, which lets
// a node drain evict a pod; and spreads its pods over nodes.
func checkDisruption(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, w := range o.Workloads() {
		n := 0
		for _, pdb := range o.PDBs {
			ok, err := matches(pdb.Spec.Selector, w.Template.Labels)
			if err != nil {
				return []string{err.Error()}
			}
			if !ok {
				continue
			}
			n++
			switch {
			case pdb.Spec.MaxUnavailable != nil:
				if v, _ := resourceIntOrPercent(pdb.Spec.MaxUnavailable.String(), w.Replicas); v < 1 {
					bad = append(bad, fmt.Sprintf("PodDisruptionBudget %s: maxUnavailable %s of %d lets no pod be evicted", pdb.Name, pdb.Spec.MaxUnavailable.String(), w.Replicas))
				}
			case pdb.Spec.MinAvailable != nil:
				if v, _ := resourceIntOrPercent(pdb.Spec.MinAvailable.String(), w.Replicas); v >= w.Replicas {
					bad = append(bad, fmt.Sprintf("PodDisruptionBudget %s: minAvailable %s of %d lets no pod be evicted", pdb.Name, pdb.Spec.MinAvailable.String(), w.Replicas))
				}
			}
		}
		if n != 1 {
			bad = append(bad, fmt.Sprintf("%s %s: %d PodDisruptionBudgets, want 1", w.Kind, w.Name, n))
		}
		spread := false
		seen := map[string]bool{}
		for _, tsc := range w.Template.Spec.TopologySpreadConstraints {
			// What the API server would refuse: no skew, no selector
			// (it counts no pods), the same key and policy twice.
			key := tsc.TopologyKey + " " + string(tsc.WhenUnsatisfiable)
			if tsc.MaxSkew < 1 || tsc.LabelSelector == nil || seen[key] {
				bad = append(bad, fmt.Sprintf("%s %s: topology spread over %s: maxSkew %d, labelSelector %v, given before: %v", w.Kind, w.Name, key, tsc.MaxSkew, tsc.LabelSelector, seen[key]))
				continue
			}
			seen[key] = true
			if ok, _ := matches(tsc.LabelSelector, w.Template.Labels); ok && tsc.TopologyKey == "kubernetes.io/hostname" {
				spread = true
			}
		}
		if !spread {
			bad = append(bad, fmt.Sprintf("%s %s: no topology spread over nodes (kubernetes.io/hostname) that counts its own pods", w.Kind, w.Name))
		}
	}
	return bad
}

// resourceIntOrPercent reads a PodDisruptionBudget's count, a number or a
// percentage of replicas (rounded up, as the disruption controller does).
func resourceIntOrPercent(s string, replicas int32) (int32, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(p)
		return int32((n*int(replicas) + 99) / 100), err
	}
	n, err := strconv.Atoi(s)
	return int32(n), err
}

// checkSelectors: each workload's selector selects its own pods and no
// other workload's.
func checkSelectors(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	for _, w := range o.Workloads() {
		for _, other := range o.Workloads() {
			ok, err := matches(w.Selector, other.Template.Labels)
			if err != nil {
				return []string{err.Error()}
			}
			switch {
			case other.Name == w.Name && other.Kind == w.Kind && !ok:
				bad = append(bad, fmt.Sprintf("%s %s: its selector does not select its own pods", w.Kind, w.Name))
			case (other.Name != w.Name || other.Kind != w.Kind) && ok:
				bad = append(bad, fmt.Sprintf("%s %s: its selector selects the pods of %s %s", w.Kind, w.Name, other.Kind, other.Name))
			}
		}
	}
	return bad
}

// checkFrontDoor: the gateway is the only workload an Ingress routes to,
// and its card names the URL clients reach it at: https://HOST/ of the
// Ingress (whose TLS covers HOST), or, with no Ingress (dev), the local
// end of `kubectl port-forward svc/gateway PORT`, http://127.0.0.1:PORT/.
func checkFrontDoor(_ *meta, _ string, o *render.Objects) []string {
	var bad []string
	var gw *container
	for _, c := range containers(o) {
		if isA2amesh(c.c) && subcommand(c.c)[0] == "gateway" {
			gw = &c
		}
	}
	if gw == nil {
		return []string{"no gateway"}
	}
	card, err := publicURL(o, *gw)
	if err != nil {
		return []string{err.Error()}
	}
	var want []string
	for _, ing := range o.Ingresses {
		tls := map[string]bool{}
		for _, t := range ing.Spec.TLS {
			for _, h := range t.Hosts {
				tls[h] = true
			}
		}
		for _, r := range ing.Spec.Rules {
			for _, p := range r.HTTP.Paths {
				svc := o.Service(p.Backend.Service.Name)
				if svc == nil || !selects(svc.Spec.Selector, gw.w.Template.Labels) {
					bad = append(bad, fmt.Sprintf("Ingress %s routes %s%s to %s, which is not the gateway", ing.Name, r.Host, p.Path, p.Backend.Service.Name))
					continue
				}
				if !tls[r.Host] {
					bad = append(bad, fmt.Sprintf("Ingress %s serves %s without TLS", ing.Name, r.Host))
				}
				want = append(want, "https://"+r.Host+"/")
			}
		}
	}
	if len(o.Ingresses) == 0 {
		for _, svc := range o.Services {
			if selects(svc.Spec.Selector, gw.w.Template.Labels) {
				for _, p := range svc.Spec.Ports {
					want = append(want, fmt.Sprintf("http://127.0.0.1:%d/", p.Port))
				}
			}
		}
	}
	if !slices.Contains(want, card) {
		bad = append(bad, fmt.Sprintf("%s: the card names %s, where clients reach the gateway at %v", gw, card, want))
	}
	return bad
}
