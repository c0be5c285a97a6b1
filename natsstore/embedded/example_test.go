package embedded_test

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

// Start runs a NATS server with JetStream in the process and returns once
// it takes connections; its data stays in Dir, so a server started again
// on the same Dir and Port is the same server to its clients.
func ExampleStart() {
	dir, err := os.MkdirTemp("", "nats")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := embedded.Start(embedded.Config{Dir: dir, Port: -1}) // -1: a free port
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	// The port is a different one at every start.
	fmt.Println("ready at", strings.Replace(srv.URL(), strconv.Itoa(srv.Port()), "<port>", 1))
	// Output:
	// ready at nats://127.0.0.1:<port>
}
