package deploy_test

import (
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/deploy"
	"github.com/a2amesh/a2amesh/gateway"
)

// The default topology is what `a2amesh up` runs: the router at the entry,
// able to transfer to every other agent. gateway.ParseTopology reads it
// as it reads a topology file of one's own.
func Example() {
	top, err := gateway.ParseTopology(deploy.Topology)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(top.Gateway.Name)
	fmt.Println("entry:", top.Entry.Agent, top.Agents[top.Entry.Agent])
	for _, sub := range top.Entry.SubAgents {
		fmt.Println("  ->", sub.Agent, top.Agents[sub.Agent])
	}
	// Output:
	// Mesh
	// entry: router http://127.0.0.1:9101/
	//   -> weather http://127.0.0.1:9102/
	//   -> chat http://127.0.0.1:9103/
	//   -> math http://127.0.0.1:9104/
	//   -> research http://127.0.0.1:9105/
	//   -> writer http://127.0.0.1:9106/
	//   -> supervisor http://127.0.0.1:9107/
	//   -> planner http://127.0.0.1:9108/
}
