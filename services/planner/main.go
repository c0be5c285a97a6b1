// Command planner serves the mesh's planner agent as an A2A server; see
// services/catalog and `planner -h`.
package main

import (
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/services/catalog"
)

func main() {
	def, _ := catalog.Find("planner")
	service.Main(def)
}
