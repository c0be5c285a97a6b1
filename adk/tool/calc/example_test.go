package calc_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk/tool/calc"
)

// Eval evaluates an expression exactly; Format writes the result as a
// person would. % after a number is a percentage, and "of" multiplies.
func ExampleEval() {
	for _, expr := range []string{"(17 + 25) * 3", "12% of 250", "2 ^ 10", "sqrt(144) / 4", "10 % 4", "1 / 3"} {
		v, err := calc.Eval(expr)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(expr, "=", calc.Format(v))
	}
	// An expression that makes no sense says where.
	_, err := calc.Eval("2 * (3 +")
	fmt.Println(err)
	// Output:
	// (17 + 25) * 3 = 126
	// 12% of 250 = 30
	// 2 ^ 10 = 1024
	// sqrt(144) / 4 = 3
	// 10 % 4 = 2
	// 1 / 3 = 0.333333333333
	// calc: at 8: the expression ends too early
}

// The calculate tool evaluates the expression a model gives it.
func ExampleTool() {
	out, err := calc.Tool().Run(context.Background(), `{"expression":"15% of 80"}`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output:
	// 15% of 80 = 12
}
