package weather_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk/tool/weather"
)

func TestWeather(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("city") == "Atlantis" {
			http.Error(w, "no such city", http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte("sunny, 25°C\n"))
	}))
	defer srv.Close()
	hc := srv.Client()
	defer hc.CloseIdleConnections()
	ctx := context.Background()
	online := weather.Tool(weather.Config{Endpoint: srv.URL, HTTPClient: hc})
	if out, err := online.Run(ctx, `{"city":"New York"}`); err != nil || out != "the weather in New York: sunny, 25°C" {
		t.Fatalf("%q %v", out, err)
	}
	if _, err := online.Run(ctx, `{"city":"Atlantis"}`); err == nil || !strings.Contains(err.Error(), "no such city") {
		t.Fatalf("%v", err)
	}
	out, err := weather.Tool(weather.Config{}).Run(ctx, `{"city":"Beijing"}`)
	if err != nil || !strings.Contains(out, "offline") || !strings.Contains(out, "Beijing") {
		t.Fatalf("%q %v", out, err)
	}
}
