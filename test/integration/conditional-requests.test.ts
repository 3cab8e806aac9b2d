import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CardView,
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  type Reply,
  type TestUser,
  unknownId,
} from '../support/api';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';

/**
 * Conditional requests: GET /cards/{id} and GET /boards/{id} answer a strong entity tag and a
 * 304 when If-None-Match names it; the writes of a card honour If-Match (412 with the current
 * tag, nothing written). This file runs a stack of its own with TASK_BOARD_TRACE=1, so that every
 * answer says what it cost in DynamoDB calls, round trips and read units.
 */

let stack: RunningStack;
let url: string;
const dataDir = mkdtempSync(join(tmpdir(), 'task-board-conditional-'));

beforeAll(async () => {
  stack = await startStackProcess(dataDir, { TASK_BOARD_TRACE: '1' });
  url = stack.url;
});

afterAll(async () => {
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

// --- helpers -------------------------------------------------------------------------------------

type Card = CardView & { label_ids: string[] };
const STRONG_TAG = /^"[\x21\x23-\x7e]+"$/;

const send = <T = any>(user: TestUser, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  call<T>(method, path, { token: user.token, body, headers, url });

const getCard = (user: TestUser, id: string, headers: Record<string, string> = {}) =>
  send<Card>(user, 'GET', `/cards/${id}`, undefined, headers);
const getBoard = (user: TestUser, id: string, headers: Record<string, string> = {}) =>
  send(user, 'GET', `/boards/${id}`, undefined, headers);
const etagOf = (reply: Reply) => reply.headers.get('etag');

function expectStatus(reply: Reply, status: number) {
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status}: ${JSON.stringify(reply.body)}`);
}

/** The current tag of a card or a board, from a 200 to its GET. */
async function tagFrom(read: Promise<Reply>): Promise<string> {
  const reply = await read;
  expectStatus(reply, 200);
  const tag = etagOf(reply);
  expect(tag).toMatch(STRONG_TAG);
  return tag!;
}
const tagOfCard = (user: TestUser, id: string) => tagFrom(getCard(user, id));
const tagOfBoard = (user: TestUser, id: string) => tagFrom(getBoard(user, id));

/** An owner, a board with two columns, two cards in the first and a label; `write` prepared for. */
async function setup(write?: (typeof WRITES)[number]) {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Conditional', url);
  const first = await newColumn(owner, board.id, 'First', url);
  const second = await newColumn(owner, board.id, 'Second', url);
  const card = await newCard(owner, first.id, { title: 'One' }, url);
  const other = await newCard(owner, first.id, { title: 'Two' }, url);
  const label = await send(owner, 'POST', `/boards/${board.id}/labels`, { name: 'urgent', color: '#cc0000' });
  expectStatus(label, 201);
  const fixture = { owner, board, first, second, card, other, label: label.body as { id: string; name: string } };
  await write?.prepare?.(fixture);
  return fixture;
}

type Fixture = Awaited<ReturnType<typeof setup>>;

/**
 * Every route that honours If-Match, as a request on the fixture's card that changes it; `prepare`
 * makes the card ready for it (before its tag is read).
 */
const WRITES: {
  name: string;
  prepare?: (f: Fixture) => Promise<void>;
  run: (f: Fixture, headers: Record<string, string>) => Promise<Reply>;
}[] = [
  { name: 'PATCH /cards/{id}', run: (f, h) => send(f.owner, 'PATCH', `/cards/${f.card.id}`, { title: `t ${Math.random()}` }, h) },
  {
    name: 'PATCH /cards/{id}/move',
    run: (f, h) => send(f.owner, 'PATCH', `/cards/${f.card.id}/move`, { target_column_id: f.second.id }, h),
  },
  {
    name: 'PUT /cards/{id}/labels/{label_id}',
    run: (f, h) => send(f.owner, 'PUT', `/cards/${f.card.id}/labels/${f.label.id}`, undefined, h),
  },
  {
    name: 'DELETE /cards/{id}/labels/{label_id}',
    // Detach from a card that carries the label, so that the write changes something.
    prepare: async (f) => expectStatus(await send(f.owner, 'PUT', `/cards/${f.card.id}/labels/${f.label.id}`), 200),
    run: (f, h) => send(f.owner, 'DELETE', `/cards/${f.card.id}/labels/${f.label.id}`, undefined, h),
  },
  { name: 'DELETE /cards/{id}', run: (f, h) => send(f.owner, 'DELETE', `/cards/${f.card.id}`, undefined, h) },
];

const trace = (reply: Reply) => ({
  calls: Number(reply.headers.get('x-trace-dynamodb-calls')),
  sequential: Number(reply.headers.get('x-trace-dynamodb-sequential')),
  commands: reply.headers.get('x-trace-dynamodb-commands'),
});

// --- reads ---------------------------------------------------------------------------------------

describe('GET /cards/{id}', () => {
  it('answers a strong ETag, and 304 with it (no body) when If-None-Match names it or is *', async () => {
    const { owner, card } = await setup();
    const first = await getCard(owner, card.id);
    expectStatus(first, 200);
    const tag = etagOf(first)!;
    expect(tag).toMatch(STRONG_TAG);
    expect(etagOf(await getCard(owner, card.id))).toBe(tag);

    for (const value of [tag, `"nope", ${tag}`, `W/${tag}`, '*']) {
      const again = await getCard(owner, card.id, { 'if-none-match': value });
      expect({ value, status: again.status, etag: etagOf(again), body: again.body }).toEqual({
        value,
        status: 304,
        etag: tag,
        body: '',
      });
    }
    const other = await getCard(owner, card.id, { 'if-none-match': '"another"' });
    expectStatus(other, 200);
    expect(other.body).toEqual(first.body);
  });

  it('never answers 304 right after a write, and every 2xx answer with a card carries its current tag', async () => {
    const { owner, card, second, label } = await setup();
    let tag = await tagOfCard(owner, card.id);
    const writes = [
      () => send(owner, 'PATCH', `/cards/${card.id}`, { title: 'Renamed' }),
      () => send(owner, 'PATCH', `/cards/${card.id}`, { title: 'One' }), // back to the first title: still a new tag
      () => send(owner, 'PATCH', `/cards/${card.id}/move`, { target_column_id: second.id }),
      () => send(owner, 'PUT', `/cards/${card.id}/labels/${label.id}`),
      () => send(owner, 'DELETE', `/cards/${card.id}/labels/${label.id}`),
    ];
    const seen = new Set([tag]);
    for (const write of writes) {
      const written = await write();
      expectStatus(written, 200);
      const after = await getCard(owner, card.id, { 'if-none-match': tag });
      expectStatus(after, 200);
      expect(etagOf(written)).toBe(etagOf(after));
      expect(written.body).toEqual(after.body);
      tag = etagOf(after)!;
      expect(seen.has(tag)).toBe(false);
      seen.add(tag);
    }
    const created = await send<Card>(owner, 'POST', `/columns/${second.id}/cards`, { title: 'New' });
    expectStatus(created, 201);
    expect(etagOf(created)).toBe(await tagOfCard(owner, created.body.id));
  });

  it("keeps a card's tag when another card changes, and changes it when a label it shows is renamed or deleted", async () => {
    const { owner, board, card, other, second, label } = await setup();
    const spare = await send(owner, 'POST', `/boards/${board.id}/labels`, { name: 'spare', color: '#00cc00' });
    expectStatus(await send(owner, 'PUT', `/cards/${card.id}/labels/${label.id}`), 200);
    expectStatus(await send(owner, 'PUT', `/cards/${other.id}/labels/${spare.body.id}`), 200);
    const tag = await tagOfCard(owner, card.id);

    expectStatus(await send(owner, 'PATCH', `/cards/${other.id}`, { title: 'Changed' }), 200);
    expectStatus(await send(owner, 'PATCH', `/cards/${other.id}/move`, { target_column_id: second.id }), 200);
    expectStatus(await send(owner, 'PATCH', `/labels/${spare.body.id}`, { name: 'spare 2' }), 200);
    expectStatus(await send(owner, 'DELETE', `/labels/${spare.body.id}`), 204);
    expectStatus(await send(owner, 'DELETE', `/cards/${other.id}`), 204);
    expect((await getCard(owner, card.id, { 'if-none-match': tag })).status).toBe(304);
    // A recolour does not change what the card shows.
    expectStatus(await send(owner, 'PATCH', `/labels/${label.id}`, { color: '#0000cc' }), 200);
    expect((await getCard(owner, card.id, { 'if-none-match': tag })).status).toBe(304);

    expectStatus(await send(owner, 'PATCH', `/labels/${label.id}`, { name: 'very urgent' }), 200);
    const renamed = await getCard(owner, card.id, { 'if-none-match': tag });
    expectStatus(renamed, 200);
    const renamedTag = etagOf(renamed)!;
    expect(renamedTag).not.toBe(tag);
    // The tag read before the rename no longer lets a write through.
    const stale = await send(owner, 'PATCH', `/cards/${card.id}`, { title: 'x' }, { 'if-match': tag });
    expect(expectProblem(stale, 412).code).toBe('precondition_failed');
    expect(etagOf(stale)).toBe(renamedTag);

    expectStatus(await send(owner, 'DELETE', `/labels/${label.id}`), 204);
    const deleted = await getCard(owner, card.id, { 'if-none-match': renamedTag });
    expectStatus(deleted, 200);
    expect(deleted.body.label_ids).toEqual([]);
    expect(etagOf(deleted)).not.toBe(renamedTag);
  });
});

describe('GET /boards/{id}', () => {
  it('answers a strong ETag, 304 for the current one, and never 304 right after a change', async () => {
    const { owner, board, card, other } = await setup();
    let tag = await tagOfBoard(owner, board.id);
    for (const value of [tag, `W/${tag}`, `"x", ${tag}`, '*']) {
      const again = await getBoard(owner, board.id, { 'if-none-match': value });
      expect({ value, status: again.status, etag: etagOf(again), body: again.body }).toEqual({
        value,
        status: 304,
        etag: tag,
        body: '',
      });
    }
    // A tag of another board at the same seq is not this board's.
    const twin = await setup();
    const twinTag = await tagOfBoard(twin.owner, twin.board.id);
    expectStatus(await getBoard(owner, board.id, { 'if-none-match': twinTag }), 200);

    const writes = [
      () => send(owner, 'PATCH', `/cards/${card.id}`, { title: 'Renamed' }),
      () => send(owner, 'PATCH', `/boards/${board.id}`, { title: 'Renamed board' }),
      () => send(owner, 'DELETE', `/cards/${other.id}`),
    ];
    for (const write of writes) {
      expect((await write()).status).toBeLessThan(300);
      const after = await getBoard(owner, board.id, { 'if-none-match': tag });
      expectStatus(after, 200);
      expect(etagOf(after)).not.toBe(tag);
      tag = etagOf(after)!;
    }
  });

  it('answers a 304 from the membership check and the board item alone, for a fraction of the read units', async () => {
    const { owner, board, first } = await setup();
    for (let i = 0; i < 40; i++) await newCard(owner, first.id, { title: `card ${i}`, description: 'x'.repeat(900) }, url);
    const full = await getBoard(owner, board.id);
    expectStatus(full, 200);
    const notModified = await getBoard(owner, board.id, { 'if-none-match': etagOf(full)! });
    expect(notModified.status).toBe(304);
    expect(trace(notModified).commands).not.toMatch(/Query/);
    expect(trace(full).commands).toMatch(/Query/);
    const capacity = (reply: Reply) => Number(reply.headers.get('x-trace-dynamodb-capacity'));
    expect(capacity(notModified)).toBeLessThan(capacity(full) / 2);
  });

  it('refuses a stranger (403) and a board that does not exist (404) before any 304', async () => {
    const { owner, board } = await setup();
    const tag = await tagOfBoard(owner, board.id);
    const stranger = await newUser(url);
    expectProblem(await getBoard(stranger, board.id, { 'if-none-match': tag }), 403);
    expectProblem(await getBoard(stranger, board.id, { 'if-none-match': '*' }), 403);
    expectProblem(await getCard(stranger, (await setup()).card.id, { 'if-none-match': '*' }), 403);
  });
});

// --- writes --------------------------------------------------------------------------------------

describe('If-Match on the writes of a card', () => {
  it.each(WRITES.map((w) => [w.name, w] as const))(
    '%s: goes ahead on the current tag or *, answers the new one',
    async (_name, write) => {
      for (const value of ['current', '*', 'listed']) {
        const f = await setup(write);
        const tag = await tagOfCard(f.owner, f.card.id);
        const header = value === 'current' ? tag : value === '*' ? '*' : `"old", ${tag}`;
        const reply = await write.run(f, { 'if-match': header });
        expect(reply.status).toBeLessThan(300);
        if (reply.status === 204) {
          expect((await getCard(f.owner, f.card.id)).status).toBe(404);
        } else {
          expect(etagOf(reply)).toBe(await tagOfCard(f.owner, f.card.id));
          expect(etagOf(reply)).not.toBe(tag);
        }
      }
    },
  );

  it.each(WRITES.map((w) => [w.name, w] as const))(
    '%s: a stale or weak tag is 412 with the current tag, nothing written and no event',
    async (_name, write) => {
      const f = await setup(write);
      const before = await tagOfCard(f.owner, f.card.id);
      // A tag the card had before an edit, a made-up one, the current one weak.
      const old = before;
      expectStatus(await send(f.owner, 'PATCH', `/cards/${f.card.id}`, { description: 'edited' }), 200);
      const current = await tagOfCard(f.owner, f.card.id);
      for (const header of [old, `"${'0'.repeat(22)}"`, `W/${current}`, `W/${current}, ${old}`]) {
        const treeBefore = await getBoard(f.owner, f.board.id);
        const reply = await write.run(f, { 'if-match': header });
        expect({ header, code: expectProblem(reply, 412).code }).toEqual({ header, code: 'precondition_failed' });
        expect(etagOf(reply)).toBe(current);
        const now = await getCard(f.owner, f.card.id);
        expectStatus(now, 200);
        expect(etagOf(now)).toBe(current);
        // Nothing written and no event: the board's seq (every change advances it) is where it was.
        const treeAfter = await getBoard(f.owner, f.board.id, { 'if-none-match': etagOf(treeBefore)! });
        expect(treeAfter.status).toBe(304);
        const events = await send(f.owner, 'GET', `/boards/${f.board.id}/events?after=${treeBefore.body.seq}`);
        expectStatus(events, 200);
        expect(events.body.events).toEqual([]);
      }
    },
  );

  it('refuses with every other check first: 400, 403, 404 before 412; malformed headers before any lookup', async () => {
    const f = await setup();
    const stale = '"stale"';
    const stranger = await newUser(url);
    const h = { 'if-match': stale };
    expectProblem(await send(f.owner, 'PATCH', `/cards/${f.card.id}`, { title: '' }, h), 400);
    expectProblem(await send(stranger, 'PATCH', `/cards/${f.card.id}`, { title: 'x' }, h), 403);
    expectProblem(await send(f.owner, 'PATCH', `/cards/${unknownId()}`, { title: 'x' }, h), 404);
    expectProblem(await send(f.owner, 'PATCH', `/cards/${f.card.id}/move`, { target_column_id: unknownId() }, h), 404);
    expectProblem(
      await send(f.owner, 'PATCH', `/cards/${f.card.id}/move`, { target_column_id: f.second.id, before_id: unknownId() }, h),
      404,
    );
    expectProblem(await send(f.owner, 'PUT', `/cards/${f.card.id}/labels/${unknownId()}`, undefined, h), 404);
    expectProblem(await send(stranger, 'DELETE', `/cards/${f.card.id}`, undefined, h), 403);

    for (const bad of ['abc', '"a" "b"', 'W/abc', '*, "a"', '"a', 'W/"a', '"a\\"b"', '" a"']) {
      for (const [method, path, body] of [
        ['PATCH', `/cards/${unknownId()}`, { title: 'x' }],
        ['DELETE', `/cards/${unknownId()}`, undefined],
        ['PATCH', `/cards/${unknownId()}/move`, { target_column_id: unknownId() }],
        ['PUT', `/cards/${unknownId()}/labels/${unknownId()}`, undefined],
        ['DELETE', `/cards/${unknownId()}/labels/${unknownId()}`, undefined],
      ] as const) {
        const reply = await send(f.owner, method, path, body, { 'if-match': bad });
        expect({ bad, method, path, status: reply.status }).toEqual({ bad, method, path, status: 400 });
        expectProblem(reply, 400);
        expect(trace(reply).commands).not.toMatch(/BatchGetItem|Query|TransactWriteItems/);
      }
      for (const path of [`/cards/${unknownId()}`, `/boards/${unknownId()}`]) {
        const reply = await send(f.owner, 'GET', path, undefined, { 'if-none-match': bad });
        expectProblem(reply, 400);
        expect(trace(reply).commands).not.toMatch(/BatchGetItem|Query/);
      }
    }
    // Nothing happened to the card.
    expect((await getCard(f.owner, f.card.id)).body.title).toBe('One');
  });

  it('lets exactly one of two writers with the same tag through, 10 rounds', async () => {
    const f = await setup();
    const member = await newUser(url);
    expectStatus(await send(f.owner, 'POST', `/boards/${f.board.id}/members`, { email: member.email, role: 'member' }), 201);
    for (let round = 0; round < 10; round++) {
      const read = await getCard(f.owner, f.card.id);
      const tag = etagOf(read)!;
      // The second writer always changes something: a move goes to the column the card is not in.
      const elsewhere = read.body.column_id === f.first.id ? f.second.id : f.first.id;
      const kinds = [
        () => send(f.owner, 'PATCH', `/cards/${f.card.id}`, { title: `owner ${round}` }, { 'if-match': tag }),
        round % 2 === 0
          ? () => send(member, 'PATCH', `/cards/${f.card.id}`, { description: `member ${round}` }, { 'if-match': tag })
          : () => send(member, 'PATCH', `/cards/${f.card.id}/move`, { target_column_id: elsewhere }, { 'if-match': tag }),
      ];
      const replies = await Promise.all(kinds.map((run) => run()));
      const statuses = replies.map((r) => r.status).sort();
      expect({ round, statuses }).toEqual({ round, statuses: [200, 412] });
      const winner = replies.find((r) => r.status === 200)!;
      const loser = replies.find((r) => r.status === 412)!;
      expect(etagOf(loser)).toBe(etagOf(winner));
      expect(etagOf(winner)).toBe(await tagOfCard(f.owner, f.card.id));
    }
  });

  it('costs no round trip more than the same write without the header', async () => {
    const costs: Record<string, { without: ReturnType<typeof trace>; with: ReturnType<typeof trace> }> = {};
    for (const write of WRITES) {
      const plain = await setup(write);
      const without = await write.run(plain, {});
      expect(without.status).toBeLessThan(300);
      const conditional = await setup(write);
      const withHeader = await write.run(conditional, { 'if-match': await tagOfCard(conditional.owner, conditional.card.id) });
      expect(withHeader.status).toBeLessThan(300);
      costs[write.name] = { without: trace(without), with: trace(withHeader) };
    }
    for (const [name, { without, with: withHeader }] of Object.entries(costs)) {
      expect({ name, sequential: withHeader.sequential, calls: withHeader.calls }).toEqual({
        name,
        sequential: without.sequential,
        calls: without.calls,
      });
    }
  });
});

describe('CORS', () => {
  it('lets a browser send If-Match and If-None-Match and read ETag', async () => {
    const response = await fetch(`${url}/cards/${unknownId()}`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'if-match',
      },
    });
    const allowed = (response.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',');
    expect(allowed).toEqual(expect.arrayContaining(['if-match', 'if-none-match']));
    const exposed = (response.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(',');
    expect(exposed).toContain('etag');
  });
});
