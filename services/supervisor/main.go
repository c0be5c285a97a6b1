// Command supervisor serves the mesh's supervisor agent as an A2A server; see
// services/catalog and `supervisor -h`.
package main

import (
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/services/catalog"
)

func main() {
	def, _ := catalog.Find("supervisor")
	service.Main(def)
}
