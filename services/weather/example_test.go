package weather_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/services/weather"
)

// answer reads a run's events to the end and returns the last answer an
// agent gave, and the agent that gave it.
func answer(events *adk.AsyncIterator[*adk.AgentEvent]) (agent, text string) {
	for {
		ev, ok := events.Next()
		if !ok {
			return agent, text
		}
		if ev.Err != nil {
			log.Fatalf("%s: %v", ev.AgentName, ev.Err)
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil || ev.Output.MessageOutput.Role != schema.Assistant {
			continue
		}
		msg, err := ev.Output.MessageOutput.GetMessage()
		if err != nil {
			log.Fatal(err)
		}
		if msg.Content != "" {
			agent, text = ev.AgentName, msg.Content
		}
	}
}

// Without an endpoint the weather agent says plainly that it cannot look
// the weather up, rather than make it up. "What's the weather in
// Beijing?" is an example of its skill.
func ExampleNew() {
	ctx := context.Background()
	agent, err := weather.New(ctx, weather.Config{Model: offline.New()})
	if err != nil {
		log.Fatal(err)
	}
	who, text := answer(adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "What's the weather in Beijing?"))
	fmt.Println(who+":", text)
	// Output:
	// WeatherAgent: [offline model] the weather service is offline (no endpoint is configured), so the weather in Beijing is unknown
}

// With an endpoint, the agent asks it for the city's weather
// (GET ?city=<city>) and answers with what it says.
func ExampleNew_endpoint() {
	ctx := context.Background()
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "sunny, 24°C in %s", r.URL.Query().Get("city"))
	}))
	defer endpoint.Close()
	agent, err := weather.New(ctx, weather.Config{Model: offline.New(), Endpoint: endpoint.URL})
	if err != nil {
		log.Fatal(err)
	}
	who, text := answer(adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Is it raining in London?"))
	fmt.Println(who+":", text)
	// Output:
	// WeatherAgent: [offline model] the weather in London: sunny, 24°C in London
}
