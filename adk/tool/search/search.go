// Package search is full-text search over a corpus of text documents
// (Markdown or plain), and a tool that searches: documents are cut into
// sections at Markdown headings and blank-line paragraphs, ranked by BM25.
package search

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"
	"unicode"

	"github.com/a2amesh/a2amesh/adk/tool"
)

// Hit is a section that matches a query.
type Hit struct {
	File    string
	Heading string
	Text    string
	Score   float64
}

// Index is a searchable corpus. It is read-only once built, so safe for
// concurrent use.
type Index struct {
	sections []section
	df       map[string]int // sections containing each term
	avgLen   float64
}

type section struct {
	file, heading, text string
	tf                  map[string]int
	length              int
}

// Build indexes the files of fsys whose names end in one of exts (".md",
// ".txt" when none are given).
func Build(fsys fs.FS, exts ...string) (*Index, error) {
	if len(exts) == 0 {
		exts = []string{".md", ".txt"}
	}
	ix := &Index{df: map[string]int{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !hasExt(p, exts) {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		ix.add(p, string(b))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search: index: %w", err)
	}
	total := 0
	for _, s := range ix.sections {
		total += s.length
	}
	if len(ix.sections) > 0 {
		ix.avgLen = float64(total) / float64(len(ix.sections))
	}
	return ix, nil
}

func hasExt(p string, exts []string) bool {
	for _, e := range exts {
		if strings.EqualFold(path.Ext(p), e) {
			return true
		}
	}
	return false
}

// add cuts a document into sections: a heading starts one, and a section
// grows paragraph by paragraph up to about 1,200 characters.
func (ix *Index) add(file, doc string) {
	heading := strings.TrimSuffix(path.Base(file), path.Ext(file))
	var cur strings.Builder
	flush := func() {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return
		}
		s := section{file: file, heading: heading, text: text, tf: map[string]int{}}
		for _, t := range terms(heading + " " + text) {
			s.tf[t]++
			s.length++
		}
		for t := range s.tf {
			ix.df[t]++
		}
		ix.sections = append(ix.sections, s)
	}
	for _, para := range strings.Split(doc, "\n\n") {
		p := strings.TrimSpace(para)
		if h, ok := strings.CutPrefix(p, "#"); ok && !strings.Contains(p, "\n") {
			flush()
			heading = strings.TrimSpace(strings.TrimLeft(h, "#"))
			continue
		}
		if first, rest, ok := strings.Cut(p, "\n"); ok && strings.HasPrefix(first, "#") {
			flush()
			heading = strings.TrimSpace(strings.TrimLeft(first, "#"))
			p = rest
		}
		if cur.Len() > 0 && cur.Len()+len(p) > 1200 {
			flush()
		}
		cur.WriteString(p + "\n\n")
	}
	flush()
}

// terms are a text's lower-case words, a plural s dropped.
func terms(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 2 || stop[w] {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	return out
}

var stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("the a an and or of to in on at for by with is are was be it its this that as from how what which who does do can") {
		m[w] = true
	}
	return m
}()

// Len is the number of sections.
func (ix *Index) Len() int { return len(ix.sections) }

// Search returns the k sections that best match query, best first.
func (ix *Index) Search(query string, k int) []Hit {
	q := terms(query)
	if len(q) == 0 || len(ix.sections) == 0 {
		return nil
	}
	const k1, b = 1.2, 0.75
	n := float64(len(ix.sections))
	var hits []Hit
	for _, s := range ix.sections {
		score := 0.0
		for _, t := range q {
			f := float64(s.tf[t])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(ix.df[t])+0.5)/(float64(ix.df[t])+0.5))
			score += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(s.length)/ix.avgLen))
		}
		if score > 0 {
			hits = append(hits, Hit{File: s.file, Heading: s.heading, Text: s.text, Score: score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// Input is the search tool's argument.
type Input struct {
	Query string `json:"query" desc:"what to look for"`
}

// Tool returns a tool named name that searches ix and answers with the
// best three sections (each cut to 600 characters), or says nothing
// matched.
func Tool(name, desc string, ix *Index) tool.Tool {
	t, err := tool.FromFunc(name, desc, func(_ context.Context, in Input) (string, error) {
		hits := ix.Search(in.Query, 3)
		if len(hits) == 0 {
			return fmt.Sprintf("nothing in the documents matches %q", in.Query), nil
		}
		var b strings.Builder
		for i, h := range hits {
			text := h.Text
			if len(text) > 600 {
				text = text[:600] + "…"
			}
			fmt.Fprintf(&b, "[%d] %s — %s\n%s\n", i+1, h.File, h.Heading, text)
		}
		return strings.TrimSpace(b.String()), nil
	})
	if err != nil {
		panic(err) // the argument type is fixed and valid
	}
	return t
}
