// Command writer serves the mesh's writer agent as an A2A server; see
// services/catalog and `writer -h`.
package main

import (
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/services/catalog"
)

func main() {
	def, _ := catalog.Find("writer")
	service.Main(def)
}
