// The @a2a-js/sdk client against a live agentrt A2A server: send, stream, get, list,
// cancel and a typed not-found error. Prints one JSON object for the pytest driver.
// Usage: node a2a_client.mjs <base url> <api key>
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';

const [baseUrl, apiKey] = process.argv.slice(2);
const authFetch = createAuthenticatingFetchWithRetry(fetch, {
  headers: async () => ({ Authorization: `Bearer ${apiKey}` }),
  shouldRetryWithHeaders: async () => undefined,
});
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
  }),
);
const client = await factory.createFromUrl(baseUrl);

const message = (text) => ({
  messageId: randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const request = (text, returnImmediately = false) => ({
  tenant: '',
  message: message(text),
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
  metadata: undefined,
});
const stateName = (s) => TaskState[s];
const out = {};

const sent = await client.sendMessage(request('What about order 1042?'));
out.send = { id: sent.id, state: stateName(sent.status.state), text: sent.artifacts[0].parts[0].content.value };

const streamed = [];
for await (const ev of client.sendMessageStream(request('order 7 please'))) {
  const p = ev.payload;
  if (p.$case === 'task') streamed.push(`task:${stateName(p.value.status.state)}`);
  else if (p.$case === 'statusUpdate') streamed.push(`status:${stateName(p.value.status.state)}`);
  else streamed.push(p.$case);
}
out.stream = streamed;

const got = await client.getTask({ tenant: '', id: sent.id, historyLength: 1 });
out.get = { state: stateName(got.status.state), history: got.history.length };

const listed = await client.listTasks({
  tenant: '', contextId: sent.contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 10,
  pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: true,
});
out.list = { ids: listed.tasks.map((t) => t.id), total: listed.totalSize, next: listed.nextPageToken };

const pending = await client.sendMessage(request('please refund', true));
for (let i = 0; i < 400; i++) {
  const t = await client.getTask({ tenant: '', id: pending.id, historyLength: undefined });
  const note = t.status.message?.parts?.[0]?.content?.value ?? '';
  if (note.includes('approval')) break;
  await new Promise((r) => setTimeout(r, 50));
}
const cancelled = await client.cancelTask({ tenant: '', id: pending.id, metadata: undefined });
out.cancel = { state: stateName(cancelled.status.state) };

try {
  await client.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined });
  out.notFound = 'found?!';
} catch (err) {
  out.notFound = err.constructor.name;
}
console.log(JSON.stringify(out));
