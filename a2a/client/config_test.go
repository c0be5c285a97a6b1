package client

import (
	"testing"
	"time"
)

// TestDefaultTimeouts: a client made without options bounds its calls and
// streams, so a hung server is an error without any configuration. (The
// external tests show the timeouts at work with shorter values.)
func TestDefaultTimeouts(t *testing.T) {
	c, err := NewFromURL("http://127.0.0.1:1/", Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for _, tc := range []struct {
		name      string
		got, want time.Duration
	}{
		{"stream idle timeout", c.idle, DefaultStreamIdleTimeout},
		{"response timeout", c.respTimeout, DefaultResponseTimeout},
	} {
		if tc.got <= 0 || tc.got != tc.want {
			t.Errorf("%s = %s, want %s", tc.name, tc.got, tc.want)
		}
	}
}
