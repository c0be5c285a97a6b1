package push_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
)

// A Sender posts an event to a webhook in the wire form of the client's
// protocol version, with the token the client registered. Its guard
// refuses loopback webhooks, so this one, on 127.0.0.1, is allowed
// explicitly, as an operator would allow an internal webhook host.
func ExampleSender_Notify() {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Println(r.Header.Get("X-A2A-Notification-Token"))
		fmt.Println(string(body))
	}))
	defer hook.Close()

	sender := &push.Sender{Guard: netguard.Guard{Allow: []string{"127.0.0.1"}}}
	cfg := push.Config{TaskPushNotificationConfig: a2a.TaskPushNotificationConfig{
		ID: "hook-1", TaskID: "t1", URL: hook.URL, Token: "secret-token",
	}}
	ev := &a2a.TaskStatusUpdateEvent{
		TaskID: "t1", ContextID: "c1",
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
	}
	if err := sender.Notify(context.Background(), cfg, ev, nil); err != nil {
		log.Fatal(err)
	}
	// Output:
	// secret-token
	// {"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}
}

// The zero Sender refuses the same loopback webhook before connecting.
func ExampleSender_Notify_refused() {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("never called")
	}))
	defer hook.Close()

	var sender push.Sender
	cfg := push.Config{TaskPushNotificationConfig: a2a.TaskPushNotificationConfig{
		ID: "hook-1", TaskID: "t1", URL: hook.URL,
	}}
	ev := a2a.NewStatusUpdate("t1", "c1", a2a.TaskStateCompleted, nil)
	err := sender.Notify(context.Background(), cfg, ev, nil)
	fmt.Println(errors.Is(err, netguard.ErrRefused))
	// Output:
	// true
}

// A ConfigStore keeps each task's webhooks in the order they were first
// registered; Memory is the in-process one.
func ExampleMemory() {
	ctx := context.Background()
	var store push.Memory
	for _, id := range []string{"a", "b"} {
		err := store.Save(ctx, push.Config{TaskPushNotificationConfig: a2a.TaskPushNotificationConfig{
			ID: id, TaskID: "t1", URL: "https://hooks.example.com/" + id,
		}})
		if err != nil {
			log.Fatal(err)
		}
	}
	if err := store.Delete(ctx, "t1", "a"); err != nil {
		log.Fatal(err)
	}
	configs, err := store.List(ctx, "t1")
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range configs {
		fmt.Println(c.ID, c.URL)
	}
	_, err = store.Get(ctx, "t1", "a")
	fmt.Println(errors.Is(err, push.ErrNotFound))
	// Output:
	// b https://hooks.example.com/b
	// true
}

// An agent signs its notifications with its private key and publishes the
// public key in a JWKS; a webhook fetches that key set from the agent's
// JWKS URL (or pins it: Verifier.Keys) and verifies each notification
// before acting on it: signed by the agent, for this webhook, recently,
// with this very body.
func ExampleVerifier() {
	// The agent's side: its key, and the JWKS it publishes.
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	published, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: pub, KeyID: "2025-01", Algorithm: "EdDSA", Use: "sig"}}})
	if err != nil {
		log.Fatal(err)
	}
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(published)
	}))
	defer agent.Close()
	jwksURL := agent.URL + "/.well-known/jwks.json"
	sender := &push.Sender{
		Guard: netguard.Guard{Allow: []string{"127.0.0.1"}},
		Signing: &push.Signing{
			Key: priv, KeyID: "2025-01",
			Issuer:  "https://agent.example.com",
			JWKSURL: jwksURL,
		},
	}

	// The webhook's side: its URL as registered, and where the agent
	// publishes its keys.
	type delivery struct {
		signature string
		body      []byte
	}
	delivered := make(chan delivery, 1)
	mux := http.NewServeMux()
	hook := httptest.NewServer(mux)
	defer hook.Close()
	verifier := &push.Verifier{
		JWKSURL:  jwksURL,
		Audience: []string{hook.URL + "/hook"},
		Issuers:  []string{"https://agent.example.com"},
	}
	mux.HandleFunc("POST /hook", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		claims, err := verifier.VerifyRequest(r, body)
		if err != nil {
			http.Error(w, "unauthenticated notification", http.StatusUnauthorized)
			return
		}
		fmt.Println("verified: task", claims.TaskID, "from", claims.Issuer)
		delivered <- delivery{r.Header.Get(push.SignatureHeader), body}
	})

	cfg := push.Config{TaskPushNotificationConfig: a2a.TaskPushNotificationConfig{
		ID: "hook-1", TaskID: "t1", URL: hook.URL + "/hook",
	}}
	ev := a2a.NewStatusUpdate("t1", "c1", a2a.TaskStateCompleted, nil)
	if err := sender.Notify(context.Background(), cfg, ev, nil); err != nil {
		log.Fatal(err)
	}

	// Someone who captured the request replays its signature with another
	// body.
	d := <-delivered
	forged := bytes.Replace(d.body, []byte("COMPLETED"), []byte("FAILED"), 1)
	_, err = verifier.Verify(context.Background(), d.signature, forged)
	fmt.Println("forged body refused:", errors.Is(err, push.ErrBodyMismatch))
	// Output:
	// verified: task t1 from https://agent.example.com
	// forged body refused: true
}
