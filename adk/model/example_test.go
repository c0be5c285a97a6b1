package model_test

import (
	"fmt"

	"github.com/a2amesh/a2amesh/adk/model"
)

// Callers tune one call with options; a ChatModel implementation reads
// them with Apply, keeping its own default for each field left unset.
func ExampleApply() {
	opts := []model.Option{
		model.WithModel("gpt-4o-mini"),
		model.WithTemperature(0.2),
		model.WithStop("\n\n"),
	}

	o := model.Apply(opts)
	maxTokens := 1024 // the implementation's default
	if o.MaxTokens > 0 {
		maxTokens = o.MaxTokens
	}
	fmt.Println(o.Model, *o.Temperature, maxTokens, fmt.Sprintf("%q", o.Stop))
	// Output:
	// gpt-4o-mini 0.2 1024 ["\n\n"]
}
