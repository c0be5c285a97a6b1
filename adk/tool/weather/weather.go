// Package weather is a tool that looks up the weather of a city at an HTTP
// endpoint the deployment names. Without one it says plainly that it is
// offline, rather than make weather up.
package weather

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/adk/tool"
)

// Config configures the tool.
type Config struct {
	// Endpoint is queried as Endpoint?city=<city> and answers with text
	// (the first 2 KiB are used). Empty means offline.
	Endpoint string
	// HTTPClient defaults to a client with a 10 s timeout.
	HTTPClient *http.Client
}

// Input is the tool's argument.
type Input struct {
	City string `json:"city" desc:"the city, e.g. Beijing"`
}

// Tool returns get_weather.
func Tool(cfg Config) tool.Tool {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	t, err := tool.FromFunc("get_weather", "Get the current weather of a city: conditions, temperature, rain, wind", func(ctx context.Context, in Input) (string, error) {
		city := strings.TrimSpace(in.City)
		if city == "" {
			return "", fmt.Errorf("get_weather needs a city")
		}
		if cfg.Endpoint == "" {
			return "the weather service is offline (no endpoint is configured), so the weather in " + city + " is unknown", nil
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Endpoint+"?city="+url.QueryEscape(city), nil)
		if err != nil {
			return "", fmt.Errorf("weather endpoint: %w", err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", fmt.Errorf("weather endpoint: %w", err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 2048))
		if err != nil {
			return "", fmt.Errorf("weather endpoint: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("weather endpoint: %s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
		return "the weather in " + city + ": " + strings.TrimSpace(string(body)), nil
	})
	if err != nil {
		panic(err) // the argument type is fixed and valid
	}
	return t
}
