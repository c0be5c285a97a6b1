// Command research serves the mesh's research agent as an A2A server; see
// services/catalog and `research -h`.
package main

import (
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/services/catalog"
)

func main() {
	def, _ := catalog.Find("research")
	service.Main(def)
}
