import { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { nextTableWrite, signalTableWrites } from '../../infra/local/table-writes';

/**
 * The local stream poller sleeps up to 250 ms between empty reads and is woken by the writes the
 * stack's own functions send (infra/local/table-writes.ts). What wakes it must be exactly the
 * commands that put records on the stream: a read that woke it would bring back the idle CPU the
 * wait saves, and a write that did not would leave its live event 250 ms late. The client's HTTP
 * handler answers every command at once with an empty body, so nothing here waits on time.
 */
const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: {
      handle: async () => ({ response: { statusCode: 200, headers: {}, body: Readable.from(['{}']) } }),
    },
  }),
);
signalTableWrites(client);

/** A wait that outlasts the test unless a write ends it, and whether it has ended yet. */
function watchForWrite() {
  const state: { woken?: boolean } = {};
  void nextTableWrite(600_000).then((written) => {
    state.woken = written;
  });
  return state;
}

/** Lets every settled promise run: a wake is called before the write's send resolves. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const TableName = 'task-board-local';

describe('the local stream poller is woken by table writes', () => {
  it('is not woken by reads', async () => {
    const watch = watchForWrite();
    await client.send(new GetCommand({ TableName, Key: { pk: 'b', sk: 'b' } }));
    await client.send(
      new QueryCommand({ TableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'b' } }),
    );
    await settled();
    expect(watch.woken).toBeUndefined();
    // The wait ends with the next write.
    await client.send(new PutCommand({ TableName, Item: { pk: 'b', sk: 'b' } }));
    await settled();
    expect(watch.woken).toBe(true);
  });

  it.each([
    ['a put', new PutCommand({ TableName, Item: { pk: 'b', sk: 'c' } })],
    ['a transaction', new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: { pk: 'b', sk: 'd' } } }] })],
  ])('is woken by %s, every waiter at once', async (_name, command) => {
    const waits = [watchForWrite(), watchForWrite()];
    await client.send(command as PutCommand);
    await settled();
    expect(waits.map((wait) => wait.woken)).toEqual([true, true]);
  });

  it('answers false when its time is up without a write: the poller then waits longer next time', async () => {
    const wait = nextTableWrite(50);
    await client.send(new GetCommand({ TableName, Key: { pk: 'b', sk: 'b' } }));
    await expect(wait).resolves.toBe(false);
  });
});
