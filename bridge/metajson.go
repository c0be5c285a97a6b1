package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// fromPlain converts a metadata value that crossed the wire (the plain JSON
// values a decoder gives an interface{}) into the bridge's types directly,
// for the shapes every hop carries: what it returns is what encoding the
// value to JSON and decoding that into T gives. ok is false for anything
// else (an action, an interrupt, multi-part content, an unknown or
// case-folded member, a mistyped value), which then takes that round
// trip.
func fromPlain[T any](raw any) (v T, ok bool) {
	m, isMap := raw.(map[string]any)
	if !isMap {
		return v, false
	}
	switch p := any(&v).(type) {
	case *eventMeta:
		ok = p.fromPlain(m)
	case *runMeta:
		ok = p.fromPlain(m)
	case *resultMeta:
		ok = p.fromPlain(m)
	}
	return v, ok
}

func (e *eventMeta) fromPlain(m map[string]any) bool {
	ok := true
	for k, v := range m {
		switch k {
		case "agent":
			ok = plainString(v, &e.Agent)
		case "run_path":
			ok = plainRunPath(v, &e.RunPath)
		case "role":
			ok = plainString(v, (*string)(&e.Role))
		case "tool_name":
			ok = plainString(v, &e.ToolName)
		case "streaming":
			ok = plainBool(v, &e.Streaming)
		case "message":
			ok = plainMessagePtr(v, &e.Message)
		case "stream_error":
			ok = plainString(v, &e.StreamError)
		case "output":
			ok = plainBool(v, &e.Output)
		case "error":
			ok = plainString(v, &e.Error)
		case "customized_output":
			ok = plainRaw(v, &e.CustomizedOutput)
		case "action":
			ok = v == nil
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return true
}

func (r *runMeta) fromPlain(m map[string]any) bool {
	ok := true
	for k, v := range m {
		switch k {
		case "run_path":
			ok = plainRunPath(v, &r.RunPath)
		case "callers":
			ok = plainCallers(v, &r.Callers)
		case "session_values":
			ok = plainRaw(v, &r.SessionValues)
		case "input":
			ok = plainMessages(v, &r.Input)
		case "streaming":
			ok = plainBool(v, &r.Streaming)
		case "resume_task":
			ok = plainString(v, &r.ResumeTask)
		default: // resume among them: its values are the caller's
			ok = false
		}
		if !ok {
			return false
		}
	}
	return true
}

func (r *resultMeta) fromPlain(m map[string]any) bool {
	for k, v := range m {
		if k != "session_values" || !plainRaw(v, &r.SessionValues) {
			return false
		}
	}
	return true
}

// The plain* helpers follow encoding/json into a zero value: null leaves it
// zero, and any other type mismatch declines.

func plainString(v any, dst *string) bool {
	switch s := v.(type) {
	case nil:
		return true
	case string:
		*dst = s
		return true
	}
	return false
}

func plainBool(v any, dst *bool) bool {
	switch b := v.(type) {
	case nil:
		return true
	case bool:
		*dst = b
		return true
	}
	return false
}

// plainRaw is a json.RawMessage member: it holds the value's JSON, "null"
// included.
func plainRaw(v any, dst *json.RawMessage) bool {
	b, err := fastjson.AppendAny(nil, v)
	*dst = b
	return err == nil
}

// plainInt is an int member: the JSON of the float64 must be an integer.
func plainInt(v any, dst **int) bool {
	switch f := v.(type) {
	case nil:
		*dst = nil
		return true
	case float64:
		// JSON writes these as integers (no exponent) that fit an int.
		if f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
			return false
		}
		n := int(f)
		*dst = &n
		return true
	}
	return false
}

func plainRunPath(v any, dst *[]adk.RunStep) bool {
	if v == nil {
		return true
	}
	a, ok := v.([]any)
	if !ok {
		return false
	}
	out := make([]adk.RunStep, len(a))
	for i, e := range a {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range m {
			if k != "agent" || !plainString(v, &out[i].AgentName) {
				return false
			}
		}
	}
	*dst = out
	return true
}

func plainCallers(v any, dst *[]adk.CallerAgent) bool {
	if v == nil {
		return true
	}
	a, ok := v.([]any)
	if !ok {
		return false
	}
	out := make([]adk.CallerAgent, len(a))
	for i, e := range a {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range m {
			switch k {
			case "name":
				ok = plainString(v, &out[i].Name)
			case "description":
				ok = plainString(v, &out[i].Description)
			case "skills":
				ok = plainSkills(v, &out[i].Skills)
			default:
				ok = false
			}
			if !ok {
				return false
			}
		}
	}
	*dst = out
	return true
}

func plainSkills(v any, dst *[]adk.Skill) bool {
	if v == nil {
		*dst = nil
		return true
	}
	a, ok := v.([]any)
	if !ok {
		return false
	}
	out := make([]adk.Skill, len(a))
	for i, e := range a {
		if e == nil {
			continue
		}
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		s := &out[i]
		for k, v := range m {
			switch k {
			case "id":
				ok = plainString(v, &s.ID)
			case "name":
				ok = plainString(v, &s.Name)
			case "description":
				ok = plainString(v, &s.Description)
			case "tags":
				ok = plainStrings(v, &s.Tags)
			case "examples":
				ok = plainStrings(v, &s.Examples)
			default:
				ok = false
			}
			if !ok {
				return false
			}
		}
	}
	*dst = out
	return true
}

func plainStrings(v any, dst *[]string) bool {
	if v == nil {
		*dst = nil
		return true
	}
	a, ok := v.([]any)
	if !ok {
		return false
	}
	out := make([]string, len(a))
	for i, e := range a {
		if !plainString(e, &out[i]) {
			return false
		}
	}
	*dst = out
	return true
}

func plainMessages(v any, dst *[]*schema.Message) bool {
	if v == nil {
		return true
	}
	a, ok := v.([]any)
	if !ok {
		return false
	}
	out := make([]*schema.Message, len(a))
	for i, e := range a {
		if !plainMessagePtr(e, &out[i]) {
			return false
		}
	}
	*dst = out
	return true
}

func plainMessagePtr(v any, dst **schema.Message) bool {
	if v == nil {
		*dst = nil
		return true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	msg := new(schema.Message)
	for k, v := range m {
		switch k {
		case "role":
			ok = plainString(v, (*string)(&msg.Role))
		case "content":
			ok = plainString(v, &msg.Content)
		case "name":
			ok = plainString(v, &msg.Name)
		case "tool_calls":
			ok = plainToolCalls(v, &msg.ToolCalls)
		case "tool_call_id":
			ok = plainString(v, &msg.ToolCallID)
		case "tool_name":
			ok = plainString(v, &msg.ToolName)
		case "extra":
			ok = plainContextMark(v, &msg.Extra)
		default: // multi_content, response_meta
			ok = false
		}
		if !ok {
			return false
		}
	}
	*dst = msg
	return true
}

// plainContextMark takes the one Extra every hop carries, the context
// mark (adk.ContextMessageKey with an agent's name): context messages make
// up most of a transferred-to agent's input. Any other Extra declines.
func plainContextMark(v any, dst *map[string]any) bool {
	if v == nil {
		return true
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	agent, ok := m[adk.ContextMessageKey].(string)
	if ok {
		*dst = map[string]any{adk.ContextMessageKey: agent}
	}
	return ok
}

func plainToolCalls(v any, dst *[]schema.ToolCall) bool {
	if v == nil {
		return true
	}
	a, ok := v.([]any)
	if !ok {
		return false
	}
	out := make([]schema.ToolCall, len(a))
	for i, e := range a {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		tc := &out[i]
		for k, v := range m {
			switch k {
			case "index":
				ok = plainInt(v, &tc.Index)
			case "id":
				ok = plainString(v, &tc.ID)
			case "type":
				ok = plainString(v, &tc.Type)
			case "function":
				ok = plainFunction(v, &tc.Function)
			default:
				ok = false
			}
			if !ok {
				return false
			}
		}
	}
	*dst = out
	return true
}

func plainFunction(v any, dst *schema.FunctionCall) bool {
	if v == nil {
		return true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		switch k {
		case "name":
			ok = plainString(v, &dst.Name)
		case "arguments":
			ok = plainString(v, &dst.Arguments)
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return true
}

// The AppendJSON methods write the metadata as encoding/json does (they
// make the types fastjson.Appenders, which a2a's encoder uses), directly
// for the shapes every hop carries and through encoding/json otherwise.

// AppendJSON implements fastjson.Appender.
func (e *eventMeta) AppendJSON(dst []byte) ([]byte, error) {
	if e == nil {
		return append(dst, "null"...), nil
	}
	if !fastjson.Enabled {
		return fastjson.Marshal(dst, e)
	}
	if e.Action != nil || len(e.CustomizedOutput) > 0 || !plainEncodable(e.Message) {
		return fastjson.AppendReflect(dst, e)
	}
	w := objectWriter{dst: append(dst, '{')}
	w.str("agent", e.Agent)
	w.runPath(e.RunPath)
	w.str("role", string(e.Role))
	w.str("tool_name", e.ToolName)
	w.boolean("streaming", e.Streaming)
	if e.Message != nil {
		w.key("message")
		w.dst = appendMessage(w.dst, e.Message)
	}
	w.str("stream_error", e.StreamError)
	w.boolean("output", e.Output)
	w.str("error", e.Error)
	return append(w.dst, '}'), nil
}

// AppendJSON implements fastjson.Appender.
func (r *runMeta) AppendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	if !fastjson.Enabled {
		return fastjson.Marshal(dst, r)
	}
	plain := len(r.Resume) == 0
	for _, m := range r.Input {
		plain = plain && plainEncodable(m)
	}
	if !plain {
		return fastjson.AppendReflect(dst, r)
	}
	w := objectWriter{dst: append(dst, '{')}
	w.runPath(r.RunPath)
	if len(r.Callers) > 0 {
		w.key("callers")
		w.dst = append(w.dst, '[')
		for i, c := range r.Callers {
			if i > 0 {
				w.dst = append(w.dst, ',')
			}
			w.dst = append(w.dst, `{"name":`...)
			w.dst = fastjson.AppendString(w.dst, c.Name)
			if c.Description != "" {
				w.dst = append(w.dst, `,"description":`...)
				w.dst = fastjson.AppendString(w.dst, c.Description)
			}
			if len(c.Skills) > 0 {
				w.dst = append(w.dst, `,"skills":`...)
				w.dst = appendSkills(w.dst, c.Skills)
			}
			w.dst = append(w.dst, '}')
		}
		w.dst = append(w.dst, ']')
	}
	if err := w.raw("session_values", r.SessionValues); err != nil {
		return dst, err
	}
	if len(r.Input) > 0 {
		w.key("input")
		w.dst = append(w.dst, '[')
		for i, m := range r.Input {
			if i > 0 {
				w.dst = append(w.dst, ',')
			}
			if m == nil {
				w.dst = append(w.dst, "null"...)
			} else {
				w.dst = appendMessage(w.dst, m)
			}
		}
		w.dst = append(w.dst, ']')
	}
	w.boolean("streaming", r.Streaming)
	w.str("resume_task", r.ResumeTask)
	return append(w.dst, '}'), nil
}

// AppendJSON implements fastjson.Appender.
func (r *resultMeta) AppendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	if !fastjson.Enabled {
		return fastjson.Marshal(dst, r)
	}
	if r.Interrupt != nil {
		return fastjson.AppendReflect(dst, r)
	}
	w := objectWriter{dst: append(dst, '{')}
	if err := w.raw("session_values", r.SessionValues); err != nil {
		return dst, err
	}
	return append(w.dst, '}'), nil
}

// plainEncodable reports whether appendMessage writes m: a nil message or
// one without multi-part content, response metadata or extras other than
// the context mark.
func plainEncodable(m *schema.Message) bool {
	return m == nil || len(m.MultiContent) == 0 && m.ResponseMeta == nil && (len(m.Extra) == 0 || contextMark(m.Extra))
}

// contextMark reports whether extra is the context mark alone: the only
// Extra appendMessage writes.
func contextMark(extra map[string]any) bool {
	if len(extra) != 1 {
		return false
	}
	_, ok := extra[adk.ContextMessageKey].(string)
	return ok
}

func appendMessage(dst []byte, m *schema.Message) []byte {
	w := objectWriter{dst: append(dst, `{"role":`...), n: 1}
	w.dst = fastjson.AppendString(w.dst, string(m.Role))
	w.str("content", m.Content)
	w.str("name", m.Name)
	if len(m.ToolCalls) > 0 {
		w.key("tool_calls")
		w.dst = append(w.dst, '[')
		for i := range m.ToolCalls {
			tc := &m.ToolCalls[i]
			if i > 0 {
				w.dst = append(w.dst, ',')
			}
			c := objectWriter{dst: append(w.dst, '{')}
			if tc.Index != nil {
				c.key("index")
				c.dst = strconv.AppendInt(c.dst, int64(*tc.Index), 10)
			}
			c.str("id", tc.ID)
			c.str("type", tc.Type)
			c.key("function")
			c.dst = append(c.dst, `{"name":`...)
			c.dst = fastjson.AppendString(c.dst, tc.Function.Name)
			c.dst = append(c.dst, `,"arguments":`...)
			c.dst = fastjson.AppendString(c.dst, tc.Function.Arguments)
			w.dst = append(c.dst, '}', '}')
		}
		w.dst = append(w.dst, ']')
	}
	w.str("tool_call_id", m.ToolCallID)
	w.str("tool_name", m.ToolName)
	if len(m.Extra) > 0 { // the context mark (plainEncodable)
		w.key("extra")
		w.dst = append(w.dst, `{"`+adk.ContextMessageKey+`":`...)
		w.dst = fastjson.AppendString(w.dst, m.Extra[adk.ContextMessageKey].(string))
		w.dst = append(w.dst, '}')
	}
	return append(w.dst, '}')
}

func appendSkills(dst []byte, skills []adk.Skill) []byte {
	dst = append(dst, '[')
	for i := range skills {
		s := &skills[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		w := objectWriter{dst: append(dst, `{"id":`...), n: 1}
		w.dst = fastjson.AppendString(w.dst, s.ID)
		w.key("name")
		w.dst = fastjson.AppendString(w.dst, s.Name)
		w.str("description", s.Description)
		w.strs("tags", s.Tags)
		w.strs("examples", s.Examples)
		dst = append(w.dst, '}')
	}
	return append(dst, ']')
}

// objectWriter writes the members of a JSON object, leaving out empty
// ones as omitempty does.
type objectWriter struct {
	dst []byte
	n   int // members written
}

func (w *objectWriter) key(name string) {
	if w.n > 0 {
		w.dst = append(w.dst, ',')
	}
	w.n++
	w.dst = append(w.dst, '"')
	w.dst = append(w.dst, name...)
	w.dst = append(w.dst, '"', ':')
}

func (w *objectWriter) str(name, s string) {
	if s != "" {
		w.key(name)
		w.dst = fastjson.AppendString(w.dst, s)
	}
}

func (w *objectWriter) strs(name string, ss []string) {
	if len(ss) == 0 {
		return
	}
	w.key(name)
	w.dst = append(w.dst, '[')
	for i, s := range ss {
		if i > 0 {
			w.dst = append(w.dst, ',')
		}
		w.dst = fastjson.AppendString(w.dst, s)
	}
	w.dst = append(w.dst, ']')
}

func (w *objectWriter) boolean(name string, b bool) {
	if b {
		w.key(name)
		w.dst = append(w.dst, "true"...)
	}
}

// raw writes a json.RawMessage member, compacted as encoding/json does.
func (w *objectWriter) raw(name string, r json.RawMessage) error {
	if len(r) == 0 {
		return nil
	}
	w.key(name)
	buf := bytes.NewBuffer(w.dst)
	if err := json.Compact(buf, r); err != nil {
		return fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err)
	}
	w.dst = buf.Bytes()
	return nil
}

func (w *objectWriter) runPath(path []adk.RunStep) {
	if len(path) == 0 {
		return
	}
	w.key("run_path")
	w.dst = append(w.dst, '[')
	for i, s := range path {
		if i > 0 {
			w.dst = append(w.dst, ',')
		}
		w.dst = append(w.dst, `{"agent":`...)
		w.dst = fastjson.AppendString(w.dst, s.AgentName)
		w.dst = append(w.dst, '}')
	}
	w.dst = append(w.dst, ']')
}
