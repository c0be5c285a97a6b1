// common.mjs holds what the interop scripts share: the mismatch they fail
// with, and the messages they send.

import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';

// Mismatch is a check that failed: the script reports it as its error.
export class Mismatch extends Error {}

export function check(cond, what) {
  if (!cond) throw new Mismatch(what);
}

// textMessage is a user message of one text part, every field of the
// SDK's types given: its gRPC transport encodes a missing string field as
// the string "undefined" (its JSON transports leave it out).
export function textMessage(text, taskId = '') {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    contextId: '',
    taskId,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
