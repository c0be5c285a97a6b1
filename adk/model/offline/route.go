package offline

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// arithTerm stands, among the terms of a text, for arithmetic in it (in
// symbols or in words): a request to work something out matches an agent
// whose skills show such requests, and a tool that takes an expression.
// words never makes it, so no text's word matches it by accident.
const arithTerm = "#arithmetic"

// terms returns what a text is about for routing: its content words, with
// arithmetic in words written as symbols first (so that "seven times
// eight" is no words about time), and arithTerm when it has arithmetic.
func terms(text string) []string {
	t := words(normalizeArithmetic(text))
	if isArithmetic(text) {
		t = append(t, arithTerm)
	}
	return t
}

// takesExpression reports whether a tool has a parameter for an
// arithmetic expression.
func takesExpression(t *schema.ToolInfo) bool {
	if t.Params == nil {
		return false
	}
	for name, p := range t.Params.Properties {
		if p != nil && (p.Type == "string" || p.Type == "") && isExpressionParam(name, p) {
			return true
		}
	}
	return false
}

func isExpressionParam(name string, p *schema.JSONSchema) bool {
	return containsAny(strings.ToLower(name+" "+p.Description), "expression", "arithmetic", "formula")
}

// toolCandidate is a tool as the rules see it: an agent whose name and
// description are the tool's, with the skills of the agent the tool stands
// for when it lists them (toolTarget), and arithTerm in its profile when
// it takes an expression.
func toolCandidate(t *schema.ToolInfo) *candidate {
	c := targetCandidate(toolTarget(t))
	if takesExpression(t) && !slices.Contains(c.profile, arithTerm) {
		c.profile = append(c.profile, arithTerm)
	}
	return c
}

// candidate is an agent the model may hand a request to, a tool it may
// call, or the model's own agent, as the routing rules see it.
type candidate struct {
	name string
	// profile are the terms of what the agent says it is: its name,
	// description, and its skills' names, descriptions and tags.
	profile []string
	// examples are the terms of each example request of its skills.
	examples [][]string
}

func (c *candidate) has(term string) bool {
	if matchesAny(term, c.profile) {
		return true
	}
	for _, e := range c.examples {
		if matchesAny(term, e) {
			return true
		}
	}
	return false
}

func targetCandidate(t target) *candidate {
	text := []string{splitName(t.name), t.desc}
	var examples [][]string
	for _, s := range t.skills {
		text = append(text, s.Name, s.Description)
		text = append(text, s.Tags...)
		for _, e := range s.Examples {
			examples = append(examples, terms(e))
		}
	}
	return &candidate{name: t.name, profile: terms(strings.Join(text, "\n")), examples: examples}
}

// scorer weighs the terms of a request by how few of the candidates have
// them, the way inverse document frequency does: a word every candidate
// shares says little about which one fits.
type scorer struct {
	request []string // distinct, in the order the request has them
	all     []*candidate
	weights map[string]float64
}

func newScorer(request []string, all []*candidate) *scorer {
	var distinct []string
	for _, r := range request {
		if !slices.Contains(distinct, r) {
			distinct = append(distinct, r)
		}
	}
	return &scorer{request: distinct, all: all, weights: map[string]float64{}}
}

// weight is a term's weight: ln((N+1)/n) for a term n of the N candidates
// have, 0 for one none has.
func (s *scorer) weight(term string) float64 {
	if w, ok := s.weights[term]; ok {
		return w
	}
	n := 0
	for _, c := range s.all {
		if c.has(term) {
			n++
		}
	}
	w := 0.0
	if n > 0 {
		w = math.Log(float64(len(s.all)+1) / float64(n))
	}
	s.weights[term] = w
	return w
}

// score is how well c fits the request: the weights of the request's
// terms its profile has, plus the request's similarity to its closest
// example (the Dice coefficient of their weighted terms) times the
// request's whole weight, so that a request like an example counts as
// much again.
func (s *scorer) score(c *candidate) float64 {
	total, sum := 0.0, 0.0
	for _, r := range s.request {
		w := s.weight(r)
		total += w
		if matchesAny(r, c.profile) {
			sum += w
		}
	}
	best := 0.0
	for _, e := range c.examples {
		shared, own := 0.0, 0.0
		for _, r := range s.request {
			if matchesAny(r, e) {
				shared += s.weight(r)
			}
		}
		seen := map[string]bool{}
		for _, w := range e {
			if !seen[w] {
				seen[w] = true
				own += s.weight(w)
			}
		}
		if shared > 0 {
			best = max(best, 2*shared/(total+own))
		}
	}
	return sum + best*total
}

// namedAt is where the request first names c by its name, or
// len(request).
func (s *scorer) namedAt(c *candidate) int {
	return firstMatch(s.request, words(splitName(c.name)))
}

// route picks the agent to transfer to, or "" to answer: see the package
// documentation.
func route(c *conversation, own *candidate) string {
	var open []*candidate // the targets the conversation has not been through
	for _, t := range c.targets {
		if !c.visited[t.name] {
			open = append(open, targetCandidate(t))
		}
	}
	if len(open) == 0 {
		return ""
	}
	request := terms(c.request)
	if next := procedure(c, request); next != "" {
		return next
	}
	s := newScorer(request, append(slices.Clip(open), own))
	ownScore := s.score(own)
	var fits []*candidate
	scores := map[*candidate]float64{}
	for _, t := range open {
		if sc := s.score(t); sc > ownScore && sc > 0 {
			fits = append(fits, t)
			scores[t] = sc
		}
	}
	if len(fits) == 0 {
		return ""
	}
	// The best fit; of equals, the one the request names first.
	best := fits[0]
	for _, t := range fits[1:] {
		if scores[t] > scores[best] || scores[t] == scores[best] && s.namedAt(t) < s.namedAt(best) {
			best = t
		}
	}
	// A request that names the best by its name and other agents that fit
	// too lists tasks for them in turn: the one it names first goes
	// first.
	if s.namedAt(best) < len(s.request) {
		for _, t := range fits {
			if s.namedAt(t) < s.namedAt(best) {
				best = t
			}
		}
	}
	return best.name
}

// procedure follows an instruction that names two or more of the agents
// the model can transfer to: as long as the request fits one of them, it
// hands the request to each in the order the instruction names them,
// skipping those the conversation has been through. It returns "" when
// the instruction names fewer, none fits, or all have run.
func procedure(c *conversation, request []string) string {
	type named struct {
		at int
		t  target
	}
	var order []named
	for _, t := range c.targets {
		if at := nameAt(c.instruction, t.name); at >= 0 {
			order = append(order, named{at, t})
		}
	}
	if len(order) < 2 {
		return ""
	}
	slices.SortStableFunc(order, func(a, b named) int { return a.at - b.at })
	fits := false
	for _, n := range order {
		tc := targetCandidate(n.t)
		fits = fits || slices.ContainsFunc(request, tc.has)
	}
	if !fits {
		return ""
	}
	for _, n := range order {
		if !c.visited[n.t.name] {
			return n.t.name
		}
	}
	return ""
}

// nameAt returns where text first has name as a word of its own (not
// within a longer name), or -1.
func nameAt(text, name string) int {
	if name == "" {
		return -1
	}
	for from := 0; from < len(text); {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return -1
		}
		at, end := from+i, from+i+len(name)
		before, _ := utf8.DecodeLastRuneInString(text[:at])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if !nameRune(before) && !nameRune(after) {
			return at
		}
		from = at + 1
	}
	return -1
}

func nameRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// parseTargets reads the agents of a transfer section (the lines after
// adk.TransferTargetsHeader, in the format it documents) and their skills.
func parseTargets(section string) []target {
	var targets []target
	var skills skillLines
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimRight(line, " \r")
		if rest, ok := strings.CutPrefix(line, "- "); ok {
			if len(targets) > 0 {
				targets[len(targets)-1].skills = skills.skills
			}
			name, desc, _ := strings.Cut(rest, ":")
			targets = append(targets, target{name: strings.TrimSpace(name), desc: strings.TrimSpace(desc)})
			skills = skillLines{}
			continue
		}
		if len(targets) > 0 {
			skills.read(line)
		}
	}
	if len(targets) > 0 {
		targets[len(targets)-1].skills = skills.skills
	}
	return targets
}

// toolTarget reads a tool as an agent it may stand for: its name, and its
// description up to the skills listed under it (adk.NewAgentTool lists an
// agent's skills so, in the format of adk.TransferTargetsHeader).
func toolTarget(t *schema.ToolInfo) target {
	var desc []string
	var skills skillLines
	for _, line := range strings.Split(t.Desc, "\n") {
		if !skills.read(line) && len(skills.skills) == 0 {
			desc = append(desc, line)
		}
	}
	return target{name: t.Name, desc: strings.Join(desc, "\n"), skills: skills.skills}
}

// skillLines reads the lines of an agent's skills.
type skillLines struct {
	skills []adk.Skill
	open   bool // the last skill line was read, so tags and examples are its
}

// read reads one line: a skill, or the tags or examples of the skill
// above it. It reports whether the line was one of these.
func (r *skillLines) read(line string) bool {
	trimmed := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(trimmed, "Skill "):
		rest := strings.TrimPrefix(trimmed, "Skill ")
		name, err := strconv.QuotedPrefix(rest)
		if err != nil {
			r.open = false
			return false
		}
		s := adk.Skill{Description: strings.TrimSpace(strings.TrimPrefix(rest[len(name):], ":"))}
		s.Name, _ = strconv.Unquote(name)
		r.skills = append(r.skills, s)
		r.open = true
	case r.open && strings.HasPrefix(trimmed, "Tags: "):
		s := &r.skills[len(r.skills)-1]
		for _, tag := range strings.Split(strings.TrimPrefix(trimmed, "Tags: "), ", ") {
			s.Tags = append(s.Tags, strings.TrimSpace(tag))
		}
	case r.open && strings.HasPrefix(trimmed, "Examples: "):
		s := &r.skills[len(r.skills)-1]
		rest := strings.TrimPrefix(trimmed, "Examples: ")
		for rest != "" {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				break
			}
			e, _ := strconv.Unquote(q)
			s.Examples = append(s.Examples, e)
			rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest[len(q):]), ","))
		}
	default:
		return false
	}
	return true
}
