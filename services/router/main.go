// Command router serves the mesh's router agent as an A2A server; see
// services/catalog and `router -h`.
package main

import (
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/services/catalog"
)

func main() {
	def, _ := catalog.Find("router")
	service.Main(def)
}
