package httpbind

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
)

// CardPath is where the agent card is served.
const CardPath = "/.well-known/agent-card.json"

// Card is an agent card encoded once for serving: in the form both 1.0 and
// 0.3 clients read, and the 1.0 form alone.
type Card struct {
	card      []byte // the card both 1.0 and 0.3 clients read
	cardETag  string
	card10    []byte // the 1.0 card alone, for clients that say A2A-Version: 1.0
	card10Tag string
	mod       time.Time // when the card was encoded, to the second
	modHeader string    // mod as an HTTP date
	cache     string
}

// NewCard encodes card, to be cached by clients for maxAge.
func NewCard(card *a2a.AgentCard, maxAge time.Duration) (*Card, error) {
	union, err := a2av03.CardJSON(card)
	if err != nil {
		return nil, fmt.Errorf("encode agent card: %w", err)
	}
	k := &Card{card: union, cardETag: etagOf(union)}
	if k.card10, err = json.Marshal(card); err != nil {
		return nil, fmt.Errorf("encode agent card: %w", err)
	}
	k.card10Tag = etagOf(k.card10)
	// The card is fixed for the server's life, so it last changed now.
	k.mod = time.Now().UTC().Truncate(time.Second)
	k.modHeader = k.mod.Format(http.TimeFormat)
	k.cache = "public, max-age=" + strconv.Itoa(int(maxAge.Seconds()))
	return k, nil
}

func etagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// Serve serves the agent card with an ETag, Last-Modified and
// Cache-Control, answering a conditional request that the card matches with
// 304. If-Modified-Since counts only without If-None-Match (RFC 9110
// 13.2.2).
//
// A request without A2A-Version is a 0.3 client's (specification 3.2.6,
// 3.6.1: 0.3 is assumed for an empty header) and gets the card both versions
// read. One that says A2A-Version: 1.0 (as 1.0 clients must on every
// request), in the header or the query, gets the 1.0 card alone, which
// the 1.0 JSON schema admits: the union card's 0.3 members are not in it.
func (k *Card) Serve(x Exchange) {
	card, etag := k.card, k.cardETag
	if MajorMinor(Version(x)) == a2a.Version {
		card, etag = k.card10, k.card10Tag
	}
	x.SetHeader("Vary", VersionHeader)
	x.SetHeader("ETag", etag)
	x.SetHeader("Last-Modified", k.modHeader)
	x.SetHeader("Cache-Control", k.cache)
	x.SetHeader("Access-Control-Allow-Origin", "*")
	if match := x.Header("If-None-Match"); len(match) > 0 {
		if bytes.Contains(match, []byte(etag)) {
			x.Respond(304, "", nil)
			return
		}
	} else if since, err := http.ParseTime(string(x.Header("If-Modified-Since"))); err == nil && !k.mod.After(since) {
		x.Respond(304, "", nil)
		return
	}
	// The answer's buffer is the Exchange's from now on; the card stays.
	x.Respond(200, "application/json", append(x.Buffer(), card...))
}
