import { randomUUID } from 'node:crypto';
import { BatchGetCommand, type BatchGetCommandInput, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { resolveBoardScope } from '../../lib/data/access';
import { tableName } from '../../lib/data/db';
import { type ItemKey, keys } from '../../lib/data/table';
import { cardIdUnder, newCardIdPrefix } from '../../lib/domain/card-ids';
import { NotFound } from '../../lib/domain/errors';

/**
 * A card route reads a card whose id is under its board's prefix at both of its keys, `CARD#` and
 * `ARCHIVED#`, in one BatchGetItem. That is no snapshot: DynamoDB may read the two keys apart
 * (here it hands `CARD#` back unprocessed, and reads it again after the archive committed), so an
 * archive between them finds the card at neither. DynamoDB Local never splits a batch so, hence
 * the mock. The access check must read both keys again rather than answer 404.
 */
const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());

const boardId = randomUUID();
const userId = randomUUID();
const cardId = cardIdUnder(newCardIdPrefix());
const card = { id: cardId, board_id: boardId, column_id: randomUUID(), title: 'Plans', position: 1 };

/** The table as each BatchGetItem finds it: `archiveAfter` reads in, the card moves to `ARCHIVED#`. */
function tableThatArchivesAfter(archiveAfter: number, { deleted = false } = {}) {
  let reads = 0;
  const rows = new Map<string, Record<string, unknown>>();
  const put = (key: ItemKey, item: object) => rows.set(`${key.pk}|${key.sk}`, { ...key, ...item });
  put(keys.cardBoardLookup(cardId), { board_id: boardId });
  put(keys.board(boardId), { id: boardId, labels: {} });
  put(keys.member(boardId, userId), { board_id: boardId, user_id: userId, role: 'member' });
  put(keys.userProfile(userId), { user_id: userId });
  put(keys.card(boardId, cardId), card);
  ddb.reset();
  ddb.on(BatchGetCommand).callsFake((input: BatchGetCommandInput) => {
    reads++;
    const asked = input.RequestItems![tableName()]!.Keys as ItemKey[];
    // The first read of both keys: ARCHIVED# now, CARD# left unprocessed, then the archive commits.
    const splitHere = reads === archiveAfter;
    const read = asked.filter((key) => !(splitHere && key.sk.startsWith('CARD#')));
    const answer = {
      Responses: { [tableName()]: read.flatMap((key) => rows.get(`${key.pk}|${key.sk}`) ?? []) },
      UnprocessedKeys: splitHere ? { [tableName()]: { Keys: asked.filter((key) => !read.includes(key)) } } : {},
    };
    if (splitHere) {
      rows.delete(`${keys.card(boardId, cardId).pk}|${keys.card(boardId, cardId).sk}`);
      if (!deleted) put(keys.archivedCard(boardId, cardId), { ...card, archived_at: '2026-11-30T12:00:00.000Z' });
    }
    return answer;
  });
  return { reads: () => reads };
}

const readCard = () => resolveBoardScope({ scope: 'board', via: 'card', role: 'member' }, userId, cardId);

it('archived between the reads of its two keys: read again, and found archived', async () => {
  const table = tableThatArchivesAfter(2);
  const { scope } = await readCard();
  expect(scope).toMatchObject({ via: 'card', card: { id: cardId, archived_at: '2026-11-30T12:00:00.000Z' } });
  // The lookup, the access check (its CARD# key retried once), and the card's two keys again.
  expect(table.reads()).toBe(4);
});

it('deleted between them: at neither key twice, 404', async () => {
  tableThatArchivesAfter(2, { deleted: true });
  await expect(readCard()).rejects.toBeInstanceOf(NotFound);
});

it('not moved: found in the two round trips, nothing read again', async () => {
  const table = tableThatArchivesAfter(Number.POSITIVE_INFINITY);
  const { scope } = await readCard();
  expect(scope).toMatchObject({ via: 'card', card: { id: cardId } });
  expect(table.reads()).toBe(2);
});
