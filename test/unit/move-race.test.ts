import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import type { ScopeVia } from '../../lib/data/access';
import { moveCard } from '../../lib/data/cards';
import type { CardRecord, ColumnRecord } from '../../lib/data/records';
import { keys } from '../../lib/data/table';
import { NotFound } from '../../lib/domain/errors';

/**
 * The branch of a card move that DynamoDB Local shows only when a race happens to fall just so
 * (test/integration/concurrency.test.ts provokes it): the move's condition finds the card
 * edited since it was read, DynamoDB hands back the card as it now is, and the move is written
 * again on that and answers it.
 */
const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());
beforeEach(() => ddb.reset());

const boardId = randomUUID();
const from = randomUUID();
const target: ColumnRecord = { id: randomUUID(), board_id: boardId, title: 'To', position: 2 } as ColumnRecord;
const asRead: CardRecord = {
  id: randomUUID(),
  board_id: boardId,
  column_id: from,
  title: 'old title',
  description: null,
  position: 1,
  created_at: '2026-11-23T10:00:00.000Z',
};
const scope = {
  boardId,
  member: { board_id: boardId, user_id: randomUUID(), role: 'member', joined_at: asRead.created_at },
  board: { labels: {} },
  card: asRead,
  relatedColumns: new Map([[target.id, { boardId, item: target }]]),
  relatedCards: new Map(),
} as unknown as ScopeVia<'card'>;

/**
 * A move is one transaction (lib/data/event-log.ts commitChange): the card's update, the target
 * column's check, the board item's update (its seq, and the condition that neither column has
 * started its deletion) and the change's log item. A failed condition hands back the item as it
 * now is (ReturnValuesOnConditionCheckFailure ALL_OLD): the card, and the board when its own
 * condition failed.
 */
const cancelled = (first: { Code: string; Item?: object }, board: { Code: string; Item?: object } = { Code: 'None' }) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: [
      { Code: first.Code, ...(first.Item ? { Item: marshall({ ...keys.card(boardId, asRead.id), ...first.Item }) } : {}) },
      { Code: 'None' },
      { Code: board.Code, ...(board.Item ? { Item: marshall({ ...keys.board(boardId), ...board.Item }) } : {}) },
      { Code: 'None' },
    ],
  } as ConstructorParameters<typeof TransactionCanceledException>[0]);

const cardUpdate = (call: number) => ddb.commandCalls(TransactWriteCommand)[call]!.args[0].input.TransactItems![0]!.Update!;

it('an edit between the read and the write: the move is written again on the edited card and answers it', async () => {
  const edited = { ...asRead, title: 'new title', description: 'added later' };
  ddb
    .on(TransactWriteCommand)
    .rejectsOnce(cancelled({ Code: 'ConditionalCheckFailed', Item: edited }))
    .resolves({});

  const { card: answer } = await moveCard(scope, { target_column_id: target.id });

  expect(answer).toMatchObject({ id: asRead.id, column_id: target.id, title: 'new title', description: 'added later' });
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  expect(cardUpdate(0).ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
  // Each attempt requires the card exactly as it read it (lib/data/cards.ts: :read* values).
  expect(cardUpdate(0).ExpressionAttributeValues).toMatchObject({ ':readTitle': 'old title', ':readDescription': null });
  expect(cardUpdate(1).ExpressionAttributeValues).toMatchObject({ ':readTitle': 'new title', ':readDescription': 'added later' });
});

it('the card deleted in between: not found (404), no second write', async () => {
  ddb.on(TransactWriteCommand).rejects(cancelled({ Code: 'ConditionalCheckFailed' }));
  // Not at its key any more: read at both of its keys (archived meanwhile?), and at neither.
  ddb.on(BatchGetCommand).resolves({ Responses: {} });
  await expect(moveCard(scope, { target_column_id: target.id })).rejects.toBeInstanceOf(NotFound);
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(1);
});

it('the condition failing on an unchanged card is not retried as a race', async () => {
  ddb.on(TransactWriteCommand).rejects(cancelled({ Code: 'ConditionalCheckFailed', Item: asRead }));
  await expect(moveCard(scope, { target_column_id: target.id })).rejects.toBeInstanceOf(TransactionCanceledException);
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
});

it('a move to the place the card has: the condition fails on the place alone, and the stored card is the answer', async () => {
  const there = { ...asRead, column_id: target.id, position: 1 };
  ddb.on(TransactWriteCommand).rejects(cancelled({ Code: 'ConditionalCheckFailed', Item: { ...there, ev: { id: 'earlier' } } }));
  const { card: answer } = await moveCard({ ...scope, card: there } as ScopeVia<'card'>, { target_column_id: target.id });
  const { board_id: _, ...view } = there;
  expect(answer).toEqual({ ...view, label_ids: [], due_at: null, assignee_ids: [], archived_at: null, comment_count: 0 });
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  expect(cardUpdate(0).ConditionExpression).toContain('(column_id <> :column OR #position <> :position)');
});

describe('a move to the place the card already has, with a race', () => {
  const there = { ...asRead, column_id: target.id, position: 1 };
  const readThere = { ...scope, card: there } as ScopeVia<'card'>;

  it('its column being deleted meanwhile (the board check fails too): not found, no second write', async () => {
    // The board as it now is: its seq unchanged, the card's column being deleted.
    const deleting = { id: boardId, labels: {}, deleting_columns: new Set([target.id]) };
    ddb
      .on(TransactWriteCommand)
      .rejects(cancelled({ Code: 'ConditionalCheckFailed', Item: there }, { Code: 'ConditionalCheckFailed', Item: deleting }));
    await expect(moveCard(readThere, { target_column_id: target.id })).rejects.toBeInstanceOf(NotFound);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('edited meanwhile: tried again on the edited card, which is already there, and answered as stored', async () => {
    const edited = { ...there, title: 'new title' };
    ddb.on(TransactWriteCommand).rejects(cancelled({ Code: 'ConditionalCheckFailed', Item: edited }));
    const { card: answer } = await moveCard(readThere, { target_column_id: target.id });
    expect(answer).toMatchObject({ id: there.id, title: 'new title', column_id: target.id, position: 1 });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
    expect(cardUpdate(1).ExpressionAttributeValues).toMatchObject({ ':readTitle': 'new title' });
  });

  it('moved there by someone else since the read: tried again from where it is now, and answered as stored', async () => {
    // Read in `from`; another move has put it where this one would: nothing to write.
    ddb.on(TransactWriteCommand).rejects(cancelled({ Code: 'ConditionalCheckFailed', Item: there }));
    const { card: answer } = await moveCard(scope, { target_column_id: target.id });
    expect(answer).toMatchObject({ id: there.id, column_id: target.id, position: 1 });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
    // The retry's board condition watches the column the card is in now, not the one it was read in.
    const boardCheck = (call: number) =>
      ddb.commandCalls(TransactWriteCommand)[call]!.args[0].input.TransactItems![2]!.Update!.ExpressionAttributeValues![':from'];
    expect([boardCheck(0), boardCheck(1)]).toEqual([from, target.id]);
  });
});
