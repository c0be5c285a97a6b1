// Command a2agoecho serves the echo agent built on a2a-go v2.4.0 (package
// bench/peers/goecho) with net/http, for side-by-side benchmarks.
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/a2amesh/a2amesh/bench/peers/goecho"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9102", "address to listen on")
	flag.Parse()
	srv := &http.Server{Addr: *addr, Handler: goecho.NewHandler("http://"+*addr+"/", goecho.Options{})}
	log.Fatal(srv.ListenAndServe())
}
