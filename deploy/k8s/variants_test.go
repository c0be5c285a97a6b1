package k8s_test

import (
	"fmt"
	"strings"
)

// The pieces of a variant's kustomization: patches on top of an overlay.

// patches is a kustomization's patches list.
func patches(items ...string) string { return "patches:\n" + strings.Join(items, "") }

// smp is a strategic-merge patch: a partial object, named as in the
// output (a generated ConfigMap by its name before the hash).
func smp(doc string) string { return "  - patch: |-\n" + indent(doc, 6) }

// jsonPatch is an RFC 6902 patch of the object of that kind and name.
func jsonPatch(kind, name, ops string) string {
	return fmt.Sprintf("  - target:\n      kind: %s\n      name: %s\n    patch: |-\n%s", kind, name, indent(ops, 6))
}

// podPatch sets fields of the pod template of a workload.
func podPatch(kind, name, fields string) string {
	return smp(fmt.Sprintf("apiVersion: apps/v1\nkind: %s\nmetadata:\n  name: %s\nspec:\n  template:\n    spec:\n%s", kind, name, indent(fields, 6)))
}

// containerPatch sets fields of a container of a workload.
func containerPatch(kind, name, container, fields string) string {
	return podPatch(kind, name, fmt.Sprintf("containers:\n  - name: %s\n%s", container, indent(fields, 4)))
}

// agentPatch sets fields of the a2amesh container of an agent's (or the
// gateway's) Deployment.
func agentPatch(name, fields string) string {
	return containerPatch("Deployment", name, "a2amesh", fields)
}

// deleteObject deletes an object from the output.
func deleteObject(apiVersion, kind, name string) string {
	return smp(fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n$patch: delete", apiVersion, kind, name))
}

// configFile replaces the one file of a generated ConfigMap (the base's
// agent-auth, gateway-auth, hop-credentials) with content.
func configFile(configMap, name, content string) string {
	return "configMapGenerator:\n  - name: " + configMap + "\n    behavior: replace\n    literals:\n      - |-\n" + indent(name+"="+content, 8)
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
