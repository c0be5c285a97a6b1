package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Policy says who may call which A2A method. The rules that name a method
// apply to it, else those that name "*"; a caller must satisfy at least
// one of the rules that apply. A method no rule names, where no rule names
// "*", is open to every caller the Gate authenticates. The zero Policy
// allows everything.
type Policy struct {
	Rules []Rule `json:"rules,omitempty"`
	// DryRun admits what the rules would refuse and logs it in the audit
	// log as "refused in dry run", to try a policy on live traffic first.
	DryRun bool `json:"dryRun,omitempty"`
}

// Rule grants methods to the callers that have every scope and claim it
// lists. A rule with neither grants its methods to any authenticated
// caller, and to anonymous ones where the Gate admits them.
type Rule struct {
	// Methods are A2A 1.0 method names ("SendMessage", "GetTask",
	// "CancelTask", ...), or "*" for all.
	Methods []string `json:"methods"`
	// Scopes must all have been granted (Principal.Scopes).
	Scopes []string `json:"scopes,omitempty"`
	// Claims must all hold: the claim is the string, or an array holding
	// it.
	Claims map[string]string `json:"claims,omitempty"`
}

func (p *Policy) validate() error {
	for i, r := range p.Rules {
		if len(r.Methods) == 0 {
			return fmt.Errorf("auth: policy rule %d names no methods (use \"*\" for all)", i)
		}
		for _, m := range r.Methods {
			if m == "" {
				return fmt.Errorf("auth: policy rule %d names an empty method", i)
			}
		}
	}
	return nil
}

// allows returns nil if p lets the principal call method, else an error
// saying what is missing (without naming any resource).
func (p *Policy) allows(method string, who *Principal) error {
	name := method
	if !slices.ContainsFunc(p.Rules, func(r Rule) bool { return slices.Contains(r.Methods, method) }) {
		name = "*"
	}
	var missing []string
	for _, r := range p.Rules {
		if !slices.Contains(r.Methods, name) {
			continue
		}
		m := r.missing(who)
		if m == "" {
			return nil
		}
		missing = append(missing, m)
	}
	if missing == nil {
		return nil
	}
	return fmt.Errorf("%w: %s needs %s", ErrForbidden, method, strings.Join(missing, ", or "))
}

// missing says what the principal lacks to satisfy r, "" when nothing.
func (r *Rule) missing(who *Principal) string {
	var need []string
	for _, s := range r.Scopes {
		if who == nil || !who.HasScope(s) {
			need = append(need, "scope "+s)
		}
	}
	for c, v := range r.Claims {
		if who == nil || !claimHolds(who.Claims[c], v) {
			need = append(need, fmt.Sprintf("claim %s=%s", c, v))
		}
	}
	if len(need) == 0 {
		return ""
	}
	slices.Sort(need)
	return strings.Join(need, " and ")
}

// claimHolds reports whether a claim's value is want, or an array holding
// it.
func claimHolds(v any, want string) bool {
	switch v := v.(type) {
	case string:
		return v == want
	case []string:
		return slices.Contains(v, want)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok && s == want {
				return true
			}
		}
	}
	return false
}
