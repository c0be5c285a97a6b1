// Package deploy holds what runs the mesh: the default topology the
// gateway composes (topology.yaml), and the Kubernetes manifests (k8s/).
package deploy

import _ "embed"

// Topology is the default mesh topology.
//
//go:embed topology.yaml
var Topology []byte
