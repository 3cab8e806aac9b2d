import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ScopeVia } from '../../lib/data/access';
import { keys } from '../../lib/data/table';
import { cardIdPrefixOf, newCardIdPrefix } from '../../lib/domain/card-ids';
import {
  addMember,
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  subjectOf,
  type TestUser,
  UUID,
} from '../support/api';
import { localDocumentClient, localEnv, runStorageCodeOn } from '../support/local-table';
import { eventually } from '../support/wait';

/**
 * A card id names its board: it starts with the board's card-id prefix, and one item per board
 * maps the prefix to the board, instead of one lookup item per card. Checked from outside (the
 * ids, who reaches what through them, forged ids, a board's deletion), in the table (what a card
 * write leaves), for a board made before prefixes (whose cards keep their own lookups), and, with
 * the service's own comment edit run in this process, the race the card's own lookup used to
 * hide: its card archived or deleted between the edit's read and its write.
 */

const env = localEnv();
runStorageCodeOn(env);
const db = localDocumentClient(env);
afterAll(() => db.destroy());

const stored = async (key: { pk: string; sk: string }) =>
  (await db.send(new GetCommand({ TableName: env.TABLE_NAME, Key: key, ConsistentRead: true }))).Item;

const batch = (user: TestUser, boardId: string, operations: object[]) =>
  call('POST', `/boards/${boardId}/batch`, { token: user.token, body: { operations } });

/** The same id with its random part changed: under the same board prefix, of no card. */
const sibling = (id: string) => `${id.slice(0, 24)}${id.slice(24) === '000000000000' ? '000000000001' : '000000000000'}`;

let owner: TestUser;
let stranger: TestUser;
beforeAll(async () => {
  [owner, stranger] = await Promise.all([newUser(), newUser()]);
});

describe('card ids under their board', () => {
  it('every card of a board, made singly or in a batch, shares its prefix; another board has another', async () => {
    const [first, second] = await Promise.all([newBoard(owner), newBoard(owner)]);
    const [column, otherColumn] = await Promise.all([newColumn(owner, first.id), newColumn(owner, second.id)]);
    const single = await newCard(owner, column.id);
    const batched = await batch(owner, first.id, [
      { op: 'card.create', column_id: column.id, title: 'one' },
      { op: 'card.create', column_id: column.id, title: 'two' },
    ]);
    expect(batched.status).toBe(200);
    const ids = [single.id, ...(batched.body.results as { id: string }[]).map((card) => card.id)];
    for (const id of ids) {
      expect(id).toMatch(UUID);
      // RFC 9562: version 8, variant 10.
      expect(id[14]).toBe('8');
      expect('89ab').toContain(id[19]);
    }
    expect(new Set(ids).size).toBe(3);
    expect(new Set(ids.map(cardIdPrefixOf)).size).toBe(1);
    const elsewhere = await newCard(owner, otherColumn.id);
    expect(cardIdPrefixOf(elsewhere.id)).not.toBe(cardIdPrefixOf(single.id));

    // No lookup of its own: the board's one prefix item leads to it.
    expect(await stored(keys.cardLookup(single.id))).toBeUndefined();
    expect(await stored(keys.cardIds(cardIdPrefixOf(single.id)!))).toMatchObject({ board_id: first.id });
  });

  it('a forged id under a board prefix is 404 to anyone; a real card is 403 to a stranger, as any card', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    const forged = sibling(card.id);
    for (const user of [owner, stranger]) {
      expectProblem(await call('GET', `/cards/${forged}`, { token: user.token }), 404);
      expectProblem(await call('PATCH', `/cards/${forged}`, { token: user.token, body: { title: 'x' } }), 404);
      expectProblem(await call('POST', `/cards/${forged}/comments`, { token: user.token, body: { body: 'x' } }), 404);
    }
    // A prefix no board holds, and another board's prefix on this card's own part: no card.
    const unknownPrefix = `${newCardIdPrefix()}${card.id.slice(18)}`;
    const otherBoard = await newBoard(stranger);
    const otherPrefix = (await stored(keys.board(otherBoard.id)))!.card_id_prefix as string;
    for (const id of [unknownPrefix, `${otherPrefix}${card.id.slice(18)}`]) {
      expectProblem(await call('GET', `/cards/${id}`, { token: owner.token }), 404);
      expectProblem(await call('GET', `/cards/${id}`, { token: stranger.token }), 404);
    }
    expectProblem(await call('GET', `/cards/${card.id}`, { token: stranger.token }), 403);
    expectProblem(await call('PATCH', `/cards/${card.id}`, { token: stranger.token, body: { title: 'x' } }), 403);
    expect((await call('GET', `/cards/${card.id}`, { token: owner.token })).body).toMatchObject({ title: card.title });
  });

  it("a batch names another board's card: 403 when it is there, 404 for an id of no card under that board", async () => {
    const [mine, theirs] = await Promise.all([newBoard(stranger), newBoard(owner)]);
    const theirColumn = await newColumn(owner, theirs.id);
    const theirCard = await newCard(owner, theirColumn.id);
    const refused = await batch(stranger, mine.id, [{ op: 'card.update', card_id: theirCard.id, title: 'taken' }]);
    expect(expectProblem(refused, 403)).toMatchObject({ operation: 0 });
    const missing = await batch(stranger, mine.id, [{ op: 'card.update', card_id: sibling(theirCard.id), title: 'taken' }]);
    expect(expectProblem(missing, 404)).toMatchObject({ operation: 0 });
    expect((await call('GET', `/cards/${theirCard.id}`, { token: owner.token })).body).toMatchObject({
      title: theirCard.title,
    });
  });

  it('an archived card is reached by its id alone, and a deleted one is gone, to single routes and batches', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    expect((await call('POST', `/cards/${card.id}/archive`, { token: owner.token })).status).toBe(200);
    expect((await call('GET', `/cards/${card.id}`, { token: owner.token })).body).toMatchObject({
      id: card.id,
      archived_at: expect.any(String),
    });
    const renamed = await batch(owner, board.id, [{ op: 'card.update', card_id: card.id, title: 'archived, renamed' }]);
    expect(renamed.status).toBe(200);
    expect((await call('GET', `/cards/${card.id}`, { token: owner.token })).body).toMatchObject({
      title: 'archived, renamed',
      archived_at: expect.any(String),
    });
    expect((await call('POST', `/cards/${card.id}/restore`, { token: owner.token })).status).toBe(200);
    expect((await call('DELETE', `/cards/${card.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(await call('GET', `/cards/${card.id}`, { token: owner.token }), 404);
    expect(expectProblem(await batch(owner, board.id, [{ op: 'card.delete', card_id: card.id }]), 404)).toMatchObject({
      operation: 0,
    });
    // The board's prefix item stays for its other cards.
    expect(await stored(keys.cardIds(cardIdPrefixOf(card.id)!))).toMatchObject({ board_id: board.id });
  });

  it("a board's deletion takes its prefix item with it: its cards' ids lead nowhere", async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
    expect(await stored(keys.cardIds(cardIdPrefixOf(card.id)!))).toBeUndefined();
    expectProblem(await call('GET', `/cards/${card.id}`, { token: owner.token }), 404);
  });
});

describe('a board made before card-id prefixes', () => {
  /** A new board, as one made before prefixes was: no prefix on the board, no prefix item. */
  async function oldBoard() {
    const board = await newBoard(owner);
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: env.TABLE_NAME,
        Key: keys.board(board.id),
        UpdateExpression: 'REMOVE card_id_prefix',
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    await db.send(new DeleteCommand({ TableName: env.TABLE_NAME, Key: keys.cardIds(Attributes!.card_id_prefix) }));
    return board;
  }

  it('gives its cards version 4 ids, each with its own lookup kept with the card through archive, restore and delete', async () => {
    const board = await oldBoard();
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    const batched = await batch(owner, board.id, [{ op: 'card.create', column_id: column.id, title: 'batched' }]);
    expect(batched.status).toBe(200);
    const other = (batched.body.results as { id: string }[])[0]!;
    for (const id of [card.id, other.id]) {
      expect(id[14]).toBe('4');
      expect(await stored(keys.cardLookup(id))).toMatchObject({ board_id: board.id });
    }

    expect((await call('POST', `/cards/${card.id}/archive`, { token: owner.token })).status).toBe(200);
    expect(await stored(keys.cardLookup(card.id))).toMatchObject({ archived: true });
    expect((await call('GET', `/cards/${card.id}`, { token: owner.token })).body).toMatchObject({
      archived_at: expect.any(String),
    });
    expect((await call('POST', `/cards/${card.id}/restore`, { token: owner.token })).status).toBe(200);
    expect((await stored(keys.cardLookup(card.id)))?.archived).toBeUndefined();

    const comment = await call('POST', `/cards/${card.id}/comments`, { token: owner.token, body: { body: 'first' } });
    expect(comment.status).toBe(201);
    const edited = await call('PATCH', `/comments/${comment.body.id}`, { token: owner.token, body: { body: 'second' } });
    expect(edited.body).toMatchObject({ body: 'second' });

    expect((await call('DELETE', `/cards/${card.id}`, { token: owner.token })).status).toBe(204);
    expect(await stored(keys.cardLookup(card.id))).toBeUndefined();
    expect((await batch(owner, board.id, [{ op: 'card.delete', card_id: other.id }])).status).toBe(200);
    expect(await stored(keys.cardLookup(other.id))).toBeUndefined();
  });

  it("its deletion collects its cards' own lookups", async () => {
    const board = await oldBoard();
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
    await eventually(async () => expect(await stored(keys.cardLookup(card.id))).toBeUndefined());
    expectProblem(await call('GET', `/cards/${card.id}`, { token: owner.token }), 404);
  });
});

describe("a comment edit whose card changed between the edit's read and its write", () => {
  /** The service's comment edit, and its access check, run in this process on the local stack's table. */
  const service = async () => {
    const [{ updateComment }, { resolveBoardScope }] = await Promise.all([
      import('../../lib/data/comments'),
      import('../../lib/data/access'),
    ]);
    return { updateComment, resolveBoardScope };
  };

  /** A comment by a member, and the scope its edit would run with, read now. */
  async function commentRead() {
    const board = await newBoard(owner);
    const member = await newUser();
    await addMember(owner, board.id, member);
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    const comment = await call('POST', `/cards/${card.id}/comments`, { token: member.token, body: { body: 'before' } });
    expect(comment.status).toBe(201);
    const { resolveBoardScope } = await service();
    const { scope } = await resolveBoardScope(
      { scope: 'board', via: 'comment', role: 'member' },
      subjectOf(member.token),
      comment.body.id,
    );
    return { card, comment: comment.body as { id: string }, scope: scope as ScopeVia<'comment'> };
  }

  it('archived meanwhile: the edit reads the card where it now is and lands', async () => {
    const { card, comment, scope } = await commentRead();
    expect((await call('POST', `/cards/${card.id}/archive`, { token: owner.token })).status).toBe(200);
    const { updateComment } = await service();
    await expect(updateComment(scope, 'after')).resolves.toMatchObject({ id: comment.id, body: 'after' });
    const page = await call('GET', `/cards/${card.id}/comments`, { token: owner.token });
    expect(page.body.comments).toEqual([expect.objectContaining({ id: comment.id, body: 'after' })]);
  });

  it('deleted meanwhile: the edit is 404 and writes nothing', async () => {
    const { card, comment, scope } = await commentRead();
    // The card's item alone goes (as a deletion's transaction takes it), before any collector
    // could take its comments: only the edit's check of the card can refuse it.
    await db.send(new DeleteCommand({ TableName: env.TABLE_NAME, Key: keys.card(scope.boardId, card.id) }));
    const before = (await stored(keys.board(scope.boardId)))?.seq;
    const { updateComment } = await service();
    await expect(updateComment(scope, 'after')).rejects.toMatchObject({ kind: 'not_found' });
    expect((await stored(keys.board(scope.boardId)))?.seq).toBe(before);
    expect(await stored(keys.comment(scope.boardId, card.id, comment.id))).toMatchObject({ body: 'before' });
  });
});
