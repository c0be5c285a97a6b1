package jsonrpc

import (
	"testing"

	"github.com/a2amesh/a2amesh/internal/fastjson"
	"github.com/a2amesh/a2amesh/internal/fastjson/fastjsontest"
)

// TestDecodeResponseReadsEveryField fills every exported field of a
// Response and checks that DecodeResponse reads encoding/json's encoding
// of it back into it: a field added to Response and not to DecodeResponse
// fails it. The error object is read by encoding/json, the rest without
// it.
func TestDecodeResponseReadsEveryField(t *testing.T) {
	for _, skip := range [][]string{nil, {"jsonrpc.Response.Error"}} {
		want := new(Response)
		if err := (&fastjsontest.Filler{Skip: skip}).Fill(want); err != nil {
			t.Fatal(err)
		}
		b, err := fastjson.AppendReflect(nil, want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeResponse(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if d := fastjsontest.Diff(&got, want); d != "" {
			t.Errorf("DecodeResponse reads a Response differently from encoding/json's encoding:\n%s", d)
		}
	}
}
