// Package tool is what a model can call: the Tool interface, FromFunc to
// make a tool from a Go function whose argument struct describes the JSON
// schema, and Node, which runs the calls of one model turn concurrently and
// turns failures into results the model can read.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// Tool is something a model can call. Implementations are safe for
// concurrent use.
type Tool interface {
	// Info describes the tool to the model.
	Info(ctx context.Context) (*schema.ToolInfo, error)
	// Run executes one call with its JSON arguments and returns the text
	// the model gets back.
	Run(ctx context.Context, arguments string) (string, error)
}

// FromFunc makes a Tool of fn. In must be a struct: its exported fields are
// the arguments, named by their json tags, described by `desc:"..."` tags,
// restricted by `enum:"a,b"` tags, and required unless their json tag says
// omitempty. A result that is a string goes to the model as is; anything
// else goes as JSON.
func FromFunc[In, Out any](name, desc string, fn func(ctx context.Context, in In) (Out, error)) (Tool, error) {
	t := reflect.TypeFor[In]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tool %q: the argument type %s is not a struct", name, t)
	}
	params, err := schemaOf(t)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	return &funcTool[In, Out]{info: &schema.ToolInfo{Name: name, Desc: desc, Params: params}, fn: fn}, nil
}

type funcTool[In, Out any] struct {
	info *schema.ToolInfo
	fn   func(context.Context, In) (Out, error)
}

func (t *funcTool[In, Out]) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

func (t *funcTool[In, Out]) Run(ctx context.Context, arguments string) (string, error) {
	var in In
	if strings.TrimSpace(arguments) != "" {
		if err := json.Unmarshal([]byte(arguments), &in); err != nil {
			return "", fmt.Errorf("arguments are not valid for %s: %w", t.info.Name, err)
		}
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		return "", err
	}
	if s, ok := any(out).(string); ok {
		return s, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode the result of %s: %w", t.info.Name, err)
	}
	return string(b), nil
}

var timeType = reflect.TypeFor[time.Time]()

// schemaOf derives the JSON schema of a Go type.
func schemaOf(t reflect.Type) (*schema.JSONSchema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		return &schema.JSONSchema{Type: "string", Description: "an RFC 3339 time"}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return &schema.JSONSchema{Type: "string"}, nil
	case reflect.Bool:
		return &schema.JSONSchema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &schema.JSONSchema{Type: "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return &schema.JSONSchema{Type: "number"}, nil
	case reflect.Slice, reflect.Array:
		items, err := schemaOf(t.Elem())
		if err != nil {
			return nil, err
		}
		return &schema.JSONSchema{Type: "array", Items: items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key type %s is not string", t.Key())
		}
		return &schema.JSONSchema{Type: "object"}, nil
	case reflect.Interface:
		return &schema.JSONSchema{}, nil // any JSON value
	case reflect.Struct:
		s := &schema.JSONSchema{Type: "object", Properties: map[string]*schema.JSONSchema{}}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, optional := f.Name, false
			if tag, ok := f.Tag.Lookup("json"); ok {
				n, opts, _ := strings.Cut(tag, ",")
				if n == "-" {
					continue
				}
				if n != "" {
					name = n
				}
				optional = strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			}
			ps, err := schemaOf(f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			if d := f.Tag.Get("desc"); d != "" {
				ps.Description = d
			}
			if e := f.Tag.Get("enum"); e != "" {
				for _, v := range strings.Split(e, ",") {
					ps.Enum = append(ps.Enum, strings.TrimSpace(v))
				}
			}
			s.Properties[name] = ps
			if !optional {
				s.Required = append(s.Required, name)
			}
		}
		return s, nil
	}
	return nil, fmt.Errorf("type %s cannot be a tool argument", t)
}
