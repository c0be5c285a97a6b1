// Command math serves the mesh's math agent as an A2A server; see
// services/catalog and `math -h`.
package main

import (
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/services/catalog"
)

func main() {
	def, _ := catalog.Find("math")
	service.Main(def)
}
