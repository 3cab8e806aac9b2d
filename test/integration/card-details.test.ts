import {
  addMember,
  CARD_FIELDS,
  call,
  type DetailedCard,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  type Reply,
  type TestUser,
  unknownId,
} from '../support/api';
import { getEvents, type LoggedEvent, readAllEvents } from '../support/event-log';
import { eventually } from '../support/wait';

/**
 * Card details over HTTP against the local stack: every card answer's due_at, assignee_ids,
 * archived_at and comment_count; due dates (PATCH /cards/{id} and DELETE /cards/{id}/due);
 * assignees (PUT and DELETE /cards/{id}/assignees/{user_id}, members only, at most 10, gone at once
 * when their user leaves the board and not back when they rejoin); archiving and restoring
 * (POST /cards/{id}/archive and /restore, GET /boards/{id}/archive); the tree's filters and their
 * ETags; the events each change logs; If-Match on the new writes; and the order of checks
 * (400 before 404 before 403) for owner, member and stranger.
 *
 * One pool of users serves the whole file (each describe makes its own boards): twelve accounts,
 * because the assignee limit needs eleven members on one board.
 */

// --- helpers -------------------------------------------------------------------------------------

type Card = DetailedCard;
interface Tree {
  id: string;
  title: string;
  seq: number;
  labels: unknown[];
  columns: { id: string; title: string; position: number; cards: Card[] }[];
}

const ISO_MS_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

type Headers = Record<string, string>;
const send = <T = any>(user: TestUser | undefined, method: string, path: string, body?: unknown, headers: Headers = {}) =>
  call<T>(method, path, { token: user?.token, body, headers });

const getCard = (u: TestUser, id: string, h?: Headers) => send<Card>(u, 'GET', `/cards/${id}`, undefined, h);
const patchCard = (u: TestUser, id: string, body: unknown, h?: Headers) => send<Card>(u, 'PATCH', `/cards/${id}`, body, h);
const clearDue = (u: TestUser, id: string, h?: Headers) => send<Card>(u, 'DELETE', `/cards/${id}/due`, undefined, h);
const assign = (u: TestUser, id: string, userId: string, h?: Headers) =>
  send<Card>(u, 'PUT', `/cards/${id}/assignees/${userId}`, undefined, h);
const unassign = (u: TestUser, id: string, userId: string, h?: Headers) =>
  send<Card>(u, 'DELETE', `/cards/${id}/assignees/${userId}`, undefined, h);
const archive = (u: TestUser, id: string, h?: Headers) => send<Card>(u, 'POST', `/cards/${id}/archive`, undefined, h);
const restore = (u: TestUser, id: string, h?: Headers) => send<Card>(u, 'POST', `/cards/${id}/restore`, undefined, h);
const archived = (u: TestUser, boardId: string) => send<Card[]>(u, 'GET', `/boards/${boardId}/archive`);
const moveCard = (u: TestUser, id: string, body: unknown) => send<Card>(u, 'PATCH', `/cards/${id}/move`, body);
const getColumn = (u: TestUser, id: string) => send<{ id: string; cards: Card[] }>(u, 'GET', `/columns/${id}`);
const removeMember = (u: TestUser, boardId: string, userId: string) => send(u, 'DELETE', `/boards/${boardId}/members/${userId}`);
const getTree = (u: TestUser, boardId: string, query: Record<string, string> = {}, h?: Headers) => {
  const search = new URLSearchParams(query).toString();
  return send<Tree>(u, 'GET', `/boards/${boardId}${search ? `?${search}` : ''}`, undefined, h);
};
const etagOf = (reply: Reply) => reply.headers.get('etag');

async function ok<T = any>(status: number, request: Promise<Reply<T>>): Promise<T> {
  const reply = await request;
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

async function tree(user: TestUser, boardId: string, query: Record<string, string> = {}): Promise<Tree> {
  return ok(200, getTree(user, boardId, query));
}
const cardOf = (user: TestUser, id: string) => ok<Card>(200, getCard(user, id));
const cardsIn = (t: Tree) => t.columns.flatMap((c) => c.cards);
/** Per column of the tree (in order), the ids of the cards it lists. */
const layout = (t: Tree) => t.columns.map((c) => c.cards.map((card) => card.id));

/** The board's latest seq, from its event log. */
async function latestSeq(user: TestUser, boardId: string): Promise<number> {
  return (await ok(200, getEvents(user, boardId, { after: 0, limit: 1 }))).latest_seq;
}
/** Every event of the board after `after`. */
async function eventsAfter(user: TestUser, boardId: string, after: number): Promise<LoggedEvent[]> {
  return (await readAllEvents(user, boardId, after)).events;
}

/** Asserts a 409 problem with this code. */
function expectConflict(reply: Reply, code: string) {
  expect({ code: expectProblem(reply, 409).code }).toEqual({ code });
  return reply.body as { detail: string };
}

/** Asserts a 2xx card answer that carries the ETag GET /cards/{id} answers now, and returns the card. */
async function expectCardAnswer(reply: Reply<Card>, status = 200): Promise<Card> {
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`);
  expect(Object.keys(reply.body).sort()).toEqual(CARD_FIELDS);
  const tag = etagOf(reply);
  expect(tag).toMatch(/^"[\x21\x23-\x7e]+"$/);
  const now = await getCard(pool.owner, reply.body.id);
  expect(now.status).toBe(200);
  expect(etagOf(now)).toBe(tag);
  expect(now.body).toEqual(reply.body);
  return reply.body;
}

const pool = {} as {
  owner: TestUser;
  member: TestUser;
  stranger: TestUser;
  /** Nine more accounts, for the assignee limit and the leaving tests. */
  others: TestUser[];
};

beforeAll(async () => {
  const users = await Promise.all(Array.from({ length: 12 }, () => newUser()));
  pool.owner = users[0]!;
  pool.member = users[1]!;
  pool.stranger = users[2]!;
  pool.others = users.slice(3);
});

/** A board of the pool's owner with the pool's member, two columns, three cards in the first. */
async function board(title = 'Details') {
  const { owner, member } = pool;
  const created = await newBoard(owner, title);
  // One after the other: the tree lists First before Second.
  const first = await newColumn(owner, created.id, 'First');
  const second = await newColumn(owner, created.id, 'Second');
  await addMember(owner, created.id, member);
  const cards: Card[] = [];
  for (const t of ['One', 'Two', 'Three']) cards.push((await newCard(owner, first.id, { title: t })) as Card);
  return { id: created.id, first: first.id, second: second.id, cards };
}

// --- the fields on every card --------------------------------------------------------------------

describe('every card answer has due_at, assignee_ids, archived_at and comment_count', () => {
  it('a new card: null, [], null, 0 on create, GET, PATCH, move, the column and the tree', async () => {
    const { owner } = pool;
    const b = await board();
    const blank = { due_at: null, assignee_ids: [], archived_at: null, comment_count: 0 };
    const created = await send<Card>(owner, 'POST', `/columns/${b.first}/cards`, { title: 'Fresh' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(CARD_FIELDS);
    expect(created.body).toMatchObject(blank);
    expect(await cardOf(owner, created.body.id)).toEqual(created.body);
    expect((await expectCardAnswer(await patchCard(owner, created.body.id, { title: 'Edited' }))).title).toBe('Edited');
    const moved = await expectCardAnswer(await moveCard(owner, created.body.id, { target_column_id: b.second }));
    expect(moved).toMatchObject({ ...blank, column_id: b.second });
    const column = await ok(200, getColumn(owner, b.second));
    expect(column.cards).toEqual([moved]);
    const whole = await tree(owner, b.id);
    for (const card of cardsIn(whole)) {
      expect(Object.keys(card).sort()).toEqual(CARD_FIELDS);
      expect(card).toMatchObject(blank);
    }
  });
});

describe('the card in every event shows the new fields', () => {
  it('card.created, card.updated (title, label), card.moved carry due_at, assignee_ids, archived_at, comment_count as the answers did', async () => {
    const { owner, member } = pool;
    const b = await board();
    const seq = await latestSeq(owner, b.id);
    const created = (await newCard(owner, b.first, { title: 'Eventful' })) as Card;
    const due = await expectCardAnswer(await patchCard(owner, created.id, { due_at: '2026-12-01T17:00:00Z' }));
    const assigned = await expectCardAnswer(await assign(owner, created.id, member.id));
    const label = await ok<{ id: string }>(201, send(owner, 'POST', `/boards/${b.id}/labels`, { name: 'l', color: '#abcdef' }));
    const labelled = await expectCardAnswer(await send<Card>(owner, 'PUT', `/cards/${created.id}/labels/${label.id}`));
    const retitled = await expectCardAnswer(await patchCard(member, created.id, { title: 'Still eventful' }));
    const moved = await expectCardAnswer(await moveCard(member, created.id, { target_column_id: b.second }));
    expect(moved).toMatchObject({
      due_at: '2026-12-01T17:00:00.000Z',
      assignee_ids: [member.id],
      label_ids: [label.id],
      archived_at: null,
      comment_count: 0,
      column_id: b.second,
    });
    const events = (await eventsAfter(owner, b.id, seq)).filter((e) => e.type.startsWith('card.'));
    expect(events.map((e) => e.type)).toEqual([
      'card.created',
      'card.updated',
      'card.updated',
      'card.updated',
      'card.updated',
      'card.moved',
    ]);
    expect(events.map((e) => e.card)).toEqual([created, due, assigned, labelled, retitled, moved]);
    for (const event of events) expect(Object.keys(event.card as Card).sort()).toEqual(CARD_FIELDS);
  });
});

// --- due dates -----------------------------------------------------------------------------------

describe('due dates', () => {
  it('PATCH sets due_at with milliseconds; null or omitted leaves it; every read and the event show it', async () => {
    const { owner, member } = pool;
    const b = await board();
    const id = b.cards[0]!.id;
    const before = await latestSeq(owner, b.id);

    const set = await expectCardAnswer(await patchCard(member, id, { due_at: '2026-12-01T17:00:00Z' }));
    expect(set.due_at).toBe('2026-12-01T17:00:00.000Z');
    expect(set).toMatchObject({ title: 'One', assignee_ids: [], archived_at: null });
    const events = await eventsAfter(owner, b.id, before);
    expect(events.map((e) => [e.seq, e.type])).toEqual([[before + 1, 'card.updated']]);
    expect(events[0]!.card).toEqual(set);

    // The same instant written otherwise changes nothing: 200, the same tag, no event.
    const sameTag = etagOf(await getCard(owner, id))!;
    for (const due_at of ['2026-12-01T17:00:00.000Z', '2026-12-01T17:00:00.0Z']) {
      const same = await patchCard(owner, id, { due_at });
      expect(await expectCardAnswer(same)).toEqual(set);
      expect(etagOf(same)).toBe(sameTag);
    }
    expect(await latestSeq(owner, b.id)).toBe(before + 1);

    // null and omitted change nothing (and a title edit keeps the due date).
    expect((await expectCardAnswer(await patchCard(owner, id, { due_at: null }))).due_at).toBe('2026-12-01T17:00:00.000Z');
    const retitled = await expectCardAnswer(await patchCard(owner, id, { title: 'Renamed' }));
    expect(retitled.due_at).toBe('2026-12-01T17:00:00.000Z');

    // Fractions: answered with exactly three digits.
    expect((await expectCardAnswer(await patchCard(owner, id, { due_at: '2027-01-31T23:59:59.5Z' }))).due_at).toBe(
      '2027-01-31T23:59:59.500Z',
    );
    expect((await expectCardAnswer(await patchCard(owner, id, { due_at: '2026-02-28T08:30:00.123Z' }))).due_at).toBe(
      '2026-02-28T08:30:00.123Z',
    );
    const shown = await cardOf(member, id);
    expect(shown.due_at).toBe('2026-02-28T08:30:00.123Z');
    expect(cardsIn(await tree(member, b.id)).find((c) => c.id === id)!.due_at).toBe('2026-02-28T08:30:00.123Z');
    expect((await ok(200, getColumn(owner, b.first))).cards.find((c) => c.id === id)!.due_at).toBe('2026-02-28T08:30:00.123Z');
    // The other cards have none.
    expect((await cardOf(owner, b.cards[1]!.id)).due_at).toBeNull();
  });

  it('a malformed due_at is 400, writes nothing and logs nothing, even on a card that does not exist or is not the caller’s', async () => {
    const { owner, stranger } = pool;
    const b = await board();
    const id = b.cards[0]!.id;
    await expectCardAnswer(await patchCard(owner, id, { due_at: '2026-12-01T17:00:00Z' }));
    const card = await cardOf(owner, id);
    const seq = await latestSeq(owner, b.id);
    const bad: unknown[] = [
      '2026-12-01T17:00:00', // no Z
      '2026-12-01T17:00:00+02:00',
      '2026-12-01T17:00:00+00:00',
      '2026-02-30T10:00:00Z',
      '2026-04-31T10:00:00Z',
      '2026-13-01T10:00:00Z',
      '2026-12-01T25:00:00Z',
      '2026-12-01',
      '2026-12-01 17:00:00Z',
      'tomorrow',
      '',
      1796144400000,
      true,
      ['2026-12-01T17:00:00Z'],
      { at: '2026-12-01T17:00:00Z' },
    ];
    for (const due_at of bad) {
      const reply = await patchCard(owner, id, { due_at });
      expect({ due_at, status: reply.status }).toEqual({ due_at, status: 400 });
      expectProblem(reply, 400);
      // Before any lookup: a card that does not exist, and one the caller may not see.
      expect({ due_at, status: (await patchCard(owner, unknownId(), { due_at })).status }).toEqual({ due_at, status: 400 });
      expect({ due_at, status: (await patchCard(stranger, id, { due_at })).status }).toEqual({ due_at, status: 400 });
    }
    // A valid title beside a bad due date is refused whole.
    expectProblem(await patchCard(owner, id, { title: 'Not written', due_at: '2026-12-01T17:00:00+01:00' }), 400);
    expect(await cardOf(owner, id)).toEqual(card);
    expect(await latestSeq(owner, b.id)).toBe(seq);
  });

  it('DELETE /cards/{id}/due clears it: 200 Card and card.updated; without a due date 200 and no event', async () => {
    const { owner, member } = pool;
    const b = await board();
    const id = b.cards[0]!.id;
    const set = await expectCardAnswer(await patchCard(owner, id, { due_at: '2026-12-01T17:00:00Z' }));
    const before = await latestSeq(owner, b.id);
    const cleared = await expectCardAnswer(await clearDue(member, id));
    expect(cleared).toEqual({ ...set, due_at: null });
    const events = await eventsAfter(owner, b.id, before);
    expect(events.map((e) => [e.seq, e.type])).toEqual([[before + 1, 'card.updated']]);
    expect(events[0]!.card).toEqual(cleared);
    expect(cardsIn(await tree(owner, b.id)).find((c) => c.id === id)!.due_at).toBeNull();

    // Again, and on a card that never had one: 200 with the card, nothing logged.
    expect(await expectCardAnswer(await clearDue(owner, id))).toEqual(cleared);
    const never = await expectCardAnswer(await clearDue(owner, b.cards[1]!.id));
    expect(never).toEqual(await cardOf(owner, b.cards[1]!.id));
    expect(never.due_at).toBeNull();
    expect(await latestSeq(owner, b.id)).toBe(before + 1);
  });
});

// --- assignees -----------------------------------------------------------------------------------

describe('assignees', () => {
  it('any member assigns any member (a plain member the owner too); ids in the order assigned; card.updated each time', async () => {
    const { owner, member, others } = pool;
    const b = await board();
    const third = others[0]!;
    await addMember(owner, b.id, third);
    const id = b.cards[0]!.id;
    const before = await latestSeq(owner, b.id);

    // Assigned in an order that is neither the ids' nor the join order.
    const order = [third, owner, member];
    const answers: Card[] = [];
    for (const [i, user] of order.entries()) {
      const reply = await assign(i === 1 ? member : owner, id, user.id);
      const card = await expectCardAnswer(reply);
      expect(card.assignee_ids).toEqual(order.slice(0, i + 1).map((u) => u.id));
      answers.push(card);
    }
    const events = await eventsAfter(owner, b.id, before);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [before + 1, 'card.updated'],
      [before + 2, 'card.updated'],
      [before + 3, 'card.updated'],
    ]);
    expect(events.map((e) => e.card)).toEqual(answers);

    const expected = order.map((u) => u.id);
    expect((await cardOf(member, id)).assignee_ids).toEqual(expected);
    expect(cardsIn(await tree(member, b.id)).find((c) => c.id === id)!.assignee_ids).toEqual(expected);
    expect((await ok(200, getColumn(owner, b.first))).cards.find((c) => c.id === id)!.assignee_ids).toEqual(expected);
    expect((await cardOf(owner, b.cards[1]!.id)).assignee_ids).toEqual([]);

    // Unassigning the middle one keeps the order of the rest; assigning them again puts them last.
    const removed = await expectCardAnswer(await unassign(member, id, owner.id));
    expect(removed.assignee_ids).toEqual([third.id, member.id]);
    expect((await expectCardAnswer(await assign(third, id, owner.id))).assignee_ids).toEqual([third.id, member.id, owner.id]);
    const last = await eventsAfter(owner, b.id, before + 3);
    expect(last.map((e) => [e.type, (e.card as Card).assignee_ids])).toEqual([
      ['card.updated', [third.id, member.id]],
      ['card.updated', [third.id, member.id, owner.id]],
    ]);
  });

  it('is idempotent: assigning again and unassigning someone not on the card answer 200 with the card, log nothing', async () => {
    const { owner, member } = pool;
    const b = await board();
    const id = b.cards[0]!.id;
    const first = await expectCardAnswer(await assign(owner, id, member.id));
    const seq = await latestSeq(owner, b.id);
    const tag = etagOf(await getCard(owner, id));
    expect(await expectCardAnswer(await assign(owner, id, member.id))).toEqual(first);
    expect(await expectCardAnswer(await assign(member, id, member.id))).toEqual(first);
    expect(await expectCardAnswer(await unassign(owner, id, owner.id))).toEqual(first);
    const other = await expectCardAnswer(await unassign(owner, b.cards[1]!.id, member.id));
    expect(other.assignee_ids).toEqual([]);
    expect(await latestSeq(owner, b.id)).toBe(seq);
    expect((await getCard(owner, id, { 'if-none-match': tag! })).status).toBe(304);

    // Unassigning twice: the first is a change, the second not.
    expect((await expectCardAnswer(await unassign(member, id, member.id))).assignee_ids).toEqual([]);
    expect((await expectCardAnswer(await unassign(member, id, member.id))).assignee_ids).toEqual([]);
    expect((await eventsAfter(owner, b.id, seq)).map((e) => e.type)).toEqual(['card.updated']);
  });

  it('a user who is not a member of the board is 409 not_a_member on PUT and DELETE, and nothing changes', async () => {
    const { owner, member, stranger } = pool;
    const b = await board();
    const id = b.cards[0]!.id;
    await expectCardAnswer(await assign(owner, id, member.id));
    const card = await cardOf(owner, id);
    const seq = await latestSeq(owner, b.id);
    // A registered user of another board, and an id nobody has.
    for (const userId of [stranger.id, unknownId()]) {
      for (const caller of [owner, member]) {
        expectConflict(await assign(caller, id, userId), 'not_a_member');
        expectConflict(await unassign(caller, id, userId), 'not_a_member');
      }
    }
    expect(await cardOf(owner, id)).toEqual(card);
    expect(await latestSeq(owner, b.id)).toBe(seq);
  });

  it('an eleventh assignee is 409 limit_reached naming 10; after one leaves the card, another fits', async () => {
    const { owner, member, others } = pool;
    const b = await board();
    for (const user of others) await addMember(owner, b.id, user);
    const eleven = [owner, member, ...others];
    expect(eleven).toHaveLength(11);
    const id = b.cards[0]!.id;
    for (const user of eleven.slice(0, 10)) await expectCardAnswer(await assign(owner, id, user.id));
    const full = await cardOf(owner, id);
    expect(full.assignee_ids).toEqual(eleven.slice(0, 10).map((u) => u.id));
    const seq = await latestSeq(owner, b.id);

    const refused = expectConflict(await assign(member, id, eleven[10]!.id), 'limit_reached');
    expect(refused.detail).toMatch(/\b10\b/);
    expect(await cardOf(owner, id)).toEqual(full);
    expect(await latestSeq(owner, b.id)).toBe(seq);
    // One already on the card is still fine (no change), and another card is not full.
    expect(await expectCardAnswer(await assign(owner, id, eleven[3]!.id))).toEqual(full);
    expect((await expectCardAnswer(await assign(owner, b.cards[1]!.id, eleven[10]!.id))).assignee_ids).toEqual([eleven[10]!.id]);

    await expectCardAnswer(await unassign(owner, id, eleven[0]!.id));
    const refilled = await expectCardAnswer(await assign(owner, id, eleven[10]!.id));
    expect(refilled.assignee_ids).toEqual([...eleven.slice(1, 10), eleven[10]!].map((u) => u.id));

    // The limit counts the assignees the card shows: once one leaves the board, another fits, and
    // the one who left, added back, neither comes back nor fits any more.
    const leaver = eleven[5]!;
    expect((await removeMember(owner, b.id, leaver.id)).status).toBe(204);
    const nine = (await cardOf(owner, id)).assignee_ids;
    expect(nine).toEqual(refilled.assignee_ids.filter((u) => u !== leaver.id));
    const tenth = await expectCardAnswer(await assign(member, id, eleven[0]!.id));
    expect(tenth.assignee_ids).toEqual([...nine, eleven[0]!.id]);
    await addMember(owner, b.id, leaver);
    expect((await cardOf(owner, id)).assignee_ids).toEqual(tenth.assignee_ids);
    expectConflict(await assign(owner, id, leaver.id), 'limit_reached');
    expect((await cardOf(owner, id)).assignee_ids).toEqual(tenth.assignee_ids);
  });
});

// --- members who leave ---------------------------------------------------------------------------

describe('a member who leaves or is removed', () => {
  it('is gone at once from every card on every read, with member.removed as the only event; only the ETags of the cards that showed them change', async () => {
    const { owner, member, others } = pool;
    const b = await board();
    const [leaver, stayer] = [others[0]!, others[1]!];
    await addMember(owner, b.id, leaver);
    await addMember(owner, b.id, stayer);
    const [c1, c2, c3] = b.cards.map((c) => c.id) as [string, string, string];
    // c1: leaver and stayer; c2 (moved to the second column): the leaver only; c3: the stayer only.
    await expectCardAnswer(await assign(owner, c1, stayer.id));
    await expectCardAnswer(await assign(owner, c1, leaver.id));
    await expectCardAnswer(await assign(member, c2, leaver.id));
    await expectCardAnswer(await moveCard(owner, c2, { target_column_id: b.second }));
    await expectCardAnswer(await assign(owner, c3, stayer.id));
    const tags = new Map<string, string>();
    for (const id of [c1, c2, c3]) tags.set(id, etagOf(await getCard(owner, id))!);
    const seq = await latestSeq(owner, b.id);

    expect((await removeMember(owner, b.id, leaver.id)).status).toBe(204);

    const events = await eventsAfter(owner, b.id, seq);
    expect(events.map((e) => [e.seq, e.type, e.user_id])).toEqual([[seq + 1, 'member.removed', leaver.id]]);
    expect((await cardOf(member, c1)).assignee_ids).toEqual([stayer.id]);
    expect((await cardOf(member, c2)).assignee_ids).toEqual([]);
    expect((await cardOf(member, c3)).assignee_ids).toEqual([stayer.id]);
    const whole = await tree(owner, b.id);
    expect(Object.fromEntries(cardsIn(whole).map((c) => [c.id, c.assignee_ids]))).toEqual({
      [c1]: [stayer.id],
      [c2]: [],
      [c3]: [stayer.id],
    });
    expect((await ok(200, getColumn(owner, b.first))).cards.map((c) => c.assignee_ids)).toEqual([[stayer.id], [stayer.id]]);
    expect((await ok(200, getColumn(owner, b.second))).cards.map((c) => c.assignee_ids)).toEqual([[]]);
    // Filtering the tree by the leaver finds nothing.
    expect(layout(await tree(owner, b.id, { assignee_id: leaver.id }))).toEqual([[], []]);

    // The tags of c1 and c2 changed; c3's did not.
    for (const [id, changed] of [
      [c1, true],
      [c2, true],
      [c3, false],
    ] as const) {
      const again = await getCard(owner, id, { 'if-none-match': tags.get(id)! });
      expect({ id, status: again.status }).toEqual({ id, status: changed ? 200 : 304 });
      if (changed) expect(etagOf(again)).not.toBe(tags.get(id));
    }
    // The leaver can no longer be assigned.
    expectConflict(await assign(owner, c3, leaver.id), 'not_a_member');
    // An archived card is no exception: the archive shows it without them too.
    await expectCardAnswer(await assign(owner, c3, member.id));
    const other = others[2]!;
    await addMember(owner, b.id, other);
    await expectCardAnswer(await assign(owner, c3, other.id));
    const shelved = await expectCardAnswer(await archive(owner, c3));
    expect(shelved.assignee_ids).toEqual([stayer.id, member.id, other.id]);
    expect((await removeMember(owner, b.id, other.id)).status).toBe(204);
    const list = await ok(200, archived(owner, b.id));
    expect(list.map((c) => [c.id, c.assignee_ids])).toEqual([[c3, [stayer.id, member.id]]]);
    expect((await cardOf(owner, c3)).assignee_ids).toEqual([stayer.id, member.id]);
  });

  it('leaving of one’s own accord does the same; added back, the old assignments do not come back, new ones do', async () => {
    const { owner, member, others } = pool;
    const b = await board();
    const leaver = others[2]!;
    await addMember(owner, b.id, leaver);
    const [c1, c2] = [b.cards[0]!.id, b.cards[1]!.id];
    await expectCardAnswer(await assign(owner, c1, leaver.id));
    await expectCardAnswer(await assign(owner, c1, member.id));
    await expectCardAnswer(await assign(leaver, c2, leaver.id));
    const seq = await latestSeq(owner, b.id);

    expect((await removeMember(leaver, b.id, leaver.id)).status).toBe(204);
    expect((await eventsAfter(owner, b.id, seq)).map((e) => [e.type, e.user_id])).toEqual([['member.removed', leaver.id]]);
    expect((await cardOf(owner, c1)).assignee_ids).toEqual([member.id]);
    expect((await cardOf(owner, c2)).assignee_ids).toEqual([]);

    await addMember(owner, b.id, leaver);
    expect((await cardOf(owner, c1)).assignee_ids).toEqual([member.id]);
    expect((await cardOf(owner, c2)).assignee_ids).toEqual([]);
    const whole = await tree(owner, b.id);
    expect(cardsIn(whole).flatMap((c) => c.assignee_ids)).toEqual([member.id]);
    expect(layout(await tree(owner, b.id, { assignee_id: leaver.id }))).toEqual([[], []]);

    // Unassigning them now changes nothing the card shows: 200, no event.
    const rejoined = await latestSeq(owner, b.id);
    expect((await expectCardAnswer(await unassign(owner, c2, leaver.id))).assignee_ids).toEqual([]);
    expect(await latestSeq(owner, b.id)).toBe(rejoined);

    // Assigned again after rejoining: shown, after the assignees who stayed, and logged.
    const back = await expectCardAnswer(await assign(owner, c1, leaver.id));
    expect(back.assignee_ids).toEqual([member.id, leaver.id]);
    const logged = await eventsAfter(owner, b.id, rejoined);
    expect(logged.map((e) => [e.seq, e.type])).toEqual([[rejoined + 1, 'card.updated']]);
    expect(logged[0]!.card).toEqual(back);
    expect((await expectCardAnswer(await assign(leaver, c2, leaver.id))).assignee_ids).toEqual([leaver.id]);
    expect(layout(await tree(owner, b.id, { assignee_id: leaver.id }))).toEqual([[c1, c2], []]);
  });
});

describe('membership changes that are not a leave', () => {
  it('a role change keeps the member’s assignments, and logs no card event', async () => {
    const { owner, member } = pool;
    const b = await board();
    const id = b.cards[0]!.id;
    await expectCardAnswer(await assign(owner, id, member.id));
    await expectCardAnswer(await assign(owner, id, owner.id));
    const before = await cardOf(owner, id);
    const tag = etagOf(await getCard(owner, id))!;
    const seq = await latestSeq(owner, b.id);
    await ok(200, send(owner, 'PATCH', `/boards/${b.id}/members/${member.id}`, { role: 'owner' }));
    expect(await cardOf(owner, id)).toEqual(before);
    await ok(200, send(owner, 'PATCH', `/boards/${b.id}/members/${member.id}`, { role: 'member' }));
    expect(await cardOf(member, id)).toEqual(before);
    expect(cardsIn(await tree(member, b.id)).find((c) => c.id === id)!.assignee_ids).toEqual([member.id, owner.id]);
    expect((await getCard(owner, id, { 'if-none-match': tag })).status).toBe(304);
    expect((await eventsAfter(owner, b.id, seq)).map((e) => e.type)).toEqual(['member.updated', 'member.updated']);
    // Assigning them again is still no change.
    expect(await expectCardAnswer(await assign(owner, id, member.id))).toEqual(before);
    expect(await latestSeq(owner, b.id)).toBe(seq + 2);
  });

  it('a deleted account leaves the board as a removal would: gone from its cards, member.removed only', async () => {
    const { owner, member } = pool;
    const b = await board();
    const doomed = await newUser();
    await addMember(owner, b.id, doomed);
    const id = b.cards[0]!.id;
    await expectCardAnswer(await assign(owner, id, doomed.id));
    await expectCardAnswer(await assign(owner, id, member.id));
    await expectCardAnswer(await assign(doomed, b.cards[1]!.id, doomed.id));
    const seq = await latestSeq(owner, b.id);
    expect((await send(doomed, 'DELETE', '/auth/account', { password: doomed.password })).status).toBe(204);
    // The account leaves its boards after the 204 (docs/accounts.md): once member.removed is logged, it is all.
    await eventually(async () => {
      expect((await eventsAfter(owner, b.id, seq)).map((e) => [e.type, e.user_id])).toEqual([['member.removed', doomed.id]]);
    });
    expect((await cardOf(owner, id)).assignee_ids).toEqual([member.id]);
    expect((await cardOf(owner, b.cards[1]!.id)).assignee_ids).toEqual([]);
    expect(cardsIn(await tree(owner, b.id)).flatMap((c) => c.assignee_ids)).toEqual([member.id]);
    expectConflict(await assign(owner, id, doomed.id), 'not_a_member');
  });
});

// --- archive and restore -------------------------------------------------------------------------

describe('archiving', () => {
  it('POST archive: 200 with archived_at, card.archived; the card leaves the tree and its column but GET, PATCH and DELETE still work', async () => {
    const { owner, member } = pool;
    const b = await board();
    const [c1, c2, c3] = b.cards.map((c) => c.id) as [string, string, string];
    await expectCardAnswer(await patchCard(owner, c2, { due_at: '2026-12-01T17:00:00Z' }));
    await expectCardAnswer(await assign(owner, c2, member.id));
    const before = await cardOf(owner, c2);
    const seq = await latestSeq(owner, b.id);

    const done = await expectCardAnswer(await archive(member, c2));
    expect(done.archived_at).toMatch(ISO_MS_UTC);
    expect(done).toMatchObject({
      id: c2,
      column_id: b.first,
      title: 'Two',
      due_at: before.due_at,
      assignee_ids: [member.id],
      label_ids: [],
    });
    const events = await eventsAfter(owner, b.id, seq);
    expect(events.map((e) => [e.seq, e.type])).toEqual([[seq + 1, 'card.archived']]);
    expect(events[0]!.card).toEqual(done);

    // Out of the tree and the column; still there by id.
    expect(layout(await tree(owner, b.id))).toEqual([[c1, c3], []]);
    expect((await ok(200, getColumn(member, b.first))).cards.map((c) => c.id)).toEqual([c1, c3]);
    expect(await cardOf(member, c2)).toEqual(done);
    expect(await ok(200, archived(member, b.id))).toEqual([done]);

    // Archiving again: the same card, the same archived_at, no event.
    expect(await expectCardAnswer(await archive(owner, c2))).toEqual(done);
    expect(await latestSeq(owner, b.id)).toBe(seq + 1);

    // PATCH works on it and it stays archived and out of the tree.
    const edited = await expectCardAnswer(
      await patchCard(member, c2, { title: 'Two, archived', due_at: '2027-01-01T00:00:00Z' }),
    );
    expect(edited).toEqual({ ...done, title: 'Two, archived', due_at: '2027-01-01T00:00:00.000Z' });
    expect(layout(await tree(owner, b.id))).toEqual([[c1, c3], []]);
    expect(await ok(200, archived(owner, b.id))).toEqual([edited]);

    // It is labelled and assigned by id too, and stays archived and out of the tree.
    const label = await ok<{ id: string }>(
      201,
      send(owner, 'POST', `/boards/${b.id}/labels`, { name: 'shelf', color: '#654321' }),
    );
    const labelled = await expectCardAnswer(await send<Card>(member, 'PUT', `/cards/${c2}/labels/${label.id}`));
    const assigned = await expectCardAnswer(await assign(member, c2, owner.id));
    expect(assigned).toEqual({ ...labelled, label_ids: [label.id], assignee_ids: [member.id, owner.id] });
    expect(assigned.archived_at).toBe(done.archived_at);
    expect(layout(await tree(owner, b.id))).toEqual([[c1, c3], []]);
    expect(layout(await tree(owner, b.id, { label_id: label.id }))).toEqual([[], []]);
    expect(await ok(200, archived(owner, b.id))).toEqual([assigned]);

    // DELETE works on it: gone by id and from the archive.
    expect((await send(member, 'DELETE', `/cards/${c2}`)).status).toBe(204);
    expectProblem(await getCard(owner, c2), 404);
    expect(await ok(200, archived(owner, b.id))).toEqual([]);
  });

  it('comments work on an archived card', async () => {
    const { owner, member } = pool;
    const b = await board();
    const id = b.cards[0]!.id;
    await expectCardAnswer(await archive(owner, id));
    const posted = await send(member, 'POST', `/cards/${id}/comments`, { body: 'Still worth a word.' });
    expect(posted.status).toBe(201);
    const card = await cardOf(owner, id);
    expect(card.comment_count).toBe(1);
    expect(card.archived_at).toMatch(ISO_MS_UTC);
    expect(await ok(200, archived(owner, b.id))).toEqual([card]);
  });

  it('an archived card takes no part in positions: a new card goes after the highest active one', async () => {
    const { owner } = pool;
    const b = await board();
    const [c1, c2, c3] = b.cards as [Card, Card, Card];
    expect([c1.position, c2.position, c3.position]).toEqual([1, 2, 3]);
    await expectCardAnswer(await archive(owner, c3.id));
    const next = await newCard(owner, b.first, { title: 'After the archived one' });
    expect(next.position).toBe(3);
    await expectCardAnswer(await archive(owner, next.id));
    await expectCardAnswer(await archive(owner, c2.id));
    expect((await newCard(owner, b.first, { title: 'Again' })).position).toBe(2);
    // A column whose only cards are archived is empty: its next card is at 1.0.
    const moved = await expectCardAnswer(await moveCard(owner, c1.id, { target_column_id: b.second }));
    await expectCardAnswer(await archive(owner, moved.id));
    expect((await newCard(owner, b.second, { title: 'First again' })).position).toBe(1);
  });

  it('GET /boards/{id}/archive lists the archived cards, most recently archived first; members only', async () => {
    const { owner, member, stranger } = pool;
    const b = await board();
    const [c1, c2, c3] = b.cards.map((c) => c.id) as [string, string, string];
    expect(await ok(200, archived(owner, b.id))).toEqual([]);
    const moved = await expectCardAnswer(await moveCard(owner, c1, { target_column_id: b.second }));
    expect(moved.column_id).toBe(b.second);
    // Archived in the order c3, c1, c2 (neither position nor creation order).
    const answers: Card[] = [];
    for (const id of [c3, c1, c2]) answers.push(await expectCardAnswer(await archive(owner, id)));
    const list = await ok(200, archived(member, b.id));
    expect(list.map((c) => c.id)).toEqual([c2, c1, c3]);
    expect(list).toEqual([...answers].reverse());
    for (const card of list) expect(Object.keys(card).sort()).toEqual(CARD_FIELDS);
    const times = list.map((c) => Date.parse(c.archived_at!));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect(layout(await tree(owner, b.id))).toEqual([[], []]);

    expectProblem(await archived(stranger, b.id), 403);
    expectProblem(await archived(stranger, unknownId()), 403);
    expectProblem(await archived(owner, 'not-a-uuid'), 400);
    expectProblem(await send(undefined, 'GET', `/boards/${b.id}/archive`), 401);
    // Restored: off the list.
    await expectCardAnswer(await restore(owner, c1));
    expect((await ok(200, archived(owner, b.id))).map((c) => c.id)).toEqual([c2, c3]);
  });

  it('POST restore: back at the end of its column (highest + 1.0, or 1.0), archived_at null, card.restored; a card not archived is 200 unchanged, no event', async () => {
    const { owner, member } = pool;
    const b = await board();
    const [c1, c2, c3] = b.cards.map((c) => c.id) as [string, string, string];
    const archivedOne = await expectCardAnswer(await archive(owner, c1));
    const seq = await latestSeq(owner, b.id);

    const back = await expectCardAnswer(await restore(member, c1));
    expect(back).toEqual({ ...archivedOne, archived_at: null, position: 4 });
    const events = await eventsAfter(owner, b.id, seq);
    expect(events.map((e) => [e.seq, e.type])).toEqual([[seq + 1, 'card.restored']]);
    expect(events[0]!.card).toEqual(back);
    expect(layout(await tree(owner, b.id))).toEqual([[c2, c3, c1], []]);
    expect((await ok(200, getColumn(owner, b.first))).cards.map((c) => [c.id, c.position])).toEqual([
      [c2, 2],
      [c3, 3],
      [c1, 4],
    ]);

    // Restoring a card that is not archived changes nothing.
    expect(await expectCardAnswer(await restore(owner, c1))).toEqual(back);
    expect(await expectCardAnswer(await restore(owner, c2))).toEqual(await cardOf(owner, c2));
    expect(await latestSeq(owner, b.id)).toBe(seq + 1);

    // Into a column left empty meanwhile: 1.0.
    const moved = await expectCardAnswer(await moveCard(owner, c2, { target_column_id: b.second }));
    await expectCardAnswer(await archive(owner, moved.id));
    expect((await expectCardAnswer(await restore(owner, moved.id))).position).toBe(1);
    // Restored after other cards came meanwhile: after all of them.
    await expectCardAnswer(await archive(owner, c3));
    const newer = await newCard(owner, b.first, { title: 'Newer' });
    const restored = await expectCardAnswer(await restore(owner, c3));
    expect(restored.position).toBe(newer.position + 1);
    expect(layout(await tree(owner, b.id))).toEqual([[c1, newer.id, c3], [c2]]);
  });

  it('moving an archived card is 409 archived and changes nothing; restored, it moves', async () => {
    const { owner } = pool;
    const b = await board();
    const id = b.cards[0]!.id;
    const done = await expectCardAnswer(await archive(owner, id));
    const seq = await latestSeq(owner, b.id);
    for (const body of [
      { target_column_id: b.second },
      { target_column_id: b.first },
      { target_column_id: b.first, after_id: b.cards[1]!.id },
    ]) {
      expectConflict(await moveCard(owner, id, body), 'archived');
    }
    expect(await cardOf(owner, id)).toEqual(done);
    expect(await latestSeq(owner, b.id)).toBe(seq);
    expect(layout(await tree(owner, b.id))).toEqual([[b.cards[1]!.id, b.cards[2]!.id], []]);
    await expectCardAnswer(await restore(owner, id));
    expect((await expectCardAnswer(await moveCard(owner, id, { target_column_id: b.second }))).column_id).toBe(b.second);
  });

  it('deleting the board deletes its archived cards too', async () => {
    const { owner } = pool;
    const b = await board();
    const id = b.cards[0]!.id;
    await expectCardAnswer(await archive(owner, id));
    expect((await send(owner, 'DELETE', `/boards/${b.id}`)).status).toBe(204);
    await eventually(async () => {
      expect((await getCard(owner, id)).status).toBe(404);
    });
    expectProblem(await restore(owner, id), 404);
    expectProblem(await archived(owner, b.id), 403);
  });

  it('deleting a column deletes its archived cards too', async () => {
    const { owner } = pool;
    const b = await board();
    const [c1, c2] = [b.cards[0]!.id, b.cards[1]!.id];
    const elsewhere = await newCard(owner, b.second, { title: 'Elsewhere' });
    await expectCardAnswer(await archive(owner, c1));
    await expectCardAnswer(await archive(owner, elsewhere.id));
    expect((await send(owner, 'DELETE', `/columns/${b.first}`)).status).toBe(204);
    await eventually(async () => {
      expect((await getCard(owner, c1)).status).toBe(404);
      expect((await getCard(owner, c2)).status).toBe(404);
      expect((await ok(200, archived(owner, b.id))).map((c) => c.id)).toEqual([elsewhere.id]);
    });
    expectProblem(await restore(owner, c1), 404);
    // The other column's archived card is untouched.
    expect((await cardOf(owner, elsewhere.id)).archived_at).toMatch(ISO_MS_UTC);
  });
});

// --- the tree's filters --------------------------------------------------------------------------

describe('GET /boards/{id} filters', () => {
  const f = {} as {
    board: string;
    columns: [string, string, string];
    labels: [string, string];
    ids: Record<string, string>;
    whole: Tree;
  };

  beforeAll(async () => {
    const { owner, member } = pool;
    const created = await newBoard(owner, 'Filtered');
    const x = await newColumn(owner, created.id, 'X');
    const y = await newColumn(owner, created.id, 'Y');
    const z = await newColumn(owner, created.id, 'Z');
    await addMember(owner, created.id, member);
    const label = async (name: string) =>
      (await ok<{ id: string }>(201, send(owner, 'POST', `/boards/${created.id}/labels`, { name, color: '#123456' }))).id;
    const [l1, l2] = [await label('L1'), await label('L2')];
    const make = async (
      column: string,
      title: string,
      extra: { description?: string; labels?: string[]; assignees?: string[]; due?: string } = {},
    ) => {
      const card = await newCard(owner, column, { title, ...(extra.description ? { description: extra.description } : {}) });
      for (const l of extra.labels ?? []) await ok(200, send(owner, 'PUT', `/cards/${card.id}/labels/${l}`));
      for (const u of extra.assignees ?? []) await ok(200, assign(owner, card.id, u));
      if (extra.due) await ok(200, patchCard(owner, card.id, { due_at: extra.due }));
      return card.id;
    };
    const ids: Record<string, string> = {};
    ids.c1 = await make(x.id, 'Release notes', { labels: [l1], assignees: [member.id], due: '2026-12-01T10:00:00Z' });
    ids.c2 = await make(x.id, 'Fix login', { description: 'Blocks the RELEASE', labels: [l2], due: '2026-12-05T00:00:00Z' });
    ids.c3 = await make(x.id, 'Refactor', { description: 'nothing to see', labels: [l1], assignees: [owner.id] });
    ids.c4 = await make(y.id, 'release party', {
      labels: [l1, l2],
      assignees: [member.id, owner.id],
      due: '2026-12-01T09:59:59.999Z',
    });
    ids.c5 = await make(y.id, 'Archived release', { labels: [l1], assignees: [member.id], due: '2026-01-01T00:00:00Z' });
    ids.c6 = await make(y.id, 'Due exactly', { description: 'Cost: 100% (est.)', due: '2026-12-03T00:00:00Z' });
    ids.c7 = await make(z.id, 'Été planning', { description: 'Ölfass' });
    await ok(200, archive(owner, ids.c5));
    // c3 to the top of X: positions, not creation, order a filtered column.
    await ok(200, moveCard(owner, ids.c3, { target_column_id: x.id, after_id: ids.c1 }));
    f.board = created.id;
    f.columns = [x.id, y.id, z.id];
    f.labels = [l1, l2];
    f.ids = ids;
    f.whole = await tree(owner, created.id);
  });

  const named = (t: Tree) => {
    const byId = new Map(Object.entries(f.ids).map(([name, id]) => [id, name]));
    return layout(t).map((ids) => ids.map((id) => byId.get(id) ?? id));
  };

  it('unfiltered: every active card in position order; the archived one in none', async () => {
    expect(named(f.whole)).toEqual([['c3', 'c1', 'c2'], ['c4', 'c6'], ['c7']]);
  });

  it('each filter lists only the matching cards, in position order, in every column; combined with AND', async () => {
    const { owner, member } = pool;
    const [l1, l2] = f.labels;
    const cases: [Record<string, string>, string[][]][] = [
      [{ label_id: l1 }, [['c3', 'c1'], ['c4'], []]],
      [{ label_id: l2 }, [['c2'], ['c4'], []]],
      [{ label_id: unknownId() }, [[], [], []]],
      [{ assignee_id: member.id }, [['c1'], ['c4'], []]],
      [{ assignee_id: owner.id }, [['c3'], ['c4'], []]],
      [{ assignee_id: pool.stranger.id }, [[], [], []]],
      // Strictly earlier; cards without a due date left out; the same instant written with milliseconds.
      [{ due_before: '2026-12-03T00:00:00Z' }, [['c1'], ['c4'], []]],
      [{ due_before: '2026-12-03T00:00:00.001Z' }, [['c1'], ['c4', 'c6'], []]],
      [{ due_before: '2026-12-01T10:00:00.000Z' }, [[], ['c4'], []]],
      [{ due_before: '2030-01-01T00:00:00Z' }, [['c1', 'c2'], ['c4', 'c6'], []]],
      // Case-insensitive, in the title or the description; a substring, not a pattern.
      [{ q: 'release' }, [['c1', 'c2'], ['c4'], []]],
      [{ q: 'RELEASE' }, [['c1', 'c2'], ['c4'], []]],
      [{ q: 'ase no' }, [['c1'], [], []]],
      [{ q: 'TO SEE' }, [['c3'], [], []]],
      [{ q: '100% (est.)' }, [[], ['c6'], []]],
      [{ q: '.*' }, [[], [], []]],
      [{ q: 'ÉTÉ' }, [[], [], ['c7']]],
      [{ q: 'ölFASS' }, [[], [], ['c7']]],
      [{ q: 'nowhere at all' }, [[], [], []]],
      [{ label_id: l1, q: 'release' }, [['c1'], ['c4'], []]],
      [{ label_id: l1, assignee_id: member.id, q: 'release' }, [['c1'], ['c4'], []]],
      [{ label_id: l1, assignee_id: member.id, q: 'release', due_before: '2026-12-01T10:00:00Z' }, [[], ['c4'], []]],
      [{ label_id: l2, assignee_id: owner.id }, [[], ['c4'], []]],
      [{ label_id: l2, due_before: '2026-12-02T00:00:00Z' }, [[], ['c4'], []]],
    ];
    const byId = new Map(cardsIn(f.whole).map((c) => [c.id, c]));
    for (const [query, expected] of cases) {
      const filtered = await tree(member, f.board, query);
      expect({ query, cards: named(filtered) }).toEqual({ query, cards: expected });
      // Every column is there, as it is unfiltered; each listed card exactly as the whole tree shows it.
      expect(filtered.columns.map(({ cards, ...column }) => column)).toEqual(
        f.whole.columns.map(({ cards, ...column }) => column),
      );
      for (const card of cardsIn(filtered)) expect(card).toEqual(byId.get(card.id));
      expect({ ...filtered, columns: [] }).toEqual({ ...f.whole, columns: [] });
    }
  });

  it('a malformed filter is 400, also for a stranger; a stranger’s well-formed filter is 403', async () => {
    const { owner, stranger } = pool;
    const bad: Record<string, string>[] = [
      { label_id: 'not-a-uuid' },
      { assignee_id: '12345' },
      { due_before: 'yesterday' },
      { due_before: '2026-12-01T10:00:00' },
      { due_before: '2026-12-01T10:00:00+02:00' },
      { due_before: '2026-02-30T00:00:00Z' },
      { q: '' },
      { q: 'a'.repeat(257) },
      { label_id: f.labels[0], q: '' },
    ];
    for (const query of bad) {
      for (const user of [owner, stranger]) {
        const reply = await getTree(user, f.board, query);
        expect({ query, status: reply.status }).toEqual({ query, status: 400 });
        expectProblem(reply, 400);
      }
      expectProblem(await getTree(owner, unknownId(), query), 400);
    }
    expectProblem(await getTree(stranger, f.board, { q: 'release' }), 403);
    expectProblem(await getTree(stranger, f.board, { label_id: f.labels[0] }), 403);
    // 256 characters (counted as characters, not UTF-16 units) are fine.
    expect(layout(await tree(owner, f.board, { q: 'a'.repeat(256) }))).toEqual([[], [], []]);
    expect(layout(await tree(owner, f.board, { q: '😀'.repeat(256) }))).toEqual([[], [], []]);
  });

  it('ETags: a filtered tree’s differs from the unfiltered one’s and another filter’s; each gets 304 only with its own', async () => {
    const { owner } = pool;
    const whole = await getTree(owner, f.board);
    const byLabel = await getTree(owner, f.board, { label_id: f.labels[0] });
    const byText = await getTree(owner, f.board, { q: 'release' });
    const [wholeTag, labelTag, textTag] = [whole, byLabel, byText].map((r) => {
      expect(r.status).toBe(200);
      return etagOf(r)!;
    }) as [string, string, string];
    expect(new Set([wholeTag, labelTag, textTag]).size).toBe(3);

    const status = async (query: Record<string, string>, tag: string) =>
      (await getTree(owner, f.board, query, { 'if-none-match': tag })).status;
    expect(await status({ label_id: f.labels[0] }, wholeTag)).toBe(200);
    expect(await status({}, labelTag)).toBe(200);
    expect(await status({ q: 'release' }, labelTag)).toBe(200);
    expect(await status({ label_id: f.labels[0] }, textTag)).toBe(200);
    expect(await status({}, wholeTag)).toBe(304);
    expect(await status({ label_id: f.labels[0] }, labelTag)).toBe(304);
    expect(await status({ q: 'release' }, textTag)).toBe(304);
    // The 200 to the wrong tag is the filtered tree with its own tag.
    const wrong = await getTree(owner, f.board, { label_id: f.labels[0] }, { 'if-none-match': wholeTag });
    expect(etagOf(wrong)).toBe(labelTag);
    expect(wrong.body).toEqual(byLabel.body);

    // A change to a card the view shows: its old tag no longer gets a 304 (last here: it edits the board).
    await ok(200, patchCard(owner, f.ids.c4!, { description: 'Edited after the tags were read' }));
    const changed = await getTree(owner, f.board, { label_id: f.labels[0] }, { 'if-none-match': labelTag });
    expect(changed.status).toBe(200);
    expect(etagOf(changed)).not.toBe(labelTag);
    expect(cardsIn(changed.body).find((c) => c.id === f.ids.c4)!.description).toBe('Edited after the tags were read');
    expect((await getTree(owner, f.board, { label_id: f.labels[0] }, { 'if-none-match': etagOf(changed)! })).status).toBe(304);
  });
});

// --- conditional writes --------------------------------------------------------------------------

describe('If-Match on the due-date, assignee, archive and restore routes', () => {
  type Fixture = Awaited<ReturnType<typeof board>>;
  const WRITES: {
    name: string;
    prepare?: (b: Fixture) => Promise<unknown>;
    run: (b: Fixture, h: Headers) => Promise<Reply<Card>>;
  }[] = [
    {
      name: 'PATCH /cards/{id} due_at',
      run: (b, h) => patchCard(pool.owner, b.cards[0]!.id, { due_at: '2026-12-24T18:00:00Z' }, h),
    },
    {
      name: 'DELETE /cards/{id}/due',
      prepare: (b) => ok(200, patchCard(pool.owner, b.cards[0]!.id, { due_at: '2026-12-24T18:00:00Z' })),
      run: (b, h) => clearDue(pool.owner, b.cards[0]!.id, h),
    },
    { name: 'PUT /cards/{id}/assignees/{user_id}', run: (b, h) => assign(pool.owner, b.cards[0]!.id, pool.member.id, h) },
    {
      name: 'DELETE /cards/{id}/assignees/{user_id}',
      prepare: (b) => ok(200, assign(pool.owner, b.cards[0]!.id, pool.member.id)),
      run: (b, h) => unassign(pool.owner, b.cards[0]!.id, pool.member.id, h),
    },
    { name: 'POST /cards/{id}/archive', run: (b, h) => archive(pool.owner, b.cards[0]!.id, h) },
    {
      name: 'POST /cards/{id}/restore',
      prepare: (b) => ok(200, archive(pool.owner, b.cards[0]!.id)),
      run: (b, h) => restore(pool.owner, b.cards[0]!.id, h),
    },
  ];

  it.each(WRITES.map((w) => [w.name, w] as const))(
    '%s: a stale tag is 412 precondition_failed with the current tag, nothing written, no event; the current tag goes through',
    async (_name, write) => {
      const { owner } = pool;
      const b = await board('Conditional');
      await write.prepare?.(b);
      const id = b.cards[0]!.id;
      const stale = etagOf(await getCard(owner, id))!;
      await ok(200, patchCard(owner, id, { description: 'edited since' }));
      const now = await getCard(owner, id);
      const current = etagOf(now)!;
      expect(current).not.toBe(stale);
      const seq = await latestSeq(owner, b.id);

      for (const header of [stale, `"${'0'.repeat(22)}"`, `W/${current}`]) {
        const refused = await write.run(b, { 'if-match': header });
        expect({ header, code: expectProblem(refused, 412).code }).toEqual({ header, code: 'precondition_failed' });
        expect(etagOf(refused)).toBe(current);
      }
      const after = await getCard(owner, id);
      expect(after.body).toEqual(now.body);
      expect(etagOf(after)).toBe(current);
      expect(await latestSeq(owner, b.id)).toBe(seq);

      const done = await expectCardAnswer(await write.run(b, { 'if-match': current }));
      expect(etagOf(await getCard(owner, id))).not.toBe(current);
      expect(done).not.toEqual(now.body);
      expect(await latestSeq(owner, b.id)).toBe(seq + 1);
    },
  );
});

describe('the assignee checks come before If-Match', () => {
  it('a stale tag with a user who is not a member is 409 not_a_member; with a full card 409 limit_reached', async () => {
    const { owner, member, stranger, others } = pool;
    const b = await board('Ordered');
    const id = b.cards[0]!.id;
    const stale = etagOf(await getCard(owner, id))!;
    await ok(200, patchCard(owner, id, { title: 'Changed since' }));
    expectConflict(await assign(owner, id, stranger.id, { 'if-match': stale }), 'not_a_member');
    expectConflict(await unassign(owner, id, stranger.id, { 'if-match': stale }), 'not_a_member');
    for (const user of others) await addMember(owner, b.id, user);
    for (const user of [member, ...others]) await ok(200, assign(owner, id, user.id));
    const full = await getCard(owner, id);
    expectConflict(await assign(owner, id, owner.id, { 'if-match': stale }), 'limit_reached');
    // And with all of them passed, the stale tag is what refuses it.
    expect(expectProblem(await unassign(owner, id, member.id, { 'if-match': stale }), 412).code).toBe('precondition_failed');
    expect(await cardOf(owner, id)).toEqual(full.body);
  });
});

// --- who may do what, and the order of checks ----------------------------------------------------

describe('access and the order of checks', () => {
  it('a stranger is 403 on every new route and changes nothing; an unknown card is 404 for anybody; a malformed id 400 first', async () => {
    const { owner, member, stranger } = pool;
    const b = await board('Guarded');
    const id = b.cards[0]!.id;
    await expectCardAnswer(await archive(owner, b.cards[1]!.id));
    const archivedId = b.cards[1]!.id;
    const seq = await latestSeq(owner, b.id);
    const routes = (card: string, userId: string) => [
      () => patchCard(stranger, card, { due_at: '2026-12-01T17:00:00Z' }),
      () => clearDue(stranger, card),
      () => assign(stranger, card, userId),
      () => unassign(stranger, card, userId),
      () => archive(stranger, card),
      () => restore(stranger, card),
    ];
    // A stranger: 403 whoever is named (a member, the stranger, an unknown user).
    for (const userId of [member.id, stranger.id, unknownId()]) {
      for (const run of [...routes(id, userId), ...routes(archivedId, userId)]) expectProblem(await run(), 403);
    }
    expectProblem(await archived(stranger, b.id), 403);
    expectProblem(await getCard(stranger, archivedId), 403);
    expect(await latestSeq(owner, b.id)).toBe(seq);
    expect((await cardOf(owner, id)).assignee_ids).toEqual([]);

    // An unknown card: 404, for a member and a stranger alike, whoever is named.
    const missing = unknownId();
    for (const user of [owner, stranger]) {
      const calls = [
        () => patchCard(user, missing, { due_at: '2026-12-01T17:00:00Z' }),
        () => clearDue(user, missing),
        () => assign(user, missing, member.id),
        () => unassign(user, missing, stranger.id),
        () => archive(user, missing),
        () => restore(user, missing),
      ];
      for (const run of calls) expectProblem(await run(), 404);
    }
    // A malformed card or user id: 400 before the lookup, for anybody.
    for (const user of [owner, stranger]) {
      const calls = [
        () => clearDue(user, 'not-a-uuid'),
        () => assign(user, 'not-a-uuid', member.id),
        () => assign(user, id, 'not-a-uuid'),
        () => assign(user, missing, 'not-a-uuid'),
        () => unassign(user, id, 'nope'),
        () => unassign(user, missing, 'nope'),
        () => archive(user, 'not-a-uuid'),
        () => restore(user, 'not-a-uuid'),
      ];
      for (const run of calls) expectProblem(await run(), 400);
    }
    // No token: 401.
    for (const [method, path] of [
      ['DELETE', `/cards/${id}/due`],
      ['PUT', `/cards/${id}/assignees/${member.id}`],
      ['DELETE', `/cards/${id}/assignees/${member.id}`],
      ['POST', `/cards/${id}/archive`],
      ['POST', `/cards/${id}/restore`],
    ] as const) {
      expectProblem(await send(undefined, method, path), 401);
    }
    // A stranger cannot be assigned; a member of the card's board asking about a stranger: 409, not 403.
    expectConflict(await assign(member, id, stranger.id), 'not_a_member');
    expect(await latestSeq(owner, b.id)).toBe(seq);
  });

  it('a former member is a stranger on the new routes', async () => {
    const { owner, others } = pool;
    const b = await board('Left behind');
    const former = others[3]!;
    await addMember(owner, b.id, former);
    const id = b.cards[0]!.id;
    await expectCardAnswer(await assign(former, id, former.id));
    expect((await removeMember(former, b.id, former.id)).status).toBe(204);
    expectProblem(await assign(former, id, former.id), 403);
    expectProblem(await archive(former, id), 403);
    expectProblem(await archived(former, b.id), 403);
    expect((await cardOf(owner, id)).archived_at).toBeNull();
  });
});
