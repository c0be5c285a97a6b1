// Package a2amesh holds the project's own documentation, the README and
// docs/, so the research agent has a corpus to search out of the box.
// The code lives in the packages below: adk, a2a, bridge, gateway and the
// services.
package a2amesh

import "embed"

// Docs is README.md and docs/*.md.
//
//go:embed README.md docs/*.md
var Docs embed.FS
