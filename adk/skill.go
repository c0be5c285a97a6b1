package adk

import (
	"context"
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

// SkillsOf returns the skills agent declares: those AgentConfig.Skills gave it, or
// else what it declares itself (a SkillDeclarer, such as a remote agent
// declaring its card's skills); nil when it declares none. The caller must
// not modify them.
func SkillsOf(ctx context.Context, agent Agent) []Skill {
	if d, ok := agent.(SkillDeclarer); ok {
		return d.Skills(ctx)
	}
	return nil
}

// Skills returns the skills AgentConfig.Skills gave the agent, or else those of
// the agent it wraps.
func (a *flowAgent) Skills(ctx context.Context) []Skill {
	if a.skillsSet {
		return a.skills
	}
	return SkillsOf(ctx, a.agent)
}
