// interop.mjs runs @a2a-js/sdk's client against an A2A agent that behaves
// like the a2amesh echo agent:
//
//   node interop.mjs [--prefer BINDING] [--held PREFIX] http://127.0.0.1:PORT/
//
// It resolves the agent's card with the SDK's ClientFactory, which has the
// SDK's JSON-RPC, HTTP+JSON and gRPC transports and takes the first of the
// card's interfaces it has a transport for, unless --prefer names a
// binding (JSONRPC, HTTP+JSON, GRPC): the SDK then takes that one where the
// card lists it. Over the binding picked it sends a message (blocking),
// streams one and gets the task, checking each answer; with --held (the
// start of a message the agent holds, running, until the task is
// canceled), it also cancels a task and subscribes to one; last, it asks
// for a task that does not exist and reports the error the SDK raises.
// It prints one JSON summary line on stdout and exits non-zero on any
// mismatch (the summary then has ok: false and the error). ../js_test.go
// runs it against our server.

import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { Role, TaskState } from '@a2a-js/sdk';
import { Mismatch, check, textMessage } from './common.mjs';

const summary = { ok: false, sdk: '@a2a-js/sdk' };

function finish(code) {
  console.log(JSON.stringify(summary));
  process.exit(code);
}

const stateName = (s) => TaskState[s] ?? String(s);

function sendRequest(text, returnImmediately = false) {
  const configuration = returnImmediately
    ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }
    : undefined;
  return { tenant: '', message: textMessage(text), configuration, metadata: undefined };
}

function partsText(parts) {
  return (parts ?? [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join('');
}

function echoArtifact(task) {
  const art = (task.artifacts ?? []).find((a) => a.artifactId === 'echo');
  return art ? partsText(art.parts) : undefined;
}

// eventKind names a stream event as the summary lists it.
function eventKind(ev) {
  const p = ev.payload;
  check(p !== undefined, `stream event without payload: ${JSON.stringify(ev)}`);
  switch (p.$case) {
    case 'task':
      return 'task';
    case 'statusUpdate':
      return `status:${stateName(p.value.status?.state)}`;
    case 'artifactUpdate':
      return 'artifact';
    default:
      return p.$case;
  }
}

// heldTask starts a task the agent holds until it is canceled and returns
// it as sendMessage (returnImmediately) did: SUBMITTED or WORKING.
async function heldTask(client, held) {
  const task = await client.sendMessage(sendRequest(`${held}${randomUUID()} lorem ipsum`, true));
  check(task && 'status' in task, `sendMessage (returnImmediately) returned ${JSON.stringify(task)}, want a task`);
  const s = task.status?.state;
  check(s === TaskState.TASK_STATE_SUBMITTED || s === TaskState.TASK_STATE_WORKING, `held task ${task.id}: ${stateName(s)}, want TASK_STATE_SUBMITTED or TASK_STATE_WORKING`);
  return task;
}

// errorSummary is what the summary says of an error the SDK raised: its
// class, the ErrorInfo reason, the transport, and the code on that wire
// (gRPC status, HTTP status or JSON-RPC error code).
function errorSummary(err) {
  return {
    name: err?.constructor?.name,
    message: err?.message,
    reason: err?.reason,
    transport: err?.transport,
    code: err?.status ?? err?.statusCode ?? err?.envelopeCode,
    taskNotFound: err instanceof TaskNotFoundError,
  };
}

async function main() {
  const { values, positionals } = parseArgs({
    options: { prefer: { type: 'string' }, held: { type: 'string' } },
    allowPositionals: true,
  });
  const baseUrl = positionals[0];
  summary.baseUrl = baseUrl;
  check(positionals.length === 1 && /^https?:\/\//.test(baseUrl), 'usage: node interop.mjs [--prefer BINDING] [--held PREFIX] <agent base URL>');

  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new GrpcTransportFactory()],
      preferredTransports: values.prefer ? [values.prefer] : undefined,
    }),
  );
  const client = await factory.createFromUrl(baseUrl);
  const card = await client.getAgentCard();
  summary.card = {
    name: card.name,
    interfaces: (card.supportedInterfaces ?? []).map((i) => `${i.protocolBinding} ${i.protocolVersion}`),
    protocolVersion: client.protocolVersion,
    binding: client.transport?.protocolName,
  };
  check(client.protocolVersion === '1.0', `the client speaks ${client.protocolVersion}, want 1.0`);

  // SendMessage (blocking): the task completes with the echo artifact.
  const sendText = 'hello from a2a-js';
  const sent = await client.sendMessage(sendRequest(sendText));
  check(sent && 'status' in sent, `sendMessage returned ${JSON.stringify(sent)}, want a task`);
  summary.send = { taskId: sent.id, state: stateName(sent.status?.state), echo: echoArtifact(sent) };
  check(sent.status?.state === TaskState.TASK_STATE_COMPLETED, `sendMessage: task ${summary.send.state}, want TASK_STATE_COMPLETED`);
  check(summary.send.echo === sendText, `sendMessage: echo ${JSON.stringify(summary.send.echo)}, want ${JSON.stringify(sendText)}`);

  // SendStreamingMessage: the task, WORKING, 10 chunks, COMPLETED.
  const streamText = 'abcdefghijklmnopqrst';
  const kinds = [];
  let chunks = '';
  let streamTaskId = '';
  for await (const ev of client.sendMessageStream(sendRequest(streamText))) {
    const kind = eventKind(ev);
    const p = ev.payload;
    switch (p.$case) {
      case 'task':
        streamTaskId = p.value.id;
        break;
      case 'statusUpdate':
        check(p.value.taskId === streamTaskId, `status update for task ${p.value.taskId}, want ${streamTaskId}`);
        break;
      case 'artifactUpdate': {
        const n = kinds.filter((k) => k === 'artifact').length;
        const u = p.value;
        check(u.taskId === streamTaskId && u.artifact?.artifactId === 'echo', `artifact update ${JSON.stringify(u)}`);
        check(u.append === n > 0 && u.lastChunk === (n === 9), `chunk ${n}: append=${u.append} lastChunk=${u.lastChunk}`);
        chunks += partsText(u.artifact.parts);
        break;
      }
    }
    kinds.push(kind);
  }
  summary.stream = { events: kinds.length, kinds, text: chunks };
  const want = ['task', 'status:TASK_STATE_WORKING', ...Array(10).fill('artifact'), 'status:TASK_STATE_COMPLETED'];
  check(JSON.stringify(kinds) === JSON.stringify(want), `stream events ${kinds.join(',')}, want ${want.join(',')}`);
  check(chunks === streamText, `stream chunks ${JSON.stringify(chunks)}, want ${JSON.stringify(streamText)}`);

  // GetTask, with and without historyLength.
  const got = await client.getTask({ tenant: '', id: sent.id });
  const cut = await client.getTask({ tenant: '', id: sent.id, historyLength: 0 });
  summary.get = { taskId: got.id, state: stateName(got.status?.state), echo: echoArtifact(got), history: got.history.length, historyAt0: cut.history.length };
  check(got.id === sent.id && got.status?.state === TaskState.TASK_STATE_COMPLETED, `getTask: ${got.id} ${summary.get.state}`);
  check(summary.get.echo === sendText, `getTask: echo ${JSON.stringify(summary.get.echo)}`);
  check(got.history.length > 0 && partsText(got.history[0].parts) === sendText && got.history[0].role === Role.ROLE_USER, 'getTask: the history does not start with the user message');
  check(cut.history.length === 0, `getTask historyLength 0: ${cut.history.length} messages`);

  if (values.held) {
    // CancelTask on a running task: CANCELED, and GetTask agrees.
    const running = await heldTask(client, values.held);
    const canceled = await client.cancelTask({ tenant: '', id: running.id, metadata: undefined });
    const after = await client.getTask({ tenant: '', id: running.id });
    summary.cancel = { taskId: canceled.id, state: stateName(canceled.status?.state), after: stateName(after.status?.state) };
    check(canceled.id === running.id && canceled.status?.state === TaskState.TASK_STATE_CANCELED, `cancelTask: ${canceled.id} ${summary.cancel.state}, want ${running.id} TASK_STATE_CANCELED`);
    check(after.status?.state === TaskState.TASK_STATE_CANCELED, `getTask after cancelTask: ${summary.cancel.after}`);

    // SubscribeToTask on a running task: the task first, then, once it is
    // canceled from another call, its final status, and the stream ends.
    const watched = await heldTask(client, values.held);
    const subKinds = [];
    let firstId = '';
    for await (const ev of client.resubscribeTask({ tenant: '', id: watched.id })) {
      subKinds.push(eventKind(ev));
      if (subKinds.length === 1) {
        firstId = ev.payload.value.id ?? ev.payload.value.taskId;
        await client.cancelTask({ tenant: '', id: watched.id, metadata: undefined });
      }
      check(subKinds.length <= 20, `subscription: ${subKinds.join(',')}, and still going`);
    }
    summary.subscribe = { taskId: firstId, kinds: subKinds };
    check(firstId === watched.id, `subscription: first event for ${firstId}, want ${watched.id}`);
    check(subKinds[0] === 'task' && subKinds.at(-1) === 'status:TASK_STATE_CANCELED', `subscription events ${subKinds.join(',')}, want the task first and status:TASK_STATE_CANCELED last`);
  }

  // GetTask of a task that does not exist: TaskNotFoundError.
  const missing = `no-such-task-${randomUUID()}`;
  try {
    const task = await client.getTask({ tenant: '', id: missing });
    throw new Mismatch(`getTask ${missing}: ${JSON.stringify(task)}, want TaskNotFoundError`);
  } catch (err) {
    if (err instanceof Mismatch) throw err;
    summary.notFound = errorSummary(err);
    check(summary.notFound.taskNotFound && err.reason === 'TASK_NOT_FOUND', `getTask ${missing}: ${JSON.stringify(summary.notFound)}, want TaskNotFoundError`);
  }

  summary.ok = true;
}

try {
  await main();
  finish(0);
} catch (err) {
  summary.error = err instanceof Mismatch ? err.message : `${err?.name ?? 'Error'}: ${err?.message ?? err}`;
  if (!(err instanceof Mismatch)) console.error(err);
  finish(1);
}
