package schema

import "slices"

// ToolInfo describes a tool to a model: its name, what it does, and the
// JSON schema of the object its arguments form.
type ToolInfo struct {
	Name string
	Desc string
	// Params is the schema of the arguments object; nil means the tool
	// takes no arguments.
	Params *JSONSchema
}

// JSONSchema is the subset of JSON Schema that tool parameters use. It
// encodes to standard JSON Schema.
type JSONSchema struct {
	Type        string                 `json:"type,omitempty"`
	Description string                 `json:"description,omitempty"`
	Properties  map[string]*JSONSchema `json:"properties,omitempty"`
	Required    []string               `json:"required,omitempty"`
	Items       *JSONSchema            `json:"items,omitempty"`
	Enum        []any                  `json:"enum,omitempty"`
}

// ObjectSchema returns the schema of an object with the given properties,
// all of which are required.
func ObjectSchema(props map[string]*JSONSchema) *JSONSchema {
	s := &JSONSchema{Type: "object", Properties: props}
	for name := range props {
		s.Required = append(s.Required, name)
	}
	slices.Sort(s.Required)
	return s
}
