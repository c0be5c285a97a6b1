package netguard_test

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/a2amesh/a2amesh/a2a/netguard"
)

// The zero Guard refuses a URL that points into the server's own network;
// an allowlist entry admits it.
func ExampleGuard_CheckURL() {
	var strict netguard.Guard
	fmt.Println(strict.CheckURL("https://hooks.example.com/a2a"))
	fmt.Println(strict.CheckURL("http://127.0.0.1:8080/hook"))

	local := netguard.Guard{Allow: []string{"127.0.0.1"}}
	if err := local.Validate(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(local.CheckURL("http://127.0.0.1:8080/hook"))
	// Output:
	// <nil>
	// URL "http://127.0.0.1:8080/hook" points to 127.0.0.1, a loopback address, which this server does not call because it may reach the server's own network; use a public address, or have the server operator add "127.0.0.1" to the allowlist
	// <nil>
}

// DialContext checks the address actually connected to, so an HTTP client
// whose transport dials through the guard cannot be pointed at a loopback
// server, whatever name the URL uses, unless the guard allows it.
func ExampleGuard_DialContext() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	get := func(g *netguard.Guard) error {
		client := &http.Client{Transport: &http.Transport{DialContext: g.DialContext}}
		defer client.CloseIdleConnections()
		resp, err := client.Get(srv.URL)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}

	err := get(new(netguard.Guard))
	fmt.Println(errors.Is(err, netguard.ErrRefused))

	err = get(&netguard.Guard{Allow: []string{"127.0.0.0/8"}})
	fmt.Println(err)
	// Output:
	// true
	// <nil>
}
