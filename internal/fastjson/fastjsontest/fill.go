// Package fastjsontest builds the values with which the fast paths' tests
// check that a hand-written encoder or decoder handles every field of a
// wire type: a Filler sets every exported field by reflection, so a field
// added to a type and forgotten by its fast path makes the value differ
// from what encoding/json writes or reads.
package fastjsontest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Filler sets every exported field of a value, recursively, to a value
// that is not zero and that each field spells differently: strings hold
// the field's name (and characters JSON escapes), slices one element, maps
// one entry, pointers a value, numbers 7 or 1.5, booleans true. Fields
// tagged json:"-" stay zero, as do fields of a type met again inside
// itself.
type Filler struct {
	// Values holds the value of a type the Filler cannot make up: a string
	// type whose decoder accepts only some names, a struct without exported
	// fields, an interface. Without an entry, time.Time is a UTC time with
	// milliseconds, json.RawMessage a compact JSON object, and any (an
	// empty interface) a map of the plain values encoding/json decodes.
	Values map[reflect.Type]any
	// Unions lists, per struct type, fields of which one value holds only
	// one: a slice of that type gets one element per field listed, each
	// with that field set and the others zero; elsewhere the first field is
	// the one set.
	Unions map[reflect.Type][]string
	// Skip names fields left zero, as the struct type's reflect name, a
	// dot and the field name ("a2a.Task.History"): the fields a fast path
	// hands whole to encoding/json, so that a test can check that the fast
	// path takes the rest.
	Skip []string
}

// Default values of the types a Filler cannot make up by reflection.
var (
	anyType  = reflect.TypeFor[any]()
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// Time is the time.Time a Filler sets: UTC, milliseconds, as the protocol
// records times.
var Time = time.Date(2025, 1, 2, 3, 4, 5, 6_000_000, time.UTC)

// Raw is the json.RawMessage a Filler sets: compact, as encoding/json
// writes one, so that it reads back the same.
const Raw = `{"k":[1,"s",true,null]}`

// Any returns the value a Filler sets in an empty interface: the plain
// values encoding/json decodes into one, so that it reads back equal.
func Any() any {
	return map[string]any{"s": "x", "n": 1.5, "b": true, "z": nil, "a": []any{"y", 2.0}, "o": map[string]any{}}
}

// Fill sets every exported field of the value ptr points to.
func (f *Filler) Fill(ptr any) error {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("fastjsontest: Fill needs a non-nil pointer, got %T", ptr)
	}
	s := filling{f: f, within: map[reflect.Type]bool{}}
	return s.fill(v.Elem(), v.Elem().Type().String())
}

type filling struct {
	f      *Filler
	within map[reflect.Type]bool // struct types being filled
}

func (s *filling) fill(v reflect.Value, name string) error {
	t := v.Type()
	if val, ok := s.f.Values[t]; ok {
		return set(v, val, name)
	}
	switch t {
	case timeType:
		return set(v, Time, name)
	case rawType:
		return set(v, json.RawMessage(Raw), name)
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString(name + ` "<é>` + "\u2028")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Interface:
		if t != anyType {
			return fmt.Errorf("fastjsontest: %s is an interface (%s): give it a value in Filler.Values", name, t)
		}
		v.Set(reflect.ValueOf(Any()))
	case reflect.Pointer:
		if s.within[t.Elem()] {
			return nil
		}
		p := reflect.New(t.Elem())
		if err := s.fill(p.Elem(), name); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Slice:
		return s.fillSlice(v, name)
	case reflect.Array:
		for i := range v.Len() {
			if err := s.fill(v.Index(i), name); err != nil {
				return err
			}
		}
	case reflect.Map:
		k := reflect.New(t.Key()).Elem()
		if err := s.fill(k, name+" key"); err != nil {
			return err
		}
		e := reflect.New(t.Elem()).Elem()
		if err := s.fill(e, name); err != nil {
			return err
		}
		m := reflect.MakeMapWithSize(t, 1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		return s.fillStruct(v, "")
	default:
		return fmt.Errorf("fastjsontest: %s has type %s, which JSON does not hold", name, t)
	}
	return nil
}

func (s *filling) fillSlice(v reflect.Value, name string) error {
	t := v.Type()
	elem := t.Elem()
	base := elem
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if s.within[base] {
		return nil
	}
	variants := s.f.Unions[base]
	if len(variants) == 0 {
		variants = []string{""}
	}
	out := reflect.MakeSlice(t, len(variants), len(variants))
	for i, keep := range variants {
		e := out.Index(i)
		if keep == "" {
			if err := s.fill(e, name); err != nil {
				return err
			}
			continue
		}
		sv := e
		if elem.Kind() == reflect.Pointer {
			e.Set(reflect.New(base))
			sv = e.Elem()
		}
		if err := s.fillStruct(sv, keep); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

// fillStruct fills the exported fields of struct v; of a union's fields
// it keeps only keep, or the first when keep is empty.
func (s *filling) fillStruct(v reflect.Value, keep string) error {
	t := v.Type()
	union := s.f.Unions[t]
	if len(union) > 0 && keep == "" {
		keep = union[0]
	}
	s.within[t] = true
	defer delete(s.within, t)
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() || sf.Tag.Get("json") == "-" {
			continue
		}
		name := t.String() + "." + sf.Name
		if slices.Contains(s.f.Skip, name) || slices.Contains(union, sf.Name) && sf.Name != keep {
			continue
		}
		if err := s.fill(v.Field(i), name); err != nil {
			return err
		}
	}
	if len(union) > 0 && !slices.Contains(union, keep) {
		return fmt.Errorf("fastjsontest: %s has no union field %s", t, keep)
	}
	return nil
}

func set(v reflect.Value, val any, name string) error {
	x := reflect.ValueOf(val)
	switch {
	case x.Type().AssignableTo(v.Type()):
		v.Set(x)
	case x.Type().ConvertibleTo(v.Type()):
		v.Set(x.Convert(v.Type()))
	default:
		return fmt.Errorf("fastjsontest: %s: a %T does not go in a %s", name, val, v.Type())
	}
	return nil
}

// SameJSON reports, as an error, where two JSON texts hold different
// values; member order and spacing do not count.
func SameJSON(got, want []byte) error {
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Errorf("got is not JSON: %w", err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		return fmt.Errorf("want is not JSON: %w", err)
	}
	var diffs []string
	diff(&diffs, "", g, w)
	if len(diffs) > 0 {
		return fmt.Errorf("%s\n got %s\nwant %s", strings.Join(diffs, "\n"), got, want)
	}
	return nil
}

// Diff lists, one a line, the paths at which two values of one type
// differ, as reflect.DeepEqual sees them; "" when they are deeply equal.
func Diff(got, want any) string {
	var out []string
	valueDiff(&out, "", reflect.ValueOf(got), reflect.ValueOf(want))
	return strings.Join(out, "\n")
}

// valueDiff appends the paths at which g and w differ.
func valueDiff(out *[]string, path string, g, w reflect.Value) {
	if g.IsValid() != w.IsValid() || g.IsValid() && g.Type() != w.Type() {
		*out = append(*out, fmt.Sprintf("%s: got %v, want %v", path, g, w))
		return
	}
	if !g.IsValid() {
		return
	}
	switch g.Kind() {
	case reflect.Pointer, reflect.Interface:
		if g.IsNil() || w.IsNil() {
			if g.IsNil() != w.IsNil() {
				*out = append(*out, fmt.Sprintf("%s: got %v, want %v", path, g, w))
			}
			return
		}
		valueDiff(out, path, g.Elem(), w.Elem())
	case reflect.Struct:
		for i := range g.NumField() {
			valueDiff(out, path+"."+g.Type().Field(i).Name, g.Field(i), w.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if g.Kind() == reflect.Slice && g.IsNil() != w.IsNil() || g.Len() != w.Len() {
			*out = append(*out, fmt.Sprintf("%s: got %d elements (nil: %t), want %d (nil: %t)", path, g.Len(), g.Kind() == reflect.Slice && g.IsNil(), w.Len(), w.Kind() == reflect.Slice && w.IsNil()))
			return
		}
		for i := range g.Len() {
			valueDiff(out, fmt.Sprintf("%s[%d]", path, i), g.Index(i), w.Index(i))
		}
	case reflect.Map:
		if g.IsNil() != w.IsNil() {
			*out = append(*out, fmt.Sprintf("%s: got %v, want %v", path, g, w))
			return
		}
		for _, k := range w.MapKeys() {
			if gv := g.MapIndex(k); gv.IsValid() {
				valueDiff(out, fmt.Sprintf("%s[%v]", path, k), gv, w.MapIndex(k))
			} else {
				*out = append(*out, fmt.Sprintf("%s[%v]: missing", path, k))
			}
		}
		for _, k := range g.MapKeys() {
			if !w.MapIndex(k).IsValid() {
				*out = append(*out, fmt.Sprintf("%s[%v]: unexpected", path, k))
			}
		}
	default:
		if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
			*out = append(*out, fmt.Sprintf("%s: got %#v, want %#v", path, g, w))
		}
	}
}

func diff(out *[]string, path string, got, want any) {
	g, gok := got.(map[string]any)
	w, wok := want.(map[string]any)
	if gok && wok {
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				*out = append(*out, fmt.Sprintf("%s.%s: missing (want %s)", path, k, compact(wv)))
				continue
			}
			diff(out, path+"."+k, gv, wv)
		}
		for k, gv := range g {
			if _, ok := w[k]; !ok {
				*out = append(*out, fmt.Sprintf("%s.%s: unexpected %s", path, k, compact(gv)))
			}
		}
		return
	}
	ga, gok := got.([]any)
	wa, wok := want.([]any)
	if gok && wok && len(ga) == len(wa) {
		for i := range ga {
			diff(out, fmt.Sprintf("%s[%d]", path, i), ga[i], wa[i])
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		*out = append(*out, fmt.Sprintf("%s: got %s, want %s", path, compact(got), compact(want)))
	}
}

func compact(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // it came from JSON
	return bytes.TrimSpace(b.Bytes())
}
