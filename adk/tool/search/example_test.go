package search_test

import (
	"context"
	"fmt"
	"log"
	"testing/fstest"

	"github.com/a2amesh/a2amesh/adk/tool/search"
)

// Build indexes the Markdown and text files of a file system, in sections
// cut at headings; Search ranks the sections against a query.
func ExampleBuild() {
	docs := fstest.MapFS{
		"garden.md":   {Data: []byte("# Garden\n\n## Tomatoes\n\nWater tomatoes every morning; they need sun.\n\n## Roses\n\nPrune roses in early spring.")},
		"kitchen.txt": {Data: []byte("Boil pasta in salted water for ten minutes.")},
	}
	ix, err := search.Build(docs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ix.Len(), "sections")
	for _, h := range ix.Search("When do I water the tomatoes?", 2) {
		fmt.Printf("%s — %s: %s\n", h.File, h.Heading, h.Text)
	}
	// The tool answers a model with the best sections, citing the files.
	out, err := search.Tool("search_docs", "Search the notes", ix).Run(context.Background(), `{"query":"pruning roses"}`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output:
	// 3 sections
	// garden.md — Tomatoes: Water tomatoes every morning; they need sun.
	// kitchen.txt — kitchen: Boil pasta in salted water for ten minutes.
	// [1] garden.md — Roses
	// Prune roses in early spring.
}
