// cardsign.mjs checks agent card signatures between a2amesh's a2a/cardsign
// and @a2a-js/sdk's signing utilities, both ways:
//
//   node cardsign.mjs < input.json
//
// The input is {"signed": [cards a2amesh signed], "jwks": the JWKS of
// their keys, "tampered": [cards a2amesh signed, then changed],
// "unsigned": [cards for the SDK to sign]}. The script verifies each
// signed and tampered card with verifyAgentCardSignature (keys found in
// the JWKS by kid), canonicalizes each signed card with
// canonicalizeAgentCard, and signs each unsigned card with
// generateAgentCardSignature under a fresh ES256 key (Node's crypto). It
// prints one JSON line: {ok, error, verified: [bool], tamperedVerified:
// [bool], canonical: [string], peerSigned: [card], peerJWK: the public
// key}. ../cardsign_test.go runs it.

import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  canonicalizeAgentCard,
  generateAgentCardSignature,
  verifyAgentCardSignature,
} from '@a2a-js/sdk';

const summary = { ok: false };

// The SDK reports each failed signature with console.debug, on stdout:
// keep stdout for the summary.
console.debug = () => {};

try {
  const input = JSON.parse(readFileSync(0, 'utf8'));
  const keyFor = async (kid) => {
    const jwk = input.jwks.keys.find((k) => k.kid === kid);
    if (!jwk) throw new Error(`no key ${kid} in the JWKS`);
    return createPublicKey({ key: jwk, format: 'jwk' });
  };
  const verify = verifyAgentCardSignature(keyFor);
  const verifies = async (card) => {
    try {
      await verify(card);
      return true;
    } catch {
      return false;
    }
  };
  summary.verified = [];
  for (const card of input.signed) summary.verified.push(await verifies(card));
  summary.tamperedVerified = [];
  for (const card of input.tampered) summary.tamperedVerified.push(await verifies(card));
  summary.canonical = input.signed.map((card) => canonicalizeAgentCard(card));

  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const sign = generateAgentCardSignature(privateKey, { alg: 'ES256', kid: 'js-key', typ: 'JOSE' });
  summary.peerSigned = [];
  for (const card of input.unsigned) summary.peerSigned.push(await sign(card));
  summary.peerJWK = { ...publicKey.export({ format: 'jwk' }), kid: 'js-key', use: 'sig', alg: 'ES256' };
  summary.ok = true;
} catch (err) {
  summary.error = String(err?.stack ?? err);
}
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
