package fastjsontest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type state string

type union struct {
	A, B     string
	Shared   int
	internal int
}

type node struct {
	Name     string          `json:"name"`
	Hidden   string          `json:"-"`
	State    state           `json:"state"`
	N        *int            `json:"n,omitempty"`
	U        uint64          `json:"u"`
	F        float64         `json:"f"`
	OK       bool            `json:"ok"`
	Bytes    []byte          `json:"bytes"`
	Tags     []string        `json:"tags"`
	Meta     map[string]any  `json:"meta"`
	At       time.Time       `json:"at"`
	Raw      json.RawMessage `json:"raw"`
	Any      any             `json:"any"`
	Parts    []union         `json:"parts"`
	One      union           `json:"one"`
	Child    *node           `json:"child"`
	Children []*node         `json:"children"`
	Skipped  string          `json:"skipped"`
}

func TestFill(t *testing.T) {
	f := &Filler{
		Values: map[reflect.Type]any{reflect.TypeFor[state](): "READY"},
		Unions: map[reflect.Type][]string{reflect.TypeFor[union](): {"A", "B"}},
		Skip:   []string{"fastjsontest.node.Skipped"},
	}
	var got node
	if err := f.Fill(&got); err != nil {
		t.Fatal(err)
	}
	seven := 7
	s := func(name string) string { return name + ` "<é>` + "\u2028" }
	want := node{
		Name: s("fastjsontest.node.Name"), State: "READY", N: &seven, U: 7, F: 1.5, OK: true,
		Bytes: []byte{7}, Tags: []string{s("fastjsontest.node.Tags")},
		Meta: map[string]any{s("fastjsontest.node.Meta key"): Any()},
		At:   Time, Raw: json.RawMessage(Raw), Any: Any(),
		Parts: []union{{A: s("fastjsontest.union.A"), Shared: 7}, {B: s("fastjsontest.union.B"), Shared: 7}},
		One:   union{A: s("fastjsontest.union.A"), Shared: 7},
	}
	if d := Diff(&got, &want); d != "" {
		t.Errorf("Fill:\n%s", d)
	}
}

func TestFillRefuses(t *testing.T) {
	for _, v := range []any{
		new(struct{ C chan int }),
		new(struct{ E error }),
		struct{}{},
	} {
		if err := new(Filler).Fill(v); err == nil {
			t.Errorf("%T: no error", v)
		}
	}
}

func TestSameJSONAndDiff(t *testing.T) {
	if err := SameJSON([]byte(`{"a":[1,{"b":2}],"c":"x"}`), []byte(`{"c":"x", "a":[1,{"b":2}]}`)); err != nil {
		t.Errorf("same values: %v", err)
	}
	err := SameJSON([]byte(`{"a":[1,{"b":3}],"d":1}`), []byte(`{"a":[1,{"b":2}],"c":"x"}`))
	for _, w := range []string{".a[1].b: got 3, want 2", `.c: missing (want "x")`, ".d: unexpected 1"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("SameJSON error %v does not say %q", err, w)
		}
	}
	g := node{Tags: []string{}, Meta: map[string]any{"k": 1.0}, Children: []*node{{Name: "x"}}}
	w := node{Meta: map[string]any{"k": 2.0}, Children: []*node{{Name: "y"}}}
	d := Diff(&g, &w)
	for _, s := range []string{".Tags: got 0 elements (nil: false), want 0 (nil: true)", ".Meta[k]: got 1, want 2", `.Children[0].Name: got "x", want "y"`} {
		if !strings.Contains(d, s) {
			t.Errorf("Diff\n%s\ndoes not say %q", d, s)
		}
	}
	if d := Diff(&w, &w); d != "" {
		t.Errorf("Diff of equal values: %s", d)
	}
}
