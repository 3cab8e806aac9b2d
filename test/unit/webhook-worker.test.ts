import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  BatchGetCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { WEBHOOK_MAX_IN_FLIGHT } from '../../lib/data/deliveries';
import type { DeliveryRecord, LeaseRecord, WebhookRecord } from '../../lib/data/records';
import { keys } from '../../lib/data/table';
import { BUSY_DELAY_SECONDS, CLAIM_MS, deliverMessage, RECORD_MARGIN_MS, type WorkerDeps } from '../../lib/queue/deliver';
import type { AttemptOutcome } from '../../lib/webhooks/attempt';
import { ATTEMPT_TIMEOUT_MS } from '../../lib/webhooks/attempt';
import { newSecret } from '../../lib/webhooks/signature';

/**
 * The worker's decisions for one message (lib/queue/deliver.ts) at an injected moment, with the
 * table and the queue stubbed: what the integration test cannot wait for (a 10-hour wait hopping
 * 15 minutes at a time, 5 days of failures) and the branches a race takes (a claim lost, a slot
 * taken first, a release that fails). The flows themselves run over the real local stack in
 * test/integration/webhooks-delivery.test.ts and webhook-isolation.test.ts.
 */
process.env.WEBHOOK_QUEUE_URL = 'http://sqs.local/000000000000/webhook-deliveries';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);

const now = new Date('2026-11-27T10:00:00.000Z');
const secret = newSecret();
const webhook = (over: Partial<WebhookRecord> = {}): WebhookRecord & { pk: string; sk: string } => ({
  ...keys.webhook('b1', 'w1'),
  id: 'w1',
  board_id: 'b1',
  url: 'https://hooks.example.com/in',
  events: [],
  description: null,
  active: true,
  disabled_reason: null,
  created_at: '2026-11-01T00:00:00.000Z',
  secret_enc: new Uint8Array([1, 2, 3]),
  ...over,
});
const deliverySk = 'DELIVERY#1764237600000#msg_x';
const delivery = (over: Partial<DeliveryRecord> = {}): DeliveryRecord & { pk: string; sk: string } => ({
  pk: 'WEBHOOK#w1',
  sk: deliverySk,
  id: 'msg_x',
  webhook_id: 'w1',
  board_id: 'b1',
  event_id: 'e1',
  type: 'card.created',
  seq: 3,
  body: '{"type":"card.created"}',
  status: 'pending',
  attempts: 0,
  last_attempt_at: null,
  last_status_code: null,
  last_error: null,
  next_attempt_at: null,
  occurred_at: '2026-11-27T09:59:59.000Z',
  ttl: 0,
  ...over,
});
const message = { messageId: 'm1', body: JSON.stringify({ webhook_id: 'w1', board_id: 'b1', delivery_sk: deliverySk }) };

let attempts: { url: string; id: string; body: string; secrets: readonly string[] }[];
const deps = (outcome: AttemptOutcome, schedule: readonly number[] = [1, 1]): WorkerDeps => ({
  now: () => now,
  attempt: async (input) => {
    attempts.push(input);
    return outcome;
  },
  open: async () => secret,
  schedule: () => schedule,
  allowHosts: new Set(),
  random: () => 0,
});
/** Slot `slot` of webhook w1, held until `until` (ms). */
const lease = (slot: number, until: number): LeaseRecord & { pk: string; sk: string } => ({
  ...keys.webhookLease('w1', slot),
  webhook_id: 'w1',
  slot,
  held_until: until,
  claim_token: `holder-${slot}`,
  delivery_sk: 'DELIVERY#1#msg_other',
  ttl: 0,
});
const allHeld = () => Array.from({ length: WEBHOOK_MAX_IN_FLIGHT }, (_, n) => lease(n, now.getTime() + 5_000));
const items = (...found: object[]) => ddb.on(BatchGetCommand).resolves({ Responses: { 'unit-test-table': found } });
const updates = () => ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input);
const claims = () => ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
const releases = () => ddb.commandCalls(DeleteCommand).map((c) => c.args[0].input);
const cancelled = (...codes: string[]) =>
  Object.assign(new Error('cancelled'), {
    name: 'TransactionCanceledException',
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
const sends = () => sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
const conditionFailed = () => Object.assign(new Error('condition'), { name: 'ConditionalCheckFailedException' });
/** What a single write gets while a transaction is in flight on its item (the SDK does not retry it). */
const transactionConflict = () => Object.assign(new Error('conflict'), { name: 'TransactionConflictException' });

/** The table's writes all succeed, with nothing read yet (`items` says what the reads answer). */
function storageAnswersWrites() {
  ddb.reset();
  ddb.on(UpdateCommand).resolves({});
  ddb.on(TransactWriteCommand).resolves({});
  ddb.on(DeleteCommand).resolves({});
}

beforeEach(() => {
  storageAnswersWrites();
  sqs.reset();
  attempts = [];
  sqs.on(SendMessageCommand).resolves({});
});

describe('the delivery worker', () => {
  it('delivers a due delivery once claimed, signing with the decrypted secret, and records it', async () => {
    items(delivery(), webhook());
    expect(await deliverMessage(message, deps({ ok: true, status_code: 204, error: null }))).toBe('delivered');
    expect(attempts).toEqual([
      { url: 'https://hooks.example.com/in', id: 'msg_x', body: '{"type":"card.created"}', secrets: [secret] },
    ]);
    // The claim and slot 0 (the first free one) in one transaction; the record; the slot released.
    const [[claim, slot]] = claims() as [NonNullable<ReturnType<typeof claims>[number]>];
    expect(claim!.Update!.ConditionExpression).toContain('attempts = :seen');
    expect(slot!.Put!.Item).toMatchObject({ pk: 'WEBHOOK#w1', sk: '#LEASE#0', held_until: now.getTime() + CLAIM_MS });
    expect(slot!.Put!.ConditionExpression).toBe('attribute_not_exists(pk)');
    const token = claim!.Update!.ExpressionAttributeValues![':token'];
    expect(slot!.Put!.Item!.claim_token).toBe(token);
    const [record] = updates();
    expect(releases()).toEqual([
      expect.objectContaining({ Key: { pk: 'WEBHOOK#w1', sk: '#LEASE#0' }, ExpressionAttributeValues: { ':token': token } }),
    ]);
    expect(record!.ExpressionAttributeValues).toMatchObject({
      ':status': 'delivered',
      ':code': 204,
      ':error': null,
      ':next': null,
    });
    expect(sends()).toEqual([]);
  });

  it('waits in hops of at most 15 minutes: a retry 10 hours away is sent again with 900 s, nothing attempted', async () => {
    items(delivery({ attempts: 6, next_attempt_at: new Date(now.getTime() + 10 * 3600_000).toISOString() }), webhook());
    expect(await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).toBe('waiting');
    expect(sends()).toEqual([expect.objectContaining({ DelaySeconds: 900, MessageBody: message.body })]);
    expect(attempts).toEqual([]);
    expect(updates()).toEqual([]);
    expect(claims()).toEqual([]);
  });

  it('waits the rest when it is under 15 minutes', async () => {
    items(delivery({ attempts: 1, next_attempt_at: new Date(now.getTime() + 100_500).toISOString() }), webhook());
    await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }));
    expect(sends()).toEqual([expect.objectContaining({ DelaySeconds: 101 })]);
  });

  it('makes no attempt when the claim is lost to another copy of the message', async () => {
    items(delivery(), webhook());
    ddb.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    expect(await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).toBe('claimed_elsewhere');
    expect(attempts).toEqual([]);
    expect(sends()).toEqual([]);
  });

  it.each([
    ['the delivery is gone', [webhook()], 'gone'],
    ['the webhook is gone', [delivery()], 'gone'],
    ['the delivery is no longer pending', [delivery({ status: 'delivered', attempts: 1 }), webhook()], 'not_pending'],
  ])('drops the message when %s', async (_what, found, handled) => {
    items(...found);
    expect(await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).toBe(handled);
    expect(attempts).toEqual([]);
    expect(sends()).toEqual([]);
  });

  it('drops a message that is not a delivery', async () => {
    expect(await deliverMessage({ messageId: 'm', body: '{"nope":1}' }, deps({ ok: true, status_code: 200, error: null }))).toBe(
      'malformed',
    );
  });

  it('ends a pending delivery of a switched-off webhook as webhook_disabled, but still delivers its ping', async () => {
    items(delivery(), webhook({ active: false, disabled_reason: 'failing' }));
    expect(await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).toBe('disabled');
    expect(updates()[0]!.ExpressionAttributeValues).toMatchObject({ ':failed': 'failed', ':error': 'webhook_disabled' });
    expect(attempts).toEqual([]);

    storageAnswersWrites();
    items(delivery({ type: 'webhook.ping', seq: null }), webhook({ active: false, disabled_reason: 'failing' }));
    expect(await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).toBe('delivered');
    expect(attempts).toHaveLength(1);
  });

  it('ends a delivery made before the webhook was switched on again (its seq not above from_seq) without an attempt', async () => {
    // Switched off after this delivery was made, then on again at seq 3: the event is older than that.
    items(delivery({ seq: 3 }), webhook({ active: true, from_seq: 3 } as Partial<WebhookRecord>));
    expect(await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).toBe('disabled');
    expect(updates()[0]!.ExpressionAttributeValues).toMatchObject({ ':failed': 'failed', ':error': 'webhook_disabled' });
    expect(attempts).toEqual([]);

    storageAnswersWrites();
    // An event committed after it was switched on goes out.
    items(delivery({ seq: 4 }), webhook({ active: true, from_seq: 3 } as Partial<WebhookRecord>));
    expect(await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).toBe('delivered');
    expect(attempts).toHaveLength(1);
  });

  it('signs with both secrets within 24 hours of a rotation, and with the new one only after', async () => {
    const older = newSecret();
    const open: WorkerDeps['open'] = async (ciphertext) => (ciphertext[0] === 9 ? older : secret);
    const rotated = (hoursAgo: number) =>
      webhook({
        previous_secret_enc: new Uint8Array([9]),
        rotated_at: new Date(now.getTime() - hoursAgo * 3600_000).toISOString(),
      });
    items(delivery(), rotated(23));
    await deliverMessage(message, { ...deps({ ok: true, status_code: 200, error: null }), open });
    items(delivery(), rotated(25));
    await deliverMessage(message, { ...deps({ ok: true, status_code: 200, error: null }), open });
    expect(attempts.map((a) => a.secrets)).toEqual([[secret, older], [secret]]);
  });

  it('retries a failed attempt after the schedule’s next delay, with a new message', async () => {
    items(delivery(), webhook());
    ddb.on(UpdateCommand).resolves({ Attributes: { active: true, failing_since: now.toISOString(), failed_in_row: 0 } });
    expect(await deliverMessage(message, deps({ ok: false, status_code: 500, error: 'http_500' }, [30, 60]))).toBe('retrying');
    const record = updates()[0]!;
    expect(record.ExpressionAttributeValues).toMatchObject({
      ':status': 'pending',
      ':code': 500,
      ':error': 'http_500',
      ':next': new Date(now.getTime() + 30_000).toISOString(),
    });
    expect(sends()).toEqual([expect.objectContaining({ DelaySeconds: 30 })]);
  });

  it('ends failed when the schedule is spent, and switches the webhook off at 50 in a row', async () => {
    items(delivery({ attempts: 2 }), webhook());
    ddb
      .on(UpdateCommand)
      .resolves({})
      .on(UpdateCommand, { ReturnValues: 'ALL_NEW' })
      .resolves({ Attributes: { active: true, failing_since: now.toISOString(), failed_in_row: 50 } });
    expect(await deliverMessage(message, deps({ ok: false, status_code: null, error: 'timeout' }))).toBe('failed');
    const all = updates();
    expect(all[0]!.ExpressionAttributeValues).toMatchObject({ ':status': 'failed', ':next': null, ':error': 'timeout' });
    const off = all.find((u) => u.UpdateExpression?.includes('disabled_reason'));
    expect(off?.ConditionExpression).toContain('failed_in_row = :count');
    expect(off?.ExpressionAttributeValues).toMatchObject({ ':count': 50, ':since': now.toISOString() });
    expect(sends()).toEqual([]);
  });

  it('switches off after 5 days of failures, judged at the injected moment', async () => {
    const since = new Date(now.getTime() - 5 * 24 * 3600_000).toISOString();
    items(delivery(), webhook({ failing_since: since, failed_in_row: 3 }));
    ddb
      .on(UpdateCommand)
      .resolves({})
      .on(UpdateCommand, { ReturnValues: 'ALL_NEW' })
      .resolves({ Attributes: { active: true, failing_since: since, failed_in_row: 3 } });
    expect(await deliverMessage(message, deps({ ok: false, status_code: 503, error: 'http_503' }))).toBe('retrying');
    expect(updates().some((u) => u.UpdateExpression?.includes('disabled_reason'))).toBe(true);
  });

  it('records nothing more when its claim was taken meanwhile (expired and claimed by another copy)', async () => {
    items(delivery(), webhook());
    ddb.on(UpdateCommand).rejects(conditionFailed());
    ddb.on(DeleteCommand).rejects(conditionFailed());
    expect(await deliverMessage(message, deps({ ok: false, status_code: 500, error: 'http_500' }))).toBe('claim_lost');
    expect(sends()).toEqual([]);
  });
});

describe("one webhook's attempts in flight (its lease slots)", () => {
  it('with every slot held, attempts nothing and sends the message again a few seconds later (jittered)', async () => {
    items(delivery(), webhook(), ...allHeld());
    const delays: number[] = [];
    for (const random of [0, 0.5, 0.999]) {
      sqs.resetHistory();
      expect(await deliverMessage(message, { ...deps({ ok: true, status_code: 200, error: null }), random: () => random })).toBe(
        'busy',
      );
      const [sent] = sends();
      expect(sent).toMatchObject({ MessageBody: message.body });
      delays.push(sent!.DelaySeconds!);
    }
    expect(delays).toEqual([BUSY_DELAY_SECONDS.min, 4, BUSY_DELAY_SECONDS.max]);
    expect(attempts).toEqual([]);
    expect(claims()).toEqual([]);
    expect(updates()).toEqual([]);
  });

  it('takes a slot whose holder died (held_until passed), on condition that it is still exactly as read', async () => {
    const held = allHeld();
    held[2] = lease(2, now.getTime()); // expired at this very moment: free
    items(delivery(), webhook(), ...held);
    expect(await deliverMessage(message, deps({ ok: true, status_code: 204, error: null }))).toBe('delivered');
    const [[, slot]] = claims() as [NonNullable<ReturnType<typeof claims>[number]>];
    expect(slot!.Put!.Item).toMatchObject({ sk: '#LEASE#2' });
    expect(slot!.Put!.ConditionExpression).toBe('held_until = :held AND claim_token = :holder AND held_until <= :now');
    expect(slot!.Put!.ExpressionAttributeValues).toEqual({
      ':held': now.getTime(),
      ':holder': 'holder-2',
      ':now': now.getTime(),
    });
  });

  it('picks among the free slots at random, so that workers reading the same slots spread', async () => {
    items(delivery(), webhook(), lease(0, now.getTime() + 1));
    await deliverMessage(message, { ...deps({ ok: true, status_code: 204, error: null }), random: () => 0.99 });
    expect((claims()[0]![1]!.Put!.Item as { sk: string }).sk).toBe(`#LEASE#${WEBHOOK_MAX_IN_FLIGHT - 1}`);
  });

  it('is busy when another worker took the slot first (its condition failed), and tries no other slot', async () => {
    items(delivery(), webhook());
    ddb.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed'));
    expect(await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).toBe('busy');
    expect(claims()).toHaveLength(1);
    expect(attempts).toEqual([]);
    expect(sends()).toEqual([expect.objectContaining({ MessageBody: message.body })]);
  });

  it('lets the message come back when the claim fails for another reason (throttled)', async () => {
    items(delivery(), webhook());
    ddb.on(TransactWriteCommand).rejects(cancelled('None', 'ThrottlingError'));
    await expect(deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).rejects.toThrow('cancelled');
    expect(sends()).toEqual([]);
  });

  it('still records a delivered attempt when releasing its slot fails (the slot expires with the claim)', async () => {
    items(delivery(), webhook());
    ddb.on(DeleteCommand).rejects(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    expect(await deliverMessage(message, deps({ ok: true, status_code: 204, error: null }))).toBe('delivered');
    expect(updates()[0]!.ExpressionAttributeValues).toMatchObject({ ':status': 'delivered' });
  });

  it('releases its slot when the attempt cannot be made (the secret does not open), and the message comes back', async () => {
    items(delivery(), webhook());
    const failing = { ...deps({ ok: true, status_code: 200, error: null }), open: () => Promise.reject(new Error('kms down')) };
    await expect(deliverMessage(message, failing)).rejects.toThrow('kms down');
    expect(releases()).toHaveLength(1);
    expect(updates()).toEqual([]);
  });
});

describe('the claim and the record beside transactions in flight (races DynamoDB Local cannot stage on demand)', () => {
  it.each([
    ['the delivery (another copy claiming it)', ['TransactionConflict', 'None']],
    ['the slot (another worker claiming it)', ['None', 'TransactionConflict']],
    ['both items', ['TransactionConflict', 'TransactionConflict']],
  ])(
    'a claim still meeting a transaction on %s after the retries is busy: sent again, acknowledged, never thrown',
    async (_what, codes) => {
      items(delivery(), webhook());
      ddb.on(TransactWriteCommand).rejects(cancelled(...codes));
      expect(await deliverMessage(message, deps({ ok: true, status_code: 200, error: null }))).toBe('busy');
      expect(claims().length).toBeGreaterThan(1); // transactWrite tried again before giving up
      expect(attempts).toEqual([]);
      expect(updates()).toEqual([]);
      const [sent, ...more] = sends();
      expect(more).toEqual([]);
      expect(sent).toMatchObject({ MessageBody: message.body });
      expect(sent!.DelaySeconds).toBeGreaterThanOrEqual(BUSY_DELAY_SECONDS.min);
      expect(sent!.DelaySeconds).toBeLessThanOrEqual(BUSY_DELAY_SECONDS.max);
    },
  );

  it('a claim that wins after a conflict attempts once', async () => {
    items(delivery(), webhook());
    ddb.on(TransactWriteCommand).rejectsOnce(cancelled('TransactionConflict', 'None')).resolves({});
    expect(await deliverMessage(message, deps({ ok: true, status_code: 204, error: null }))).toBe('delivered');
    expect(attempts).toHaveLength(1);
  });

  it('keeps the outcome of a POST made when its record meets a duplicate copy’s claim transaction: written again, no second POST', async () => {
    items(delivery(), webhook());
    ddb.on(UpdateCommand).rejectsOnce(transactionConflict()).rejectsOnce(transactionConflict()).resolves({});
    ddb.on(DeleteCommand).rejectsOnce(transactionConflict()).resolves({});
    expect(await deliverMessage(message, deps({ ok: true, status_code: 204, error: null }))).toBe('delivered');
    expect(attempts).toHaveLength(1);
    const records = updates().filter((u) => u.UpdateExpression?.includes('attempts = attempts + :one'));
    expect(records).toHaveLength(3);
    for (const record of records)
      expect(record.ExpressionAttributeValues).toMatchObject({ ':status': 'delivered', ':code': 204 });
    expect(releases()).toHaveLength(2); // the slot's release, written again too
    expect(sends()).toEqual([]);
  });

  it('keeps a failed attempt’s record and next message through a conflict as well', async () => {
    items(delivery(), webhook());
    ddb
      .on(UpdateCommand)
      .resolves({ Attributes: { active: true, failing_since: now.toISOString(), failed_in_row: 0 } })
      .on(UpdateCommand, { ConditionExpression: 'claim_token = :token' })
      .rejectsOnce(transactionConflict())
      .resolves({});
    expect(await deliverMessage(message, deps({ ok: false, status_code: 500, error: 'http_500' }, [30]))).toBe('retrying');
    expect(sends()).toEqual([expect.objectContaining({ DelaySeconds: 30 })]);
  });

  it('lets the message come back (no silent loss) when the record keeps meeting transactions', async () => {
    items(delivery(), webhook());
    ddb.on(UpdateCommand).rejects(transactionConflict());
    await expect(deliverMessage(message, deps({ ok: true, status_code: 204, error: null }))).rejects.toMatchObject({
      name: 'StorageBusy',
    });
    expect(sends()).toEqual([]);
  });
});

describe('a secret that opens late in the claim (a slow KMS Decrypt)', () => {
  /** Deps whose clock moves on by `openMs` while the secret opens (no real wait). */
  const slowOpen = (openMs: number): WorkerDeps => {
    let clock = now.getTime();
    return {
      ...deps({ ok: true, status_code: 204, error: null }),
      now: () => new Date(clock),
      open: async () => {
        clock += openMs;
        return secret;
      },
    };
  };
  const latest = CLAIM_MS - ATTEMPT_TIMEOUT_MS - RECORD_MARGIN_MS;

  it('attempts when the attempt and its records still fit in the claim', async () => {
    items(delivery(), webhook());
    expect(await deliverMessage(message, slowOpen(latest))).toBe('delivered');
    expect(attempts).toHaveLength(1);
  });

  it('attempts nothing past that: gives back the claim and the slot, and sends the message again (acknowledged)', async () => {
    items(delivery(), webhook());
    expect(await deliverMessage(message, slowOpen(latest + 1))).toBe('deferred');
    expect(attempts).toEqual([]);
    const token = claims()[0]![0]!.Update!.ExpressionAttributeValues![':token'];
    expect(updates()).toEqual([
      expect.objectContaining({
        UpdateExpression: 'REMOVE claim_token, claimed_until',
        ConditionExpression: 'claim_token = :token',
        ExpressionAttributeValues: { ':token': token },
      }),
    ]);
    expect(releases()).toEqual([expect.objectContaining({ ExpressionAttributeValues: { ':token': token } })]);
    expect(sends()).toEqual([expect.objectContaining({ MessageBody: message.body, DelaySeconds: BUSY_DELAY_SECONDS.min })]);
  });

  it('sends nothing when the claim was already taken by another copy (that copy attempts)', async () => {
    items(delivery(), webhook());
    ddb.on(UpdateCommand).rejects(conditionFailed());
    expect(await deliverMessage(message, slowOpen(CLAIM_MS + 1))).toBe('claim_lost');
    expect(attempts).toEqual([]);
    expect(sends()).toEqual([]);
  });
});

describe("the worker's metrics", () => {
  it('are written with the service dimension, as every other metric of the service: delivered, and deferred when busy', async () => {
    // The worker's modules loaded afresh with metrics on (the unit tests' environment turns them off at load).
    const previous = process.env.METRICS_DISABLED;
    process.env.METRICS_DISABLED = 'false';
    let fresh!: {
      deliver: typeof import('../../lib/queue/deliver');
      ddb: ReturnType<typeof mockClient>;
      sqs: ReturnType<typeof mockClient>;
    };
    jest.isolateModules(() => {
      const dynamo = require('@aws-sdk/lib-dynamodb') as typeof import('@aws-sdk/lib-dynamodb');
      const queue = require('@aws-sdk/client-sqs') as typeof import('@aws-sdk/client-sqs');
      fresh = {
        deliver: require('../../lib/queue/deliver'),
        ddb: mockClient(dynamo.DynamoDBDocumentClient),
        sqs: mockClient(queue.SQSClient),
      };
      fresh.ddb.on(dynamo.UpdateCommand).resolves({});
      fresh.ddb.on(dynamo.TransactWriteCommand).resolves({});
      fresh.ddb.on(dynamo.DeleteCommand).resolves({});
      // First message: slots free (delivered); second: every slot held (busy).
      fresh.ddb
        .on(dynamo.BatchGetCommand)
        .resolvesOnce({ Responses: { 'unit-test-table': [delivery(), webhook()] } })
        .resolves({ Responses: { 'unit-test-table': [delivery(), webhook(), ...allHeld()] } });
      fresh.sqs.on(queue.SendMessageCommand).resolves({});
    });
    const written: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      expect(await fresh.deliver.deliverMessage(message, deps({ ok: true, status_code: 204, error: null }))).toBe('delivered');
      expect(await fresh.deliver.deliverMessage(message, deps({ ok: true, status_code: 204, error: null }))).toBe('busy');
    } finally {
      write.mockRestore();
      fresh.ddb.restore();
      fresh.sqs.restore();
      if (previous === undefined) delete process.env.METRICS_DISABLED;
      else process.env.METRICS_DISABLED = previous;
    }
    const metrics = written
      .filter((line) => line.includes('"_aws"'))
      .map(
        (line) =>
          JSON.parse(line) as {
            _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] };
            service?: string;
          },
      );
    expect(
      metrics.map((m) => [m._aws.CloudWatchMetrics[0]!.Metrics[0]!.Name, m._aws.CloudWatchMetrics[0]!.Dimensions, m.service]),
    ).toEqual([
      ['WebhookDelivered', [['service']], 'task-board'],
      ['WebhookAttemptDeferred', [['service']], 'task-board'],
    ]);
  });
});
