// Package cardsign signs agent cards and verifies their signatures as the
// A2A 1.0 specification describes in section 8.4: each signature is a JWS
// (RFC 7515) over a detached payload, the card without its "signatures"
// canonicalized with JCS (RFC 8785), and carried in the card's signatures
// as its base64url protected header and signature.
//
// A card is signed with Sign or SignCard by a crypto.Signer — an ECDSA
// P-256 key (ES256), an RSA key of 2048 bits or more (RS256) or an Ed25519
// key (EdDSA) — under a key id; LoadSigningKey reads one from a PEM file
// and PublicJWKS writes the JWKS that publishes its public half. A
// Verifier checks that at least one of a card's signatures was made by a
// key it trusts: keys pinned in its configuration, or fetched from the one
// JWKS URL it is configured with. It never trusts a key because a card
// names it, so it follows neither a signature's "jku" nor keys embedded in
// its header, and it accepts ES256, RS256 and EdDSA only ("none" and the
// HMAC algorithms never: a verifier holds no secret).
//
// # What is signed
//
// Payload returns the signed bytes: the card's 1.0 JSON form (as
// a2a.AppendJSON writes it and servers serve it) without "signatures",
// with every null, empty string, empty array and empty object removed,
// recursively (an object or array that the removal empties goes too),
// while false and 0 stay, canonicalized by Canonicalize.
//
// That removal is what the A2A SDKs that sign cards do (a2a-js 1.3.0's
// canonicalizeAgentCard, a2a-python's signing utilities), so that a card
// signed here verifies there and the other way round. Section 8.4.1 states
// the rule in terms of protobuf field presence, and its example keeps an
// empty REQUIRED field ("description": "", "skills": []) that the SDKs
// drop; the two agree on every card whose required fields are set and
// which holds no empty value, and where they disagree this package follows
// the SDKs, whose signatures exist, over a reading no implementation is
// known to produce. The price is that empty values are not covered by a
// signature: notably a security requirement whose schemes need no scopes
// ({"schemes": {"bearer": {"list": []}}}) is empty throughout and so is
// removed whole, and adding or removing one does not break a signature.
// Everything that is not empty is covered.
//
// A card is verified as the a2a.AgentCard it decodes to, so fields that
// type does not model are neither signed nor checked (they do not reach
// the caller either), and a presence the type cannot hold is lost: an
// optional flag a peer sets explicitly to false ("streaming": false) is
// part of that peer's payload and absent from the decoded card's, and such
// a card verifies with VerifyJSON over the bytes received, not with Verify.
package cardsign
