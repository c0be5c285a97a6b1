package credentials_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/credentials"
)

// A token of the agent's own, in a file that a Kubernetes Secret mounts:
// each call sends the file's current content.
func ExampleBearer() {
	dir, err := os.MkdirTemp("", "secret")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte("s3cr3t-token\n"), 0o600); err != nil {
		log.Fatal(err)
	}

	creds := credentials.Bearer(credentials.FromFile(path))
	h, err := creds.Header(context.Background())
	fmt.Println(h.Get("Authorization"), err)
	// Output: Bearer s3cr3t-token <nil>
}

// A gateway calls the weather agent on behalf of its caller, with a token
// for the weather agent that its IdP issues in exchange for the caller's.
func ExampleNewExchange() {
	x, err := credentials.NewExchange(credentials.ExchangeConfig{
		TokenURL:     "https://idp.example.com/oauth2/token",
		ClientID:     "gateway",
		ClientSecret: credentials.FromFile("/var/run/secrets/gateway/client-secret"),
		Audience:     "weather",
	})
	if err != nil {
		log.Fatal(err)
	}
	// Each call made with a context carrying the caller (the Principal a
	// server's Gate admitted) is sent with the caller's exchanged token.
	c, err := client.NewFromURL("http://weather.mesh.svc:9102/", client.Config{Credentials: x})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}
