package search_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/a2amesh/a2amesh"
	"github.com/a2amesh/a2amesh/adk/tool/search"
)

func TestSearch(t *testing.T) {
	fsys := fstest.MapFS{
		"guide.md":  {Data: []byte("# Guide\n\nIntro text.\n\n## Cooking\n\nBoil pasta in salted water for ten minutes.\n\n## Gardening\n\nWater tomatoes every morning; tomatoes need sun.")},
		"notes.txt": {Data: []byte("Shopping list: pasta, tomatoes, basil.")},
		"skip.bin":  {Data: []byte("tomatoes tomatoes tomatoes")},
	}
	ix, err := search.Build(fsys)
	if err != nil {
		t.Fatal(err)
	}
	hits := ix.Search("How do tomatoes grow?", 5)
	if len(hits) != 2 || hits[0].Heading != "Gardening" || hits[0].File != "guide.md" {
		t.Fatalf("hits %+v", hits)
	}
	if hits := ix.Search("pasta", 1); len(hits) != 1 {
		t.Fatalf("k not honoured: %+v", hits)
	}
	if hits := ix.Search("the of and", 3); hits != nil {
		t.Fatalf("stop words matched: %+v", hits)
	}
	out, err := search.Tool("search_docs", "search", ix).Run(context.Background(), `{"query":"quantum"}`)
	if err != nil || !strings.Contains(out, "nothing in the documents matches") {
		t.Fatalf("%q %v", out, err)
	}
}

func TestProjectDocs(t *testing.T) {
	ix, err := search.Build(a2amesh.Docs)
	if err != nil {
		t.Fatal(err)
	}
	out, err := search.Tool("search_docs", "search", ix).Run(context.Background(), `{"query":"checkpoint format version"}`)
	if err != nil || !strings.Contains(out, "docs/adk.md") {
		t.Fatalf("%q %v", out, err)
	}
}
