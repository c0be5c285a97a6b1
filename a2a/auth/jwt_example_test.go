package auth_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/a2a/auth"
)

func ExampleNewJWT() {
	a, err := auth.NewJWT(auth.JWTConfig{
		Scheme:   "oidc", // the card's security scheme
		Issuer:   "https://accounts.example.com",
		Audience: "https://agent.example.com",
		JWKSURL:  "https://accounts.example.com/.well-known/jwks.json",
	})
	if err != nil {
		log.Fatal(err)
	}
	// A request without a bearer token: the Gate tries the card's next
	// scheme, or answers 401 with the challenge.
	_, err = a.Authenticate(context.Background(), auth.Credentials{})
	fmt.Println(errors.Is(err, auth.ErrNoCredentials))
	fmt.Println(a.Challenge(err))
	// Output:
	// true
	// Bearer realm="oidc"
}
