import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { createBoard } from '../../lib/data/boards';
import { cardIdPrefixOf } from '../../lib/domain/card-ids';

/**
 * A new board draws its card-id prefix at random and claims it in its creating transaction, on
 * condition that no board holds it yet. Two boards drawing the same 60 bits is a failure path no
 * local run will ever meet (one chance in 2^60 per board), so DynamoDB's refusal is mocked here.
 */
const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());
beforeEach(() => ddb.reset());

/** The creating transaction's items, in order: board, prefix item, membership, its mirror, profile check. */
const refusedAt = (index: number) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: Array.from({ length: 5 }, (_, i) => ({ Code: i === index ? 'ConditionalCheckFailed' : 'None' })),
  } as ConstructorParameters<typeof TransactionCanceledException>[0]);

const claimedPrefix = (call: number) => {
  const items = ddb.commandCalls(TransactWriteCommand)[call]!.args[0].input.TransactItems!;
  const board = items[0]!.Put!.Item!;
  const claim = items[1]!.Put!;
  expect(claim).toMatchObject({
    Item: { board_id: board.id, type: 'card_ids' },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  expect(claim.Item!.pk).toBe(`CARDIDS#${board.card_id_prefix}`);
  return board.card_id_prefix as string;
};

it('a prefix another board holds: the create goes again with another, and answers once', async () => {
  ddb.on(TransactWriteCommand).rejectsOnce(refusedAt(1)).resolves({});
  const board = await createBoard(randomUUID(), 'Plans');
  expect(board).toMatchObject({ title: 'Plans' });
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  const [first, second] = [claimedPrefix(0), claimedPrefix(1)];
  expect(second).not.toBe(first);
  expect(cardIdPrefixOf(`${second}-8000-000000000000`)).toBe(second);
});

it('three refused prefixes in a row: the error goes out rather than a loop', async () => {
  ddb.on(TransactWriteCommand).rejects(refusedAt(1));
  await expect(createBoard(randomUUID(), 'Plans')).rejects.toBeInstanceOf(TransactionCanceledException);
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(3);
});

it("another item's refusal is not retried: a deleted account's create is refused at once", async () => {
  ddb.on(TransactWriteCommand).rejects(refusedAt(4));
  await expect(createBoard(randomUUID(), 'Plans')).rejects.toMatchObject({ kind: 'unauthorized' });
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
});
