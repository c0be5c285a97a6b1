// interop.mjs runs @a2a-js/sdk's client against an A2A agent that behaves
// like the a2amesh echo agent:
//
//   node interop.mjs http://127.0.0.1:PORT/
//
// It resolves the agent's card with the SDK's ClientFactory, which takes
// the card's first interface it has a transport for (JSON-RPC or
// HTTP+JSON), sends a message (blocking), streams a message and gets the
// task, checking each answer. It
// prints one JSON summary line on stdout and exits non-zero on any
// mismatch (the summary then has ok: false and the error). ../js_test.go
// runs it against our server.

import { randomUUID } from 'node:crypto';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const baseUrl = process.argv[2];
const summary = { ok: false, sdk: '@a2a-js/sdk', baseUrl };

function finish(code) {
  console.log(JSON.stringify(summary));
  process.exit(code);
}

class Mismatch extends Error {}

function check(cond, what) {
  if (!cond) throw new Mismatch(what);
}

const stateName = (s) => TaskState[s] ?? String(s);

function textMessage(text, taskId = '') {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
    contextId: '',
    taskId,
    extensions: [],
    referenceTaskIds: [],
  };
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

async function main() {
  check(typeof baseUrl === 'string' && /^https?:\/\//.test(baseUrl), 'usage: node interop.mjs <agent base URL>');

  const factory = new ClientFactory();
  const client = await factory.createFromUrl(baseUrl);
  const card = await client.getAgentCard();
  summary.card = { name: card.name, protocolVersion: client.protocolVersion, binding: client.transport?.protocolName };
  check(client.protocolVersion === '1.0', `the client speaks ${client.protocolVersion}, want 1.0`);

  // SendMessage (blocking): the task completes with the echo artifact.
  const sendText = 'hello from a2a-js';
  const sent = await client.sendMessage({ tenant: '', message: textMessage(sendText), configuration: undefined, metadata: undefined });
  check(sent && 'status' in sent, `sendMessage returned ${JSON.stringify(sent)}, want a task`);
  summary.send = { taskId: sent.id, state: stateName(sent.status?.state), echo: echoArtifact(sent) };
  check(sent.status?.state === TaskState.TASK_STATE_COMPLETED, `sendMessage: task ${summary.send.state}, want TASK_STATE_COMPLETED`);
  check(summary.send.echo === sendText, `sendMessage: echo ${JSON.stringify(summary.send.echo)}, want ${JSON.stringify(sendText)}`);

  // SendStreamingMessage: the task, WORKING, 10 chunks, COMPLETED.
  const streamText = 'abcdefghijklmnopqrst';
  const kinds = [];
  let chunks = '';
  let streamTaskId = '';
  for await (const ev of client.sendMessageStream({ tenant: '', message: textMessage(streamText), configuration: undefined, metadata: undefined })) {
    const p = ev.payload;
    check(p !== undefined, `stream event without payload: ${JSON.stringify(ev)}`);
    switch (p.$case) {
      case 'task':
        kinds.push('task');
        streamTaskId = p.value.id;
        break;
      case 'statusUpdate':
        kinds.push(`status:${stateName(p.value.status?.state)}`);
        check(p.value.taskId === streamTaskId, `status update for task ${p.value.taskId}, want ${streamTaskId}`);
        break;
      case 'artifactUpdate': {
        const n = kinds.filter((k) => k === 'artifact').length;
        kinds.push('artifact');
        const u = p.value;
        check(u.taskId === streamTaskId && u.artifact?.artifactId === 'echo', `artifact update ${JSON.stringify(u)}`);
        check(u.append === n > 0 && u.lastChunk === (n === 9), `chunk ${n}: append=${u.append} lastChunk=${u.lastChunk}`);
        chunks += partsText(u.artifact.parts);
        break;
      }
      default:
        kinds.push(p.$case);
    }
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
