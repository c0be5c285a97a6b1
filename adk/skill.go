package adk

import (
	"context"
	"slices"
)

// Skill is one thing an agent declares it does, as an A2A card's skill
// says it: other agents' models read an agent's skills, with its name and
// description, to decide what to hand it. Examples are requests the agent
// really handles; tags are short keywords.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Examples    []string `json:"examples,omitempty"`
}

// SkillDeclarer is implemented by agents that declare skills. Skills
// returns what the agent does; the caller must not modify it.
type SkillDeclarer interface {
	Skills(ctx context.Context) []Skill
}

// SkillsOf returns the skills agent declares: those WithSkills gave it, or
// else what it declares itself (a SkillDeclarer, such as a remote agent
// declaring its card's skills); nil when it declares none. The caller must
// not modify them.
func SkillsOf(ctx context.Context, agent Agent) []Skill {
	if d, ok := agent.(SkillDeclarer); ok {
		return d.Skills(ctx)
	}
	return nil
}

// WithSkills makes skills what the agent declares, in place of what the
// agent itself declares (none to clear them): the transfer instructions of
// the agents that can transfer to it list them, and an A2A card made for
// it (bridge.Card) carries them.
func WithSkills(skills ...Skill) AgentOption {
	skills = slices.Clone(skills)
	return AgentOption{func(a *flowAgent) { a.skills, a.skillsSet = skills, true }}
}

// Skills returns the skills WithSkills gave the agent, or else those of
// the agent it wraps.
func (a *flowAgent) Skills(ctx context.Context) []Skill {
	if a.skillsSet {
		return a.skills
	}
	return SkillsOf(ctx, a.agent)
}
