package a2amesh_test

import (
	"fmt"
	"io/fs"
	"log"
	"slices"
	"strings"

	"github.com/a2amesh/a2amesh"
)

// Docs is an fs.FS: the README at its root and the guides under docs/,
// ready to search, serve or index without the source tree.
func Example() {
	guides, err := fs.Glob(a2amesh.Docs, "docs/*.md")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(slices.Contains(guides, "docs/gateway.md"))

	b, err := fs.ReadFile(a2amesh.Docs, "docs/gateway.md")
	if err != nil {
		log.Fatal(err)
	}
	title, _, _ := strings.Cut(string(b), "\n")
	fmt.Println(title)
	// Output:
	// true
	// # The gateway and the mesh topology
}
