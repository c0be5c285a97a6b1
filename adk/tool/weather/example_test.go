package weather_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/a2amesh/a2amesh/adk/tool/weather"
)

// Without an endpoint the tool says that it cannot know the weather,
// rather than make it up.
func ExampleTool() {
	out, err := weather.Tool(weather.Config{}).Run(context.Background(), `{"city":"Oslo"}`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output:
	// the weather service is offline (no endpoint is configured), so the weather in Oslo is unknown
}

// With an endpoint, the tool asks it for the city's weather (GET
// ?city=<city>) and answers with what it says.
func ExampleTool_endpoint() {
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "light rain, 9°C in %s", r.URL.Query().Get("city"))
	}))
	defer endpoint.Close()
	hc := endpoint.Client()
	defer hc.CloseIdleConnections()
	out, err := weather.Tool(weather.Config{Endpoint: endpoint.URL, HTTPClient: hc}).Run(context.Background(), `{"city":"Oslo"}`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output:
	// the weather in Oslo: light rain, 9°C in Oslo
}
