import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  addMember,
  CARD_FIELDS,
  type CardView,
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
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import { eventually } from '../support/wait';

/**
 * Labels: a board's own tags {id, board_id, name, color}, put on its cards; every card
 * shows the ids of the live labels it carries, in the label list's order. Checked over HTTP
 * against the local stack: the label rules, the contract's order of checks for owner, member and
 * stranger, idempotent attach and detach, the cascades on label and board delete, and both limits.
 */

// --- helpers -------------------------------------------------------------------------------------

interface LabelView {
  id: string;
  board_id: string;
  name: string;
  color: string;
}

type LabeledCard = CardView & { label_ids: string[] };
interface LabeledTree {
  id: string;
  labels: LabelView[];
  columns: { id: string; cards: LabeledCard[] }[];
}

const LABEL_FIELDS = ['board_id', 'color', 'id', 'name'];

const postLabel = (user: TestUser | undefined, boardId: string, body: unknown) =>
  call<LabelView>('POST', `/boards/${boardId}/labels`, { token: user?.token, body });
const getLabels = (user: TestUser | undefined, boardId: string) =>
  call<LabelView[]>('GET', `/boards/${boardId}/labels`, { token: user?.token });
const patchLabel = (user: TestUser | undefined, id: string, body: unknown) =>
  call<LabelView>('PATCH', `/labels/${id}`, { token: user?.token, body });
const deleteLabel = (user: TestUser | undefined, id: string) => call('DELETE', `/labels/${id}`, { token: user?.token });
const attach = (user: TestUser | undefined, cardId: string, labelId: string) =>
  call<LabeledCard>('PUT', `/cards/${cardId}/labels/${labelId}`, { token: user?.token });
const detach = (user: TestUser | undefined, cardId: string, labelId: string) =>
  call<LabeledCard>('DELETE', `/cards/${cardId}/labels/${labelId}`, { token: user?.token });
const getCard = (user: TestUser, id: string) => call<LabeledCard>('GET', `/cards/${id}`, { token: user.token });
const getColumn = (user: TestUser, id: string) =>
  call<{ id: string; cards: LabeledCard[] }>('GET', `/columns/${id}`, { token: user.token });
const tree = async (user: TestUser, boardId: string) => (await readTree(user, boardId)) as unknown as LabeledTree;

function expectStatus(reply: Reply, status: number) {
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status}: ${JSON.stringify(reply.body)}`);
}

/** POST /boards/{id}/labels, which must succeed. */
async function label(user: TestUser, boardId: string, name: string, color = '#336699'): Promise<LabelView> {
  const reply = await postLabel(user, boardId, { name, color });
  expectStatus(reply, 201);
  return reply.body;
}

async function labelsOf(user: TestUser, boardId: string): Promise<LabelView[]> {
  const reply = await getLabels(user, boardId);
  expectStatus(reply, 200);
  return reply.body;
}

async function cardOf(user: TestUser, id: string): Promise<LabeledCard> {
  const reply = await getCard(user, id);
  expectStatus(reply, 200);
  return reply.body;
}

async function put(user: TestUser, cardId: string, labelId: string): Promise<LabeledCard> {
  const reply = await attach(user, cardId, labelId);
  expectStatus(reply, 200);
  return reply.body;
}

/** `work` over `items`, `size` at a time. */
async function inBatches<T, R>(items: T[], size: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) {
    results.push(...(await Promise.all(items.slice(i, i + size).map((item, j) => work(item, i + j)))));
  }
  return results;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** The order the contract prescribes: by name case-insensitively, then id. */
const inListOrder = (labels: LabelView[]) =>
  [...labels].sort((a, b) => {
    const x = a.name.toLowerCase();
    const y = b.name.toLowerCase();
    return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });

/**
 * A board of `owner` with a plain `member`, two columns and two cards in the first, plus a
 * registered `stranger` who owns a board of their own (with a card and a label there).
 */
async function team() {
  const [owner, member, stranger] = await Promise.all([newUser(), newUser(), newUser()]);
  const [board, strangerBoard] = await Promise.all([newBoard(owner, 'Labelled board'), newBoard(stranger, 'Elsewhere')]);
  const [first, second, , strangerColumn] = await Promise.all([
    newColumn(owner, board.id, 'First'),
    newColumn(owner, board.id, 'Second'),
    addMember(owner, board.id, member),
    newColumn(stranger, strangerBoard.id, 'Theirs'),
  ]);
  const [card1, card2, strangerCard, strangerLabel] = await Promise.all([
    newCard(owner, first.id, { title: 'One' }),
    newCard(owner, first.id, { title: 'Two' }),
    newCard(stranger, strangerColumn.id, { title: 'Theirs' }),
    label(stranger, strangerBoard.id, 'Theirs'),
  ]);
  return {
    owner,
    member,
    stranger,
    board,
    columns: [first.id, second.id] as const,
    cards: [card1.id, card2.id] as const,
    strangerBoard,
    strangerCard: strangerCard.id,
    strangerLabel,
  };
}

let documentClient: DynamoDBDocumentClient;
let tableName: string;
const partition = (pk: string) => readPartition(documentClient, tableName, pk);

beforeAll(() => {
  const env = localEnv();
  tableName = env.TABLE_NAME!;
  documentClient = localDocumentClient(env);
});

afterAll(() => documentClient?.destroy());

// --- creating and listing ------------------------------------------------------------------------

describe('POST /boards/{id}/labels', () => {
  it('creates a label: 201 with exactly {id, board_id, name, color}, color in lower case, name as sent', async () => {
    const { owner, board } = await team();
    const reply = await postLabel(owner, board.id, { name: '  Needs Review ✓ ', color: '#A1B2C3' });
    expect(reply.status).toBe(201);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(reply.body).sort()).toEqual(LABEL_FIELDS);
    expect(reply.body).toEqual({
      id: expect.stringMatching(UUID),
      board_id: board.id,
      name: '  Needs Review ✓ ',
      color: '#a1b2c3',
    });
    expect(await labelsOf(owner, board.id)).toEqual([reply.body]);
  });

  it('lets a plain member create labels, and both see them', async () => {
    const { owner, member, board } = await team();
    const created = await label(member, board.id, 'By a member', '#00ff00');
    expect(await labelsOf(owner, board.id)).toEqual([created]);
    expect(await labelsOf(member, board.id)).toEqual([created]);
  });

  it('names: 1–50 characters counted as code points, not only whitespace; anything else is 400 and creates nothing', async () => {
    const { owner, board } = await team();
    const refused = ['', ' ', '\t\n ', '\u3000\u00a0', 'a'.repeat(51), '😀'.repeat(51), `${'a'.repeat(50)}😀`, 'x\ud800y'];
    for (const name of refused) {
      const problem = expectProblem(await postLabel(owner, board.id, { name, color: '#123456' }), 400);
      expect(problem.detail).toMatch(/name/);
    }
    for (const body of [
      { color: '#123456' },
      { name: null, color: '#123456' },
      { name: 5, color: '#123456' },
      { name: ['x'], color: '#123456' },
    ]) {
      expectProblem(await postLabel(owner, board.id, body), 400);
    }
    expect(await labelsOf(owner, board.id)).toEqual([]);

    // 50 emoji are 50 characters (100 UTF-16 units): accepted, and stored as sent.
    const emoji = await label(owner, board.id, '😀'.repeat(50));
    expect(emoji.name).toBe('😀'.repeat(50));
    const ascii = await label(owner, board.id, 'a'.repeat(50));
    const one = await label(owner, board.id, 'z');
    expect((await labelsOf(owner, board.id)).map((l) => l.id).sort()).toEqual([emoji.id, ascii.id, one.id].sort());
  });

  it('colors: #rrggbb only (either case); anything else is 400 and creates nothing', async () => {
    const { owner, board } = await team();
    const refused: unknown[] = [
      '#ABC',
      'red',
      '#GGGGGG',
      'ABCDEF',
      'abcdef',
      '#abcde',
      '#abcdef0',
      ' #abcdef',
      '#abcdef ',
      '#abcdef\n',
      '##abcdef',
      '#ａｂｃｄｅｆ',
      '',
      null,
      0xabcdef,
      ['#abcdef'],
    ];
    for (const color of refused) {
      const problem = expectProblem(await postLabel(owner, board.id, { name: 'Colourful', color }), 400);
      expect(problem.detail).toMatch(/color/);
    }
    expectProblem(await postLabel(owner, board.id, { name: 'Colourless' }), 400);
    expect(await labelsOf(owner, board.id)).toEqual([]);

    const mixed = await label(owner, board.id, 'Mixed', '#aBcDeF');
    const upper = await label(owner, board.id, 'Upper', '#FFFFFF');
    expect([mixed.color, upper.color]).toEqual(['#abcdef', '#ffffff']);
    expect((await labelsOf(owner, board.id)).map((l) => l.color)).toEqual(['#abcdef', '#ffffff']);
  });

  it('a name already on the board, compared case-insensitively, is 409 and creates nothing; other boards are independent', async () => {
    const { owner, board, stranger, strangerBoard } = await team();
    const bug = await label(owner, board.id, 'Bug', '#ff0000');
    for (const name of ['Bug', 'bug', 'BUG', 'bUg']) {
      expect(expectProblem(await postLabel(owner, board.id, { name, color: '#00ff00' }), 409).code).toBe('conflict');
    }
    expect(await labelsOf(owner, board.id)).toEqual([bug]);
    // The same name on another board is fine.
    await label(stranger, strangerBoard.id, 'bug');
    // Not unique by trimming: names are stored and compared as sent (apart from case).
    await label(owner, board.id, ' Bug');
  });

  it('a label renamed while it is deleted leaves neither name taken', async () => {
    const { owner, member, board } = await team();
    // Rename and delete at once, a few times: whichever commits first, once both have answered the
    // label is gone, and so both its old and its new name are free (only another label makes a 409).
    // The interleaving this guards against (fixed in 379d087): the rename commits between the
    // delete's read and its write, the delete removes the name item of the name it read, and the
    // new name's item stays behind for good. Twelve rounds make it likely, not certain; a round
    // where it does not happen still must leave both names free.
    const rounds = await inBatches(range(12), 4, async (i) => {
      const doomed = await label(owner, board.id, `Old ${i}`);
      const [renamed, deleted] = await Promise.all([
        patchLabel(member, doomed.id, { name: `New ${i}` }),
        deleteLabel(owner, doomed.id),
      ]);
      return { i, renamed: renamed.status, deleted: deleted.status };
    });
    for (const round of rounds) {
      expect([200, 404]).toContain(round.renamed);
      expect(round.deleted).toBe(204);
    }
    expect(await labelsOf(owner, board.id)).toEqual([]);
    const reused = await inBatches(range(12), 6, async (i) => ({
      i,
      renamedFirst: rounds[i]!.renamed === 200,
      old: (await postLabel(owner, board.id, { name: `Old ${i}`, color: '#000000' })).status,
      new: (await postLabel(owner, board.id, { name: `new ${i}`, color: '#000000' })).status,
    }));
    expect(reused.filter((r) => r.old !== 201 || r.new !== 201)).toEqual([]);
  });

  it('two concurrent creates of the same name in different case: exactly one wins', async () => {
    const { owner, member, board } = await team();
    const replies = await Promise.all([
      postLabel(owner, board.id, { name: 'Race', color: '#111111' }),
      postLabel(member, board.id, { name: 'RACE', color: '#222222' }),
      postLabel(owner, board.id, { name: 'race', color: '#333333' }),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    for (const reply of replies.filter((r) => r.status === 409)) expectProblem(reply, 409);
    expect(await labelsOf(owner, board.id)).toEqual([replies.find((r) => r.status === 201)!.body]);
  });

  it('a deleted label’s name is free again', async () => {
    const { owner, board } = await team();
    const first = await label(owner, board.id, 'Again');
    expectStatus(await deleteLabel(owner, first.id), 204);
    const second = await label(owner, board.id, 'AGAIN');
    expect(second.id).not.toBe(first.id);
    expect(await labelsOf(owner, board.id)).toEqual([second]);
  });
});

describe('GET /boards/{id}/labels', () => {
  it('lists by name case-insensitively (not by code unit), then id; [] without labels', async () => {
    const { owner, member, board } = await team();
    expect(await labelsOf(owner, board.id)).toEqual([]);
    const names = ['b', 'A', 'c', 'B2', 'a1', 'Zebra', 'apple'];
    const created = await Promise.all(names.map((name) => label(owner, board.id, name)));
    const listed = await labelsOf(member, board.id);
    expect(listed.map((l) => l.name)).toEqual(['A', 'a1', 'apple', 'b', 'B2', 'c', 'Zebra']);
    expect(listed).toEqual(inListOrder(created));
    for (const entry of listed) expect(Object.keys(entry).sort()).toEqual(LABEL_FIELDS);
    // The tree has the same labels, in the same order, at its top level.
    expect((await tree(owner, board.id)).labels).toEqual(listed);
  });

  it('the tree of a board without labels has labels: []', async () => {
    const { owner, board } = await team();
    expect((await tree(owner, board.id)).labels).toEqual([]);
  });
});

// --- updating and deleting -----------------------------------------------------------------------

describe('PATCH /labels/{id}', () => {
  it('is null-safe: {} and nulls change nothing; each named field changes alone; color in lower case', async () => {
    const { owner, member, board } = await team();
    const original = await label(owner, board.id, 'Original', '#abcdef');

    const empty = await patchLabel(owner, original.id, {});
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(original);
    const nulls = await patchLabel(owner, original.id, { name: null, color: null });
    expect(nulls.status).toBe(200);
    expect(nulls.body).toEqual(original);

    const recoloured = await patchLabel(member, original.id, { name: null, color: '#12AB56' });
    expect(recoloured.status).toBe(200);
    expect(recoloured.body).toEqual({ ...original, color: '#12ab56' });

    const renamed = await patchLabel(owner, original.id, { name: ' Renamed ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...original, name: ' Renamed ', color: '#12ab56' });

    const both = await patchLabel(owner, original.id, {
      name: 'Both',
      color: '#000000',
      board_id: randomUUID(),
      id: randomUUID(),
    });
    expect(both.body).toEqual({ ...original, name: 'Both', color: '#000000' });
    expect(await labelsOf(owner, board.id)).toEqual([both.body]);
  });

  it('renaming to its own name in another case is fine; to another label’s name in any case is 409 and changes nothing', async () => {
    const { owner, board } = await team();
    const [todo, bug] = await Promise.all([label(owner, board.id, 'todo'), label(owner, board.id, 'Bug')]);
    const recased = await patchLabel(owner, todo.id, { name: 'TODO' });
    expect(recased.status).toBe(200);
    expect(recased.body.name).toBe('TODO');
    const same = await patchLabel(owner, todo.id, { name: 'TODO', color: todo.color });
    expect(same.status).toBe(200);

    for (const name of ['Bug', 'bug', 'BUG']) expectProblem(await patchLabel(owner, todo.id, { name, color: '#999999' }), 409);
    expect(await labelsOf(owner, board.id)).toEqual([bug, { ...todo, name: 'TODO' }]);

    // The old name is free after a rename, the new one is taken.
    const moved = await patchLabel(owner, bug.id, { name: 'Defect' });
    expect(moved.status).toBe(200);
    await label(owner, board.id, 'bug');
    expectProblem(await postLabel(owner, board.id, { name: 'defect', color: '#123123' }), 409);
  });

  it('bad input is 400 and changes nothing', async () => {
    const { owner, board } = await team();
    const original = await label(owner, board.id, 'Stable', '#010203');
    const bad: unknown[] = [
      { name: '' },
      { name: '   ' },
      { name: 'a'.repeat(51) },
      { name: '😀'.repeat(51) },
      { name: 7 },
      { name: false },
      { color: 'red' },
      { color: '#ABC' },
      { color: '#GGGGGG' },
      { color: 'ABCDEF' },
      { color: 123456 },
      { name: 'Fine', color: 'blue' },
      { name: '', color: '#123456' },
    ];
    for (const body of bad) expectProblem(await patchLabel(owner, original.id, body), 400);
    for (const raw of ['[]', 'null', '"x"', '{"name":', '']) {
      expectProblem(
        await call('PATCH', `/labels/${original.id}`, {
          token: owner.token,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        }),
        400,
      );
    }
    expect(await labelsOf(owner, board.id)).toEqual([original]);
  });
});

describe('DELETE /labels/{id}', () => {
  it('204; afterwards the label is 404 on every label route and gone from the list and the tree', async () => {
    const { owner, member, board, cards } = await team();
    const [doomed, kept] = await Promise.all([label(owner, board.id, 'Doomed'), label(owner, board.id, 'Kept')]);
    const reply = await deleteLabel(member, doomed.id);
    expect(reply.status).toBe(204);
    expect(reply.body).toBe('');
    expect(await labelsOf(owner, board.id)).toEqual([kept]);
    expect((await tree(owner, board.id)).labels).toEqual([kept]);
    expectProblem(await deleteLabel(owner, doomed.id), 404);
    expectProblem(await patchLabel(owner, doomed.id, { name: 'Back' }), 404);
    expectProblem(await attach(owner, cards[0], doomed.id), 404);
    expectProblem(await detach(owner, cards[0], doomed.id), 404);
  });
});

// --- cards carry label_ids -----------------------------------------------------------------------

describe('label_ids on cards', () => {
  it('every answer with a card has label_ids: [] without labels, then the live ones in label-list order', async () => {
    const { owner, board, columns } = await team();
    const created = await newCard(owner, columns[0], { title: 'Fresh' });
    expect(Object.keys(created).sort()).toEqual(CARD_FIELDS);
    expect((created as LabeledCard).label_ids).toEqual([]);
    expect((await cardOf(owner, created.id)).label_ids).toEqual([]);

    const [zeta, alpha, mid] = await Promise.all([
      label(owner, board.id, 'zeta'),
      label(owner, board.id, 'Alpha'),
      label(owner, board.id, 'mid'),
    ]);
    // Attached in an order that is neither the list's nor the ids'.
    expect((await put(owner, created.id, zeta.id)).label_ids).toEqual([zeta.id]);
    expect((await put(owner, created.id, mid.id)).label_ids).toEqual([mid.id, zeta.id]);
    const expected = [alpha.id, mid.id, zeta.id];
    expect((await put(owner, created.id, alpha.id)).label_ids).toEqual(expected);

    const read = await cardOf(owner, created.id);
    expect(Object.keys(read).sort()).toEqual(CARD_FIELDS);
    expect(read.label_ids).toEqual(expected);

    const updated = await call<LabeledCard>('PATCH', `/cards/${created.id}`, { token: owner.token, body: { title: 'Edited' } });
    expect(updated.status).toBe(200);
    expect(updated.body.label_ids).toEqual(expected);

    const moved = await call<LabeledCard>('PATCH', `/cards/${created.id}/move`, {
      token: owner.token,
      body: { target_column_id: columns[1] },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ column_id: columns[1], label_ids: expected });

    const column = await getColumn(owner, columns[1]);
    expect(column.status).toBe(200);
    expect(column.body.cards.find((c) => c.id === created.id)?.label_ids).toEqual(expected);

    const whole = await tree(owner, board.id);
    expect(whole.columns.flatMap((c) => c.cards).find((c) => c.id === created.id)?.label_ids).toEqual(expected);
    // The other cards of the tree and column have label_ids too.
    for (const card of whole.columns.flatMap((c) => c.cards)) expect(Object.keys(card).sort()).toEqual(CARD_FIELDS);
    expect(whole.columns.find((c) => c.id === columns[0])!.cards.map((c) => c.label_ids)).toEqual([[], []]);
    expect(whole.labels).toEqual(await labelsOf(owner, board.id));
  });

  it('a rename reorders label_ids on every read', async () => {
    const { owner, board, columns, cards } = await team();
    const [a, b] = await Promise.all([label(owner, board.id, 'a'), label(owner, board.id, 'b')]);
    await put(owner, cards[0], b.id);
    expect((await put(owner, cards[0], a.id)).label_ids).toEqual([a.id, b.id]);
    expectStatus(await patchLabel(owner, a.id, { name: 'Z' }), 200);
    expect((await cardOf(owner, cards[0])).label_ids).toEqual([b.id, a.id]);
    expect((await getColumn(owner, columns[0])).body.cards.find((c) => c.id === cards[0])!.label_ids).toEqual([b.id, a.id]);
    const whole = await tree(owner, board.id);
    expect(whole.columns.flatMap((c) => c.cards).find((c) => c.id === cards[0])!.label_ids).toEqual([b.id, a.id]);
    expect(whole.labels.map((l) => l.id)).toEqual([b.id, a.id]);
    // Back in another case: order follows the name, case-insensitively.
    expectStatus(await patchLabel(owner, a.id, { name: 'A' }), 200);
    expect((await cardOf(owner, cards[0])).label_ids).toEqual([a.id, b.id]);
  });

  it('PATCH /cards/{id} ignores label_ids like any other field it does not name', async () => {
    const { owner, board, cards, strangerLabel } = await team();
    const [mine, other] = await Promise.all([label(owner, board.id, 'Mine'), label(owner, board.id, 'Other')]);
    const before = await put(owner, cards[0], mine.id);
    for (const label_ids of [[], [other.id], [other.id, mine.id], [strangerLabel.id], null, 'x']) {
      const reply = await call<LabeledCard>('PATCH', `/cards/${cards[0]}`, { token: owner.token, body: { label_ids } });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(before);
    }
    const titled = await call<LabeledCard>('PATCH', `/cards/${cards[0]}`, {
      token: owner.token,
      body: { title: 'New title', label_ids: [other.id] },
    });
    expect(titled.status).toBe(200);
    expect(titled.body).toEqual({ ...before, title: 'New title' });
    expect(await cardOf(owner, cards[0])).toEqual({ ...before, title: 'New title' });
    // Nor does creating a card take label_ids from the body.
    const created = await call<LabeledCard>('POST', `/columns/${before.column_id}/cards`, {
      token: owner.token,
      body: { title: 'Created with ids', label_ids: [mine.id] },
    });
    expect(created.status).toBe(201);
    expect(created.body.label_ids).toEqual([]);
  });
});

// --- attach and detach ---------------------------------------------------------------------------

describe('PUT and DELETE /cards/{id}/labels/{label_id}', () => {
  it('attach is idempotent: the same 200 card twice, the label on it once; any member may attach', async () => {
    const { owner, member, board, cards } = await team();
    const tag = await label(owner, board.id, 'Tag');
    const first = await put(member, cards[0], tag.id);
    expect(Object.keys(first).sort()).toEqual(CARD_FIELDS);
    expect(first.label_ids).toEqual([tag.id]);
    const second = await put(owner, cards[0], tag.id);
    expect(second).toEqual(first);
    expect(await cardOf(owner, cards[0])).toEqual(first);
    // Two concurrent attaches of the same label: both 200, the label on the card once.
    const [x, y] = await Promise.all([attach(owner, cards[1], tag.id), attach(member, cards[1], tag.id)]);
    expect([x.status, y.status]).toEqual([200, 200]);
    expect((await cardOf(owner, cards[1])).label_ids).toEqual([tag.id]);
  });

  it('detach is idempotent: 200 with the card, again 200 unchanged; a label never on the card is 200 unchanged', async () => {
    const { owner, member, board, cards } = await team();
    const [one, two] = await Promise.all([label(owner, board.id, 'One'), label(owner, board.id, 'Two')]);
    await put(owner, cards[0], one.id);
    const both = await put(owner, cards[0], two.id);
    expect(both.label_ids).toEqual([one.id, two.id]);

    const off = await detach(member, cards[0], one.id);
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ ...both, label_ids: [two.id] });
    const again = await detach(owner, cards[0], one.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(off.body);

    const never = await detach(owner, cards[1], two.id);
    expect(never.status).toBe(200);
    expect(never.body).toEqual(await cardOf(owner, cards[1]));
    expect(never.body.label_ids).toEqual([]);

    const last = await detach(owner, cards[0], two.id);
    expect(last.body.label_ids).toEqual([]);
    expect(await cardOf(owner, cards[0])).toEqual(last.body);
  });

  it('check order: card exists (404), caller is a member of its board (403), label exists (404), label is on the card’s board (403)', async () => {
    const { owner, member, stranger, board, cards, strangerCard, strangerLabel } = await team();
    const own = await label(owner, board.id, 'Own');
    const missing = unknownId();

    // The card first: a missing card is 404 whatever the label, for anybody.
    for (const user of [owner, member, stranger]) {
      for (const labelId of [own.id, strangerLabel.id, missing]) {
        expectProblem(await attach(user, missing, labelId), 404);
        expectProblem(await detach(user, missing, labelId), 404);
      }
    }
    // Then membership: a stranger gets 403 on the card, whatever the label (even a missing one, even their own).
    for (const labelId of [own.id, strangerLabel.id, missing]) {
      expectProblem(await attach(stranger, cards[0], labelId), 403);
      expectProblem(await detach(stranger, cards[0], labelId), 403);
    }
    // Owner and member of the card's board: a missing label is 404, another board's label 403.
    for (const user of [owner, member]) {
      expectProblem(await attach(user, cards[0], missing), 404);
      expectProblem(await detach(user, cards[0], missing), 404);
      expectProblem(await attach(user, cards[0], strangerLabel.id), 403);
      expectProblem(await detach(user, cards[0], strangerLabel.id), 403);
    }
    // And the stranger on their own card with this board's label: the label is not theirs to use.
    expectProblem(await attach(stranger, strangerCard, own.id), 403);
    // 401 before anything else, also on ids that are missing or malformed.
    for (const [cardId, labelId] of [
      [cards[0], own.id],
      [missing, missing],
      ['not-a-uuid', 'nor-this'],
    ] as const) {
      const reply = await attach(undefined, cardId, labelId);
      expectProblem(reply, 401);
      expectProblem(await detach(undefined, cardId, labelId), 401);
    }
    // 400 for a malformed id before any lookup (the card may be missing or foreign).
    for (const user of [owner, stranger]) {
      expectProblem(await attach(user, cards[0], 'not-a-uuid'), 400);
      expectProblem(await attach(user, 'not-a-uuid', own.id), 400);
      expectProblem(await detach(user, missing, 'x'), 400);
    }
    // None of it wrote anything.
    expect((await cardOf(owner, cards[0])).label_ids).toEqual([]);
    expect((await cardOf(stranger, strangerCard)).label_ids).toEqual([]);
  });

  it('a label of another board of the same member is 403 and writes nothing; one on the card’s board still works', async () => {
    const { owner, member, board, cards } = await team();
    // A second board where owner and member are both members: membership of both does not make labels shareable.
    const second = await newBoard(owner, 'Second board');
    await addMember(owner, second.id, member);
    const [here, there] = await Promise.all([label(owner, board.id, 'Here'), label(owner, second.id, 'There')]);
    await put(owner, cards[0], here.id);
    const before = await partition(`BOARD#${board.id}`);
    const otherBefore = await partition(`BOARD#${second.id}`);
    for (const user of [owner, member]) {
      expectProblem(await attach(user, cards[0], there.id), 403);
      expectProblem(await detach(user, cards[0], there.id), 403);
    }
    expect(await partition(`BOARD#${board.id}`)).toEqual(before);
    expect(await partition(`BOARD#${second.id}`)).toEqual(otherBefore);
    expect((await cardOf(owner, cards[0])).label_ids).toEqual([here.id]);
  });

  it('uppercase ids in the path name the same card and label', async () => {
    const { owner, board, cards } = await team();
    const tag = await label(owner, board.id, 'Case');
    const reply = await attach(owner, cards[0].toUpperCase(), tag.id.toUpperCase());
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: cards[0], label_ids: [tag.id] });
  });
});

// --- who may do what -----------------------------------------------------------------------------

describe('access to the label routes', () => {
  it('a stranger is 403 on every label route of a board, and changes nothing', async () => {
    const { owner, stranger, board, cards } = await team();
    const tag = await label(owner, board.id, 'Private');
    await put(owner, cards[0], tag.id);
    const before = await partition(`BOARD#${board.id}`);
    expectProblem(await postLabel(stranger, board.id, { name: 'Intruder', color: '#000000' }), 403);
    expectProblem(await getLabels(stranger, board.id), 403);
    expectProblem(await patchLabel(stranger, tag.id, { name: 'Hijacked' }), 403);
    expectProblem(await patchLabel(stranger, tag.id, {}), 403);
    expectProblem(await deleteLabel(stranger, tag.id), 403);
    expectProblem(await attach(stranger, cards[1], tag.id), 403);
    expectProblem(await detach(stranger, cards[0], tag.id), 403);
    expect(await partition(`BOARD#${board.id}`)).toEqual(before);
    expect(await labelsOf(owner, board.id)).toEqual([tag]);
  });

  it('on a board id that does not exist, a caller is 403 (not 404) for POST and GET /boards/{id}/labels', async () => {
    const { owner, stranger } = await team();
    const nowhere = unknownId();
    for (const user of [owner, stranger]) {
      expectProblem(await postLabel(user, nowhere, { name: 'Ghost', color: '#000000' }), 403);
      expectProblem(await getLabels(user, nowhere), 403);
    }
    // Nothing was written for the board that does not exist.
    expect(await partition(`BOARD#${nowhere}`)).toEqual([]);
  });

  it('a label id that does not exist is 404 on PATCH and DELETE /labels/{id}, for anybody', async () => {
    const { owner, stranger } = await team();
    for (const user of [owner, stranger]) {
      expectProblem(await patchLabel(user, unknownId(), { name: 'x' }), 404);
      expectProblem(await deleteLabel(user, unknownId()), 404);
    }
  });

  it('contract order: 401 first, then 400 for malformed input before any lookup', async () => {
    const { owner, stranger, board } = await team();
    const tag = await label(owner, board.id, 'Ordered');
    const nowhere = unknownId();
    // No token: 401, whatever the id or body.
    for (const id of [board.id, nowhere, 'not-a-uuid']) {
      expectProblem(await postLabel(undefined, id, { name: '', color: 'red' }), 401);
      expectProblem(await getLabels(undefined, id), 401);
    }
    for (const id of [tag.id, nowhere, 'not-a-uuid']) {
      expectProblem(await patchLabel(undefined, id, { color: 'red' }), 401);
      expectProblem(await deleteLabel(undefined, id), 401);
    }
    // Malformed input: 400 even where the lookup would give 403 or 404.
    for (const user of [owner, stranger]) {
      expectProblem(await postLabel(user, nowhere, { name: 'Fine', color: 'red' }), 400);
      expectProblem(await postLabel(user, board.id, { name: '', color: '#000000' }), 400);
      expectProblem(await postLabel(user, 'not-a-uuid', { name: 'Fine', color: '#000000' }), 400);
      expectProblem(await getLabels(user, 'not-a-uuid'), 400);
      expectProblem(await patchLabel(user, nowhere, { color: 'red' }), 400);
      expectProblem(await patchLabel(user, tag.id, { name: '   ' }), 400);
      expectProblem(await patchLabel(user, 'not-a-uuid', {}), 400);
      expectProblem(await deleteLabel(user, 'not-a-uuid'), 400);
    }
    // A body that is not JSON: 415 (as on every other body route), never a lookup's answer.
    const reply = await call('POST', `/boards/${nowhere}/labels`, {
      token: stranger.token,
      rawBody: 'name=x',
      headers: { 'content-type': 'text/plain' },
    });
    expectProblem(reply, 415);
    expect(await labelsOf(owner, board.id)).toEqual([tag]);
  });
});

// --- the cascades --------------------------------------------------------------------------------

describe('cascades', () => {
  it('deleting a label on 60 cards takes it off all of them at once: each read shows it on all or none, never again once gone', async () => {
    const { owner, member, board, columns } = await team();
    const [doomed, kept] = await Promise.all([label(owner, board.id, 'Doomed'), label(owner, board.id, 'Kept')]);
    const cards = await inBatches(range(60), 10, (i) => newCard(owner, columns[i % 2]!, { title: `Card ${i}` }));
    await inBatches(cards, 10, async (card, i) => {
      await put(owner, card.id, doomed.id);
      if (i % 10 === 0) await put(owner, card.id, kept.id);
    });
    const keptOn = cards.filter((_, i) => i % 10 === 0).map((card) => card.id);
    const before = await tree(owner, board.id);
    const allCards = () => before.columns.flatMap((c) => c.cards);
    expect(allCards()).toHaveLength(62);
    expect(allCards().filter((c) => c.label_ids.includes(doomed.id))).toHaveLength(60);

    // Read the board while the delete runs: each read shows the label on all the cards that carry it
    // or on none, and once a read has shown it gone, no later read of that kind shows it again.
    let deleted = false;
    const watch = async (total: number, read: () => Promise<{ labelled: number }>) => {
      let goneSeen = false;
      let reads = 0;
      do {
        const { labelled } = await read();
        reads++;
        if (labelled !== 0 && labelled !== total) throw new Error(`a read showed the label on ${labelled} of ${total} cards`);
        if (labelled === 0) goneSeen = true;
        else if (goneSeen) throw new Error('a read showed the deleted label again after it was gone');
      } while (!deleted);
      return reads;
    };
    const carrying = (list: LabeledCard[]) => list.filter((c) => c.label_ids.includes(doomed.id)).length;
    const treeRead = async () => {
      const t = await tree(member, board.id);
      return { labelled: carrying(t.columns.flatMap((c) => c.cards)) };
    };
    const columnRead = (id: string) => async () => {
      const reply = await getColumn(member, id);
      expectStatus(reply, 200);
      return { labelled: carrying(reply.body.cards) };
    };
    const deletion = deleteLabel(owner, doomed.id).finally(() => {
      deleted = true;
    });
    const [reply] = await Promise.all([
      deletion,
      watch(60, treeRead),
      watch(30, columnRead(columns[0])),
      watch(30, columnRead(columns[1])),
    ]);
    expect(reply.status).toBe(204);

    // After the answer: no card read of any kind shows it; the other label stays where it was.
    const after = await tree(owner, board.id);
    expect(after.labels).toEqual([kept]);
    for (const card of after.columns.flatMap((c) => c.cards)) {
      expect(card.label_ids).toEqual(keptOn.includes(card.id) ? [kept.id] : []);
    }
    for (const id of columns) {
      for (const card of (await getColumn(owner, id)).body.cards) expect(card.label_ids).not.toContain(doomed.id);
    }
    const read = await inBatches(cards, 10, (card) => cardOf(member, card.id));
    for (const card of read) expect(card.label_ids).toEqual(keptOn.includes(card.id) ? [kept.id] : []);
    // And the id does not stay in the stored cards either (not only hidden), nor its lookup.
    await eventually(
      async () => {
        const stored = (await partition(`BOARD#${board.id}`)).filter((item) => String(item.sk).startsWith('CARD#'));
        expect(stored).toHaveLength(62);
        for (const item of stored) expect([...((item.label_ids as Set<string> | undefined) ?? [])]).not.toContain(doomed.id);
        expect(await partition(`LABEL#${doomed.id}`)).toEqual([]);
      },
      30_000,
      250,
    );
    // A new label with the old name does not bring the old id back.
    const reborn = await label(owner, board.id, 'Doomed');
    expect((await cardOf(owner, cards[1]!.id)).label_ids).toEqual([]);
    expect(reborn.id).not.toBe(doomed.id);
  });

  it('a tree read while labels are deleted never shows a card with a label its own labels list lacks', async () => {
    // The tree is one answer: a label id on one of its cards that its top-level labels do not have
    // is a label that, for this answer, does not exist. Several deletes, each raced by tree reads.
    const owner = await newUser();
    const board = await newBoard(owner, 'Read while deleting');
    const column = await newColumn(owner, board.id);
    const [cards, labels] = await Promise.all([
      inBatches(range(8), 8, (i) => newCard(owner, column.id, { title: `Card ${i}` })),
      inBatches(range(6), 6, (i) => label(owner, board.id, `Label ${i}`)),
    ]);
    await inBatches(
      cards.flatMap((card) => labels.map((l) => [card.id, l.id] as const)),
      12,
      ([cardId, labelId]) => put(owner, cardId, labelId),
    );
    const inconsistent: string[] = [];
    let reads = 0;
    let done = false;
    const reader = async () => {
      while (!done) {
        const t = await tree(owner, board.id);
        reads++;
        const listed = new Set(t.labels.map((l) => l.id));
        for (const card of t.columns.flatMap((c) => c.cards)) {
          const unlisted = card.label_ids.filter((id) => !listed.has(id));
          if (unlisted.length > 0)
            inconsistent.push(`card ${card.id} shows ${unlisted.join(', ')}, labels lists ${[...listed].join(', ')}`);
        }
      }
    };
    const deleter = async () => {
      try {
        for (const l of labels) {
          expectStatus(await deleteLabel(owner, l.id), 204);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        done = true;
      }
    };
    await Promise.all([deleter(), reader(), reader(), reader()]);
    expect(reads).toBeGreaterThan(6);
    expect(inconsistent).toEqual([]);
  });

  it('deleting a board removes its labels: 404 by id afterwards, and no label item is left behind', async () => {
    const { owner, member, board, cards } = await team();
    const [one, two] = await Promise.all([label(owner, board.id, 'One'), label(owner, board.id, 'Two')]);
    await put(owner, cards[0], one.id);
    expectStatus(await call('DELETE', `/boards/${board.id}`, { token: owner.token }), 204);
    for (const user of [owner, member]) {
      for (const id of [one.id, two.id]) {
        expectProblem(await patchLabel(user, id, { name: 'Back' }), 404);
        expectProblem(await deleteLabel(user, id), 404);
      }
      expectProblem(await getLabels(user, board.id), 403);
      expectProblem(await attach(user, cards[0], one.id), 404);
    }
    // The items behind them go too (possibly after the answer).
    await eventually(
      async () => {
        expect(await partition(`LABEL#${one.id}`)).toEqual([]);
        expect(await partition(`LABEL#${two.id}`)).toEqual([]);
        const left = (await partition(`BOARD#${board.id}`)).map((item) => String(item.sk));
        expect(left.filter((sk) => sk.startsWith('LABEL#') || sk.startsWith('#LABELNAME#') || sk.startsWith('CARD#'))).toEqual(
          [],
        );
      },
      30_000,
      250,
    );
  });
});

// --- limits --------------------------------------------------------------------------------------

describe('limits', () => {
  it('at most 100 labels a board, also under concurrent creates; the 101st is 409 naming the limit', async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Full of labels');
    const first = await inBatches(range(95), 10, (i) => label(owner, board.id, `Label ${String(i).padStart(3, '0')}`));
    // Ten at once for the last five places: exactly five get in.
    const race = await Promise.all(range(10).map((i) => postLabel(owner, board.id, { name: `Racer ${i}`, color: '#abcdef' })));
    expect(race.map((r) => r.status).sort()).toEqual([...Array(5).fill(201), ...Array(5).fill(409)]);
    for (const reply of race.filter((r) => r.status === 409)) expect(expectProblem(reply, 409).detail).toMatch(/\b100\b/);
    expect(await labelsOf(owner, board.id)).toHaveLength(100);

    const over = expectProblem(await postLabel(owner, board.id, { name: 'One too many', color: '#000000' }), 409);
    expect(over.detail).toMatch(/\b100\b/);
    expect(over.detail).toMatch(/label/i);
    // Told apart from a name clash (also 409) by its code.
    expect(over.code).toBe('limit_reached');
    expect(await labelsOf(owner, board.id)).toHaveLength(100);

    // A free place after a delete.
    expectStatus(await deleteLabel(owner, first[0]!.id), 204);
    await label(owner, board.id, 'Back in');
    expectProblem(await postLabel(owner, board.id, { name: 'Again too many', color: '#000000' }), 409);
    const listed = await labelsOf(owner, board.id);
    expect(listed).toHaveLength(100);
    expect(listed).toEqual(inListOrder(listed));
    expect((await tree(owner, board.id)).labels).toEqual(listed);
  });

  it('at most 20 labels a card: the 21st is 409 naming the limit; re-attaching one it carries is 200', async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Many labels');
    const column = await newColumn(owner, board.id);
    const [card, other] = await Promise.all([newCard(owner, column.id), newCard(owner, column.id, { title: 'Other' })]);
    const labels = await inBatches(range(22), 11, (i) => label(owner, board.id, `L${String(i).padStart(2, '0')}`));
    await inBatches(labels.slice(0, 20), 5, (l) => put(owner, card.id, l.id));
    const full = await cardOf(owner, card.id);
    expect(full.label_ids).toEqual(labels.slice(0, 20).map((l) => l.id));

    const over = expectProblem(await attach(owner, card.id, labels[20]!.id), 409);
    expect(over.detail).toMatch(/\b20\b/);
    expect(over.detail).toMatch(/card/i);
    expect(over.code).toBe('limit_reached');
    expect(await cardOf(owner, card.id)).toEqual(full);

    // Idempotent at the limit: a label already on the card is no new label.
    const again = await attach(owner, card.id, labels[7]!.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(full);
    // Another card is not affected by this card's count.
    expect((await put(owner, other.id, labels[20]!.id)).label_ids).toEqual([labels[20]!.id]);

    // Detach one, and there is room for one more, once.
    expectStatus(await detach(owner, card.id, labels[0]!.id), 200);
    expect((await put(owner, card.id, labels[20]!.id)).label_ids).toHaveLength(20);
    expectProblem(await attach(owner, card.id, labels[21]!.id), 409);

    // A deleted label frees its place on the card at once.
    expectStatus(await deleteLabel(owner, labels[1]!.id), 204);
    expect((await put(owner, card.id, labels[21]!.id)).label_ids).toEqual(inListOrder([...labels.slice(2, 22)]).map((l) => l.id));
  });

  it('concurrent attaches of 21 different labels to one card: exactly 20 get on', async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Racing labels');
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    const labels = await inBatches(range(21), 11, (i) => label(owner, board.id, `R${String(i).padStart(2, '0')}`));
    const replies = await Promise.all(labels.map((l) => attach(owner, card.id, l.id)));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 409)).toHaveLength(1);
    const winners = labels.filter((_, i) => statuses[i] === 200).map((l) => l.id);
    expect((await cardOf(owner, card.id)).label_ids).toEqual(winners);
  });
});
