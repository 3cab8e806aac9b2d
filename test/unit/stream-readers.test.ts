import { randomUUID } from 'node:crypto';
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler } from '../../functions/events/broadcast';
import type { ChangeRecord } from '../../lib/data/change-events';
import { documentClient } from '../../lib/data/db';
import { keys } from '../../lib/data/table';
import { type Consume, earliestFailure, oneByOne, sideBySide } from '../../lib/stream/compose';

/**
 * The table stream's two readers are compositions (docs/realtime.md "The readers"): the change
 * reader runs the sockets' broadcaster and the webhook fanout side by side on each batch, the
 * cleanup reader sends each record to its collector one after another. What the event source
 * gets back is one checkpoint: the earliest record any part failed, from which the whole batch
 * runs again for every part. The parts' own behaviour is tested on their own
 * (broadcaster.test.ts, the webhook and deletion suites); this holds the compositions, first with
 * parts that only report, then with the real change reader's parts on stubbed AWS clients.
 */

let sequence = 5000;
type Labelled = ChangeRecord & { eventID: string };
const recordOf = (label: string): Labelled => ({
  eventID: label,
  eventName: 'INSERT',
  dynamodb: { SequenceNumber: String(sequence++) },
});
const label = (record: ChangeRecord | undefined) => (record as Labelled).eventID;
const seq = (record: ChangeRecord) => record.dynamodb!.SequenceNumber!;
const failing =
  (...records: ChangeRecord[]): Consume =>
  async () => ({ batchItemFailures: records.map((record) => ({ itemIdentifier: seq(record) })) });
const checkpoint = (response: DynamoDBBatchResponse) => response.batchItemFailures.map((f) => f.itemIdentifier);

describe('side by side (the change reader)', () => {
  const batch = () => [recordOf('a'), recordOf('b'), recordOf('c'), recordOf('d')];

  it('reports nothing when every part handled the whole batch, and gives each part the whole batch', async () => {
    const records = batch();
    const seen: string[][] = [];
    const spy =
      (name: string): Consume =>
      async (got) => {
        seen.push([name, ...got.map(label)]);
        return { batchItemFailures: [] };
      };
    expect(await sideBySide({ sockets: spy('sockets'), webhooks: spy('webhooks') })(records)).toEqual({ batchItemFailures: [] });
    expect(seen.sort()).toEqual([
      ['sockets', 'a', 'b', 'c', 'd'],
      ['webhooks', 'a', 'b', 'c', 'd'],
    ]);
  });

  it('reports the earliest record in batch order that either part failed, whichever part failed it', async () => {
    const records = batch();
    const [, b, c, d] = records;
    expect(checkpoint(await sideBySide({ sockets: failing(d!), webhooks: failing(b!, c!) })(records))).toEqual([seq(b!)]);
    expect(checkpoint(await sideBySide({ sockets: failing(c!), webhooks: failing(d!) })(records))).toEqual([seq(c!)]);
  });

  it('a part that throws fails the batch from its first record, after the other part ran it all', async () => {
    const records = batch();
    let ran = 0;
    const result = await sideBySide({
      sockets: async () => {
        throw new Error('boom');
      },
      webhooks: async (got) => {
        ran = got.length;
        return { batchItemFailures: [] };
      },
    })(records);
    expect(checkpoint(result)).toEqual([seq(records[0]!)]);
    expect(ran).toBe(4);
  });

  it('a failure naming no record of the batch runs the whole batch again (never skips)', () => {
    const records = batch();
    expect(checkpoint(earliestFailure(records, ['not-in-batch']))).toEqual([seq(records[0]!)]);
    expect(checkpoint(earliestFailure(records, ['']))).toEqual([seq(records[0]!)]);
    expect(earliestFailure(records, [])).toEqual({ batchItemFailures: [] });
  });
});

describe('one by one (the cleanup reader)', () => {
  it('sends each record to the collector its route picks, in batch order, skipping records no route takes', async () => {
    const records = [recordOf('board'), recordOf('account'), recordOf('other'), recordOf('column')];
    const calls: string[] = [];
    const collector =
      (name: string): Consume =>
      async (got) => {
        calls.push(`${name}:${got.map(label).join(',')}`);
        return { batchItemFailures: [] };
      };
    const boards = collector('boards');
    const accounts = collector('accounts');
    const route = (record: ChangeRecord) =>
      label(record) === 'account' ? accounts : label(record) === 'other' ? undefined : boards;
    expect(await oneByOne(route)(records)).toEqual({ batchItemFailures: [] });
    expect(calls).toEqual(['boards:board', 'accounts:account', 'boards:column']);
  });

  it('stops at the first record that fails (reported or thrown): the records after it wait for the retry', async () => {
    const records = [recordOf('first'), recordOf('fails'), recordOf('after')];
    const ran: string[] = [];
    const reporting: Consume = async ([record]) => {
      ran.push(label(record));
      return { batchItemFailures: label(record) === 'fails' ? [{ itemIdentifier: seq(record!) }] : [] };
    };
    expect(checkpoint(await oneByOne(() => reporting)(records))).toEqual([seq(records[1]!)]);
    expect(ran).toEqual(['first', 'fails']);

    const throwing: Consume = async ([record]) => {
      if (label(record) === 'fails') throw new Error('table unavailable');
      return { batchItemFailures: [] };
    };
    expect(checkpoint(await oneByOne(() => throwing)(records))).toEqual([seq(records[1]!)]);
  });
});

describe("the change reader's real parts (sockets and webhooks) on one batch", () => {
  const ddb = mockClient(documentClient);
  const sockets = mockClient(ApiGatewayManagementApiClient);
  const sqs = mockClient(SQSClient);
  const at = '2026-11-23T10:00:00.000Z';

  beforeEach(() => {
    ddb.reset();
    sockets.reset();
    sqs.reset();
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(PutCommand).resolves({});
    sockets.on(DeleteConnectionCommand).resolves({});
  });

  /** A board with one member watching it and one webhook taking every event. */
  function board() {
    const id = randomUUID();
    const userId = randomUUID();
    const connectionId = `conn-${randomUUID()}`;
    const webhookId = randomUUID();
    const items = [
      { ...keys.board(id), type: 'board', id, labels: {}, seq: 9 },
      { ...keys.member(id, userId), user_id: userId, role: 'owner' },
      {
        ...keys.watch(id, connectionId),
        type: 'watch',
        board_id: id,
        user_id: userId,
        connection_id: connectionId,
        expires_at: Math.floor(Date.now() / 1000) + 3600,
      },
      {
        ...keys.webhook(id, webhookId),
        type: 'webhook',
        id: webhookId,
        board_id: id,
        url: 'https://hooks.example.com/in',
        events: [],
        description: null,
        active: true,
        disabled_reason: null,
        created_at: at,
      },
    ];
    return { id, userId, connectionId, webhookId, items };
  }

  /** A log item's INSERT, as lib/data/event-log.ts writes it (scripts/make-events.ts logItemBatch). */
  function logged(boardId: string, seqNo: number) {
    const event = {
      type: 'column.renamed',
      event_id: randomUUID(),
      board_id: boardId,
      actor_id: randomUUID(),
      occurred_at: at,
      seq: seqNo,
      column: { id: randomUUID(), name: `Column ${seqNo}`, position: 1 },
    };
    const item = { ...keys.logEntry(boardId, seqNo), type: 'event', board_id: boardId, seq: seqNo, kind: event.type, event };
    return {
      event,
      record: {
        eventID: randomUUID(),
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        dynamodb: { SequenceNumber: String(sequence++), NewImage: marshall(item, { removeUndefinedValues: true }) },
      },
    };
  }

  const invoke = (records: unknown[]) => handler({ Records: records } as never, {} as never);
  const framesTo = (connectionId: string) =>
    sockets
      .commandCalls(PostToConnectionCommand)
      .filter((call) => call.args[0].input.ConnectionId === connectionId)
      .map((call) => JSON.parse(new TextDecoder().decode(call.args[0].input.Data as Uint8Array)).event_id as string);

  it('a socket failure on one board and a webhook failure on another: the checkpoint is the earlier, and each part still served what it could', async () => {
    const a = board();
    const b = board();
    ddb.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: Record<string, unknown> }) => {
      const pk = input.ExpressionAttributeValues[':pk'];
      return { Items: (pk === `BOARD#${a.id}` ? a.items : pk === `BOARD#${b.id}` ? b.items : []) as never[] };
    });
    sockets.on(PostToConnectionCommand).resolves({});
    sockets.on(PostToConnectionCommand, { ConnectionId: b.connectionId }).rejects(new Error('connections API unavailable'));
    // A's first delivery is queued; its second fails to queue.
    sqs.on(SendMessageCommand).resolvesOnce({ MessageId: 'm1' }).rejects(new Error('SQS unavailable'));

    const a1 = logged(a.id, 1);
    const b1 = logged(b.id, 1);
    const a2 = logged(a.id, 2);
    const result = await invoke([a1.record, b1.record, a2.record]);

    // Sockets failed B at b1 (second in the batch); webhooks failed A at a2 (third): from b1.
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: b1.record.dynamodb.SequenceNumber }] });
    // The sockets part served A whole, beside the failing fanout; the fanout served B whole.
    expect(framesTo(a.connectionId)).toEqual([a1.event.event_id, a2.event.event_id]);
    const puts = ddb.commandCalls(PutCommand).map((call) => call.args[0].input.Item as Record<string, unknown>);
    expect(puts.map((item) => (item.event as { event_id: string } | undefined)?.event_id ?? item.event_id).sort()).toEqual(
      [a1.event.event_id, b1.event.event_id, a2.event.event_id].sort(),
    );
  });

  it('the retry from the checkpoint resends frames (at least once) but queues no delivery already made (conditional Puts)', async () => {
    const a = board();
    ddb.on(QueryCommand).resolves({ Items: a.items as never[] });
    sockets.on(PostToConnectionCommand).resolves({});
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const a1 = logged(a.id, 1);

    expect(await invoke([a1.record])).toEqual({ batchItemFailures: [] });
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);

    // The same record again, as the event source resends it: the delivery's item exists and has
    // been attempted, so its conditional Put fails and no message is sent; the frame goes again.
    const made = ddb.commandCalls(PutCommand)[0]!.args[0].input.Item as Record<string, unknown>;
    const conditional = Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
    ddb.on(PutCommand).rejects(conditional);
    ddb
      .on(BatchGetCommand)
      .resolves({ Responses: { [process.env.TABLE_NAME!]: [{ ...made, status: 'delivered', attempts: 1 }] } });
    expect(await invoke([a1.record])).toEqual({ batchItemFailures: [] });
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);
    expect(framesTo(a.connectionId)).toEqual([a1.event.event_id, a1.event.event_id]);
  });
});
