import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { callsSoFar, DeadlineExceeded, raceDeadline, stopAtDeadline, WRITE_BUDGET_MS } from '../../lib/runtime/deadline';

/**
 * A write cannot be recalled once sent: one still in flight when a request is answered 503 for
 * running out of time may commit afterwards, and the client would have been told it failed (found
 * with 16 creates racing into one column on a loaded machine: 12 answered 503, 5 cards created).
 * So a write starts only with WRITE_BUDGET_MS left before the deadline; reads may still start.
 *
 * The client here has the service's deadline middleware and an endpoint that refuses connections:
 * a command that was sent fails with the connection refused, one that was not with DeadlineExceeded.
 * (aws-sdk-client-mock replaces `send`, so it would skip the middleware under test.)
 */
const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: 'eu-west-1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  }),
);
stopAtDeadline(client);

const write = () =>
  client.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: 't', Item: { pk: 'a', sk: 'b' } } }] }));
const read = () => client.send(new GetCommand({ TableName: 't', Key: { pk: 'a', sk: 'b' } }));
const outcome = (work: () => Promise<unknown>) =>
  work().then(
    () => 'answered',
    (error: Error) => (error instanceof DeadlineExceeded ? 'not sent' : 'sent'),
  );
const never = () => 'timed out';

it('sends a write while more than the write budget is left before the deadline', async () => {
  expect(await raceDeadline(WRITE_BUDGET_MS + 20_000, () => outcome(write), never)).toBe('sent');
});

it('does not send a write with less than the budget left', async () => {
  expect(await raceDeadline(WRITE_BUDGET_MS - 1000, () => outcome(write), never)).toBe('not sent');
});

it('still sends a read with little time left (a read changes nothing)', async () => {
  expect(await raceDeadline(WRITE_BUDGET_MS - 1000, () => outcome(read), never)).toBe('sent');
});

it('applies no budget outside a request (clean-up, the collectors)', async () => {
  expect(await outcome(write)).toBe('sent');
});

/**
 * A waiter on a busy board plans its reads by what is left of its write's call budget, so each
 * request counts the calls it sent: its own, not those of requests running beside it, and not a
 * write the deadline kept back.
 */
it('counts the calls each request sent, and only its own', async () => {
  const sendAndCount = (reads: number, writes: number) =>
    raceDeadline(
      WRITE_BUDGET_MS - 1000,
      async () => {
        for (let i = 0; i < reads; i++) await outcome(read);
        for (let i = 0; i < writes; i++) await outcome(write);
        return callsSoFar();
      },
      () => -1,
    );
  expect(await Promise.all([sendAndCount(1, 0), sendAndCount(3, 0), sendAndCount(2, 2)])).toEqual([1, 3, 2]);
  expect(callsSoFar()).toBe(0);
});
