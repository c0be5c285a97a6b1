package cardsign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
)

// decodeCard reads a card's JSON as a client does: the 1.0 decoder, and
// the one a2a/client's Resolve uses (which also reads 0.3 cards).
func decodeCards(t *testing.T, data []byte) map[string]*a2a.AgentCard {
	t.Helper()
	var card a2a.AgentCard
	if err := a2a.Unmarshal(data, &card); err != nil {
		t.Fatalf("a2a.Unmarshal: %v", err)
	}
	resolved, err := a2av03.ParseCard(data)
	if err != nil {
		t.Fatalf("a2av03.ParseCard: %v", err)
	}
	return map[string]*a2a.AgentCard{"a2a.Unmarshal": &card, "a2av03.ParseCard": resolved}
}

// reformat spells data's JSON differently: members in reverse order,
// indented, every non-ASCII character and slash escaped.
func reformat(t *testing.T, data []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writeReversed(&b, v, "\n")
	var out strings.Builder
	for _, r := range b.String() {
		switch {
		case r == '/':
			out.WriteString(`\/`)
		case r > 0x7e && r < 0x10000:
			out.WriteString(`\u` + hex4(r))
		default:
			out.WriteRune(r)
		}
	}
	return []byte(out.String())
}

func hex4(r rune) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf]})
}

func writeReversed(b *bytes.Buffer, v any, indent string) {
	switch x := v.(type) {
	case map[string]any:
		names := make([]string, 0, len(x))
		for name := range x {
			names = append(names, name)
		}
		// Reverse of encoding/json's order.
		for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
			names[i], names[j] = names[j], names[i]
		}
		sortDesc(names)
		b.WriteString("{")
		for i, name := range names {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(indent + "  ")
			k, _ := json.Marshal(name)
			b.Write(k)
			b.WriteString(" : ")
			writeReversed(b, x[name], indent+"  ")
		}
		b.WriteString(indent + "}")
	case []any:
		b.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				b.WriteString(" , ")
			}
			writeReversed(b, e, indent+"  ")
		}
		b.WriteString(" ]")
	case float64:
		// Another spelling of the same double.
		s, _ := json.Marshal(x)
		if !bytes.ContainsAny(s, ".eE") {
			s = append(s, ".000"...)
		}
		b.Write(s)
	default:
		s, _ := json.Marshal(x)
		b.Write(s)
	}
}

func sortDesc(ss []string) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j] > ss[j-1]; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, k := range testKeys(t) {
		t.Run(k.alg, func(t *testing.T) {
			card := testCard()
			signed, err := SignCard(card, k.signer, "key-"+k.alg, SignOptions{JWKSURL: "https://planner.example.com/.well-known/jwks.json"})
			if err != nil {
				t.Fatalf("SignCard: %v", err)
			}
			if len(card.Signatures) != 0 || len(signed.Signatures) != 1 {
				t.Fatalf("SignCard changed the card or added %d signatures", len(signed.Signatures))
			}
			sig := signed.Signatures[0]
			header, err := base64.RawURLEncoding.DecodeString(sig.Protected)
			if err != nil {
				t.Fatalf("protected header: %v", err)
			}
			want := `{"alg":"` + k.alg + `","jku":"https://planner.example.com/.well-known/jwks.json","kid":"key-` + k.alg + `","typ":"JOSE"}`
			if string(header) != want {
				t.Errorf("protected header %s, want %s", header, want)
			}
			if _, err := base64.RawURLEncoding.DecodeString(sig.Signature); err != nil || sig.Signature == "" {
				t.Errorf("signature %q is not base64url: %v", sig.Signature, err)
			}

			v := pinnedVerifier(t, "key-"+k.alg, k.signer)
			if err := v.Verify(ctx, signed); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			// What a client that fetched the card sees: its JSON, as
			// served and as spelled by another encoder, decoded.
			served, err := a2a.AppendJSON(nil, signed)
			if err != nil {
				t.Fatal(err)
			}
			for form, data := range map[string][]byte{"served": served, "reformatted": reformat(t, served)} {
				for decoder, got := range decodeCards(t, data) {
					if err := v.Verify(ctx, got); err != nil {
						t.Errorf("%s JSON through %s: Verify: %v", form, decoder, err)
					}
				}
				if err := v.VerifyJSON(ctx, data); err != nil {
					t.Errorf("%s JSON: VerifyJSON: %v", form, err)
				}
			}
		})
	}
}

// TestSignatureVerifiesOverPayload checks the signature against the
// specification's signing input directly, with go-jose out of the way.
func TestSignatureVerifiesOverPayload(t *testing.T) {
	key := newECKey(t)
	card := testCard()
	sig, err := Sign(card, key, "k1", SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := Payload(card)
	if err != nil {
		t.Fatal(err)
	}
	input := sig.Protected + "." + base64.RawURLEncoding.EncodeToString(payload)
	raw, err := base64.RawURLEncoding.DecodeString(sig.Signature)
	if err != nil || len(raw) != 64 {
		t.Fatalf("ES256 signature of %d bytes: %v", len(raw), err)
	}
	digest := sha256.Sum256([]byte(input))
	r, s := new(big.Int).SetBytes(raw[:32]), new(big.Int).SetBytes(raw[32:])
	if !ecdsa.Verify(&key.PublicKey, digest[:], r, s) {
		t.Fatal("the signature does not verify over BASE64URL(protected) '.' BASE64URL(payload)")
	}
}

func TestPayload(t *testing.T) {
	card := testCard()
	card.Signatures = []a2a.AgentCardSignature{{Protected: "x", Signature: "y"}}
	card.Capabilities.Extensions[0].Params["empty"] = map[string]any{"a": "", "b": []any{}, "c": nil}
	card.Capabilities.Extensions[0].Params["zero"] = 0.0
	payload, err := Payload(card)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{`"signatures"`, `"empty"`, `"tenant":""`} {
		if bytes.Contains(payload, []byte(absent)) {
			t.Errorf("payload holds %s: %s", absent, payload)
		}
	}
	for _, present := range []string{`"strict":false`, `"zero":0`, `"tiers":[1,10,1e+21]`, `"name":"planner"`, `<&>`} {
		if !bytes.Contains(payload, []byte(present)) {
			t.Errorf("payload lacks %s: %s", present, payload)
		}
	}
	if again, err := Canonicalize(payload); err != nil || !bytes.Equal(again, payload) {
		t.Errorf("payload is not canonical: %v", err)
	}
}

// The fragment of section 8.4.1's example, canonicalized as the SDKs that
// sign cards do (see the package documentation): the explicitly false
// flags stay, the empty description and skills go, where the
// specification's example keeps them.
func TestPayloadOfSpecExample(t *testing.T) {
	fragment := `{
  "name": "Example Agent",
  "description": "",
  "capabilities": {
    "streaming": false,
    "pushNotifications": false,
    "extensions": []
  },
  "skills": []
}`
	got, err := payloadOf([]byte(fragment))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}`
	const spec = `{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s\n(the specification's example: %s)", got, want, spec)
	}
}

func TestTamperedCardFails(t *testing.T) {
	ctx := context.Background()
	key := newEdKey(t)
	v := pinnedVerifier(t, "k1", key)
	signed, err := SignCard(testCard(), key, "k1", SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	served, err := a2a.AppendJSON(nil, signed)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		tamper func(c *a2a.AgentCard)
	}{
		{"name changed", func(c *a2a.AgentCard) { c.Name = "planner2" }},
		{"description changed by one character", func(c *a2a.AgentCard) { c.Description = strings.Replace(c.Description, "routes", "route", 1) }},
		{"interface URL changed", func(c *a2a.AgentCard) { c.SupportedInterfaces[0].URL = "https://evil.example.com/a2a" }},
		{"interface added", func(c *a2a.AgentCard) {
			c.SupportedInterfaces = append(c.SupportedInterfaces, a2a.AgentInterface{URL: "http://evil.example.com", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.Version})
		}},
		{"interfaces reordered", func(c *a2a.AgentCard) {
			c.SupportedInterfaces[0], c.SupportedInterfaces[1] = c.SupportedInterfaces[1], c.SupportedInterfaces[0]
		}},
		{"tenant removed", func(c *a2a.AgentCard) { c.SupportedInterfaces[1].Tenant = "" }},
		{"skill removed", func(c *a2a.AgentCard) { c.Skills = c.Skills[:1] }},
		{"skill tag added", func(c *a2a.AgentCard) { c.Skills[0].Tags = append(c.Skills[0].Tags, "admin") }},
		{"skill security requirement removed", func(c *a2a.AgentCard) { c.Skills[1].SecurityRequirements = nil }},
		{"capability set", func(c *a2a.AgentCard) { c.Capabilities.PushNotifications = true }},
		{"capability cleared", func(c *a2a.AgentCard) { c.Capabilities.Streaming = false }},
		{"extension made optional", func(c *a2a.AgentCard) { c.Capabilities.Extensions[0].Required = false }},
		{"extension param number changed", func(c *a2a.AgentCard) { c.Capabilities.Extensions[0].Params["max"] = 2500.25 }},
		{"extension param added", func(c *a2a.AgentCard) { c.Capabilities.Extensions[0].Params["debug"] = true }},
		{"field added", func(c *a2a.AgentCard) { c.Capabilities.ExtendedAgentCard = true }},
		{"field removed", func(c *a2a.AgentCard) { c.IconURL = "" }},
		{"provider changed", func(c *a2a.AgentCard) { c.Provider.Organization = "Evil Travel" }},
		{"security scheme swapped", func(c *a2a.AgentCard) {
			c.SecuritySchemes["bearer"] = a2a.SecurityScheme{APIKey: &a2a.APIKeySecurityScheme{Location: "query", Name: "key"}}
		}},
		{"scope widened", func(c *a2a.AgentCard) { c.SecurityRequirements[0].Schemes["oauth"] = []string{"plan:write"} }},
		{"security requirement with scopes removed", func(c *a2a.AgentCard) { c.SecurityRequirements = nil }},
		{"input mode added", func(c *a2a.AgentCard) { c.DefaultInputModes = append(c.DefaultInputModes, "image/png") }},
		{"version changed", func(c *a2a.AgentCard) { c.Version = "2.1.1" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			card := decodeCards(t, served)["a2a.Unmarshal"]
			tc.tamper(card)
			err := v.Verify(ctx, card)
			if !errors.Is(err, ErrBadSignature) {
				t.Fatalf("Verify of a tampered card: %v, want ErrBadSignature", err)
			}
			if !strings.Contains(err.Error(), `"`+card.Name+`"`) {
				t.Errorf("error %q does not name the card", err)
			}
			tampered, err := a2a.AppendJSON(nil, card)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.VerifyJSON(ctx, tampered); !errors.Is(err, ErrBadSignature) {
				t.Errorf("VerifyJSON of the tampered JSON: %v, want ErrBadSignature", err)
			}
		})
	}

	// A member a2a.AgentCard does not model is not in the card Verify
	// sees, but VerifyJSON checks the JSON as received.
	var doc map[string]any
	if err := json.Unmarshal(served, &doc); err != nil {
		t.Fatal(err)
	}
	doc["injected"] = "https://evil.example.com"
	added, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.VerifyJSON(ctx, added); !errors.Is(err, ErrBadSignature) {
		t.Errorf("VerifyJSON with a member added: %v, want ErrBadSignature", err)
	}
	if err := v.Verify(ctx, decodeCards(t, added)["a2a.Unmarshal"]); err != nil {
		t.Errorf("Verify of the decoded card, which does not hold the added member: %v", err)
	}
}

// A peer may set an optional flag explicitly to false; its payload holds
// it, a decoded a2a.AgentCard cannot. VerifyJSON verifies such a card.
func TestVerifyJSONKeepsExplicitFalse(t *testing.T) {
	ctx := context.Background()
	key := newECKey(t)
	v := pinnedVerifier(t, "peer", key)
	doc := []byte(`{"name":"peer","description":"d","version":"1","supportedInterfaces":[{"url":"https://peer.example.com","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true,"pushNotifications":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`)
	payload, err := payloadOf(bytes.Clone(doc))
	if err != nil {
		t.Fatal(err)
	}
	sig := signPayload(t, key, `{"alg":"ES256","kid":"peer","typ":"JOSE"}`, payload)
	var obj map[string]any
	if err := json.Unmarshal(doc, &obj); err != nil {
		t.Fatal(err)
	}
	obj["signatures"] = []any{map[string]any{"protected": sig.Protected, "signature": sig.Signature}}
	signed, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.VerifyJSON(ctx, signed); err != nil {
		t.Errorf("VerifyJSON: %v", err)
	}
	if err := v.Verify(ctx, decodeCards(t, signed)["a2a.Unmarshal"]); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Verify of the decoded card, which lost pushNotifications=false: %v, want ErrBadSignature", err)
	}
}

// signPayload signs payload under a protected header of the test's own,
// as another implementation (or a forger) would.
func signPayload(t *testing.T, key *ecdsa.PrivateKey, header string, payload []byte) a2a.AgentCardSignature {
	t.Helper()
	protected := base64.RawURLEncoding.EncodeToString([]byte(header))
	digest := sha256.Sum256([]byte(protected + "." + base64.RawURLEncoding.EncodeToString(payload)))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 64)
	r.FillBytes(raw[:32])
	s.FillBytes(raw[32:])
	return a2a.AgentCardSignature{Protected: protected, Signature: base64.RawURLEncoding.EncodeToString(raw)}
}

func TestVerifyRefuses(t *testing.T) {
	ctx := context.Background()
	key := newECKey(t)
	card := testCard()
	payload, err := Payload(card)
	if err != nil {
		t.Fatal(err)
	}
	good, err := Sign(card, key, "k1", SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := pinnedVerifier(t, "k1", key)
	b64 := base64.RawURLEncoding.EncodeToString
	signingInput := func(header string) (string, []byte) {
		protected := b64([]byte(header))
		return protected, []byte(protected + "." + b64(payload))
	}
	// hmacForgery signs with HS256 using a representation of the public
	// key as the secret: the classic attack on verifiers that let the
	// header pick the algorithm.
	hmacForgery := func(secret []byte) a2a.AgentCardSignature {
		protected, input := signingInput(`{"alg":"HS256","kid":"k1","typ":"JOSE"}`)
		mac := hmac.New(sha256.New, secret)
		mac.Write(input)
		return a2a.AgentCardSignature{Protected: protected, Signature: b64(mac.Sum(nil))}
	}
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := PublicJWKS(PublicKey{ID: "k1", Key: &key.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	other := newECKey(t)
	rsaSigned, err := Sign(card, rsaKey(), "k1", SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	noneProtected, _ := signingInput(`{"alg":"none","kid":"k1"}`)
	var withoutKid, withCrit, withB64, dupAlg, unknownKid a2a.AgentCardSignature
	withoutKid = signPayload(t, key, `{"alg":"ES256","typ":"JOSE"}`, payload)
	withCrit = signPayload(t, key, `{"alg":"ES256","kid":"k1","crit":["exp"],"exp":1}`, payload)
	withB64 = signPayload(t, key, `{"alg":"ES256","kid":"k1","b64":true,"crit":["b64"]}`, payload)
	dupAlg = signPayload(t, key, `{"alg":"HS256","alg":"ES256","kid":"k1"}`, payload)
	unknownKid = signPayload(t, key, `{"alg":"ES256","kid":"k2"}`, payload)
	otherSigned, err := Sign(card, other, "k1", SignOptions{})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		sigs []a2a.AgentCardSignature
		want error
		why  string
	}{
		{"unsigned", nil, ErrUnsigned, "not signed"},
		{"unknown kid", []a2a.AgentCardSignature{unknownKid}, ErrUnknownKey, `kid "k2"`},
		{"wrong key under the trusted kid", []a2a.AgentCardSignature{otherSigned}, ErrBadSignature, "does not verify"},
		{"RSA signature claiming an EC key's kid", []a2a.AgentCardSignature{rsaSigned}, ErrBadSignature, "does not fit"},
		{"alg none, empty signature", []a2a.AgentCardSignature{{Protected: noneProtected}}, ErrBadSignature, `alg "none"`},
		{"HS256 keyed with the public key's DER", []a2a.AgentCardSignature{hmacForgery(spki)}, ErrBadSignature, `alg "HS256"`},
		{"HS256 keyed with the public key's PEM", []a2a.AgentCardSignature{hmacForgery(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki}))}, ErrBadSignature, `alg "HS256"`},
		{"HS256 keyed with the JWKS", []a2a.AgentCardSignature{hmacForgery(jwk)}, ErrBadSignature, `alg "HS256"`},
		{"duplicate alg in the header", []a2a.AgentCardSignature{dupAlg}, ErrBadSignature, "duplicate"},
		{"no kid", []a2a.AgentCardSignature{withoutKid}, ErrBadSignature, "no kid"},
		{"crit", []a2a.AgentCardSignature{withCrit}, ErrBadSignature, `"crit"`},
		{"b64", []a2a.AgentCardSignature{withB64}, ErrBadSignature, `"crit"`},
		{"protected not base64url", []a2a.AgentCardSignature{{Protected: "e30=", Signature: good.Signature}}, ErrBadSignature, "base64url"},
		{"protected not JSON", []a2a.AgentCardSignature{{Protected: b64([]byte("alg=ES256")), Signature: good.Signature}}, ErrBadSignature, "protected header"},
		{"protected an array", []a2a.AgentCardSignature{{Protected: b64([]byte(`["ES256"]`)), Signature: good.Signature}}, ErrBadSignature, "not an object"},
		{"signature truncated", []a2a.AgentCardSignature{{Protected: good.Protected, Signature: good.Signature[:40]}}, ErrBadSignature, ""},
		{"signature empty", []a2a.AgentCardSignature{{Protected: good.Protected}}, ErrBadSignature, ""},
		{"signature not base64url", []a2a.AgentCardSignature{{Protected: good.Protected, Signature: "!!" + good.Signature[2:]}}, ErrBadSignature, "base64url"},
		{"signature padded", []a2a.AgentCardSignature{{Protected: good.Protected, Signature: good.Signature + "=="}}, ErrBadSignature, "base64url"},
		{"line break in the protected header", []a2a.AgentCardSignature{{Protected: good.Protected[:8] + "\n" + good.Protected[8:], Signature: good.Signature}}, ErrBadSignature, "base64url"},
		{"signature respelled with other unused low bits", []a2a.AgentCardSignature{{Protected: good.Protected, Signature: flipLowBit(good.Signature)}}, ErrBadSignature, "base64url"},
		{"a valid signature of another card", []a2a.AgentCardSignature{mustSign(t, &a2a.AgentCard{Name: "other"}, key)}, ErrBadSignature, "does not verify"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *card
			c.Signatures = tc.sigs
			err := v.Verify(ctx, &c)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.why) || !strings.Contains(msg, `card "planner"`) {
				t.Errorf("error %q: want it to name the card and say %q", msg, tc.why)
			}
			var pub map[string]any
			if err := json.Unmarshal(jwk, &pub); err != nil {
				t.Fatal(err)
			}
			x := pub["keys"].([]any)[0].(map[string]any)["x"].(string)
			if strings.Contains(msg, x) || strings.Contains(msg, b64(spki)[:16]) {
				t.Errorf("error %q shows key material", msg)
			}
		})
	}

	t.Run("one good signature among bad ones", func(t *testing.T) {
		c := *card
		c.Signatures = []a2a.AgentCardSignature{unknownKid, hmacForgery(spki), good}
		if err := v.Verify(ctx, &c); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	})
	t.Run("every signature bad: each reason", func(t *testing.T) {
		c := *card
		c.Signatures = []a2a.AgentCardSignature{unknownKid, otherSigned}
		err := v.Verify(ctx, &c)
		if !errors.Is(err, ErrUnknownKey) || !errors.Is(err, ErrBadSignature) {
			t.Fatalf("Verify: %v, want both ErrUnknownKey and ErrBadSignature", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "signature 0: unknown key") || !strings.Contains(msg, "signature 1: bad signature") {
			t.Errorf("error %q does not give each signature's reason", msg)
		}
	})
	t.Run("nil card", func(t *testing.T) {
		if err := v.Verify(ctx, nil); !errors.Is(err, ErrUnsigned) {
			t.Errorf("Verify(nil): %v", err)
		}
	})
}

// flipLowBit changes the last character of an unpadded base64url string
// whose last character carries unused bits, so that it decodes to the same
// bytes with a lenient decoder.
func flipLowBit(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i^1])
}

func mustSign(t *testing.T, card *a2a.AgentCard, key *ecdsa.PrivateKey) a2a.AgentCardSignature {
	t.Helper()
	sig, err := Sign(card, key, "k1", SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func TestVerifyJSONRefuses(t *testing.T) {
	ctx := context.Background()
	key := newEdKey(t)
	v := pinnedVerifier(t, "k1", key)
	for _, tc := range []struct {
		name, doc string
		want      error
	}{
		{"not JSON", `{"name":`, ErrBadSignature},
		{"not an object", `["name"]`, ErrBadSignature},
		{"no signatures", `{"name":"a"}`, ErrUnsigned},
		{"empty signatures", `{"name":"a","signatures":[]}`, ErrUnsigned},
		{"signatures not an array", `{"name":"a","signatures":{"protected":"x","signature":"y"}}`, ErrBadSignature},
		{"signature without protected", `{"name":"a","signatures":[{"signature":"y"}]}`, ErrBadSignature},
		{"signature with a number", `{"name":"a","signatures":[{"protected":1,"signature":"y"}]}`, ErrBadSignature},
		{"duplicate members", `{"name":"a","name":"b","signatures":[{"protected":"x","signature":"y"}]}`, ErrBadSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := v.VerifyJSON(ctx, []byte(tc.doc)); !errors.Is(err, tc.want) {
				t.Errorf("VerifyJSON: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSignRefuses(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	key := newECKey(t)
	for _, tc := range []struct {
		name string
		card *a2a.AgentCard
		do   func(card *a2a.AgentCard) error
		why  string
	}{
		{"no kid", testCard(), func(c *a2a.AgentCard) error { _, err := Sign(c, key, "", SignOptions{}); return err }, "kid"},
		{"nil key", testCard(), func(c *a2a.AgentCard) error { _, err := Sign(c, nil, "k", SignOptions{}); return err }, "nil key"},
		{"nil card", nil, func(c *a2a.AgentCard) error { _, err := SignCard(c, key, "k", SignOptions{}); return err }, "nil card"},
		{"P-384 key", testCard(), func(c *a2a.AgentCard) error { _, err := Sign(c, p384, "k", SignOptions{}); return err }, "P-256"},
		{"1024-bit RSA key", testCard(), func(c *a2a.AgentCard) error { _, err := Sign(c, small, "k", SignOptions{}); return err }, "2048"},
		{"relative jku", testCard(), func(c *a2a.AgentCard) error {
			_, err := Sign(c, key, "k", SignOptions{JWKSURL: "/jwks.json"})
			return err
		}, "absolute"},
		{"card that cannot be encoded", &a2a.AgentCard{Name: "nan", Capabilities: a2a.AgentCapabilities{Extensions: []a2a.AgentExtension{{URI: "u", Params: map[string]any{"x": func() {}}}}}},
			func(c *a2a.AgentCard) error { _, err := Sign(c, key, "k", SignOptions{}); return err }, `card "nan"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do(tc.card)
			if err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %v, want one saying %q", err, tc.why)
			}
		})
	}
}

// SignCard adds a signature to those there, and each verifies: a card may
// carry one per key during a rotation.
func TestSignCardAppends(t *testing.T) {
	ctx := context.Background()
	oldKey, newKey := newECKey(t), newEdKey(t)
	once, err := SignCard(testCard(), oldKey, "old", SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	twice, err := SignCard(once, newKey, "new", SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(once.Signatures) != 1 || len(twice.Signatures) != 2 {
		t.Fatalf("signatures: %d then %d", len(once.Signatures), len(twice.Signatures))
	}
	for kid, key := range map[string]crypto.Signer{"old": oldKey, "new": newKey} {
		v := pinnedVerifier(t, kid, key)
		if err := v.Verify(ctx, twice); err != nil {
			t.Errorf("verifier trusting only %q: %v", kid, err)
		}
	}
}
