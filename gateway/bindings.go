package gateway

import (
	"fmt"
	"strings"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
)

// ParseBindings returns the client bindings of the names agent cards give
// them ("JSONRPC", "HTTP+JSON", "GRPC"; case does not matter), in order:
// what a topology's bindings, and the commands' --hop-bindings, name.
func ParseBindings(names ...string) ([]client.Binding, error) {
	out := make([]client.Binding, 0, len(names))
	for _, n := range names {
		switch strings.ToUpper(strings.TrimSpace(n)) {
		case a2a.BindingJSONRPC:
			out = append(out, client.JSONRPC)
		case a2a.BindingHTTPJSON, "HTTPJSON", "REST":
			out = append(out, client.HTTPJSON)
		case a2a.BindingGRPC:
			out = append(out, grpcclient.Binding(grpcclient.Config{}))
		default:
			return nil, fmt.Errorf("binding %q: want %s, %s or %s", n, a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC)
		}
	}
	return out, nil
}
