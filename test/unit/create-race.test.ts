import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import type { ScopeVia } from '../../lib/data/access';
import { createCard } from '../../lib/data/cards';
import type { ColumnRecord } from '../../lib/data/records';
import { keys } from '../../lib/data/table';
import { NotFound } from '../../lib/domain/errors';

/**
 * A branch of a card create that DynamoDB Local shows only when three requests interleave just
 * so: another create takes the column's `card_version` between this create's two reads, and
 * then the board is deleted before this create's transaction lands. The transaction fails on the
 * version and on the board at once; the create would queue for its turn, finds the board gone
 * when it takes its ticket, and must answer 404, not go round again on the version it first read
 * until it runs out of attempts (503).
 */
const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());
beforeEach(() => ddb.reset());

const boardId = randomUUID();
const column: ColumnRecord = { id: randomUUID(), board_id: boardId, title: 'Hot', position: 1 } as ColumnRecord;
const versionRead = 4;
const scope = {
  boardId,
  member: { board_id: boardId, user_id: randomUUID(), role: 'member', joined_at: '2026-11-29T10:00:00.000Z' },
  board: { id: boardId, labels: {}, seq: 7 },
  column,
  columnCardVersion: versionRead,
} as unknown as ScopeVia<'column'>;

/**
 * A create is one transaction (lib/data/event-log.ts commitChange): the card, its lookup, the
 * column lookup's version, the column's check, then the board item and the log item. A failed
 * condition hands back the item as it now is (ALL_OLD): none for an item that is gone.
 */
const cancelled = (version: { Code: string; Item?: object }, board: { Code: string }) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: [
      { Code: 'None' },
      { Code: 'None' },
      { Code: version.Code, ...(version.Item ? { Item: marshall({ ...keys.columnLookup(column.id), ...version.Item }) } : {}) },
      { Code: 'None' },
      { Code: board.Code },
      { Code: 'None' },
    ],
  } as ConstructorParameters<typeof TransactionCanceledException>[0]);

const versionCheck = (call: number) => ddb.commandCalls(TransactWriteCommand)[call]!.args[0].input.TransactItems![2]!.Update!;

it('a create that lost its column version to another create, on a board deleted meanwhile, answers 404', async () => {
  // The table as it now is: the column's version one past what this create read, the board gone.
  ddb.on(TransactWriteCommand).callsFake((input) => {
    const seen = input.TransactItems[2].Update.ExpressionAttributeValues?.[':seen'];
    const stale = seen !== undefined && seen !== versionRead + 1;
    throw cancelled(
      stale ? { Code: 'ConditionalCheckFailed', Item: { board_id: boardId, card_version: versionRead + 1 } } : { Code: 'None' },
      { Code: 'ConditionalCheckFailed' },
    );
  });
  // Its ticket: the board item is gone.
  ddb
    .on(UpdateCommand)
    .rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
  ddb.on(QueryCommand).resolves({ Items: [] });

  await expect(createCard(scope, { title: 'Late' }, 3)).rejects.toEqual(new NotFound('Column'));

  // Two transactions, not forty: the second carries the version the first one's cancellation returned.
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  expect(versionCheck(0).ExpressionAttributeValues).toMatchObject({ ':seen': versionRead });
  expect(versionCheck(1).ExpressionAttributeValues).toMatchObject({ ':seen': versionRead + 1 });
  // It tried to queue once, and read its column's end again after the version it writes against.
  expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
  expect(ddb.commandCalls(QueryCommand)).toHaveLength(1);
});
