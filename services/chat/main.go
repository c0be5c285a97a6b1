// Command chat serves the mesh's chat agent as an A2A server; see
// services/catalog and `chat -h`.
package main

import (
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/services/catalog"
)

func main() {
	def, _ := catalog.Find("chat")
	service.Main(def)
}
