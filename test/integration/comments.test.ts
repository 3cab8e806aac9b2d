import { randomUUID } from 'node:crypto';
import {
  addMember,
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  type Reply,
  readTree,
  type TestUser,
  UUID,
  unknownId,
} from '../support/api';
import { type LoggedEvent, readAllEvents } from '../support/event-log';
import { readPartition, useLocalTable } from '../support/local-table';
import { closeAllSockets, connect } from '../support/sockets';
import { eventually } from '../support/wait';

/**
 * Comments on cards, over HTTP against the local stack: the body and query rules (400 before any
 * lookup), the order of checks on /comments/{id} (404, then 403 for a stranger, then the author
 * rule), pages with `next`, `comment_count` in every card answer and its entity tag, the events
 * in the board's log (and on a socket), Idempotency-Key, a comment racing its card's deletion, and
 * the cleanup of comments and their lookups when their card, column or board is deleted.
 */

interface CommentView {
  id: string;
  card_id: string;
  author_id: string;
  body: string;
  created_at: string;
  edited_at: string | null;
}
interface CommentPage {
  comments: CommentView[];
  next: string | null;
}

const table = useLocalTable();
afterEach(closeAllSockets);

const postComment = (user: TestUser, cardId: string, body: unknown, headers: Record<string, string> = {}) =>
  call<CommentView>('POST', `/cards/${cardId}/comments`, { token: user.token, body, headers });
const listComments = (user: TestUser, cardId: string, query = '') =>
  call<CommentPage>('GET', `/cards/${cardId}/comments${query}`, { token: user.token });
const patchComment = (user: TestUser, id: string, body: unknown) =>
  call<CommentView>('PATCH', `/comments/${id}`, { token: user.token, body });
const deleteComment = (user: TestUser, id: string) => call('DELETE', `/comments/${id}`, { token: user.token });
const getCard = (user: TestUser, id: string) => call('GET', `/cards/${id}`, { token: user.token });

/** A comment that must be created. */
async function comment(user: TestUser, cardId: string, body = 'A comment'): Promise<CommentView> {
  const reply = await postComment(user, cardId, { body });
  if (reply.status !== 201) throw new Error(`comment failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** An owner, a member and a stranger, a board with one column and one card. */
async function setUp() {
  const [owner, member, stranger] = await Promise.all([newUser(), newUser(), newUser()]);
  const board = await newBoard(owner);
  const column = await newColumn(owner, board.id);
  const card = await newCard(owner, column.id);
  await addMember(owner, board.id, member);
  return { owner, member, stranger, board, column, card };
}

/** The items of the board's partition under a sort-key prefix, and the lookups of the ids given. */
const partitionItems = async (boardId: string, prefix: string) =>
  (await readPartition(table.client, table.name, `BOARD#${boardId}`)).filter((item) => (item.sk as string).startsWith(prefix));
const lookupOf = async (commentId: string) => readPartition(table.client, table.name, `COMMENT#${commentId}`);

/** Waits until the comments' items and lookups are all gone. */
async function commentsGone(boardId: string, ids: string[]) {
  await eventually(async () => {
    expect(await partitionItems(boardId, '~COMMENT#')).toEqual([]);
    for (const id of ids) expect(await lookupOf(id)).toEqual([]);
  });
}

const eventsOf = async (user: TestUser, boardId: string, after = 0): Promise<LoggedEvent[]> =>
  (await readAllEvents(user, boardId, after)).events;

describe('writing and reading comments', () => {
  it('any member comments; the comment is answered whole, and listed oldest first', async () => {
    const { owner, member, card } = await setUp();
    const first = await postComment(member, card.id, { body: '  Looks good  ' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(UUID),
      card_id: card.id,
      author_id: member.id,
      body: '  Looks good  ',
      created_at: expect.any(String),
      edited_at: null,
    });
    // UUIDv7: version 7, so the ids order the comments as written.
    expect(first.body.id[14]).toBe('7');
    const second = await comment(owner, card.id, 'x'.repeat(4096));
    const page = await listComments(owner, card.id);
    expect(page.status).toBe(200);
    expect(page.body).toEqual({ comments: [first.body, second], next: null });
  });

  it('malformed bodies and queries are 400 before any lookup, and change nothing', async () => {
    const { owner, card } = await setUp();
    const bad = [{}, { body: '' }, { body: ' \n\t ' }, { body: 'x'.repeat(4097) }, { body: 7 }, { body: null }, []];
    for (const body of bad) expectProblem(await postComment(owner, card.id, body), 400);
    // Before any lookup: an unknown card with a bad body is 400, not 404.
    expectProblem(await postComment(owner, unknownId(), { body: '' }), 400);
    expectProblem(await postComment(owner, 'not-a-uuid', { body: 'fine' }), 400);
    const existing = await comment(owner, card.id);
    for (const body of bad) expectProblem(await patchComment(owner, existing.id, body), 400);
    expectProblem(await patchComment(owner, unknownId(), { body: '' }), 400);
    expectProblem(await patchComment(owner, 'nope', { body: 'fine' }), 400);
    expectProblem(await deleteComment(owner, 'nope'), 400);
    for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?limit=1.5', '?after=nope', '?after=']) {
      expectProblem(await listComments(owner, card.id, query), 400);
    }
    expectProblem(await listComments(owner, unknownId(), '?limit=0'), 400);
    const page = await listComments(owner, card.id);
    expect(page.body.comments).toEqual([existing]);
    expect((await getCard(owner, card.id)).body.comment_count).toBe(1);
  });

  it('pages: limit, next across pages, the last page null, and after a deleted comment', async () => {
    const { owner, card } = await setUp();
    const written: CommentView[] = [];
    for (let i = 0; i < 7; i++) written.push(await comment(owner, card.id, `comment ${i}`));
    const seen: CommentView[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const reply: Reply<CommentPage> = await listComments(owner, card.id, `?limit=3${after ? `&after=${after}` : ''}`);
      expect(reply.status).toBe(200);
      expect(reply.body.comments.length).toBeLessThanOrEqual(3);
      seen.push(...reply.body.comments);
      after = reply.body.next;
      if (after) expect(after).toBe(reply.body.comments.at(-1)!.id);
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(seen).toEqual(written);
    // Exactly a page's worth left: the page that ends them says so (no empty page after it).
    const six = await listComments(owner, card.id, `?limit=6&after=${written[0]!.id}`);
    expect(six.body).toEqual({ comments: written.slice(1), next: null });
    // The default limit holds them all.
    expect((await listComments(owner, card.id)).body).toEqual({ comments: written, next: null });
    // A cursor whose comment was deleted since still marks where the next page starts.
    expect((await deleteComment(owner, written[2]!.id)).status).toBe(204);
    const afterDeleted = await listComments(owner, card.id, `?limit=2&after=${written[2]!.id}`);
    expect(afterDeleted.body).toEqual({ comments: written.slice(3, 5), next: written[4]!.id });
    // A cursor past the last comment: an empty page.
    expect((await listComments(owner, card.id, `?after=${written[6]!.id}`)).body).toEqual({ comments: [], next: null });
  });

  it('the author edits: edited_at is set; the same body writes nothing and sends no event', async () => {
    const { owner, member, board, card } = await setUp();
    const written = await comment(member, card.id, 'first take');
    const edited = await patchComment(member, written.id, { body: 'second take' });
    expect(edited.status).toBe(200);
    expect(edited.body).toEqual({ ...written, body: 'second take', edited_at: expect.any(String) });
    expect(edited.body.edited_at! >= written.created_at).toBe(true);
    const seq = (await readAllEvents(owner, board.id)).latest_seq;
    const again = await patchComment(member, written.id, { body: 'second take' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(edited.body);
    expect((await readAllEvents(owner, board.id)).latest_seq).toBe(seq);
    expect((await listComments(owner, card.id)).body.comments).toEqual([edited.body]);
  });
});

describe('who may do what on /comments/{id}', () => {
  it('404 for a comment that does not exist, 403 for a stranger, then the author rule', async () => {
    const { owner, member, stranger, card } = await setUp();
    const missing = unknownId();
    for (const user of [owner, stranger]) {
      expectProblem(await patchComment(user, missing, { body: 'x' }), 404);
      expectProblem(await deleteComment(user, missing), 404);
    }
    const byOwner = await comment(owner, card.id, "the owner's");
    const byMember = await comment(member, card.id, "the member's");
    // A stranger: 403 on every route, the card's too, whoever wrote the comment.
    expectProblem(await patchComment(stranger, byOwner.id, { body: 'x' }), 403);
    expectProblem(await deleteComment(stranger, byMember.id), 403);
    expectProblem(await postComment(stranger, card.id, { body: 'x' }), 403);
    expectProblem(await listComments(stranger, card.id), 403);
    expectProblem(await postComment(stranger, unknownId(), { body: 'x' }), 404);
    // The author alone edits; an owner is no author.
    expect(expectProblem(await patchComment(owner, byMember.id, { body: 'x' }), 403).code).toBe('forbidden');
    expectProblem(await patchComment(member, byOwner.id, { body: "the owner's" }), 403);
    // A member may not delete another's comment; an owner may.
    expectProblem(await deleteComment(member, byOwner.id), 403);
    expect((await deleteComment(owner, byMember.id)).status).toBe(204);
    expectProblem(await deleteComment(owner, byMember.id), 404);
    expectProblem(await patchComment(member, byMember.id, { body: 'x' }), 404);
    // Its author deletes their own.
    const own = await comment(member, card.id, 'mine');
    expect((await deleteComment(member, own.id)).status).toBe(204);
    expect((await listComments(owner, card.id)).body.comments).toEqual([byOwner]);
    expect(await lookupOf(own.id)).toEqual([]);
  });

  it('a member who left may no longer touch their own comment', async () => {
    const { owner, member, board, card } = await setUp();
    const theirs = await comment(member, card.id);
    expect((await call('DELETE', `/boards/${board.id}/members/${member.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(await patchComment(member, theirs.id, { body: 'x' }), 403);
    expectProblem(await deleteComment(member, theirs.id), 403);
    expect((await deleteComment(owner, theirs.id)).status).toBe(204);
  });
});

describe('comment_count, the card entity tag and the events', () => {
  it('every card answer counts the comments; creating and deleting one changes the tag, editing does not', async () => {
    const { owner, board, column, card } = await setUp();
    const before = await getCard(owner, card.id);
    expect(before.body.comment_count).toBe(0);
    const written = await comment(owner, card.id);
    const after = await getCard(owner, card.id);
    expect(after.body.comment_count).toBe(1);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    await comment(owner, card.id);
    const tree = await readTree(owner, board.id);
    expect((tree.columns[0]!.cards[0] as unknown as { comment_count: number }).comment_count).toBe(2);
    const columnReply = await call('GET', `/columns/${column.id}`, { token: owner.token });
    expect(columnReply.body.cards[0].comment_count).toBe(2);
    const two = await getCard(owner, card.id);
    await patchComment(owner, written.id, { body: 'edited' });
    expect((await getCard(owner, card.id)).headers.get('etag')).toBe(two.headers.get('etag'));
    // A tag held from before the delete no longer matches.
    expect((await deleteComment(owner, written.id)).status).toBe(204);
    const last = await getCard(owner, card.id);
    expect(last.body.comment_count).toBe(1);
    expect(last.headers.get('etag')).not.toBe(two.headers.get('etag'));
    expect(
      (await call('GET', `/cards/${card.id}`, { token: owner.token, headers: { 'if-none-match': two.headers.get('etag')! } }))
        .status,
    ).toBe(200);
  });

  it('comment.created, comment.updated and comment.deleted are numbered changes of the log; no card.updated', async () => {
    const { owner, member, board, card } = await setUp();
    const start = (await readAllEvents(owner, board.id)).latest_seq;
    const written = await comment(member, card.id, 'hello');
    const edited = (await patchComment(member, written.id, { body: 'hello again' })).body;
    expect((await deleteComment(owner, written.id)).status).toBe(204);
    const events = await eventsOf(owner, board.id, start);
    expect(events.map((event) => event.type)).toEqual(['comment.created', 'comment.updated', 'comment.deleted']);
    expect(events.map((event) => event.seq)).toEqual([start + 1, start + 2, start + 3]);
    expect(events[0]).toMatchObject({ board_id: board.id, actor_id: member.id, comment: written });
    expect(events[1]).toMatchObject({ actor_id: member.id, comment: edited });
    expect(events[2]).toMatchObject({ actor_id: owner.id, comment_id: written.id, card_id: card.id });
    expect(events[2]).not.toHaveProperty('comment');
  });

  it('a watcher receives the comment events as the log keeps them', async () => {
    const { owner, member, board, card } = await setUp();
    const socket = await connect(owner, 'watcher');
    await socket.watch(board.id);
    const written = await comment(member, card.id, 'live');
    const frame = await socket.waitFor((f) => f.type === 'comment.created', 'comment.created');
    const [logged] = (await readAllEvents(owner, board.id)).events.filter((e) => e.type === 'comment.created');
    expect(frame).toEqual(logged);
    expect(frame.comment).toEqual(written);
    expect((await deleteComment(member, written.id)).status).toBe(204);
    const deleted = await socket.waitFor((f) => f.type === 'comment.deleted', 'comment.deleted');
    expect(deleted).toMatchObject({ comment_id: written.id, card_id: card.id });
    expect(socket.received.some((f) => f.type === 'card.updated')).toBe(false);
  });

  it('a retry with the same Idempotency-Key answers the first comment and writes no second', async () => {
    const { owner, board, card } = await setUp();
    const key = randomUUID();
    const first = await postComment(owner, card.id, { body: 'once' }, { 'idempotency-key': key });
    const retry = await postComment(owner, card.id, { body: 'once' }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect({ status: retry.status, body: retry.body }).toEqual({ status: 201, body: first.body });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await listComments(owner, card.id)).body.comments).toEqual([first.body]);
    expect((await getCard(owner, card.id)).body.comment_count).toBe(1);
    const events = await eventsOf(owner, board.id);
    expect(events.filter((event) => event.type === 'comment.created')).toHaveLength(1);
  });
});

describe('comments go with their card, column and board', () => {
  it("deleting a card removes its comments and their lookups; the comment's routes are 404", async () => {
    const { owner, board, card } = await setUp();
    const written = await Promise.all([comment(owner, card.id, 'a'), comment(owner, card.id, 'b')]);
    expect((await call('DELETE', `/cards/${card.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(await patchComment(owner, written[0]!.id, { body: 'x' }), 404);
    expectProblem(await deleteComment(owner, written[1]!.id), 404);
    expectProblem(await listComments(owner, card.id), 404);
    expectProblem(await postComment(owner, card.id, { body: 'late' }), 404);
    await commentsGone(
      board.id,
      written.map((c) => c.id),
    );
  });

  it('a comment racing its card deletion never survives it', async () => {
    const { owner, member, board, column } = await setUp();
    const ids: string[] = [];
    for (let round = 0; round < 12; round++) {
      const card = await newCard(owner, column.id, { title: `race ${round}` });
      // Some comments already there, so that the deletion counts them.
      if (round % 2 === 0) ids.push((await comment(owner, card.id, 'before')).id);
      const [created, deleted, second] = await Promise.all([
        postComment(member, card.id, { body: `racing ${round}` }),
        call('DELETE', `/cards/${card.id}`, { token: owner.token }),
        postComment(owner, card.id, { body: `racing too ${round}` }),
      ]);
      expect(deleted.status).toBe(204);
      for (const reply of [created, second]) {
        if (reply.status === 201) ids.push(reply.body.id);
        else expectProblem(reply, 404);
      }
      expectProblem(await getCard(owner, card.id), 404);
    }
    for (const id of ids) {
      expectProblem(await patchComment(owner, id, { body: 'x' }), 404);
      expectProblem(await deleteComment(owner, id), 404);
    }
    await commentsGone(board.id, ids);
  });

  it("deleting a column removes its cards' comments and every lookup", async () => {
    const { owner, board, column, card } = await setUp();
    const other = await newCard(owner, column.id, { title: 'no comments' });
    const kept = await newColumn(owner, board.id, 'kept');
    const keptCard = await newCard(owner, kept.id);
    const written = [await comment(owner, card.id, 'a'), await comment(owner, card.id, 'b')];
    const survivor = await comment(owner, keptCard.id, 'stays');
    expect((await call('DELETE', `/columns/${column.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(await patchComment(owner, written[0]!.id, { body: 'x' }), 404);
    await eventually(async () => {
      const left = await partitionItems(board.id, '~COMMENT#');
      expect(left.map((item) => item.id)).toEqual([survivor.id]);
      for (const c of written) expect(await lookupOf(c.id)).toEqual([]);
      for (const id of [card.id, other.id]) expect((await getCard(owner, id)).status).toBe(404);
      expect(await partitionItems(board.id, 'CARD#')).toHaveLength(1);
    });
    expect((await listComments(owner, keptCard.id)).body.comments).toEqual([survivor]);
    expect((await getCard(owner, keptCard.id)).body.comment_count).toBe(1);
  });

  it("deleting a board removes every comment and every comment's lookup", async () => {
    const { owner, board, card } = await setUp();
    const written = [await comment(owner, card.id, 'a'), await comment(owner, card.id, 'b')];
    expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
    await eventually(async () => {
      expect(await readPartition(table.client, table.name, `BOARD#${board.id}`)).toEqual([]);
      for (const c of written) expect(await lookupOf(c.id)).toEqual([]);
    });
  });
});

describe('comments on an archived card', () => {
  const archive = (user: TestUser, cardId: string) => call('POST', `/cards/${cardId}/archive`, { token: user.token });
  const restore = (user: TestUser, cardId: string) => call('POST', `/cards/${cardId}/restore`, { token: user.token });

  it('are written, listed, edited and deleted as on any card, and stay with it when restored', async () => {
    const { owner, member, card } = await setUp();
    const before = await comment(member, card.id, 'before the archive');
    expect((await archive(owner, card.id)).status).toBe(200);
    const during = await comment(member, card.id, 'while archived');
    const edited = await patchComment(member, before.id, { body: 'edited while archived' });
    expect(edited.status).toBe(200);
    expect((await listComments(owner, card.id)).body).toEqual({ comments: [edited.body, during], next: null });
    const archived = await getCard(owner, card.id);
    expect(archived.body).toMatchObject({ archived_at: expect.any(String), comment_count: 2 });
    expect((await deleteComment(owner, during.id)).status).toBe(204);
    const fewer = await getCard(owner, card.id);
    expect(fewer.body.comment_count).toBe(1);
    expect(fewer.headers.get('etag')).not.toBe(archived.headers.get('etag'));
    expect((await restore(owner, card.id)).status).toBe(200);
    expect((await getCard(owner, card.id)).body).toMatchObject({ archived_at: null, comment_count: 1 });
    expect((await listComments(member, card.id)).body.comments).toEqual([edited.body]);
  });

  it('comments racing an archive and a restore are all counted', async () => {
    const { owner, member, card } = await setUp();
    const replies = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => postComment(member, card.id, { body: `racing ${i}` })),
      archive(owner, card.id),
      ...Array.from({ length: 4 }, (_, i) => postComment(owner, card.id, { body: `racing more ${i}` })),
    ]);
    for (const reply of replies) expect([200, 201]).toContain(reply.status);
    const more = await Promise.all([
      restore(owner, card.id),
      ...Array.from({ length: 3 }, (_, i) => postComment(member, card.id, { body: `last ${i}` })),
    ]);
    for (const reply of more) expect([200, 201]).toContain(reply.status);
    const listed = (await listComments(owner, card.id)).body.comments;
    expect(listed).toHaveLength(11);
    expect((await getCard(owner, card.id)).body.comment_count).toBe(11);
  });

  it('deleting an archived card, or its column, removes its comments and their lookups', async () => {
    const { owner, board, column, card } = await setUp();
    const second = await newCard(owner, column.id, { title: 'archived in a deleted column' });
    const onFirst = await comment(owner, card.id, 'on the first');
    const onSecond = await comment(owner, second.id, 'on the second');
    expect((await archive(owner, card.id)).status).toBe(200);
    expect((await archive(owner, second.id)).status).toBe(200);
    expect((await call('DELETE', `/cards/${card.id}`, { token: owner.token })).status).toBe(204);
    await eventually(async () => {
      expect((await partitionItems(board.id, '~COMMENT#')).map((item) => item.id)).toEqual([onSecond.id]);
      expect(await lookupOf(onFirst.id)).toEqual([]);
    });
    expect((await call('DELETE', `/columns/${column.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(await listComments(owner, second.id), 404);
    await commentsGone(board.id, [onSecond.id]);
    await eventually(async () => {
      expect(await partitionItems(board.id, 'ARCHIVED#')).toEqual([]);
      expect(await readPartition(table.client, table.name, `CARD#${second.id}`)).toEqual([]);
    });
  });
});
