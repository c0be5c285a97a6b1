// Package ask is the human-in-the-loop tool: it stops the run with a
// question for a person (an interrupt) and answers with what the person
// gives when the run resumes.
package ask

import (
	"context"
	"strings"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// Input is the tool's argument.
type Input struct {
	Question string `json:"question" desc:"what to ask the person"`
}

// state is what the tool keeps across the interrupt.
type state struct {
	Question string `json:"question"`
}

// Tool returns ask_user. desc says when to use it.
func Tool(desc string) tool.Tool {
	t, err := tool.FromFunc("ask_user", desc, func(ctx context.Context, in Input) (string, error) {
		if answer, ok := adk.GetResumeData[string](ctx); ok {
			q := in.Question
			if st, saved, err := adk.GetInterruptState[state](ctx); err == nil && saved {
				q = st.Question
			}
			return "to " + quote(q) + " the person answered: " + strings.TrimSpace(answer), nil
		}
		return "", adk.StatefulInterrupt(ctx, in.Question, state{Question: in.Question})
	})
	if err != nil {
		panic(err) // the argument type is fixed and valid
	}
	return t
}

func quote(s string) string { return "“" + strings.TrimSpace(s) + "”" }
