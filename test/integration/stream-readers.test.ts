import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context } from 'aws-lambda';
import { streamConsumers } from '../../lib/routes';
import { call, newBoard, newColumn, newUser } from '../support/api';
import { closeServers, startJsonReceiver } from '../support/http-servers';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import { closeAllSockets, connect } from '../support/sockets';
import { eventually } from '../support/wait';

/**
 * The table stream's change reader (`events.broadcast`: the sockets' broadcaster and the webhook
 * fanout on one batch, docs/realtime.md "The readers") when the event source runs a batch again,
 * over the real local stack: real DynamoDB Local, the SQS stand-in, the delivery worker and a real
 * HTTP receiver. A change goes through the stack's own poller first (its frame to a watcher, its
 * delivery to the receiver); then the same stream record is handed to the reader's handler again,
 * twice, as Lambda does after a checkpoint before it: the watcher hears the event again (at least
 * once, same event_id) and the receiver gets no second delivery. This file starts a stack of its
 * own so that webhooks may be sent to 127.0.0.1. Nothing asserts how long anything took.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'task-board-readers-'));
let stack: RunningStack | undefined;
let url: string;
const WAIT_MS = 120_000;
const servers: Server[] = [];

beforeAll(async () => {
  stack = await startStackProcess(dataDir, { WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  url = stack.url;
  // The handler runs in this process as Lambda would run it, configured like the stack's own functions.
  Object.assign(process.env, localEnv(dataDir), { LOG_LEVEL: 'SILENT', METRICS_DISABLED: 'true' });
});

afterAll(async () => {
  await closeAllSockets();
  await closeServers(servers);
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

/** A webhook receiver (test/support/http-servers.ts) and the bodies it got of one event. */
async function receiver() {
  const { url: target, received } = await startJsonReceiver(servers);
  return { url: target, received, of: (eventId: string) => received.filter((r) => r.event_id === eventId) };
}

/** The stream record of a log item's INSERT, as the event source hands it over (its image as the table holds it). */
function insertOf(item: Record<string, unknown>, sequenceNumber: string) {
  return {
    eventID: `retry-${sequenceNumber}`,
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    dynamodb: {
      Keys: marshall({ pk: item.pk, sk: item.sk }),
      NewImage: marshall(item, { removeUndefinedValues: true }),
      SequenceNumber: sequenceNumber,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

it('a batch run again sends the frames again (same event_id) but makes no second webhook delivery', async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Retried', url);
  const hook = await receiver();
  const created = await call('POST', `/boards/${board.id}/webhooks`, { token: owner.token, body: { url: hook.url }, url });
  expect(created.status).toBe(201);
  const webhookId = (created.body as { id: string }).id;
  const socket = await connect(owner, 'watcher', url);
  await socket.watch(board.id);

  // The first run: the stack's own poller hands the change to the reader.
  await newColumn(owner, board.id, 'Todo', url);
  const first = await socket.waitFor((f) => f.type === 'column.created', 'column.created', WAIT_MS);
  const eventId = first.event_id as string;
  await eventually(async () => expect(hook.of(eventId)).toHaveLength(1), WAIT_MS);
  const deliveries = async () => {
    const reply = await call('GET', `/webhooks/${webhookId}/deliveries`, { token: owner.token, url });
    expect(reply.status).toBe(200);
    return reply.body as { event_id: string; status: string; attempts: number }[];
  };
  await eventually(async () => expect((await deliveries()).map((d) => d.status)).toEqual(['delivered']), WAIT_MS);

  // The same record again, twice, as the event source resends a batch from a checkpoint before it.
  const ddb = localDocumentClient(localEnv(dataDir));
  let item: Record<string, unknown> | undefined;
  try {
    item = (await readPartition(ddb, localEnv(dataDir).TABLE_NAME!, `BOARD#${board.id}`)).find(
      (i) => i.type === 'event' && (i.event as { event_id?: string }).event_id === eventId,
    );
  } finally {
    ddb.destroy();
  }
  expect(item).toBeDefined();
  const entry = streamConsumers['events.broadcast'].entry;
  const { handler } = (await import(join(__dirname, '..', '..', entry))) as {
    handler: (event: unknown, context: Context) => Promise<unknown>;
  };
  const context = { awsRequestId: 'retry' } as Context;
  for (const attempt of ['1', '2']) {
    expect(await handler({ Records: [insertOf(item!, `900000000000000000000${attempt}`)] }, context)).toEqual({
      batchItemFailures: [],
    });
  }

  // Sockets: at least once; the client drops the repeats by event_id.
  await eventually(async () => {
    expect(socket.received.filter((f) => f.event_id === eventId)).toHaveLength(3);
  }, WAIT_MS);
  // Webhooks: the delivery was made once and stays the only one, attempted once.
  const after = await deliveries();
  expect(after).toHaveLength(1);
  expect(after[0]).toMatchObject({ event_id: eventId, status: 'delivered', attempts: 1 });
  // The retries queued nothing; a later change delivered since shows the worker has run after them.
  await newColumn(owner, board.id, 'Done', url);
  await eventually(async () => expect((await deliveries()).map((d) => d.status)).toEqual(['delivered', 'delivered']), WAIT_MS);
  expect(hook.of(eventId)).toHaveLength(1);
});
