// auth.mjs runs @a2a-js/sdk's client against an a2amesh agent behind a
// gate, with the SDK's own way of authenticating: an AuthenticationHandler
// wrapped around fetch (createAuthenticatingFetchWithRetry).
//
//   node auth.mjs --prefer BINDING --key KEY --stale TOKEN --fresh TOKEN URL
//
// Alice's client sends the API key KEY in the header the card's apiKey
// scheme names. Bob's client starts with the bearer token STALE (expired);
// when the agent answers 401 with a Bearer challenge, his handler takes
// FRESH, the SDK sends the request again, and the token is kept for the
// calls after. A client without a handler is refused. Alice makes a task;
// Bob gets, cancels and subscribes to it, and is told it does not exist.
// It prints one JSON summary line on stdout and exits non-zero on any
// mismatch. ../auth_test.go runs it.

import { parseArgs } from 'node:util';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { TaskState } from '@a2a-js/sdk';
import { Mismatch, check, textMessage } from './common.mjs';

const summary = { ok: false, sdk: '@a2a-js/sdk' };

const send = (text, taskId) => ({ tenant: '', message: textMessage(text, taskId), configuration: undefined, metadata: undefined });

// client returns a client of the card at baseUrl over the preferred
// binding whose every request goes through handler (none: plain fetch).
async function client(baseUrl, prefer, handler) {
  const fetchImpl = handler ? createAuthenticatingFetchWithRetry(fetch, handler) : fetch;
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      preferredTransports: [prefer],
    }),
  );
  return factory.createFromUrl(baseUrl);
}

// refusal runs call, which must fail, and returns what the SDK raised. An
// error in an SSE stream of the JSON-RPC transport comes wrapped: an Error
// whose cause is the typed error (TaskNotFoundError); the stream is how
// a2a-go's client, which reads no other body in answer to a stream, gets
// the error too.
async function refusal(what, call) {
  try {
    await call();
  } catch (err) {
    if (err instanceof Mismatch) throw err;
    return {
      name: err?.constructor?.name,
      code: err?.status ?? err?.statusCode ?? err?.envelopeCode ?? err?.response?.error?.code,
      message: String(err?.message ?? err),
      taskNotFound: err instanceof TaskNotFoundError || err?.cause instanceof TaskNotFoundError,
      wrapped: !(err instanceof TaskNotFoundError) && err?.cause instanceof TaskNotFoundError,
    };
  }
  throw new Mismatch(`${what} succeeded, want a refusal`);
}

async function main() {
  const { values, positionals } = parseArgs({
    options: { prefer: { type: 'string' }, key: { type: 'string' }, stale: { type: 'string' }, fresh: { type: 'string' } },
    allowPositionals: true,
  });
  const baseUrl = positionals[0];
  check(positionals.length === 1 && values.prefer && values.key && values.stale && values.fresh,
    'usage: node auth.mjs --prefer BINDING --key KEY --stale TOKEN --fresh TOKEN <agent base URL>');

  // The scheme's header comes from the card, as a client learns it.
  const anonymous = await client(baseUrl, values.prefer, undefined);
  const card = await anonymous.getAgentCard();
  const apiKey = Object.values(card.securitySchemes ?? {}).map((s) => s.scheme).find((s) => s?.$case === 'apiKeySecurityScheme');
  check(apiKey, `the card declares no API key scheme: ${JSON.stringify(card.securitySchemes)}`);
  summary.binding = anonymous.transport?.protocolName;
  summary.apiKeyHeader = apiKey.value.name;

  summary.anonymous = await refusal('a message without a credential', () => anonymous.sendMessage(send('hello')));

  const alice = await client(baseUrl, values.prefer, {
    headers: async () => ({ [apiKey.value.name]: values.key }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const task = await alice.sendMessage(send('hello from alice'));
  check(task && task.status?.state === TaskState.TASK_STATE_COMPLETED, `alice's message: ${JSON.stringify(task)}`);
  summary.aliceTask = task.id;

  let token = values.stale;
  summary.bob = { challenges: [], retried: 0 };
  const bob = await client(baseUrl, values.prefer, {
    headers: async () => ({ Authorization: `Bearer ${token}` }),
    shouldRetryWithHeaders: async (_req, res) => {
      // A 401 may offer several schemes (RFC 7235): retry when one is a
      // Bearer challenge saying the token is invalid (RFC 6750).
      const challenge = res.headers.get('WWW-Authenticate') ?? '';
      if (res.status !== 401 || !/(^|,\s*)Bearer\s[^]*?error="invalid_token"/.test(challenge)) return undefined;
      summary.bob.challenges.push(challenge);
      summary.bob.retried++;
      return { Authorization: `Bearer ${values.fresh}` };
    },
    onSuccessfulRetry: async (headers) => {
      token = new Headers(headers).get('Authorization').slice('Bearer '.length);
    },
  });
  const own = await bob.sendMessage(send('hello from bob'));
  check(own && own.status?.state === TaskState.TASK_STATE_COMPLETED, `bob's message: ${JSON.stringify(own)}`);
  check(token === values.fresh, "bob's handler did not keep the fresh token");
  const retriedBefore = summary.bob.retried;
  summary.bob.get = await refusal("bob's getTask of alice's task", () => bob.getTask({ tenant: '', id: task.id }));
  summary.bob.cancel = await refusal("bob's cancelTask of alice's task", () => bob.cancelTask({ tenant: '', id: task.id, metadata: undefined }));
  summary.bob.subscribe = await refusal("bob's subscription to alice's task", async () => {
    for await (const ev of bob.resubscribeTask({ tenant: '', id: task.id })) {
      throw new Mismatch(`bob's subscription to alice's task yielded ${JSON.stringify(ev)}`);
    }
  });
  summary.bob.retriedAfterRefresh = summary.bob.retried - retriedBefore;
  summary.ok = true;
}

try {
  await main();
  console.log(JSON.stringify(summary));
  process.exit(0);
} catch (err) {
  summary.error = err instanceof Mismatch ? err.message : `${err?.name ?? 'Error'}: ${err?.message ?? err}`;
  if (!(err instanceof Mismatch)) console.error(err);
  console.log(JSON.stringify(summary));
  process.exit(1);
}
