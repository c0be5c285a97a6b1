package offline_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool/calc"
)

// Arithmetic in words or symbols becomes the expression argument of a tool
// that takes one, and adk/tool/calc evaluates it to the value meant.
func TestArithmeticArguments(t *testing.T) {
	ctx := context.Background()
	info, err := calc.Tool().Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := offline.New().WithTools([]*schema.ToolInfo{info})
	for _, tc := range []struct {
		request, expr string
		value         float64
	}{
		{"How much is 12 percent of 250?", "12% of 250", 30},
		{"What's 15% of 80?", "15% of 80", 12},
		{"what is seven times eight", "7 * 8", 56},
		{"What is the square root of 144?", "sqrt(144)", 12},
		{"2 to the power of 10", "2 ^ 10", 1024},
		{"twenty plus 5", "20 + 5", 25},
		{"Calculate (17 + 25) * 3, please.", "(17 + 25) * 3", 126},
		{"divide 100 by 8", "100 / 8", 12.5},
		{"What is twenty-five minus three hundred and six?", "25 - 306", -281},
		{"one plus two plus three", "1 + 2 + 3", 6},
		{"multiply 6 by 7", "6 * 7", 42},
		{"subtract 8 from 20", "20 - 8", 12},
		{"add 3 and 4", "3 + 4", 7},
		{"What is 9 squared?", "9 ^ 2", 81},
		{"the cube root of 27", "cbrt(27)", 3},
		{"3 raised to the power of 4", "3 ^ 4", 81},
		{"what is 2 to the 5th power", "2 ^ 5", 32},
		{"a thousand divided by forty", "1000 / 40", 25},
		{"17 mod 5", "17 % 5", 2},
		{"What is 6 x 7?", "6 * 7", 42},
		{"sum of 2.5 and 4", "2.5 + 4", 6.5},
		{"what is sqrt(2) ^ 2", "sqrt(2) ^ 2", 2},
		{"How much is 7% of 1,200?", "7% of 1200", 84},
		{"max(1,200) plus 1", "max(1,200) + 1", 201},
		{"What is 3 squared plus 4 squared?", "3 ^ 2 + 4 ^ 2", 25},
		{"what's twenty times thirty", "20 * 30", 600},
	} {
		msg, err := m.Generate(ctx, []*schema.Message{schema.UserMessage(tc.request)})
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.ToolCalls) != 1 {
			t.Errorf("%q: no calculation: %s", tc.request, msg.Content)
			continue
		}
		var args calc.Input
		if err := json.Unmarshal([]byte(msg.ToolCalls[0].Function.Arguments), &args); err != nil {
			t.Fatal(err)
		}
		v, err := calc.Eval(args.Expression)
		if args.Expression != tc.expr || err != nil || math.Abs(v-tc.value) > 1e-9 {
			t.Errorf("%q: %q = %v, %v; want %q = %v", tc.request, args.Expression, v, err, tc.expr, tc.value)
		}
	}
}

// Text that has numbers but asks for no arithmetic is no expression for
// the tool ... only its numbers: a tool call still needs the words of the
// tool, which these do not have.
func TestNoArithmetic(t *testing.T) {
	ctx := context.Background()
	info, err := calc.Tool().Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := offline.New().WithTools([]*schema.ToolInfo{info})
	for _, request := range []string{
		"Which one of the 3 cities is warmest?",
		"What's the weather in Paris in 2025?",
		"Tell me about COVID-19 times",
		"Write a report on checkpoints",
	} {
		msg, err := m.Generate(ctx, []*schema.Message{schema.UserMessage(request)})
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.ToolCalls) != 0 {
			t.Errorf("%q: called %s", request, msg.ToolCalls[0].Function.Arguments)
		}
	}
}
