import {
  addMember,
  type CallOptions,
  call,
  type DetailedCard,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  type Reply,
  type TestUser,
} from '../support/api';
import { getEvents, type LoggedEvent, readAllEvents } from '../support/event-log';
import { eventually, pause } from '../support/wait';

/**
 * Card details under concurrency, over HTTP against the local stack. Each race runs many times at
 * once (10 to 20 pairs) and asserts only the end state and the event log, never timings:
 * an assignment racing its assignee's removal never leaves the removed user on the card, and the log
 * agrees with which came first; an archive racing a move ends in one state the log tells; restores
 * racing creates in one column leave distinct positions.
 */

// --- helpers -------------------------------------------------------------------------------------

type Card = DetailedCard;
interface Tree {
  id: string;
  columns: { id: string; cards: Card[] }[];
}

/**
 * One request as a careful client sends it: a 503 `unavailable` (storage busy: a change that kept
 * losing races on its board, nothing written) is sent again after a short wait, as the docs tell
 * clients to; any other answer is returned as it is. Every request of this file goes through here,
 * so that what the races assert is the outcome of each request, not whether the machine was busy.
 */
async function request<T = any>(method: string, path: string, options: CallOptions): Promise<Reply<T>> {
  for (let attempt = 1; ; attempt++) {
    const reply = await call<T>(method, path, options);
    if (reply.status !== 503 || attempt >= 8) return reply;
    await pause(50 * attempt);
  }
}

const send = <T = any>(user: TestUser, method: string, path: string, body?: unknown) =>
  request<T>(method, path, { token: user.token, body });

async function ok<T = any>(status: number, request: Promise<Reply<T>>): Promise<T> {
  const reply = await request;
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

const cardOf = (u: TestUser, id: string) => ok<Card>(200, send(u, 'GET', `/cards/${id}`));
const treeOf = (u: TestUser, boardId: string) => ok<Tree>(200, send(u, 'GET', `/boards/${boardId}`));
const cardsIn = (t: Tree) => t.columns.flatMap((c) => c.cards);
const latestSeq = async (u: TestUser, boardId: string) =>
  (await ok(200, getEvents(u, boardId, { after: 0, limit: 1 }))).latest_seq;
const eventsAfter = async (u: TestUser, boardId: string, after: number) => (await readAllEvents(u, boardId, after)).events;

/** The events of one card (by `card.id` or `card_id`), in log order. */
const aboutCard = (events: LoggedEvent[], cardId: string) =>
  events.filter((e) => (e.card as Card | undefined)?.id === cardId || e.card_id === cardId);

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** What a failed expectation about one round names, so a failure says which round and what came back. */
const seen = (reply: Reply) => (reply.status < 300 ? reply.status : { status: reply.status, body: reply.body });

let owner: TestUser;
let assignee: TestUser;

beforeAll(async () => {
  [owner, assignee] = await Promise.all([newUser(), newUser()]);
});

// --- 1. an assignment racing the assignee's removal ----------------------------------------------

describe('PUT assignee racing DELETE member', () => {
  it('never leaves the removed user on a card; the log has both changes, consecutive, in an order the answers agree with (10 boards × 2 rounds)', async () => {
    // Ten boards, one card each, the same assignee a member of all: on each board one pair races
    // at a time, so that board's log holds exactly that pair's changes.
    const boards = await Promise.all(
      range(10).map(async (i) => {
        const board = await newBoard(owner, `Race ${i}`);
        const column = await newColumn(owner, board.id);
        const card = await newCard(owner, column.id, { title: `Contested ${i}` });
        return { id: board.id, card: card.id };
      }),
    );
    const outcomes: string[] = [];
    for (let round = 0; round < 2; round++) {
      await Promise.all(boards.map((b) => addMember(owner, b.id, assignee)));
      const bases = await Promise.all(boards.map((b) => latestSeq(owner, b.id)));
      const replies = await Promise.all(
        boards.map((b) =>
          Promise.all([
            request<Card>('PUT', `/cards/${b.card}/assignees/${assignee.id}`, { token: owner.token }),
            request('DELETE', `/boards/${b.id}/members/${assignee.id}`, { token: owner.token }),
          ]),
        ),
      );
      for (const [i, b] of boards.entries()) {
        const [put, removal] = replies[i]!;
        const base = bases[i]!;
        const where = { round, board: i };
        expect({ ...where, removal: seen(removal) }).toEqual({ ...where, removal: 204 });
        const events = await eventsAfter(owner, b.id, base);
        const kinds = events.map((e) => [e.seq, e.type]);
        if (put.status === 200) {
          // The assignment came first: it showed the assignee, and the log has it right before the removal.
          outcomes.push('assigned first');
          expect({ ...where, assignees: put.body.assignee_ids }).toEqual({ ...where, assignees: [assignee.id] });
          expect({ ...where, kinds }).toEqual({
            ...where,
            kinds: [
              [base + 1, 'card.updated'],
              [base + 2, 'member.removed'],
            ],
          });
          expect((events[0]!.card as Card).assignee_ids).toEqual([assignee.id]);
          expect(events[0]!.card).toEqual(put.body);
        } else {
          // The removal came first: the assignment is refused, and the log has the removal alone.
          outcomes.push('removed first');
          expect({ ...where, put: put.status, code: (put.body as { code?: string }).code }).toEqual({
            ...where,
            put: 409,
            code: 'not_a_member',
          });
          expectProblem(put, 409);
          expect({ ...where, kinds }).toEqual({ ...where, kinds: [[base + 1, 'member.removed']] });
        }
        expect(events.at(-1)!.user_id).toBe(assignee.id);
        // Whichever came first, the card shows no such assignee on any read.
        expect({ ...where, card: (await cardOf(owner, b.card)).assignee_ids }).toEqual({ ...where, card: [] });
        const tree = await treeOf(owner, b.id);
        expect({ ...where, tree: cardsIn(tree).map((c) => c.assignee_ids) }).toEqual({ ...where, tree: [[]] });
        const filtered = await ok<Tree>(200, send(owner, 'GET', `/boards/${b.id}?assignee_id=${assignee.id}`));
        expect({ ...where, filtered: cardsIn(filtered) }).toEqual({ ...where, filtered: [] });
      }
    }
    expect(outcomes).toHaveLength(20);
  });
});

describe('PUT assignee racing the assignee deleting their account', () => {
  it('never leaves the deleted user on a card of any of their boards; each log agrees with the answers (10 boards, 2 accounts)', async () => {
    const boards = await Promise.all(
      range(10).map(async (i) => {
        const board = await newBoard(owner, `Gone ${i}`);
        const column = await newColumn(owner, board.id);
        const card = await newCard(owner, column.id, { title: `Gone ${i}` });
        return { id: board.id, card: card.id };
      }),
    );
    for (let round = 0; round < 2; round++) {
      const leaving = await newUser();
      for (const b of boards) await addMember(owner, b.id, leaving);
      const bases = await Promise.all(boards.map((b) => latestSeq(owner, b.id)));
      // On half the boards the assignment is sent with the deletion, on the other half right after
      // its 204, racing the collector that makes the account leave its boards.
      const assignOn = (b: (typeof boards)[number]) =>
        request<Card>('PUT', `/cards/${b.card}/assignees/${leaving.id}`, { token: owner.token });
      const [deletion, ...early] = await Promise.all([
        request('DELETE', '/auth/account', { token: leaving.token, body: { password: leaving.password } }),
        ...boards.filter((_, i) => i % 2 === 0).map(assignOn),
      ]);
      const late = await Promise.all(boards.filter((_, i) => i % 2 === 1).map(assignOn));
      const puts = boards.map((_, i) => (i % 2 === 0 ? early[i / 2]! : late[(i - 1) / 2]!));
      expect({ round, deletion: seen(deletion!) }).toEqual({ round, deletion: 204 });
      for (const [i, b] of boards.entries()) {
        const put = puts[i]! as Reply<Card>;
        const base = bases[i]!;
        const where = { round, board: i };
        // The account leaves its boards after the 204 (docs/accounts.md): wait for this board's member.removed.
        let events: LoggedEvent[] = [];
        await eventually(async () => {
          events = await eventsAfter(owner, b.id, base);
          expect(events.map((e) => e.type)).toContain('member.removed');
        });
        const kinds = events.map((e) => [e.seq, e.type]);
        if (put.status === 200) {
          expect({ ...where, kinds }).toEqual({
            ...where,
            kinds: [
              [base + 1, 'card.updated'],
              [base + 2, 'member.removed'],
            ],
          });
          expect(events[0]!.card).toEqual(put.body);
          expect(put.body.assignee_ids).toEqual([leaving.id]);
        } else {
          expect({ ...where, put: put.status, code: (put.body as { code?: string }).code }).toEqual({
            ...where,
            put: 409,
            code: 'not_a_member',
          });
          expect({ ...where, kinds }).toEqual({ ...where, kinds: [[base + 1, 'member.removed']] });
        }
        expect(events.at(-1)!.user_id).toBe(leaving.id);
        expect({ ...where, card: (await cardOf(owner, b.card)).assignee_ids }).toEqual({ ...where, card: [] });
        expect({ ...where, tree: cardsIn(await treeOf(owner, b.id)).map((c) => c.assignee_ids) }).toEqual({
          ...where,
          tree: [[]],
        });
      }
    }
  });
});

// --- 2. archive racing a move --------------------------------------------------------------------

describe('POST archive racing PATCH move', () => {
  it('ends in one consistent state that the log tells, 10 pairs at once, twice', async () => {
    const board = await newBoard(owner, 'Archive against move');
    const from = await newColumn(owner, board.id, 'From');
    const to = await newColumn(owner, board.id, 'To');
    for (let round = 0; round < 2; round++) {
      const cards: Card[] = [];
      for (const i of range(10)) cards.push((await newCard(owner, from.id, { title: `r${round} c${i}` })) as Card);
      const base = await latestSeq(owner, board.id);
      const replies = await Promise.all(
        cards.map((card) =>
          Promise.all([
            request<Card>('POST', `/cards/${card.id}/archive`, { token: owner.token }),
            request<Card>('PATCH', `/cards/${card.id}/move`, { token: owner.token, body: { target_column_id: to.id } }),
          ]),
        ),
      );
      const log = await eventsAfter(owner, board.id, base);
      // The log: 1..n after the base, no gap, no repeat.
      expect(log.map((e) => e.seq)).toEqual(range(log.length).map((i) => base + 1 + i));
      for (const [i, card] of cards.entries()) {
        const [archived, moved] = replies[i]!;
        const where = { round, card: i };
        expect({ ...where, archive: seen(archived) }).toEqual({ ...where, archive: 200 });
        const final = await cardOf(owner, card.id);
        const events = aboutCard(log, card.id);
        expect(final.archived_at).not.toBeNull();
        expect(final).toEqual(archived.body);
        if (moved.status === 200) {
          // The move came first: the archive archived the moved card, in the target column.
          expect({ ...where, kinds: events.map((e) => e.type) }).toEqual({ ...where, kinds: ['card.moved', 'card.archived'] });
          expect(events[0]!.card).toEqual(moved.body);
          expect(moved.body).toMatchObject({ column_id: to.id, archived_at: null });
          expect((events[1]!.card as Card).column_id).toBe(to.id);
          expect(final.column_id).toBe(to.id);
        } else {
          // The archive came first: the move is refused and never logged.
          expect({ ...where, move: moved.status, code: (moved.body as { code?: string }).code }).toEqual({
            ...where,
            move: 409,
            code: 'archived',
          });
          expect({ ...where, kinds: events.map((e) => e.type) }).toEqual({ ...where, kinds: ['card.archived'] });
          expect(final.column_id).toBe(from.id);
        }
        // The last event about the card is the state GET answers.
        expect(events.at(-1)!.card).toEqual(final);
      }
      // No archived card in the tree; the archive lists all ten.
      const tree = await treeOf(owner, board.id);
      const listed = new Set(cardsIn(tree).map((c) => c.id));
      for (const card of cards) expect(listed.has(card.id)).toBe(false);
      const archivedList = await ok<Card[]>(200, send(owner, 'GET', `/boards/${board.id}/archive`));
      expect(archivedList.filter((c) => cards.some((x) => x.id === c.id))).toHaveLength(10);
      // Restored, each card comes back in the column its archived state named.
      for (const [i, card] of cards.entries()) {
        const final = await cardOf(owner, card.id);
        const back = await ok<Card>(200, send(owner, 'POST', `/cards/${card.id}/restore`));
        expect({ round, card: i, column: back.column_id }).toEqual({ round, card: i, column: final.column_id });
      }
    }
  });
});

// --- 3. restore racing create --------------------------------------------------------------------

describe('POST restore racing POST create in the same column', () => {
  it('positions stay distinct, every card listed once, each answer as stored (2 rounds of 8 + 8)', async () => {
    const board = await newBoard(owner, 'Restore against create');
    const column = await newColumn(owner, board.id, 'Only');
    for (let round = 0; round < 2; round++) {
      const doomed: Card[] = [];
      for (const i of range(8)) doomed.push((await newCard(owner, column.id, { title: `r${round} a${i}` })) as Card);
      for (const card of doomed) await ok(200, send(owner, 'POST', `/cards/${card.id}/archive`));
      const replies = await Promise.all(
        range(16).map((i) =>
          i % 2 === 0
            ? request<Card>('POST', `/cards/${doomed[i / 2]!.id}/restore`, { token: owner.token })
            : request<Card>('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: `r${round} n${i}` } }),
        ),
      );
      const restores = replies.filter((_, i) => i % 2 === 0);
      const creates = replies.filter((_, i) => i % 2 === 1);
      expect({ round, restores: restores.map(seen), creates: creates.map(seen) }).toEqual({
        round,
        restores: Array(8).fill(200),
        creates: Array(8).fill(201),
      });
      const tree = await treeOf(owner, board.id);
      const cards = tree.columns[0]!.cards;
      const positions = cards.map((c) => c.position);
      expect({ round, distinct: new Set(positions).size }).toEqual({ round, distinct: cards.length });
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(new Set(cards.map((c) => c.id)).size).toBe(cards.length);
      // Every restored and created card is listed, as its answer said; restored ones are not archived.
      const stored = new Map(cards.map((c) => [c.id, c]));
      for (const reply of replies) expect(stored.get(reply.body.id)).toEqual(reply.body);
      for (const reply of restores) expect(reply.body.archived_at).toBeNull();
      // Each newcomer went to the end: above every card that was in the column before the round.
      const before = Math.max(0, ...cards.filter((c) => !replies.some((r) => r.body.id === c.id)).map((c) => c.position));
      for (const reply of replies) expect(reply.body.position).toBeGreaterThan(before);
    }
  });
});

// --- more races on the same rules ----------------------------------------------------------------

describe('eleven assignments of one card at once', () => {
  it('never go past 10: exactly ten 200s and one 409 limit_reached, the card shows the ten, one event each (3 rounds)', async () => {
    const extra = await Promise.all(range(9).map(() => newUser()));
    const board = await newBoard(owner, 'Crowded');
    const column = await newColumn(owner, board.id);
    for (const user of [assignee, ...extra]) await addMember(owner, board.id, user);
    const members = [owner, assignee, ...extra];
    expect(members).toHaveLength(11);
    for (let round = 0; round < 3; round++) {
      const card = await newCard(owner, column.id, { title: `Crowded ${round}` });
      const base = await latestSeq(owner, board.id);
      const replies = await Promise.all(
        members.map((user, i) =>
          request<Card>('PUT', `/cards/${card.id}/assignees/${user.id}`, { token: members[(i + 1) % 11]!.token }),
        ),
      );
      const statuses = replies.map((r) => r.status).sort();
      expect({ round, statuses }).toEqual({ round, statuses: [...Array(10).fill(200), 409] });
      const refused = replies.find((r) => r.status === 409)!;
      expect(expectProblem(refused, 409).code).toBe('limit_reached');
      const winners = members.filter((_, i) => replies[i]!.status === 200).map((u) => u.id);
      const final = await cardOf(owner, card.id);
      expect([...final.assignee_ids].sort()).toEqual([...winners].sort());
      // One card.updated per assignment, each showing one more assignee, the last one what GET shows.
      const events = aboutCard(await eventsAfter(owner, board.id, base), card.id);
      expect(events.map((e) => [e.type, (e.card as Card).assignee_ids.length])).toEqual(
        range(10).map((i) => ['card.updated', i + 1]),
      );
      expect(events.at(-1)!.card).toEqual(final);
      // Each answer shows its own assignment.
      for (const [i, reply] of replies.entries())
        if (reply.status === 200) expect(reply.body.assignee_ids).toContain(members[i]!.id);
    }
  });
});

describe('the same card archived twice at once', () => {
  it('both 200 with one archived_at, one card.archived event (10 cards at once)', async () => {
    const board = await newBoard(owner, 'Twice');
    const column = await newColumn(owner, board.id);
    await addMember(owner, board.id, assignee);
    const cards: Card[] = [];
    for (const i of range(10)) cards.push((await newCard(owner, column.id, { title: `twice ${i}` })) as Card);
    const base = await latestSeq(owner, board.id);
    const replies = await Promise.all(
      cards.map((card) =>
        Promise.all([
          request<Card>('POST', `/cards/${card.id}/archive`, { token: owner.token }),
          request<Card>('POST', `/cards/${card.id}/archive`, { token: assignee.token }),
        ]),
      ),
    );
    const log = await eventsAfter(owner, board.id, base);
    for (const [i, card] of cards.entries()) {
      const [a, b] = replies[i]!;
      expect({ card: i, statuses: [seen(a), seen(b)] }).toEqual({ card: i, statuses: [200, 200] });
      const final = await cardOf(owner, card.id);
      expect(a.body).toEqual(final);
      expect(b.body).toEqual(final);
      expect({ card: i, kinds: aboutCard(log, card.id).map((e) => e.type) }).toEqual({ card: i, kinds: ['card.archived'] });
    }
    expect(cardsIn(await treeOf(owner, board.id))).toEqual([]);

    // And restored twice at once: both 200 with the one place it got, one card.restored each.
    const restoredFrom = await latestSeq(owner, board.id);
    const restores = await Promise.all(
      cards.map((card) =>
        Promise.all([
          request<Card>('POST', `/cards/${card.id}/restore`, { token: owner.token }),
          request<Card>('POST', `/cards/${card.id}/restore`, { token: assignee.token }),
        ]),
      ),
    );
    const after = await eventsAfter(owner, board.id, restoredFrom);
    for (const [i, card] of cards.entries()) {
      const [a, b] = restores[i]!;
      expect({ card: i, statuses: [seen(a), seen(b)] }).toEqual({ card: i, statuses: [200, 200] });
      const final = await cardOf(owner, card.id);
      expect(final.archived_at).toBeNull();
      expect(a.body).toEqual(final);
      expect(b.body).toEqual(final);
      expect({ card: i, kinds: aboutCard(after, card.id).map((e) => e.type) }).toEqual({ card: i, kinds: ['card.restored'] });
    }
    const listed = cardsIn(await treeOf(owner, board.id));
    expect(listed.map((c) => c.id).sort()).toEqual(cards.map((c) => c.id).sort());
    expect(new Set(listed.map((c) => c.position)).size).toBe(10);
  });
});

describe('POST archive racing PATCH due_at', () => {
  it('both go through and the card ends archived with the due date; the last event about it is what GET answers (10 cards, twice)', async () => {
    const board = await newBoard(owner, 'Archive against due date');
    const column = await newColumn(owner, board.id);
    for (let round = 0; round < 2; round++) {
      const cards: Card[] = [];
      for (const i of range(10)) cards.push((await newCard(owner, column.id, { title: `r${round} c${i}` })) as Card);
      const due = `2027-0${round + 1}-15T12:00:00.000Z`;
      const base = await latestSeq(owner, board.id);
      const replies = await Promise.all(
        cards.map((card) =>
          Promise.all([
            request<Card>('POST', `/cards/${card.id}/archive`, { token: owner.token }),
            request<Card>('PATCH', `/cards/${card.id}`, { token: owner.token, body: { due_at: due } }),
          ]),
        ),
      );
      const log = await eventsAfter(owner, board.id, base);
      for (const [i, card] of cards.entries()) {
        const [archivedReply, dated] = replies[i]!;
        const where = { round, card: i };
        expect({ ...where, statuses: [seen(archivedReply), seen(dated)] }).toEqual({ ...where, statuses: [200, 200] });
        const final = await cardOf(owner, card.id);
        expect({ ...where, due: final.due_at, archived: final.archived_at !== null }).toEqual({ ...where, due, archived: true });
        const events = aboutCard(log, card.id);
        expect({ ...where, kinds: events.map((e) => e.type).sort() }).toEqual({
          ...where,
          kinds: ['card.archived', 'card.updated'],
        });
        // Each event shows the card as its own answer did, and the later one is the final state.
        const byType = new Map(events.map((e) => [e.type, e.card]));
        expect(byType.get('card.archived')).toEqual(archivedReply.body);
        expect(byType.get('card.updated')).toEqual(dated.body);
        expect(events.at(-1)!.card).toEqual(final);
        if (events[0]!.type === 'card.archived') {
          expect(archivedReply.body.due_at).toBeNull();
          expect(dated.body.archived_at).toBe(archivedReply.body.archived_at);
        } else {
          expect(archivedReply.body.due_at).toBe(due);
          expect(dated.body.archived_at).toBeNull();
        }
      }
      expect(cardsIn(await treeOf(owner, board.id))).toEqual([]);
    }
  });
});

describe('reads and edits racing archive and restore', () => {
  it('never find the card missing: every GET, PATCH and label attach is 200, and the log ends where GET does (5 cards)', async () => {
    const board = await newBoard(owner, 'Flicker');
    const column = await newColumn(owner, board.id);
    await addMember(owner, board.id, assignee);
    const label = await ok<{ id: string }>(
      201,
      send(owner, 'POST', `/boards/${board.id}/labels`, { name: 'l', color: '#abcdef' }),
    );
    const cards: Card[] = [];
    for (const i of range(5)) cards.push((await newCard(owner, column.id, { title: `flicker ${i}` })) as Card);
    const base = await latestSeq(owner, board.id);
    const failures: { card: number; what: string; status: number; body: unknown }[] = [];
    const note = (card: number, what: string, reply: Reply) => {
      if (reply.status !== 200) failures.push({ card, what, status: reply.status, body: reply.body });
      return reply;
    };
    await Promise.all(
      cards.flatMap((card, i) => [
        (async () => {
          for (const _ of range(3)) {
            note(i, 'archive', await request('POST', `/cards/${card.id}/archive`, { token: owner.token }));
            note(i, 'restore', await request('POST', `/cards/${card.id}/restore`, { token: owner.token }));
          }
        })(),
        (async () => {
          for (const _ of range(10)) note(i, 'get', await request('GET', `/cards/${card.id}`, { token: assignee.token }));
        })(),
        (async () => {
          for (const n of range(4)) {
            note(
              i,
              'patch',
              await request('PATCH', `/cards/${card.id}`, { token: assignee.token, body: { title: `edit ${n}` } }),
            );
          }
          note(i, 'label', await request('PUT', `/cards/${card.id}/labels/${label.id}`, { token: assignee.token }));
          note(i, 'assign', await request('PUT', `/cards/${card.id}/assignees/${owner.id}`, { token: assignee.token }));
        })(),
      ]),
    );
    expect(failures).toEqual([]);
    const log = await eventsAfter(owner, board.id, base);
    for (const [i, card] of cards.entries()) {
      const final = await cardOf(owner, card.id);
      expect({ card: i, final }).toEqual({
        card: i,
        final: expect.objectContaining({ title: 'edit 3', label_ids: [label.id], assignee_ids: [owner.id], archived_at: null }),
      });
      const events = aboutCard(log, card.id);
      expect(events.filter((e) => e.type === 'card.archived')).toHaveLength(3);
      expect(events.filter((e) => e.type === 'card.restored')).toHaveLength(3);
      expect(events.at(-1)!.card).toEqual(final);
    }
    const listed = cardsIn(await treeOf(owner, board.id));
    expect(listed.map((c) => c.id).sort()).toEqual(cards.map((c) => c.id).sort());
    expect(new Set(listed.map((c) => c.position)).size).toBe(5);
  });
});

describe('archiving racing the deletion of the column', () => {
  it('leaves no archived card behind: every card of the column is 404 and the archive is empty (10 cards, 2 rounds)', async () => {
    const board = await newBoard(owner, 'Going away');
    for (let round = 0; round < 2; round++) {
      const column = await newColumn(owner, board.id, `Doomed ${round}`);
      const cards: Card[] = [];
      for (const i of range(10)) cards.push((await newCard(owner, column.id, { title: `r${round} c${i}` })) as Card);
      // Half of them archived before the race: restores race the deletion too.
      for (const card of cards.slice(5)) await ok(200, send(owner, 'POST', `/cards/${card.id}/archive`));
      const replies = await Promise.all([
        request('DELETE', `/columns/${column.id}`, { token: owner.token }),
        ...cards.map((card, i) =>
          request<Card>('POST', `/cards/${card.id}/${i < 5 ? 'archive' : 'restore'}`, { token: owner.token }),
        ),
      ]);
      expect({ round, deleted: seen(replies[0]!) }).toEqual({ round, deleted: 204 });
      // Each archive or restore either went first (200) or found the card gone (404).
      for (const reply of replies.slice(1)) expect([200, 404]).toContain(reply.status);
      await eventually(async () => {
        for (const card of cards)
          expect({ round, card: card.id, status: (await send(owner, 'GET', `/cards/${card.id}`)).status }).toEqual({
            round,
            card: card.id,
            status: 404,
          });
        expect(await ok<Card[]>(200, send(owner, 'GET', `/boards/${board.id}/archive`))).toEqual([]);
      });
      expect((await treeOf(owner, board.id)).columns).toEqual([]);
    }
  });
});
