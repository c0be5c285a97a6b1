package calc_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk/tool/calc"
)

func TestEval(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want float64
	}{
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"2 ^ 3 ^ 2", 512},
		{"-2 ^ 2", -4},
		{"(-2) ^ 2", 4},
		{"10 % 4", 2},
		{"7 / 2", 3.5},
		{"1e3 + 1_000", 2000},
		{"2.5e-1 * 4", 1},
		{"sqrt(16) + abs(-3)", 7},
		{"min(3, 1, 2) + max(4, 9)", 10},
		{"pow(2, 10)", 1024},
		{"hypot(3, 4)", 5},
		{"round(2.5) + floor(1.9) + ceil(1.1)", 6},
		{"2 * pi", 2 * math.Pi},
		{"ln(e)", 1},
		{"log10(1000)", 3},
		{"6 × 7 ÷ 2", 21},
		{"--3", 3},
		{"+4", 4},
		{"  42  ", 42},
		// The forms the offline model writes for arithmetic in words.
		{"12% of 250", 30},
		{"15% of 80", 12},
		{"7 * 8", 56},
		{"sqrt(144)", 12},
		{"2 ^ 10", 1024},
		{"20 + 5", 25},
		{"(17 + 25) * 3", 126},
		{"100 / 8", 12.5},
		// % after an operand and before no other is a percentage.
		{"5%", 0.05},
		{"50 + 10%", 50.1},
		{"10 % (3)", 1},
		{"10 % pi", 10 - 3*math.Pi},
		{"10%-3", -2.9},
		{"2 * 15% of 80 + 1", 25},
		{"-15% of 80", -12},
		{"(10)% of 50", 5},
		{"200% of 3", 6},
		{"15% of 80 ^ 2", 960},
		{"50% of 50% of 8", 2},
		{"sqrt(16)%", 0.04},
	} {
		got, err := calc.Eval(tc.expr)
		if err != nil || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%q = %v, %v; want %v", tc.expr, got, err, tc.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"", "ends too early"},
		{"1 +", "ends too early"},
		{"(1 + 2", "missing )"},
		{"1 + 2)", `unexpected ")"`},
		{"2 $ 3", `unexpected "$"`},
		{"foo(1)", `unknown function "foo"`},
		{"bar", `unknown name "bar"`},
		{"sqrt(1, 2)", "takes 1 argument"},
		{"1 / 0", "division by zero"},
		{"sqrt(-1)", "not a number"},
		{"15% of", "ends too early"},
		{"of 3", `unknown name "of"`},
		{"3 of 4", `unexpected "of"`},
		{"1.2.3", "is not a number"},
		{strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300), "nests more than"},
		{strings.Repeat("1+", 3000), "longer than"},
	} {
		_, err := calc.Eval(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.expr, err, tc.want)
		}
	}
	var se *calc.SyntaxError
	if _, err := calc.Eval("1 + * 2"); !errors.As(err, &se) || se.Pos != 4 {
		t.Fatalf("%v", err)
	}
}

func TestTool(t *testing.T) {
	out, err := calc.Tool().Run(context.Background(), `{"expression":"(17 + 25) * 3"}`)
	if err != nil || out != "(17 + 25) * 3 = 126" {
		t.Fatalf("%q %v", out, err)
	}
	out, err = calc.Tool().Run(context.Background(), `{"expression":"12% of 250"}`)
	if err != nil || out != "12% of 250 = 30" {
		t.Fatalf("%q %v", out, err)
	}
	if _, err := calc.Tool().Run(context.Background(), `{"expression":"1 +"}`); err == nil {
		t.Fatal("a bad expression evaluated")
	}
}

// FuzzEval: any input gives a value or an error, never a panic or a hang.
func FuzzEval(f *testing.F) {
	for _, s := range []string{"1+2*3", "-(2^3)^-1", "sqrt(min(1,2,3))", "((((1))))", "1e308*10", "2^^3", "max(", "×÷", "1_2.5e+3",
		"15% of 80", "12% of 250 + 1", "5%", "10 % -3", "1 % of % of 2", "2%%", "(3)%(4)", "x% of y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := calc.Eval(expr)
		if err == nil && math.IsNaN(v) {
			t.Fatalf("%q gave NaN without an error", expr)
		}
	})
}
