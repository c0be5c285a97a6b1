package gateway

import (
	"testing"

	"github.com/a2amesh/a2amesh/deploy"
)

// FuzzParseTopology: a topology file is written by a person; whatever it
// holds, ParseTopology returns a topology that passes Check or an error,
// and never panics.
func FuzzParseTopology(f *testing.F) {
	f.Add(deploy.Topology)
	for _, s := range []string{
		"version: 1\nagents: {a: 'http://127.0.0.1:1/'}\nentry: {agent: a}\n",
		"version: 1\nagents: {a: x, b: y}\nentry: {sequential: {name: S, steps: [{agent: a}, {loop: {name: L, steps: [{agent: b}], maxIterations: 2}}]}}",
		"version: 1\nagents: {a: x}\nentry: {supervisor: {supervisor: {agent: a}, subAgents: [{agent: a}]}}",
		"version: 1\nagents: {a: x}\nentry: {planExecute: {name: P, executor: {agent: a}}}",
		"version: 1\nentry: {agent: a, subAgents: [{agent: a, subAgents: [{}]}]}",
		"{\"version\":1,\"entry\":{\"parallel\":{\"name\":\"p\",\"steps\":[null]}}}",
		"version: 1\nimports: {r: {url: 'https://a.team.example/', jwksUrl: 'https://a.team.example/j', rateLimit: {perSecond: 1}}}\nfederation: {allowHosts: ['*.team.example']}\nentry: {agent: r}",
		"version: 1\nimports: {r: null}\nentry: {agent: r}",
		"version: 1\nagents: {a: x, b: y}\nentry: {agent: a, subAgents: [{agent: b}]}\ncredentials: {a: {kind: forward}, b: {kind: apiKey, header: X-Key, secretEnv: K}}",
		"version: 1\nagents: {a: x}\nentry: {agent: a}\ncredentials: {a: {kind: exchange, tokenURL: 'https://idp/token', clientID: gw, secretFile: /s, audience: a, subjectTokenType: jwt}}",
		"version: 1\nagents: {a: x}\nentry: {agent: a}\ncredentials: {a: {kind: clientCredentials, tokenURL: 'http://[::1', clientID: gw, secretEnv: S, scopes: [a, b]}}",
		"version: 1\nagents: {a: x}\nentry: {agent: a}\ncredentials: {a: null, b: {kind: bearer}}",
		"version: [", "&a [*a, *a]", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		top, err := ParseTopology(b)
		if err != nil {
			return
		}
		if err := top.Check(); err != nil {
			t.Fatalf("ParseTopology accepted a topology Check refuses: %v", err)
		}
	})
}
