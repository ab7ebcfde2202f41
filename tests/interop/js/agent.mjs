// An A2A v1.0 agent on the official JS SDK (@a2a-js/sdk 1.3.0) with express, for a2a-recover's
// interop tests.
//
// It binds 127.0.0.1 port 0 itself, prints `listening on http://127.0.0.1:PORT/` once the socket
// listens, and serves the agent card at /.well-known/agent-card.json, JSON-RPC at / and HTTP+JSON
// (the SDK's REST handler) under /rest. The card offers JSON-RPC first, then HTTP+JSON; with
// `--http-json-only` it offers HTTP+JSON alone (and JSON-RPC is not served). With `--grpc` it also
// serves the SDK's gRPC service (@a2a-js/sdk/server/grpc on @grpc/grpc-js) on another port of
// 127.0.0.1, and the card offers that interface alone, as `127.0.0.1:PORT` without a scheme (as
// the SDK's cards give it), or as `--grpc-advertise HOST:PORT` (a proxy in front of it). The line
// `grpc on 127.0.0.1:PORT` comes before the ready line. With `--push` the card says
// `pushNotifications: true`, and the SDK's default push sender posts each change of a task to the
// config sent with its message.
//
// Scenarios, chosen by the first word of the first text line that does not start with `[`
// (the same words as `a2a-recover scripted-agent` and tests/interop/python/agent.py):
//
//   work:N   WORKING, N steps of about 100 ms each with an artifact chunk, then COMPLETED
//   ask      INPUT_REQUIRED "two rooms or one?"; the next message completes the task with the
//            artifact `booking` whose text is `booked: <answer>`
//   auth     AUTH_REQUIRED; the next message completes the task
//   fail     FAILED
//   reject   REJECTED
//   direct   a direct Message reply, no task
//   else     COMPLETED with the artifact `echo` holding the text
//
// Everything the SDK offers by default is kept (in-memory task store, default request handler,
// no authentication), because the point is to meet the official server as others deploy it.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import express from 'express';
import * as grpc from '@grpc/grpc-js';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

const QUESTION = 'two rooms or one?';
const REST_PREFIX = '/rest';
const HTTP_JSON_ONLY = process.argv.includes('--http-json-only');
const GRPC = process.argv.includes('--grpc');
const PUSH = process.argv.includes('--push');
const ADVERTISE_AT = process.argv.indexOf('--grpc-advertise');
const GRPC_ADVERTISE = ADVERTISE_AT > 0 ? process.argv[ADVERTISE_AT + 1] : undefined;
const STEP_MS = 100;
const MAX_STEPS = 1000;

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
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('\n');
}

function textPart(text) {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

function agentMessage(taskId, contextId, text) {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Plays the scenarios; cancellation is cooperative through `canceled`. */
class InteropExecutor {
  canceled = new Set();
  contexts = new Map();

  cancelTask = async (taskId, eventBus) => {
    this.canceled.add(taskId);
    // The SDK waits for a terminal event on the bus before answering CancelTask.
    const contextId = this.contexts.get(taskId) ?? '';
    eventBus.publish(AgentEvent.statusUpdate(this.status(taskId, contextId, TaskState.TASK_STATE_CANCELED)));
  };

  status(taskId, contextId, state, message) {
    return {
      taskId,
      contextId,
      status: { state, message, timestamp: new Date().toISOString() },
      metadata: undefined,
    };
  }

  async execute(requestContext, eventBus) {
    const message = requestContext.userMessage;
    const text = textOf(message);
    const { taskId, contextId } = requestContext;
    const existing = requestContext.task;
    this.contexts.set(taskId, contextId);

    if (!existing && scenarioOf(text) === 'direct') {
      eventBus.publish(
        AgentEvent.message(agentMessage('', contextId, `direct reply: ${text}`)),
      );
      return;
    }

    const publishStatus = (state, note) =>
      eventBus.publish(
        AgentEvent.statusUpdate(
          this.status(taskId, contextId, state, note === undefined ? undefined : agentMessage(taskId, contextId, note)),
        ),
      );
    const publishArtifact = (name, artifactId, body, append, lastChunk) =>
      eventBus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId,
            name,
            description: '',
            parts: [textPart(body)],
            metadata: undefined,
            extensions: [],
          },
          append,
          lastChunk,
          metadata: undefined,
        }),
      );

    if (existing) {
      // The SDK requires a Task as the first event of every execution, follow-ups included.
      eventBus.publish(AgentEvent.task(existing));
      const state = existing.status?.state;
      if (state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        publishArtifact('booking', randomUUID(), `booked: ${text.trim()}`, false, true);
        publishStatus(TaskState.TASK_STATE_COMPLETED);
      } else if (state === TaskState.TASK_STATE_AUTH_REQUIRED) {
        publishStatus(TaskState.TASK_STATE_COMPLETED, 'authorized');
      } else {
        publishArtifact('echo', randomUUID(), text, false, true);
        publishStatus(TaskState.TASK_STATE_COMPLETED);
      }
      return;
    }

    eventBus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [message],
        metadata: undefined,
      }),
    );
    const word = scenarioOf(text);
    if (word.startsWith('work:')) {
      const parsed = Number.parseInt(word.slice('work:'.length), 10);
      const steps = Number.isNaN(parsed) ? 1 : Math.max(0, Math.min(parsed, MAX_STEPS));
      publishStatus(TaskState.TASK_STATE_WORKING);
      const artifactId = randomUUID();
      for (let step = 0; step < steps; step += 1) {
        await sleep(STEP_MS);
        if (this.canceled.has(taskId)) return;
        publishArtifact('work', artifactId, `step ${step + 1}\n`, step > 0, step + 1 === steps);
      }
      if (this.canceled.has(taskId)) return;
      publishStatus(TaskState.TASK_STATE_COMPLETED);
    } else if (word === 'ask') {
      publishStatus(TaskState.TASK_STATE_INPUT_REQUIRED, QUESTION);
    } else if (word === 'auth') {
      publishStatus(TaskState.TASK_STATE_AUTH_REQUIRED, 'authorize, then send any message');
    } else if (word === 'fail') {
      publishStatus(TaskState.TASK_STATE_FAILED, 'failed as scripted');
    } else if (word === 'reject') {
      publishStatus(TaskState.TASK_STATE_REJECTED, 'rejected as scripted');
    } else {
      publishArtifact('echo', randomUUID(), text, false, true);
      publishStatus(TaskState.TASK_STATE_COMPLETED);
    }
  }
}

function agentCard(baseUrl, grpcUrl) {
  const rpc = { url: baseUrl, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' };
  const rest = {
    url: baseUrl.replace(/\/$/, '') + REST_PREFIX,
    protocolBinding: 'HTTP+JSON',
    tenant: '',
    protocolVersion: '1.0',
  };
  return {
    name: '@a2a-js/sdk interop agent',
    description: 'Scripted scenarios on the official JS A2A SDK, for interop tests.',
    supportedInterfaces: grpcUrl
      ? [{ url: grpcUrl, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' }]
      : HTTP_JSON_ONLY
        ? [rest]
        : [rpc, rest],
    provider: undefined,
    version: '1.3.0',
    capabilities: { streaming: true, pushNotifications: PUSH, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'interop',
        name: 'Interop scenarios',
        description: 'work:N, ask, auth, fail, reject, direct, echo',
        tags: ['interop', 'booking'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/** Serves the agent over gRPC on a free port of 127.0.0.1; resolves to that port. */
async function serveGrpc(handlerOf) {
  const { A2AService, grpcService, UserBuilder: GrpcUserBuilder } = await import('@a2a-js/sdk/server/grpc');
  const grpcServer = new grpc.Server();
  const port = await new Promise((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  grpcServer.addService(
    A2AService,
    grpcService({ requestHandler: handlerOf(port), userBuilder: GrpcUserBuilder.noAuthentication }),
  );
  return port;
}

const server = createServer();
server.listen({ host: '127.0.0.1', port: 0 }, async () => {
  const { port } = server.address();
  const baseUrl = `http://127.0.0.1:${port}/`;
  let handler;
  const makeHandler = (grpcUrl) =>
    new DefaultRequestHandler(agentCard(baseUrl, grpcUrl), new InMemoryTaskStore(), new InteropExecutor());
  if (GRPC) {
    const grpcPort = await serveGrpc((p) => {
      handler = makeHandler(GRPC_ADVERTISE ?? `127.0.0.1:${p}`);
      return handler;
    });
    process.stdout.write(`grpc on 127.0.0.1:${grpcPort}\n`);
  } else {
    handler = makeHandler(undefined);
  }
  const app = express();
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  if (!GRPC) {
    app.use(REST_PREFIX, restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  }
  if (!HTTP_JSON_ONLY && !GRPC) {
    app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  }
  server.on('request', app);
  process.stdout.write(`listening on ${baseUrl}\n`);
});
