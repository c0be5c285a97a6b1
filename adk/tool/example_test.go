package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// The argument struct is the tool's schema: json tags name the arguments,
// desc tags describe them, enum tags restrict them, and omitempty makes
// one optional.
type forecastArgs struct {
	City  string `json:"city" desc:"the city to forecast"`
	Days  int    `json:"days,omitempty" desc:"how many days ahead, 1 by default"`
	Units string `json:"units,omitempty" enum:"metric,imperial"`
}

type forecast struct {
	City string   `json:"city"`
	Days []string `json:"days"`
}

func ExampleFromFunc() {
	ctx := context.Background()
	weather, err := tool.FromFunc("get_forecast", "Forecasts the weather of a city.",
		func(ctx context.Context, in forecastArgs) (forecast, error) {
			out := forecast{City: in.City}
			for range max(in.Days, 1) {
				out.Days = append(out.Days, "sunny")
			}
			return out, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	info, err := weather.Info(ctx)
	if err != nil {
		log.Fatal(err)
	}
	params, err := json.MarshalIndent(info.Params, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Name+":", info.Desc)
	fmt.Println(string(params))

	// A model calls the tool with JSON arguments; a result that is not a
	// string goes back to it as JSON.
	result, err := weather.Run(ctx, `{"city":"Lisbon","days":2}`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result)
	// Output:
	// get_forecast: Forecasts the weather of a city.
	// {
	//   "type": "object",
	//   "properties": {
	//     "city": {
	//       "type": "string",
	//       "description": "the city to forecast"
	//     },
	//     "days": {
	//       "type": "integer",
	//       "description": "how many days ahead, 1 by default"
	//     },
	//     "units": {
	//       "type": "string",
	//       "enum": [
	//         "metric",
	//         "imperial"
	//       ]
	//     }
	//   },
	//   "required": [
	//     "city"
	//   ]
	// }
	// {"city":"Lisbon","days":["sunny","sunny"]}
}

// A Node runs the calls of one model turn and answers each with a tool
// message, a failed call with a result that tells the model what went
// wrong.
func ExampleNode_Run() {
	ctx := context.Background()
	upper, err := tool.FromFunc("upper", "Upper-cases text.",
		func(ctx context.Context, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return strings.ToUpper(in.Text), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	node, err := tool.NewNode(ctx, []tool.Tool{upper})
	if err != nil {
		log.Fatal(err)
	}
	results, err := node.Run(ctx, []schema.ToolCall{
		{ID: "call_1", Function: schema.FunctionCall{Name: "upper", Arguments: `{"text":"quiet"}`}},
		{ID: "call_2", Function: schema.FunctionCall{Name: "lower", Arguments: `{}`}},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range results {
		fmt.Println(m.ToolCallID, m.Content)
	}
	// Output:
	// call_1 QUIET
	// call_2 error: there is no tool "lower"; the tools are upper
}
