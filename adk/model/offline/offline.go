// Package offline is a deterministic, rule-based stand-in for a chat model,
// so agent trees run end to end with no model endpoint. It is not a
// language model and says so: every answer starts with Label.
//
// It reads a text as its content words (lower case, common words and
// numbers left out, a plural s dropped; words of four letters or more
// match when they begin alike up to the last two letters of the shorter:
// report and reports, write and writing, summary and summarize),
// with arithmetic in words first written in symbols ("seven times eight"
// is 7 * 8, "12 percent of 250" is 12% of 250), and arithmetic, in words
// or symbols, as one more term of its own.
//
// What it does, in order, for each call:
//   - after results of its own tool calls, it answers with them (through
//     the exit tool when it has one);
//   - with a transfer_to_agent tool, it may transfer to one of the agents
//     its instruction lists (adk.TransferTargetsHeader) that the
//     conversation has not been through yet. When its instruction names
//     two or more of them and the request shares a word with one of them,
//     it is a procedure: the first of those in the instruction's order.
//     Otherwise it scores each agent by what it declares against the
//     request: the weights of the request's terms that its name,
//     description and skills' names, descriptions and tags have, plus the
//     request's similarity to the closest of its skills' examples, a term
//     weighing the more the fewer of the agents (and the model's own
//     agent) have it, so a word they all share counts little. Of the
//     agents that score above its own instruction and tools, it transfers
//     to the best, unless the request names that one by its name and
//     others of them too: then to the one it names first (a request lists
//     its tasks in order). When none scores above, it answers itself;
//   - with other tools, it scores each the way it scores agents, among the
//     tools: a tool's name and description, and for a tool that is an
//     agent (adk.NewAgentTool lists the agent's skills under its
//     description) what the agent declares, its skills' examples too;
//     arithmetic is a term of a tool that takes an expression. It calls
//     the best, or else, when none scores, the one its instruction names,
//     when it can find every required argument in the request: enum
//     values, numbers, places, lists, an arithmetic expression, for a
//     search query the request's words that do not describe the agents at
//     hand, for an answer the material the request hands it (the lines
//     after its first line that ends with a colon, as a list gives them,
//     without bullets), or the request itself;
//   - otherwise it answers plainly, restating the request and what other
//     agents said.
//
// The same input always gives the same reply.
package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// Label starts every answer of the offline model.
const Label = "[offline model]"

// Model is the offline model. The zero value is ready to use.
type Model struct {
	tools []*schema.ToolInfo
}

// New returns the offline model.
func New() *Model { return &Model{} }

// ModelName is "offline" (model.Named).
func (m *Model) ModelName() string { return "offline" }

// WithTools returns the model with tools it may call.
func (m *Model) WithTools(tools []*schema.ToolInfo) (model.ChatModel, error) {
	return &Model{tools: tools}, nil
}

// Generate returns the model's reply.
func (m *Model) Generate(ctx context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.reply(input), nil
}

// Stream returns the reply in chunks, tool-call arguments split across
// deltas as endpoints send them.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.FromSlice(schema.SplitMessage(msg, 4)), nil
}

// conversation is what the rules read from an input.
type conversation struct {
	instruction string // the system message, without the transfer section
	targets     []target
	request     string            // the last user message that is not context
	results     []*schema.Message // tool results after the last assistant turn that called tools
	said        []said            // what other agents said, as context
	visited     map[string]bool   // agents the conversation was transferred from or to
}

type target struct {
	name, desc string
	skills     []adk.Skill
}

type said struct{ agent, text string }

var (
	saidRe     = regexp.MustCompile(`(?s)^\[([^\]]+)\] said: (.*)$`)
	transferRe = regexp.MustCompile(`\[([^\]]+)\] ` + "`" + adk.TransferToAgentToolName + "`" + ` tool returned result: successfully transferred to agent \[([^\]]+)\]`)
	resultRe   = regexp.MustCompile(`transferred to agent \[([^\]]+)\]`)
)

func read(input []*schema.Message) *conversation {
	c := &conversation{visited: map[string]bool{}}
	lastUser := -1
	for i, m := range input {
		text := m.Text()
		switch m.Role {
		case schema.System:
			c.instruction, c.targets = splitInstruction(text)
		case schema.User:
			// Context is what adk marks so (adk.IsContext); a message that
			// only starts like it is the person's.
			if adk.IsContext(m) {
				rest := strings.TrimSpace(strings.TrimPrefix(text, "For context:"))
				if s := saidRe.FindStringSubmatch(rest); s != nil {
					c.said = append(c.said, said{agent: s[1], text: s[2]})
				}
				for _, t := range transferRe.FindAllStringSubmatch(rest, -1) {
					c.visited[t[1]], c.visited[t[2]] = true, true
				}
				continue
			}
			c.request, lastUser = text, i
		case schema.Tool:
			if m.ToolName == adk.TransferToAgentToolName {
				if t := resultRe.FindStringSubmatch(text); t != nil {
					c.visited[t[1]] = true
				}
			}
		}
	}
	// The results of this agent's latest tool calls: the tool messages at
	// the end, after the user's request.
	for i := len(input) - 1; i > lastUser && input[i].Role == schema.Tool; i-- {
		c.results = append([]*schema.Message{input[i]}, c.results...)
	}
	return c
}

// splitInstruction separates a transfer section (adk's format) from the
// rest of an instruction.
func splitInstruction(s string) (string, []target) {
	at := strings.Index(s, adk.TransferTargetsHeader)
	if at < 0 {
		return s, nil
	}
	targets := parseTargets(s[at+len(adk.TransferTargetsHeader):])
	// The transfer section follows the agent's own instruction; drop the
	// paragraph that introduces it too.
	own := s[:at]
	if p := strings.LastIndex(strings.TrimRight(own, "\n"), "\n\n"); p >= 0 {
		own = own[:p]
	} else {
		own = ""
	}
	return strings.TrimSpace(own), targets
}

func (m *Model) reply(input []*schema.Message) *schema.Message {
	c := read(input)
	var transfer, exit bool
	var tools []*schema.ToolInfo
	for _, t := range m.tools {
		switch t.Name {
		case adk.TransferToAgentToolName:
			transfer = true
		case adk.ExitToolName:
			exit = true
		default:
			tools = append(tools, t)
		}
	}
	answer := func(text string) *schema.Message {
		text = Label + " " + text
		if exit {
			args, _ := json.Marshal(map[string]string{"final_result": text})
			return m.call(input, adk.ExitToolName, string(args))
		}
		return m.finish(input, schema.AssistantMessage(text, nil))
	}

	if len(c.results) > 0 {
		var parts []string
		for _, r := range c.results {
			parts = append(parts, unlabel(r.Text()))
		}
		return answer(strings.Join(parts, "\n"))
	}

	// What the agent is: its instruction and tools.
	own := &candidate{profile: terms(c.instruction)}
	toolCands := make([]*candidate, len(tools))
	for i, t := range tools {
		toolCands[i] = toolCandidate(t)
		own.profile = append(own.profile, toolCands[i].profile...)
		own.examples = append(own.examples, toolCands[i].examples...)
	}
	// The words the agents at hand are described with, which say what to
	// do rather than what about.
	known := slices.Clone(own.profile)
	for _, t := range c.targets {
		known = append(known, targetCandidate(t).profile...)
	}

	// The tools are scored as transfer targets are, among themselves.
	s := newScorer(terms(c.request), toolCands)
	best, bestTool := 0.0, (*schema.ToolInfo)(nil)
	var bestArgs string
	for i, t := range tools {
		score := s.score(toolCands[i])
		if score <= best {
			continue
		}
		if args, ok := arguments(c.request, t.Params, known); ok {
			best, bestTool, bestArgs = score, t, args
		}
	}
	if bestTool == nil {
		// No tool shares a word with the request: the tool the
		// instruction tells the agent to use, if it names one.
		for _, t := range tools {
			if nameAt(c.instruction, t.Name) >= 0 {
				if args, ok := arguments(c.request, t.Params, known); ok {
					bestTool, bestArgs = t, args
					break
				}
			}
		}
	}
	if transfer {
		if dest := route(c, own); dest != "" {
			args, _ := json.Marshal(map[string]string{"agent_name": dest})
			return m.call(input, adk.TransferToAgentToolName, string(args))
		}
	}
	if bestTool != nil {
		return m.call(input, bestTool.Name, bestArgs)
	}

	text := restatement + strings.TrimSpace(c.request)
	if c.request == "" {
		text = "There is no question to answer."
	}
	// Build on the latest thing another agent said that is more than a
	// restatement like this one.
	for i := len(c.said) - 1; i >= 0; i-- {
		if said := unlabel(c.said[i].text); !strings.HasPrefix(said, restatement) {
			text += fmt.Sprintf("\nBuilding on what %s said: %s", c.said[i].agent, said)
			break
		}
	}
	return answer(text)
}

// restatement starts a plain answer.
const restatement = "You asked: "

// unlabel drops the label from text another offline answer produced, so
// answers built on answers carry it once.
func unlabel(text string) string {
	return strings.TrimPrefix(strings.TrimSpace(text), Label+" ")
}

// call returns a message that calls one tool. Call ids count the calls so
// far, so they are unique within a conversation.
func (m *Model) call(input []*schema.Message, name, args string) *schema.Message {
	n := 0
	for _, msg := range input {
		n += len(msg.ToolCalls)
	}
	msg := schema.AssistantMessage("", []schema.ToolCall{{
		ID: "offline_call_" + strconv.Itoa(n+1), Type: "function",
		Function: schema.FunctionCall{Name: name, Arguments: args},
	}})
	return m.finish(input, msg)
}

// finish adds usage, counted in words.
func (m *Model) finish(input []*schema.Message, msg *schema.Message) *schema.Message {
	prompt := 0
	for _, in := range input {
		prompt += len(strings.Fields(in.Text()))
	}
	completion := len(strings.Fields(msg.Content))
	for _, tc := range msg.ToolCalls {
		completion += 1 + len(strings.Fields(tc.Function.Arguments))
	}
	reason := "stop"
	if len(msg.ToolCalls) > 0 {
		reason = "tool_calls"
	}
	msg.ResponseMeta = &schema.ResponseMeta{FinishReason: reason, Usage: &schema.Usage{
		PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion,
	}}
	return msg
}

// arguments finds in the request a value for every property of params; ok
// is false when a required one cannot be found. known are the words that
// describe the agents at hand, left out of a search query.
func arguments(request string, params *schema.JSONSchema, known []string) (string, bool) {
	args := map[string]any{}
	if params != nil {
		for name, p := range params.Properties {
			v, found := extract(request, name, p, known)
			if found {
				args[name] = v
			} else if slices.Contains(params.Required, name) {
				return "", false
			}
		}
	}
	b, err := json.Marshal(args)
	return string(b), err == nil
}

var (
	numberRe  = regexp.MustCompile(`-?\d+(\.\d+)?`)
	placeRe   = regexp.MustCompile(`\b(?:in|for|at|to|from|of|near)\s+((?:[A-Z][\p{L}'-]*)(?:\s+[A-Z][\p{L}'-]*)*)`)
	capsRe    = regexp.MustCompile(`\b[A-Z][\p{L}'-]+(?:\s+[A-Z][\p{L}'-]+)*`)
	fromRe    = regexp.MustCompile(`\bfrom\s+((?:[A-Z][\p{L}'-]*)(?:\s+[A-Z][\p{L}'-]*)*)`)
	toRe      = regexp.MustCompile(`\b(?:to|for)\s+((?:[A-Z][\p{L}'-]*)(?:\s+[A-Z][\p{L}'-]*)*)`)
	listSepRe = regexp.MustCompile(`(?i),|;|\band then\b|\bthen\b|\band\b`)
	bulletRe  = regexp.MustCompile(`(?m)^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$`)
)

// listItems finds a list in text: its bulleted or numbered lines, or else
// what follows its last colon, split at commas, semicolons, "and" and
// "then".
func listItems(text string) []string {
	var items []string
	for _, m := range bulletRe.FindAllStringSubmatch(text, -1) {
		items = append(items, m[1])
	}
	if len(items) > 0 {
		return items
	}
	if i := strings.LastIndex(text, ":"); i >= 0 && strings.TrimSpace(text[i+1:]) != "" {
		text = text[i+1:]
	}
	for _, part := range listSepRe.Split(text, -1) {
		if part = strings.Trim(strings.TrimSpace(part), ".?!"); part != "" {
			items = append(items, part)
		}
	}
	return items
}

func extract(request, name string, p *schema.JSONSchema, known []string) (any, bool) {
	if p == nil {
		return nil, false
	}
	if len(p.Enum) > 0 {
		lower := strings.ToLower(request)
		for _, e := range p.Enum {
			if s, ok := e.(string); ok && strings.Contains(lower, strings.ToLower(s)) {
				return s, true
			}
		}
		return nil, false
	}
	about := strings.ToLower(name + " " + p.Description)
	switch p.Type {
	case "integer", "number":
		n := numberRe.FindString(request)
		if n == "" {
			return nil, false
		}
		if p.Type == "integer" {
			i, err := strconv.Atoi(strings.SplitN(n, ".", 2)[0])
			return i, err == nil
		}
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	case "boolean":
		return false, false
	case "array":
		if p.Items == nil || p.Items.Type != "string" {
			return nil, false
		}
		items := listItems(request)
		return items, len(items) > 0
	case "string", "":
		if isExpressionParam(name, p) {
			// The longest stretch of arithmetic in the request, in
			// symbols or in words.
			e := expression(request)
			return e, e != ""
		}
		if containsAny(about, "city", "location", "place", "country", "town", "destination", "where", "origin") {
			// "from" and "to" (or origin and destination) take the place
			// after that word; other places the first one named.
			re := placeRe
			switch {
			case name == "from" || containsAny(about, "origin", "departure"):
				re = fromRe
			case name == "to" || containsAny(about, "destination", "arrival"):
				re = toRe
			}
			if m := re.FindStringSubmatch(request); m != nil {
				return m[1], true
			}
			// A capitalized name that is not a common word ("What's").
			for _, name := range capsRe.FindAllString(request, -1) {
				first, _, _ := strings.Cut(strings.ToLower(strings.Fields(name)[0]), "'")
				if !stopWords[first] {
					return name, true
				}
			}
			return nil, false
		}
		if ws := words(about); slices.Contains(ws, "query") || slices.Contains(ws, "search") || strings.Contains(about, "look for") {
			// What the request is about: its words, without those that
			// describe the agents at hand ("research", "report"),
			// which say what to do with it.
			if q := topic(request, known); q != "" {
				return q, true
			}
		}
		if r := strings.TrimSpace(request); r != "" {
			if containsAny(about, "answer", "response", "reply") {
				// An answer the model gives, so it is labelled: the
				// material the request hands it, when it hands some.
				if m := material(r); m != "" {
					r = m
				}
				return Label + " " + r, true
			}
			return r, true
		}
	}
	return nil, false
}

// leadBulletRe finds the bullet or number that starts a line of a list.
var leadBulletRe = regexp.MustCompile(`^(?:[-*•]|\d+[.)])\s+`)

// material returns what a request hands the model to answer from: the
// lines after its first line that ends with a colon ("Respond from the
// results:"), with the labels of offline answers among them dropped, and
// the bullets of a list that starts lines; "" when it hands none. Lines
// indented under an item stay as they are.
func material(request string) string {
	lines := strings.Split(request, "\n")
	for i, line := range lines {
		if !strings.HasSuffix(strings.TrimSpace(line), ":") {
			continue
		}
		var out []string
		for _, l := range lines[i+1:] {
			l = strings.TrimRight(strings.ReplaceAll(l, Label+" ", ""), " \r")
			out = append(out, leadBulletRe.ReplaceAllString(l, ""))
		}
		return strings.TrimSpace(strings.Join(out, "\n"))
	}
	return ""
}

// topic returns the words of request, as the request has them, that are
// numbers, or content words not known; "" when none is left.
func topic(request string, known []string) string {
	var out []string
	for _, w := range strings.FieldsFunc(request, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' }) {
		if ws := words(w); len(ws) == 1 && !matchesAny(ws[0], known) || strings.Trim(w, "0123456789") == "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// splitName turns get_weather or WeatherAgent into words.
func splitName(name string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteByte(' ')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// words returns the content words of s: lower case, without common words
// and numbers, a plural s dropped.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 2 || stopWords[w] || strings.Trim(w, "0123456789") == "" {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	return out
}

// firstMatch is the position in a of its first word that matches a word of
// b, or len(a).
func firstMatch(a, b []string) int {
	for i, x := range a {
		if matchesAny(x, b) {
			return i
		}
	}
	return len(a)
}

// matchesAny reports whether x matches a word of b: the same word, or
// words of four letters or more that share all but their last two letters
// of the shorter and four at least (report and reports, write and writing,
// calculate and calculation, summary and summarize).
func matchesAny(x string, b []string) bool {
	for _, y := range b {
		if x == y {
			return true
		}
		n := min(len(x), len(y))
		if n < 4 {
			continue
		}
		common := 0
		for common < n && x[common] == y[common] {
			common++
		}
		if common >= max(4, n-2) {
			return true
		}
	}
	return false
}

// stopWords are words too common to say what a request is about.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours with this that these those from into
		about what which who whom whose when where why how can could would should will shall may might must
		does did done have has had was were been being its our ours their theirs them they then than
		there here some any all each every other another such only own same too very just also please tell
		give get got show let make made know need want like use using used one two out over under again
		answer answers question questions request requests agent agents help helps thing things something
		anything everything way ways able good best better well today now say says said find look
		is it of to in on an at be by do if me my no or so up us we am as he she his her him`) {
		m[w] = true
	}
	return m
}()
