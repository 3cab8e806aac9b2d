import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../lib/data/table';
import {
  addMember,
  type CardView,
  type ColumnView,
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  type Reply,
  type TestUser,
  UUID,
  unknownId,
} from '../support/api';
import {
  applyEvent,
  boardSeq,
  type ClientBoard,
  getEvents,
  type LoggedEvent,
  oneTo,
  readAllEvents,
  readClientBoard,
  readSeqTree,
} from '../support/event-log';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import { closeAllSockets, connect, type Frame, ISO_MS_UTC, type TestSocket } from '../support/sockets';
import { eventually } from '../support/wait';

/**
 * The board's event log (docs/reference.md, "Sequence numbers and catching up"), rule by
 * rule, over the real local stack: `seq` 1..n per board with no gap and no repeat in real-time
 * order, also with eight concurrent writers of four users; failed and no-op requests take none;
 * the tree's and watch.ack's `seq`; `GET /boards/{id}/events` (shape, defaults, limits, 400/403,
 * read-your-writes, 410 past the retention); access.revoked without `seq`; the log going with the
 * board and board.deleted as the last event even with edits racing the deletion; and a client that
 * disconnects, misses changes by several users, reconnects, catches up from the log and ends with
 * exactly the tree the server returns. The 410 of a log past EVENT_RETENTION_SECONDS itself runs on
 * a stack of its own with a short retention (event-retention.test.ts).
 *
 * Nothing here depends on the machine's speed: waits are for frames and conditions, never durations.
 * Sockets watch with `replayed` (no time filter on frames): which frames count is decided by `seq`.
 */

let documentClient: DynamoDBDocumentClient;
let tableName: string;

beforeAll(() => {
  const env = localEnv();
  tableName = env.TABLE_NAME!;
  documentClient = localDocumentClient(env);
});

afterEach(closeAllSockets);

afterAll(async () => {
  await closeAllSockets();
  documentClient.destroy();
});

// --- helpers -------------------------------------------------------------------------------------

async function ok<T = any>(status: number, request: Promise<Reply<T>>): Promise<T> {
  const reply = await request;
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

const patchCard = (user: TestUser, id: string, body: unknown) =>
  call<CardView>('PATCH', `/cards/${id}`, { token: user.token, body });
const moveCard = (user: TestUser, id: string, body: unknown) =>
  call<CardView>('PATCH', `/cards/${id}/move`, { token: user.token, body });
const renameBoard = (user: TestUser, id: string, title: string) =>
  call('PATCH', `/boards/${id}`, { token: user.token, body: { title } });
const newLabel = (user: TestUser, boardId: string, name: string, color = '#d73a4a') =>
  ok<{ id: string; name: string }>(201, call('POST', `/boards/${boardId}/labels`, { token: user.token, body: { name, color } }));

/** A board of a new owner with `members` more users added as members. */
async function teamBoard(members: number) {
  const users = await Promise.all(Array.from({ length: members + 1 }, () => newUser()));
  const owner = users[0]!;
  const board = await newBoard(owner, 'Team');
  for (const user of users.slice(1)) await addMember(owner, board.id, user);
  return { owner, users, board };
}

/** A socket of `user` watching `boardId`, and the seq its watch.ack carried. */
async function watching(user: TestUser, boardId: string, label: string): Promise<{ socket: TestSocket; ack: Frame }> {
  const socket = await connect(user, label);
  const ack = await socket.watchReply(boardId);
  if (ack.type !== 'watch.ack') throw new Error(`${label}: watch refused: ${JSON.stringify(ack)}`);
  return { socket, ack };
}

/** Waits until the socket has received the board's event numbered `seq` (events of a board arrive in seq order). */
async function receivedUpTo(socket: TestSocket, boardId: string, seq: number): Promise<void> {
  const has = () => socket.received.some((f) => f.board_id === boardId && typeof f.seq === 'number' && f.seq >= seq);
  if (has()) return;
  await socket.waitFor((f) => f.board_id === boardId && typeof f.seq === 'number' && f.seq >= seq, `seq ${seq}`);
}

/** The board's events the socket received with seq above `after`, repeats (same event_id) dropped, in arrival order. */
function eventsReceived(socket: TestSocket, boardId: string, after: number): LoggedEvent[] {
  const seen = new Set<string>();
  const events: LoggedEvent[] = [];
  for (const frame of socket.received) {
    if (frame.board_id !== boardId || typeof frame.seq !== 'number' || frame.seq <= after) continue;
    const event = frame as LoggedEvent;
    if (seen.has(event.event_id)) continue;
    seen.add(event.event_id);
    events.push(event);
  }
  return events;
}

/** The key of the change an event announces, as the test can also name it from the REST answer. */
function keyOf(event: LoggedEvent): string {
  const card = event.card as CardView | undefined;
  switch (event.type) {
    case 'card.created':
      return `created:${card!.id}`;
    case 'card.updated':
      return `updated:${card!.id}:${card!.title}`;
    case 'card.moved':
      return `moved:${card!.id}:${card!.column_id}:${card!.position}`;
    case 'card.deleted':
      return `deleted:${event.card_id}`;
    case 'board.updated':
      return `board:${(event.board as { title: string }).title}`;
    case 'column.created':
      return `column:${(event.column as ColumnView).id}`;
    case 'label.created':
      return `label:${(event.label as { id: string }).id}`;
    default:
      return `${event.type}:${event.event_id}`;
  }
}

const logItemKey = (boardId: string, seq: number) => keys.logEntry(boardId, seq);

// --- seq: 1, 2, 3, … ---------------------------------------------------------------------------

describe('every change of a board takes the next seq', () => {
  it('a new board has seq 0 (tree, watch.ack, log); each change takes the next, listed right after its answer and sent to watchers as logged', async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Numbered');
    expect((await readSeqTree(owner, board.id)).seq).toBe(0);
    expect(await ok(200, getEvents(owner, board.id))).toEqual({ events: [], latest_seq: 0 });
    const { socket, ack } = await watching(owner, board.id, 'watcher');
    expect(ack).toEqual({ type: 'watch.ack', board_id: board.id, seq: 0 });

    // Read-your-writes: once a change's answer has arrived, the log lists it, with the next seq.
    const changes: [string, () => Promise<unknown>][] = [
      ['column.created', () => newColumn(owner, board.id, 'To do')],
      ['board.updated', () => ok(200, renameBoard(owner, board.id, 'Numbered, renamed'))],
      ['column.created', () => newColumn(owner, board.id, 'Done')],
      ['label.created', () => newLabel(owner, board.id, 'Bug')],
    ];
    for (const [i, [type, change]] of changes.entries()) {
      const answer = await change();
      const page = await ok(200, getEvents(owner, board.id, { after: i }));
      expect(page.latest_seq).toBe(i + 1);
      expect(page.events.map((e) => [e.seq, e.type])).toEqual([[i + 1, type]]);
      expect(page.events[0]).toEqual({
        type,
        event_id: expect.stringMatching(UUID),
        board_id: board.id,
        actor_id: owner.id,
        occurred_at: expect.stringMatching(ISO_MS_UTC),
        seq: i + 1,
        ...(type === 'board.updated' ? { board: answer } : type === 'label.created' ? { label: answer } : { column: answer }),
      });
    }
    // The tree carries the latest seq; the watcher received each event exactly as the log lists it.
    expect((await readSeqTree(owner, board.id)).seq).toBe(4);
    const log = await ok(200, getEvents(owner, board.id));
    expect(log.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    await receivedUpTo(socket, board.id, 4);
    expect(eventsReceived(socket, board.id, 0)).toEqual(log.events);
    expect(new Set(log.events.map((e) => e.event_id)).size).toBe(4);

    // Another board counts on its own.
    const other = await newBoard(owner, 'Other');
    await newColumn(owner, other.id);
    expect((await ok(200, getEvents(owner, other.id))).events.map((e) => e.seq)).toEqual([1]);
    expect((await readSeqTree(owner, board.id)).seq).toBe(4);
  });

  it('numbers the changes of 8 concurrent writers (4 users) 1..n: no gap, no repeat, each 2xx change once, in real-time order; watchers receive the same', async () => {
    const { users, board } = await teamBoard(3);
    const owner = users[0]!;
    const columns: ColumnView[] = [];
    for (const title of ['A', 'B', 'C']) columns.push(await newColumn(owner, board.id, title));
    const base = await boardSeq(owner, board.id);
    const watchers = [await watching(owner, board.id, 'owner'), await watching(users[2]!, board.id, 'member')];
    for (const { ack } of watchers) expect(ack.seq).toBe(base);

    // A logical clock: a change answered before another was sent must have the lower seq.
    let clock = 0;
    const answered: { key: string; sent: number; answered: number; worker: number }[] = [];
    const refused: { what: string; status: number; key?: string }[] = [];
    /** Sends one change; 2xx: its key is recorded; 503 (contention: it failed, so takes no seq) is allowed. */
    async function change<T>(
      worker: number,
      what: string,
      request: () => Promise<Reply<T>>,
      keyFor: (body: T) => string,
      known?: string,
    ) {
      const sent = ++clock;
      const reply = await request();
      const at = ++clock;
      if (reply.status >= 200 && reply.status < 300) {
        answered.push({ key: keyFor(reply.body), sent, answered: at, worker });
        return reply.body;
      }
      refused.push({ what, status: reply.status, ...(known ? { key: known } : {}) });
      return undefined;
    }

    const OPS = ['create', 'edit', 'move', 'rename', 'column', 'create', 'label', 'delete'] as const;
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        const user = users[w % users.length]!;
        const mine: CardView[] = [];
        for (const [i, op] of OPS.entries()) {
          const name = `w${w} ${op} ${i}`;
          if (op === 'create') {
            const card = await change(
              w,
              name,
              () =>
                call<CardView>('POST', `/columns/${columns[(w + i) % 3]!.id}/cards`, {
                  token: user.token,
                  body: { title: name },
                }),
              (c) => `created:${c.id}`,
            );
            if (card) mine.push(card);
          } else if (op === 'edit' && mine.length > 0) {
            const card = mine.at(-1)!;
            const edited = await change(
              w,
              name,
              () => patchCard(user, card.id, { title: name }),
              (c) => `updated:${c.id}:${c.title}`,
              `updated:${card.id}:${name}`,
            );
            if (edited) mine[mine.length - 1] = edited;
          } else if (op === 'move' && mine.length > 0) {
            const card = mine[0]!;
            const to = columns[(columns.findIndex((c) => c.id === card.column_id) + 1) % 3]!;
            const moved = await change(
              w,
              name,
              () => moveCard(user, card.id, { target_column_id: to.id }),
              (c) => `moved:${c.id}:${c.column_id}:${c.position}`,
            );
            if (moved) mine[0] = moved;
          } else if (op === 'rename') {
            await change(
              w,
              name,
              () => renameBoard(user, board.id, name),
              () => `board:${name}`,
              `board:${name}`,
            );
          } else if (op === 'column') {
            await change(
              w,
              name,
              () => call<ColumnView>('POST', `/boards/${board.id}/columns`, { token: user.token, body: { title: name } }),
              (c) => `column:${c.id}`,
            );
          } else if (op === 'label') {
            await change(
              w,
              name,
              () =>
                call<{ id: string }>('POST', `/boards/${board.id}/labels`, {
                  token: user.token,
                  body: { name, color: '#0e8a16' },
                }),
              (l) => `label:${l.id}`,
            );
          } else if (op === 'delete' && mine.length > 0) {
            const card = mine.shift()!;
            await change(
              w,
              name,
              () => call('DELETE', `/cards/${card.id}`, { token: user.token }),
              () => `deleted:${card.id}`,
              `deleted:${card.id}`,
            );
          }
        }
      }),
    );
    // Only contention may refuse a change here; it then took no seq.
    expect(refused.filter((r) => r.status !== 503)).toEqual([]);
    const n = base + answered.length;
    expect(answered.length).toBeGreaterThan(0);

    // The log: exactly base+1..n, each answered change once, nothing else, no refused change.
    const log = await readAllEvents(owner, board.id, base, 1000);
    const refusedKeys = new Set(refused.flatMap((r) => (r.key ? [r.key] : [])));
    const summary = `${answered.length} answered 2xx; refused: ${refused.map((r) => `${r.what} (${r.status})`).join(', ') || 'none'}`;
    expect({ summary, refusedButLogged: log.events.map(keyOf).filter((key) => refusedKeys.has(key)) }).toEqual({
      summary,
      refusedButLogged: [],
    });
    expect(log.events.map(keyOf).sort()).toEqual(answered.map((a) => a.key).sort());
    expect(log.latest_seq).toBe(n);
    expect(log.events.map((e) => e.seq)).toEqual(oneTo(n).slice(base));
    expect(new Set(log.events.map((e) => e.event_id)).size).toBe(log.events.length);
    expect((await readSeqTree(owner, board.id)).seq).toBe(n);

    // Real-time order: whenever one answer arrived before another request was sent, the first has the lower seq.
    const seqOfKey = new Map(log.events.map((e) => [keyOf(e), e.seq]));
    const misordered = answered.flatMap((a) =>
      answered
        .filter((b) => a.answered < b.sent && seqOfKey.get(a.key)! >= seqOfKey.get(b.key)!)
        .map((b) => `${a.key} (seq ${seqOfKey.get(a.key)}) answered before ${b.key} (seq ${seqOfKey.get(b.key)}) was sent`),
    );
    expect(misordered).toEqual([]);

    // Every watcher received base+1..n, in order, each event exactly as logged.
    for (const { socket } of watchers) {
      await receivedUpTo(socket, board.id, n);
      expect(eventsReceived(socket, board.id, base)).toEqual(log.events);
    }
  });
});

describe('a request that fails or changes nothing takes no seq', () => {
  it('400, 403, 404, 409, an empty PATCH, a move to the same place, a re-attach, an unchanged title or role: the next change is seq + 1', async () => {
    const owner = await newUser();
    const [member, stranger] = [await newUser(), await newUser()];
    const board = await newBoard(owner, 'Quiet');
    await addMember(owner, board.id, member);
    const column = await newColumn(owner, board.id, 'Only');
    const card = await newCard(owner, column.id, { title: 'Stays' });
    const label = await newLabel(owner, board.id, 'Bug');
    await ok(200, call('PUT', `/cards/${card.id}/labels/${label.id}`, { token: owner.token }));
    const before = await readSeqTree(owner, board.id);
    const seq = before.seq;

    const failures: [string, () => Promise<Reply>, number][] = [
      ['400 empty card title', () => patchCard(owner, card.id, { title: '' }), 400],
      ['400 empty board title', () => renameBoard(owner, board.id, ''), 400],
      [
        '400 bad label colour',
        () => call('POST', `/boards/${board.id}/labels`, { token: owner.token, body: { name: 'x', color: 'red' } }),
        400,
      ],
      ['403 stranger edits a card', () => patchCard(stranger, card.id, { title: 'Hijacked' }), 403],
      ['403 stranger renames', () => renameBoard(stranger, board.id, 'Hijacked'), 403],
      ['403 member deletes the board', () => call('DELETE', `/boards/${board.id}`, { token: member.token }), 403],
      ['404 move to an unknown column', () => moveCard(owner, card.id, { target_column_id: unknownId() }), 404],
      ['404 edit an unknown card', () => patchCard(owner, unknownId(), { title: 'Nobody' }), 404],
      ['404 attach an unknown label', () => call('PUT', `/cards/${card.id}/labels/${unknownId()}`, { token: owner.token }), 404],
      [
        '404 change an unknown member',
        () => call('PATCH', `/boards/${board.id}/members/${unknownId()}`, { token: owner.token, body: { role: 'owner' } }),
        404,
      ],
      [
        '409 add a member twice',
        () => call('POST', `/boards/${board.id}/members`, { token: owner.token, body: { email: member.email } }),
        409,
      ],
      ['409 the last owner leaves', () => call('DELETE', `/boards/${board.id}/members/${owner.id}`, { token: owner.token }), 409],
    ];
    for (const [what, request, status] of failures) expect({ what, status: (await request()).status }).toEqual({ what, status });
    const noChange: [string, () => Promise<Reply>][] = [
      ['an empty PATCH of a card', () => patchCard(owner, card.id, {})],
      ['a PATCH of nulls', () => patchCard(owner, card.id, { title: null, description: null })],
      ['a card title set to the one it has', () => patchCard(owner, card.id, { title: 'Stays' })],
      ['a move to the place the card has', () => moveCard(owner, card.id, { target_column_id: column.id })],
      ['a label attached again', () => call('PUT', `/cards/${card.id}/labels/${label.id}`, { token: owner.token })],
      ['a board title set to the one it has', () => renameBoard(owner, board.id, 'Quiet')],
      [
        'a role set to the one the member has',
        () => call('PATCH', `/boards/${board.id}/members/${member.id}`, { token: owner.token, body: { role: 'member' } }),
      ],
    ];
    for (const [what, request] of noChange) expect({ what, status: (await request()).status }).toEqual({ what, status: 200 });

    expect((await readSeqTree(owner, board.id)).seq).toBe(seq);
    expect(await ok(200, getEvents(owner, board.id, { after: seq }))).toEqual({ events: [], latest_seq: seq });
    const sentinel = await ok(200, renameBoard(owner, board.id, 'The only change'));
    const page = await ok(200, getEvents(owner, board.id, { after: seq }));
    expect(page.latest_seq).toBe(seq + 1);
    expect(page.events).toEqual([expect.objectContaining({ type: 'board.updated', seq: seq + 1, board: sentinel })]);
    // The tree is unchanged but for the rename.
    const after = await readSeqTree(owner, board.id);
    expect(after).toEqual({ ...before, title: 'The only change', seq: seq + 1 });
  });
});

// --- the tree and watch.ack ------------------------------------------------------------------------

describe('the tree and watch.ack carry seq', () => {
  it('the tree reflects every change up to its seq', async () => {
    const { owner, users, board } = await teamBoard(1);
    const column = await newColumn(owner, board.id, 'Col');
    const cards = await Promise.all([1, 2, 3].map((i) => newCard(users[i % 2]!, column.id, { title: `Card ${i}` })));
    const tree = await readSeqTree(owner, board.id);
    const log = await readAllEvents(owner, board.id);
    expect(tree.seq).toBe(log.latest_seq);
    expect(log.events.map((e) => e.seq)).toEqual(oneTo(tree.seq));
    // Replaying the whole log onto the empty board gives the tree.
    let client: ClientBoard = {
      tree: { ...board, seq: 0, columns: [], labels: [] },
    };
    for (const event of log.events) client = applyEvent(client, event);
    expect(client.tree).toEqual(tree);
    expect(tree.columns[0]!.cards.map((c) => c.id).sort()).toEqual(cards.map((c) => c.id).sort());
  });

  it('watch.ack carries the latest seq, and every event with a higher one reaches the socket, also while changes are being made', async () => {
    const { users, board } = await teamBoard(1);
    const owner = users[0]!;
    const column = await newColumn(owner, board.id, 'Busy');
    const base = await boardSeq(owner, board.id);
    let answeredBeforeWatch = 0;
    let answeredSoFar = 0;
    let watchSent = false;
    const writers = Promise.all(
      users.map(async (user, u) => {
        for (let i = 0; i < 12; i++) {
          const reply = await call('POST', `/columns/${column.id}/cards`, { token: user.token, body: { title: `u${u} ${i}` } });
          if (reply.status !== 201 && reply.status !== 503)
            throw new Error(`create: ${reply.status} ${JSON.stringify(reply.body)}`);
          if (reply.status === 201) {
            answeredSoFar++;
            if (!watchSent) answeredBeforeWatch++;
          }
        }
      }),
    );
    // Watch once a few changes are in, while the others are still being made.
    await eventually(async () => expect(answeredSoFar).toBeGreaterThanOrEqual(3), 120_000, 20);
    const socket = await connect(users[1]!, 'late watcher');
    watchSent = true;
    const ack = await socket.watchReply(board.id);
    expect(ack).toEqual({ type: 'watch.ack', board_id: board.id, seq: expect.any(Number) });
    const seq = ack.seq as number;
    // Every change answered before the watch was sent committed before the ack's read.
    expect(seq).toBeGreaterThanOrEqual(base + answeredBeforeWatch);
    await writers;
    const n = await boardSeq(owner, board.id);
    expect(n).toBe(base + answeredSoFar);
    expect(seq).toBeLessThanOrEqual(n);
    if (seq < n) await receivedUpTo(socket, board.id, n);
    const log = await readAllEvents(owner, board.id, seq);
    expect(eventsReceived(socket, board.id, seq)).toEqual(log.events);
    expect(log.events.map((e) => e.seq)).toEqual(oneTo(n).slice(seq));
  });
});

// --- GET /boards/{id}/events -----------------------------------------------------------------------

describe('GET /boards/{id}/events', () => {
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let boardId: string;
  const COUNT = 105;

  beforeAll(async () => {
    [owner, member, stranger] = await Promise.all([newUser(), newUser(), newUser()]);
    boardId = (await newBoard(owner, 'History')).id;
    await addMember(owner, boardId, member);
    // 105 changes: the member's addition, then renames by two writers at a time.
    for (let i = 2; i <= COUNT; i += 2) {
      await Promise.all([
        ok(200, renameBoard(owner, boardId, `Title ${i}`)),
        ...(i + 1 <= COUNT ? [ok(200, renameBoard(member, boardId, `Title ${i + 1}`))] : []),
      ]);
    }
    expect(await boardSeq(owner, boardId)).toBe(COUNT);
  });

  it('answers 200 {events, latest_seq} to a member: after omitted is 0, limit defaults to 100', async () => {
    const reply = await getEvents(member, boardId);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(reply.body).sort()).toEqual(['events', 'latest_seq']);
    expect(reply.body.latest_seq).toBe(COUNT);
    expect(reply.body.events.map((e) => e.seq)).toEqual(oneTo(100));
    expect(reply.body.events[0]).toMatchObject({
      type: 'member.added',
      seq: 1,
      actor_id: owner.id,
      member: { user_id: member.id },
    });
    expect(await ok(200, getEvents(member, boardId, { after: 0 }))).toEqual(reply.body);
  });

  it('pages by after and limit (1 to 1000)', async () => {
    expect((await ok(200, getEvents(owner, boardId, { after: 100, limit: 3 }))).events.map((e) => e.seq)).toEqual([
      101, 102, 103,
    ]);
    expect((await ok(200, getEvents(owner, boardId, { after: 103 }))).events.map((e) => e.seq)).toEqual([104, 105]);
    expect((await ok(200, getEvents(owner, boardId, { limit: 1 }))).events.map((e) => e.seq)).toEqual([1]);
    const all = await ok(200, getEvents(owner, boardId, { limit: 1000 }));
    expect(all.events.map((e) => e.seq)).toEqual(oneTo(COUNT));
    expect(all.latest_seq).toBe(COUNT);
    // Pages of 7 put together are the whole log.
    const paged = await readAllEvents(owner, boardId, 0, 7);
    expect(paged.events).toEqual(all.events);
    expect(paged.pages).toBe(Math.ceil(COUNT / 7));
  });

  it('answers an empty list for an after at or past latest_seq', async () => {
    for (const after of [COUNT, COUNT + 1, 999_999_999_999_999, Number.MAX_SAFE_INTEGER]) {
      expect({ after, page: await ok(200, getEvents(owner, boardId, { after })) }).toEqual({
        after,
        page: { events: [], latest_seq: COUNT },
      });
    }
  });

  it.each([
    ['after=-1', { after: '-1' }],
    ['after=1.5', { after: '1.5' }],
    ['after=abc', { after: 'abc' }],
    ['after=1e3', { after: '1e3' }],
    ['after=+1', { after: '+1' }],
    // Above the documented maximum (2^53 - 1), however many digits: the OpenAPI document promises 400.
    ['after=9007199254740992 (2^53)', { after: '9007199254740992' }],
    ['after=9007199254740993', { after: '9007199254740993' }],
    ['after=10^20', { after: '100000000000000000000' }],
    ['after of 400 digits', { after: '9'.repeat(400) }],
    ['limit=0', { limit: '0' }],
    ['limit=1001', { limit: '1001' }],
    ['limit=-5', { limit: '-5' }],
    ['limit=2.5', { limit: '2.5' }],
    ['limit=ten', { limit: 'ten' }],
  ])('answers 400 problem+json for %s', async (_case, query) => {
    expectProblem(await getEvents(owner, boardId, query), 400);
  });

  it("follows the tree's rules and order: 400 for a bad id first, 401 without a token, 403 to a non-member and for a missing board", async () => {
    expectProblem(await getEvents(owner, 'not-a-uuid'), 400);
    expectProblem(await getEvents(stranger, 'not-a-uuid', { after: '-1' }), 400);
    // Validation comes before any lookup, as for a body.
    expectProblem(await getEvents(stranger, boardId, { limit: '0' }), 400);
    const anonymous = await call('GET', `/boards/${boardId}/events`);
    expectProblem(anonymous, 401);
    expectProblem(await getEvents(stranger, boardId), 403);
    expectProblem(await getEvents(owner, unknownId()), 403);
    // The tree answers the same.
    expectProblem(await call('GET', `/boards/${boardId}`, { token: stranger.token }), 403);
    expectProblem(await call('GET', `/boards/${unknownId()}`, { token: owner.token }), 403);
  });

  it('answers 410 resync_required when the first event after `after` is no longer kept, by its kept_until or gone to TTL', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Forgetful');
    for (const title of ['a', 'b', 'c', 'd']) await ok(200, renameBoard(user, board.id, title));
    // Events 1 and 2 are past their retention (their kept_until moved into the past), still stored.
    const past = Math.floor(Date.now() / 1000) - 10;
    for (const seq of [1, 2]) {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: logItemKey(board.id, seq),
          UpdateExpression: 'SET kept_until = :past',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':past': past },
        }),
      );
    }
    for (const after of [0, 1]) {
      const reply = await getEvents(user, board.id, { after });
      expect({ after, code: expectProblem(reply, 410).code }).toEqual({ after, code: 'resync_required' });
    }
    expect((await ok(200, getEvents(user, board.id, { after: 2 }))).events.map((e) => e.seq)).toEqual([3, 4]);
    // Event 3 removed (as TTL would, late): after=2 is 410 too, although event 4 is kept.
    await documentClient.send(new DeleteCommand({ TableName: tableName, Key: logItemKey(board.id, 3) }));
    expect(expectProblem(await getEvents(user, board.id, { after: 2 }), 410).code).toBe('resync_required');
    expect((await ok(200, getEvents(user, board.id, { after: 3 }))).events.map((e) => e.seq)).toEqual([4]);
    // The recipe: read the tree again and go on from its seq.
    const tree = await readSeqTree(user, board.id);
    expect(tree).toMatchObject({ title: 'd', seq: 4 });
    expect(await ok(200, getEvents(user, board.id, { after: tree.seq }))).toEqual({ events: [], latest_seq: 4 });
  });
});

// --- access.revoked, board.deleted -----------------------------------------------------------------

describe('access.revoked and the end of a board', () => {
  it('access.revoked carries no seq and is not in the log; the removal itself is', async () => {
    const { owner, users, board } = await teamBoard(2);
    const [removed, third] = [users[1]!, users[2]!];
    const seq = await boardSeq(owner, board.id);
    const { socket: removedSocket } = await watching(removed, board.id, 'removed');
    const { socket: thirdSocket } = await watching(third, board.id, 'third');
    await ok(204, call('DELETE', `/boards/${board.id}/members/${removed.id}`, { token: owner.token }));
    const revoked = await removedSocket.waitFor((f) => f.type === 'access.revoked', 'access.revoked');
    expect(revoked).toEqual({
      type: 'access.revoked',
      event_id: expect.stringMatching(UUID),
      board_id: board.id,
      actor_id: owner.id,
      occurred_at: expect.stringMatching(ISO_MS_UTC),
    });
    const removal = await thirdSocket.waitFor((f) => f.type === 'member.removed', 'member.removed');
    expect(removal).toMatchObject({ seq: seq + 1, user_id: removed.id, actor_id: owner.id });
    const log = await ok(200, getEvents(owner, board.id, { after: seq }));
    expect(log.events).toEqual([removal]);
    // The removed member may no longer read the log.
    expectProblem(await getEvents(removed, board.id), 403);
  });

  it('board.deleted is the last event, numbered after every change; the log goes with the board', async () => {
    const { owner, users, board } = await teamBoard(1);
    const member = users[1]!;
    const column = await newColumn(owner, board.id, 'Col');
    await newCard(member, column.id, { title: 'Soon gone' });
    const seq = await boardSeq(owner, board.id);
    const { socket } = await watching(member, board.id, 'member');
    await ok(204, call('DELETE', `/boards/${board.id}`, { token: owner.token }));
    const deleted = await socket.waitFor((f) => f.type === 'board.deleted', 'board.deleted');
    expect(deleted).toMatchObject({ board_id: board.id, actor_id: owner.id, seq: seq + 1 });
    expectProblem(await getEvents(owner, board.id), 403);
    expectProblem(await getEvents(member, board.id), 403);
    await socket.ping();
    expect(
      socket.received.filter((f) => f.board_id === board.id && typeof f.seq === 'number' && f.seq > (deleted.seq as number)),
    ).toEqual([]);
    // The log items leave the table with the rest of the partition.
    await eventually(
      async () => expect((await readPartition(documentClient, tableName, `BOARD#${board.id}`)).map((i) => i.sk)).toEqual([]),
      240_000,
      250,
    );
  });

  it('every card edit answered 2xx while DELETE /boards/{id} runs reaches the watchers before board.deleted (5 rounds)', async () => {
    const outcomes: string[] = [];
    for (let round = 1; round <= 5; round++) {
      const { owner, users, board } = await teamBoard(1);
      const member = users[1]!;
      const column = await newColumn(owner, board.id, 'Raced');
      const cards: CardView[] = [];
      for (let i = 0; i < 4; i++) cards.push(await newCard(owner, column.id, { title: `Card ${i}` }));
      const sentinelBoard = await newBoard(owner, 'Sentinel');
      const seq = await boardSeq(owner, board.id);
      const ownerWatch = await watching(owner, board.id, `owner (round ${round})`);
      expect(await ownerWatch.socket.watchReply(sentinelBoard.id)).toMatchObject({ type: 'watch.ack', seq: 0 });
      const memberWatch = await watching(member, board.id, `member (round ${round})`);

      const edits = cards.flatMap((card, i) => [
        { user: member, card, title: `r${round} member ${i}` },
        { user: owner, card, title: `r${round} owner ${i}` },
      ]);
      const [deletion, ...replies] = await Promise.all([
        new Promise((resolve) => setTimeout(resolve, 5 * round)).then(() =>
          call('DELETE', `/boards/${board.id}`, { token: owner.token }),
        ),
        ...edits.map((edit) => patchCard(edit.user, edit.card.id, { title: edit.title })),
      ]);
      expect(deletion!.status).toBe(204);
      for (const reply of replies) expect([200, 403, 404, 503]).toContain(reply.status);
      const accepted = edits.filter((_, i) => replies[i]!.status === 200).map((edit) => edit.title);
      outcomes.push(`round ${round}: ${accepted.length} of ${edits.length} edits answered 200`);

      for (const { socket } of [ownerWatch, memberWatch]) {
        const deleted = await socket.waitFor((f) => f.type === 'board.deleted' && f.board_id === board.id, 'board.deleted');
        const heard = eventsReceived(socket, board.id, seq);
        // Nothing of the board after board.deleted, which is numbered after every accepted edit.
        expect(heard.at(-1)).toEqual(deleted);
        expect({ round, seqs: heard.map((e) => e.seq) }).toEqual({ round, seqs: oneTo(seq + accepted.length + 1).slice(seq) });
        const titles = heard.filter((e) => e.type === 'card.updated').map((e) => (e.card as CardView).title);
        expect({ round, titles: titles.sort() }).toEqual({ round, titles: [...accepted].sort() });
      }
      // The owner's socket goes on with its other board: nothing more of the deleted one reaches it.
      await ok(200, renameBoard(owner, sentinelBoard.id, `After round ${round}`));
      await ownerWatch.socket.waitFor((f) => f.type === 'board.updated' && f.board_id === sentinelBoard.id, 'the sentinel');
      const last = ownerWatch.socket.received.findIndex((f) => f.type === 'board.deleted' && f.board_id === board.id);
      expect(ownerWatch.socket.received.slice(last + 1).filter((f) => f.board_id === board.id)).toEqual([]);
      await closeAllSockets();
    }
    // Not an assertion on the race's outcome (the machine decides it): what the rounds saw, for the log.
    expect(outcomes).toHaveLength(5);
  });
});

// --- catching up after a reconnect -------------------------------------------------------------------

describe('a client that disconnects, misses changes and reconnects', () => {
  it('catches up from the log and ends with exactly the tree the server returns', async () => {
    const { owner, users, board } = await teamBoard(2);
    const [alice, bob] = [users[1]!, users[2]!];
    const todo = await newColumn(owner, board.id, 'To do');
    const doing = await newColumn(owner, board.id, 'Doing');
    const zulu = await newLabel(owner, board.id, 'zulu');
    await newCard(owner, todo.id, { title: 'Before the client' });

    // The recipe: read the tree, watch, apply what arrives with a higher seq.
    let client = await readClientBoard(owner, board.id);
    /** Applies the socket's new frames of the board in order: each must be the next seq (older ones are dropped). */
    let consumed = 0;
    const applyLive = (socket: TestSocket) => {
      for (; consumed < socket.received.length; consumed++) {
        const frame = socket.received[consumed]!;
        if (frame.board_id !== board.id || typeof frame.seq !== 'number' || frame.seq <= client.tree.seq) continue;
        expect({ gapAfter: client.tree.seq, got: frame.seq }).toEqual({ gapAfter: client.tree.seq, got: client.tree.seq + 1 });
        client = applyEvent(client, frame as LoggedEvent);
      }
    };
    const first = await watching(owner, board.id, 'before the drop');
    const a = await newCard(alice, todo.id, { title: 'A' });
    const b = await newCard(bob, doing.id, { title: 'B', description: 'bee' });
    await ok(200, call('PUT', `/cards/${b.id}/labels/${zulu.id}`, { token: bob.token }));
    let latest = await boardSeq(owner, board.id);
    await receivedUpTo(first.socket, board.id, latest);
    applyLive(first.socket);
    expect(client.tree.seq).toBe(latest);

    // The socket drops; three users change the board meanwhile.
    await first.socket.terminate();
    const c = await newCard(alice, todo.id, { title: 'C' });
    await Promise.all([
      ok(200, patchCard(alice, a.id, { title: 'A, edited', description: 'now described' })),
      ok(200, moveCard(bob, b.id, { target_column_id: todo.id, before_id: c.id })),
      ok(201, call('POST', `/boards/${board.id}/columns`, { token: owner.token, body: { title: 'Later' } })),
    ]);
    const alpha = await newLabel(bob, board.id, 'alpha', '#0e8a16');
    await ok(200, call('PUT', `/cards/${b.id}/labels/${alpha.id}`, { token: alice.token }));
    await ok(200, call('PUT', `/cards/${c.id}/labels/${zulu.id}`, { token: alice.token }));
    // A rename that puts zulu first on every card carrying both.
    await ok(200, call('PATCH', `/labels/${zulu.id}`, { token: owner.token, body: { name: 'Aardvark' } }));
    await ok(200, moveCard(alice, a.id, { target_column_id: doing.id }));
    await ok(200, call('PATCH', `/columns/${doing.id}`, { token: bob.token, body: { title: 'In progress' } }));
    // In front of To do (position 0): a tie would be ordered by the columns' created_at, which no event carries.
    await ok(200, call('PATCH', `/columns/${doing.id}/move`, { token: bob.token, body: { after_id: todo.id } }));
    await ok(200, renameBoard(alice, board.id, 'Renamed while away'));
    const doomed = await newColumn(bob, board.id, 'Doomed');
    await newCard(bob, doomed.id, { title: 'Goes with its column' });
    await ok(204, call('DELETE', `/columns/${doomed.id}`, { token: owner.token }));
    await ok(204, call('DELETE', `/labels/${alpha.id}`, { token: bob.token }));
    const gone = await newCard(owner, todo.id, { title: 'Short-lived' });
    await ok(204, call('DELETE', `/cards/${gone.id}`, { token: alice.token }));
    const missed = (await boardSeq(owner, board.id)) - client.tree.seq;
    expect(missed).toBeGreaterThanOrEqual(17);

    // Reconnect: watch first, then read the log from the client's seq (pages of 4), then live events.
    const second = await watching(owner, board.id, 'after the reconnect');
    consumed = 0;
    const caughtUp = await readAllEvents(owner, board.id, client.tree.seq, 4);
    expect(caughtUp.latest_seq).toBeGreaterThanOrEqual(second.ack.seq as number);
    expect(caughtUp.events.map((e) => e.seq)).toEqual(oneTo(caughtUp.latest_seq).slice(client.tree.seq));
    for (const event of caughtUp.events) client = applyEvent(client, event);
    // Changes after the reconnect arrive live.
    await ok(200, patchCard(bob, c.id, { title: 'C, live' }));
    await ok(200, moveCard(alice, c.id, { target_column_id: doing.id }));
    latest = await boardSeq(owner, board.id);
    await receivedUpTo(second.socket, board.id, latest);
    applyLive(second.socket);

    const server = await readClientBoard(owner, board.id);
    expect(client.tree).toEqual(server.tree);
  });
});
