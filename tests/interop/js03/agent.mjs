// An A2A v0.3 agent on the official JS SDK (@a2a-js/sdk 0.3.14) with express, for a2a-recover's
// interop tests.
//
// It binds 127.0.0.1 port 0 itself, prints `listening on http://127.0.0.1:PORT/` once the socket
// listens, and serves, on the SDK's own express handlers:
//
//   /.well-known/agent-card.json   the agent card (protocolVersion 0.3.0)
//   POST /                         JSON-RPC 2.0 (jsonRpcHandler): message/send, tasks/get, ...
//   /rest/v1/...                   HTTP+JSON (restHandler): POST /rest/v1/message:send, ...
//
// `--preferred jsonrpc` (the default) or `--preferred rest` (also A2A_RECOVER_PREFERRED) chooses
// which of the two the card's `url` and `preferredTransport` name; `additionalInterfaces` lists
// both. With `--push` the card says `pushNotifications: true`, and the SDK's default push sender
// posts the whole task to the config sent with each message.
//
// Scenarios, chosen by the first word of the first text line that does not start with `[`
// (the same words as `a2a-recover scripted-agent` and tests/interop/js/agent.mjs):
//
//   work:N   working, N steps of about 100 ms each with an artifact chunk, then completed
//   ask      input-required "two rooms or one?"; the next message completes the task with the
//            artifact `booking` whose text is `booked: <answer>`
//   auth     auth-required; the next message completes the task
//   fail     failed
//   reject   rejected
//   direct   a direct Message reply, no task
//   else     completed with the artifact `echo` holding the text
//
// Everything the SDK offers by default is kept (in-memory task store, default request handler,
// no authentication), because the point is to meet the official server as others deploy it.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

const QUESTION = 'two rooms or one?';
const STEP_MS = 100;
const MAX_STEPS = 1000;
const REST_PREFIX = '/rest';

/** Returns `--preferred VALUE` (or A2A_RECOVER_PREFERRED), `jsonrpc` or `rest`. */
function preferredTransport() {
  const args = process.argv.slice(2);
  const at = args.indexOf('--preferred');
  const value = at >= 0 ? args[at + 1] : (process.env.A2A_RECOVER_PREFERRED ?? 'jsonrpc');
  if (value !== 'jsonrpc' && value !== 'rest') {
    process.stderr.write(`--preferred must be jsonrpc or rest, not ${JSON.stringify(value)}\n`);
    process.exit(2);
  }
  return value;
}

/** Returns the first word of the first line that does not start with `[`. */
function scenarioOf(text) {
  for (const line of text.split(/\r?\n/)) {
    const stripped = line.trim();
    if (stripped.startsWith('[')) continue;
    return stripped.split(/\s+/)[0] ?? '';
  }
  return '';
}

/** Returns the message's text parts joined by newlines. */
function textOf(message) {
  return message.parts
    .filter((p) => p.kind === 'text')
    .map((p) => p.text)
    .join('\n');
}

function agentMessage(taskId, contextId, text) {
  return {
    kind: 'message',
    messageId: randomUUID(),
    contextId,
    taskId,
    role: 'agent',
    parts: [{ kind: 'text', text }],
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Plays the scenarios; cancellation is cooperative through `canceled`. */
class InteropExecutor {
  canceled = new Set();
  contexts = new Map();

  cancelTask = async (taskId, eventBus) => {
    this.canceled.add(taskId);
    // The SDK waits for a final event on the bus before answering tasks/cancel.
    const contextId = this.contexts.get(taskId) ?? '';
    eventBus.publish(this.status(taskId, contextId, 'canceled', undefined, true));
    eventBus.finished();
  };

  status(taskId, contextId, state, message, final) {
    return {
      kind: 'status-update',
      taskId,
      contextId,
      status: { state, message, timestamp: new Date().toISOString() },
      final,
    };
  }

  async execute(requestContext, eventBus) {
    const message = requestContext.userMessage;
    const text = textOf(message);
    const { taskId, contextId } = requestContext;
    const existing = requestContext.task;
    this.contexts.set(taskId, contextId);

    if (!existing && scenarioOf(text) === 'direct') {
      eventBus.publish({ ...agentMessage(undefined, contextId, `direct reply: ${text}`) });
      eventBus.finished();
      return;
    }

    const publishStatus = (state, note, final) =>
      eventBus.publish(
        this.status(taskId, contextId, state, note === undefined ? undefined : agentMessage(taskId, contextId, note), final),
      );
    const publishArtifact = (name, artifactId, body, append, lastChunk) =>
      eventBus.publish({
        kind: 'artifact-update',
        taskId,
        contextId,
        artifact: { artifactId, name, parts: [{ kind: 'text', text: body }] },
        append,
        lastChunk,
      });

    if (existing) {
      const state = existing.status?.state;
      if (state === 'input-required') {
        publishArtifact('booking', randomUUID(), `booked: ${text.trim()}`, false, true);
        publishStatus('completed', undefined, true);
      } else if (state === 'auth-required') {
        publishStatus('completed', 'authorized', true);
      } else {
        publishArtifact('echo', randomUUID(), text, false, true);
        publishStatus('completed', undefined, true);
      }
      eventBus.finished();
      return;
    }

    eventBus.publish({
      kind: 'task',
      id: taskId,
      contextId,
      status: { state: 'submitted', timestamp: new Date().toISOString() },
      history: [message],
    });
    const word = scenarioOf(text);
    if (word.startsWith('work:')) {
      const parsed = Number.parseInt(word.slice('work:'.length), 10);
      const steps = Number.isNaN(parsed) ? 1 : Math.max(0, Math.min(parsed, MAX_STEPS));
      publishStatus('working', undefined, false);
      const artifactId = randomUUID();
      for (let step = 0; step < steps; step += 1) {
        await sleep(STEP_MS);
        if (this.canceled.has(taskId)) return;
        publishArtifact('work', artifactId, `step ${step + 1}\n`, step > 0, step + 1 === steps);
      }
      if (this.canceled.has(taskId)) return;
      publishStatus('completed', undefined, true);
    } else if (word === 'ask') {
      publishStatus('input-required', QUESTION, true);
    } else if (word === 'auth') {
      publishStatus('auth-required', 'authorize, then send any message', true);
    } else if (word === 'fail') {
      publishStatus('failed', 'failed as scripted', true);
    } else if (word === 'reject') {
      publishStatus('rejected', 'rejected as scripted', true);
    } else {
      publishArtifact('echo', randomUUID(), text, false, true);
      publishStatus('completed', undefined, true);
    }
    eventBus.finished();
  }
}

function agentCard(baseUrl, preferred) {
  const jsonrpc = { transport: 'JSONRPC', url: baseUrl };
  const rest = { transport: 'HTTP+JSON', url: baseUrl.replace(/\/$/, '') + REST_PREFIX };
  const main = preferred === 'rest' ? rest : jsonrpc;
  return {
    name: '@a2a-js/sdk 0.3 interop agent',
    description: 'Scripted scenarios on the official JS A2A SDK 0.3, for interop tests.',
    protocolVersion: '0.3.0',
    version: '0.3.14',
    url: main.url,
    preferredTransport: main.transport,
    additionalInterfaces: [jsonrpc, rest],
    capabilities: { streaming: true, pushNotifications: process.argv.includes('--push') },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'interop',
        name: 'Interop scenarios',
        description: 'work:N, ask, auth, fail, reject, direct, echo',
        tags: ['interop', 'booking'],
      },
    ],
  };
}

const preferred = preferredTransport();
const server = createServer();
server.listen({ host: '127.0.0.1', port: 0 }, () => {
  const { port } = server.address();
  const baseUrl = `http://127.0.0.1:${port}/`;
  const handler = new DefaultRequestHandler(agentCard(baseUrl, preferred), new InMemoryTaskStore(), new InteropExecutor());
  const userBuilder = UserBuilder.noAuthentication;
  const app = express();
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use(REST_PREFIX, restHandler({ requestHandler: handler, userBuilder }));
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder }));
  server.on('request', app);
  process.stdout.write(`listening on ${baseUrl}\n`);
});
