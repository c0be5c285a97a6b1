// Command weather serves the mesh's weather agent as an A2A server; see
// services/catalog and `weather -h`.
package main

import (
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/services/catalog"
)

func main() {
	def, _ := catalog.Find("weather")
	service.Main(def)
}
