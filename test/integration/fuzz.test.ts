import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { safeParse } from 'valibot';
import { DOCS_FILE_NAMES } from '../../lib/contract/docs-assets';
import { keys } from '../../lib/data/table';
import { errorStatuses } from '../../lib/http/openapi';
import { type RouteRow, routes } from '../../lib/routes';
import {
  type BoardFixture,
  baseUrl,
  call,
  expectProblem,
  newBoardWithCards,
  newUser,
  type Reply,
  type TestUser,
  UUID,
  uniqueEmail,
} from '../support/api';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';

/**
 * Bad input, generated. fast-check makes bodies (any JSON, one field of the
 * wrong type, huge and unicode strings, deep nesting, broken JSON), path ids (random strings,
 * almost-UUIDs), content types and sizes, and sends them with a valid owner token to every row of
 * the route table that takes a body or an id. Every answer is a 4xx problem+json whose status the
 * row documents, and after each one the board, the caller's board list and the raw table
 * partitions involved are exactly as before. Mass assignment: internal and server-owned fields
 * in otherwise valid bodies change nothing but the intended field.
 *
 * Whether a generated body is well-formed is decided by the row's own schema (so the bodies sent
 * are ones the service must reject); what the contract itself says about lengths is checked
 * separately, with characters counted as the published JSON Schema counts them.
 */

// ---- helpers ------------------------------------------------------------------------------------

type Json = Record<string, unknown>;
type Item = Record<string, unknown>;

const MAX_BODY_BYTES = 64 * 1024;

let documentClient: DynamoDBDocumentClient;
let tableName: string;
const partition = (pk: string) => readPartition(documentClient, tableName, pk) as Promise<Item[]>;

/** Items added, removed and changed (with the changed attribute names) between two reads. */
function diff(before: Item[], after: Item[]) {
  const key = (item: Item) => `${item.pk}|${item.sk}`;
  const old = new Map(before.map((item) => [key(item), item]));
  const now = new Map(after.map((item) => [key(item), item]));
  const changed: Record<string, string[]> = {};
  for (const [k, item] of now) {
    const previous = old.get(k);
    if (!previous) continue;
    const fields = [...new Set([...Object.keys(previous), ...Object.keys(item)])].filter(
      (field) => !isDeepStrictEqual(previous[field], item[field]),
    );
    if (fields.length > 0) changed[k] = fields.sort();
  }
  return {
    added: [...now.keys()].filter((k) => !old.has(k)),
    removed: [...old.keys()].filter((k) => !now.has(k)),
    changed,
  };
}

/** Sends a body as raw bytes with the given content type (none when null). */
async function send(
  method: string,
  path: string,
  token: string,
  raw: string | undefined,
  contentType: string | null = 'application/json',
) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (raw !== undefined && contentType !== null) headers['content-type'] = contentType;
  // A Uint8Array body makes fetch add no content type of its own.
  const body = raw === undefined ? undefined : new TextEncoder().encode(raw);
  const response = await fetch(`${baseUrl()}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  if (text && /json/.test(response.headers.get('content-type') ?? '')) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed } as Reply;
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
/** What the server will see of a string once it went over the wire as UTF-8 (lone surrogates become U+FFFD). */
const wire = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

// ---- the fixtures -------------------------------------------------------------------------------

interface World {
  owner: TestUser;
  member: TestUser;
  other: TestUser;
  A: BoardFixture;
  B: BoardFixture;
  /** A label of A and one of B. */
  labelA: string;
  labelB: string;
  /** A webhook of A that no event reaches: no delivery ever touches A's partition. */
  webhookA: string;
  /** A comment of the owner on A's first card. */
  commentA: string;
}

let w: World;

async function newLabel(user: TestUser, boardId: string, name: string): Promise<string> {
  const reply = await call('POST', `/boards/${boardId}/labels`, { token: user.token, body: { name, color: '#336699' } });
  if (reply.status !== 201) throw new Error(`create label failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.id;
}

const board = (owner: TestUser, title: string) => newBoardWithCards(owner, title, 'first card');

async function newWebhook(user: TestUser, boardId: string): Promise<string> {
  // Selecting only board.deleted (A is never deleted), then switched off: no delivery ever writes A's partition.
  const made = await call('POST', `/boards/${boardId}/webhooks`, {
    token: user.token,
    body: { url: 'http://127.0.0.1:9/fuzz', events: ['board.deleted'] },
  });
  if (made.status !== 201) throw new Error(`create webhook failed: ${made.status} ${JSON.stringify(made.body)}`);
  const off = await call('PATCH', `/webhooks/${made.body.id}`, { token: user.token, body: { active: false } });
  if (off.status !== 200) throw new Error(`switch webhook off failed: ${off.status} ${JSON.stringify(off.body)}`);
  return made.body.id;
}

beforeAll(async () => {
  const env = localEnv();
  tableName = env.TABLE_NAME!;
  documentClient = localDocumentClient(env);
  const [owner, member, other] = await Promise.all([newUser(), newUser(), newUser()]);
  const [A, B] = await Promise.all([board(owner, 'Fuzzed board'), board(other, 'Bystander board')]);
  const [added, labelA, labelB, webhookA] = await Promise.all([
    call('POST', `/boards/${A.id}/members`, { token: owner.token, body: { email: member.email } }),
    newLabel(owner, A.id, 'Fuzzed label'),
    newLabel(other, B.id, 'Bystander label'),
    newWebhook(owner, A.id),
  ]);
  if (added.status !== 201) throw new Error(`add member failed: ${added.status}`);
  const comment = await call('POST', `/cards/${A.cards[0]}/comments`, { token: owner.token, body: { body: 'Fuzzed comment' } });
  if (comment.status !== 201) throw new Error(`create comment failed: ${comment.status}`);
  w = { owner, member, other, A, B, labelA, labelB, webhookA, commentA: comment.body.id };
});

afterAll(() => documentClient?.destroy());

/** Where the cards' ids lead to their board: their board's card-id prefix item (or a card's own lookup), each once. */
const cardLookupPartitions = (cardIds: string[]) => [...new Set(cardIds.map((id) => keys.cardBoardLookup(id).pk))];

/** Lookup items (column, card and label id -> board) of the fuzzed board, in one read. */
async function lookups(x: World): Promise<Item[]> {
  const Keys = [
    ...x.A.columns.map((id) => `COLUMN#${id}`),
    ...cardLookupPartitions(x.A.cards),
    `LABEL#${x.labelA}`,
    `WEBHOOK#${x.webhookA}`,
  ].map((pk) => ({
    pk,
    sk: '#LOOKUP',
  }));
  const out = await documentClient.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys, ConsistentRead: true } } }));
  const items = (out.Responses?.[tableName] ?? []) as Item[];
  return items.sort((a, b) => String(a.pk).localeCompare(String(b.pk)));
}

/**
 * Everything a request with the owner's token on board A could have changed: the board tree and
 * the caller's board list as the API shows them, and the raw items behind them (the board's
 * partition with its members and internal attributes, the caller's memberships, the lookups).
 */
async function observe() {
  const [tree, list, ...table] = await Promise.all([
    call('GET', `/boards/${w.A.id}`, { token: w.owner.token }),
    call('GET', '/boards', { token: w.owner.token }),
    lookups(w),
    ...[`BOARD#${w.A.id}`, `USER#${w.owner.id}`].map(partition),
  ]);
  expect([tree.status, list.status]).toEqual([200, 200]);
  return { tree: tree.body, list: list.body, table };
}

// ---- the rows and a well-formed request for each ------------------------------------------------

interface Template {
  params: Record<string, string>;
  body?: Json;
}

/** A well-formed request per row; the fuzzing breaks one part of it at a time. */
const TEMPLATES: Record<string, (world: World) => Template> = {
  'auth.register': () => ({ params: {}, body: { email: uniqueEmail(), password: 'long enough password', display_name: 'Fuzz' } }),
  'auth.login': (x) => ({ params: {}, body: { email: x.owner.email, password: x.owner.password } }),
  // Well-formed but unknown to Cognito: a template is never sent as is, and a real token must not be revoked.
  'auth.refresh': () => ({ params: {}, body: { refresh_token: 'fuzz.refresh.token' } }),
  'auth.logout': () => ({ params: {}, body: { refresh_token: 'fuzz.refresh.token' } }),
  // Codes never mailed and passwords that are not the owner's: a template sent as is changes nothing.
  'auth.verify-email': () => ({ params: {}, body: { code: '000000' } }),
  'auth.password.forgot': () => ({ params: {}, body: { email: uniqueEmail() } }),
  'auth.password.reset': () => ({
    params: {},
    body: { email: uniqueEmail(), code: '000000', new_password: 'long enough password' },
  }),
  'auth.password.change': () => ({
    params: {},
    body: { current_password: 'not the password', new_password: 'long enough password' },
  }),
  'auth.account.delete': () => ({ params: {}, body: { password: 'not the password' } }),
  'auth.tokens.create': () => ({ params: {}, body: { name: 'Fuzz', scopes: ['boards:read'], expires_in_days: 1 } }),
  // An id no token has: a template sent as is deletes nothing.
  'auth.tokens.delete': () => ({ params: { id: randomUUID() } }),
  'boards.create': () => ({ params: {}, body: { title: 'Fuzz' } }),
  'boards.get': (x) => ({ params: { id: x.A.id } }),
  'boards.rename': (x) => ({ params: { id: x.A.id }, body: { title: 'Fuzz' } }),
  'boards.delete': (x) => ({ params: { id: x.A.id } }),
  'boards.events': (x) => ({ params: { id: x.A.id } }),
  'columns.create': (x) => ({ params: { id: x.A.id }, body: { title: 'Fuzz' } }),
  'cards.create': (x) => ({ params: { id: x.A.columns[0] }, body: { title: 'Fuzz', description: 'd' } }),
  'cards.get': (x) => ({ params: { id: x.A.cards[0] } }),
  'cards.update': (x) => ({ params: { id: x.A.cards[0] }, body: { title: 'Fuzz', description: 'd' } }),
  'cards.delete': (x) => ({ params: { id: x.A.cards[0] } }),
  'cards.move': (x) => ({
    params: { id: x.A.cards[0] },
    body: { target_column_id: x.A.columns[0], before_id: x.A.cards[1], after_id: null },
  }),
  'columns.get': (x) => ({ params: { id: x.A.columns[0] } }),
  'columns.rename': (x) => ({ params: { id: x.A.columns[0] }, body: { title: 'Fuzz' } }),
  'columns.delete': (x) => ({ params: { id: x.A.columns[0] } }),
  'columns.move': (x) => ({ params: { id: x.A.columns[0] }, body: { before_id: x.A.columns[1], after_id: null } }),
  'members.add': (x) => ({ params: { id: x.A.id }, body: { email: x.other.email, role: 'member' } }),
  'members.list': (x) => ({ params: { id: x.A.id } }),
  'members.update': (x) => ({ params: { id: x.A.id, user_id: x.member.id }, body: { role: 'owner' } }),
  'members.remove': (x) => ({ params: { id: x.A.id, user_id: x.member.id } }),
  'labels.create': (x) => ({ params: { id: x.A.id }, body: { name: 'Fuzz label', color: '#ABCDEF' } }),
  'labels.list': (x) => ({ params: { id: x.A.id } }),
  'labels.update': (x) => ({ params: { id: x.labelA }, body: { name: 'Fuzz label', color: '#abcdef' } }),
  'labels.delete': (x) => ({ params: { id: x.labelA } }),
  'cards.labels.attach': (x) => ({ params: { id: x.A.cards[0], label_id: x.labelA } }),
  'cards.labels.detach': (x) => ({ params: { id: x.A.cards[0], label_id: x.labelA } }),
  'docs.file': () => ({ params: { file: 'swagger-ui.css' } }),
  'realtime.tickets': () => ({ params: {} }),
  'webhooks.create': (x) => ({
    params: { id: x.A.id },
    body: { url: 'https://example.com/fuzz', events: ['card.moved'], description: 'Fuzz' },
  }),
  'webhooks.list': (x) => ({ params: { id: x.A.id } }),
  'webhooks.get': (x) => ({ params: { id: x.webhookA } }),
  'webhooks.update': (x) => ({
    params: { id: x.webhookA },
    body: { url: 'https://example.com/fuzz', events: [], description: 'Fuzz', active: false },
  }),
  'webhooks.delete': (x) => ({ params: { id: x.webhookA } }),
  'webhooks.rotate-secret': (x) => ({ params: { id: x.webhookA } }),
  'webhooks.ping': (x) => ({ params: { id: x.webhookA } }),
  'webhooks.deliveries': (x) => ({ params: { id: x.webhookA } }),
  'boards.archive': (x) => ({ params: { id: x.A.id } }),
  'boards.batch': (x) => ({
    params: { id: x.A.id },
    body: { operations: [{ op: 'card.create', column_id: x.A.columns[0], title: 'Fuzz', ref: 'fuzz' }] },
  }),
  'cards.due.clear': (x) => ({ params: { id: x.A.cards[0] } }),
  'cards.assignees.add': (x) => ({ params: { id: x.A.cards[0], user_id: x.member.id } }),
  'cards.assignees.remove': (x) => ({ params: { id: x.A.cards[0], user_id: x.member.id } }),
  'cards.archive': (x) => ({ params: { id: x.A.cards[0] } }),
  'cards.restore': (x) => ({ params: { id: x.A.cards[0] } }),
  'comments.create': (x) => ({ params: { id: x.A.cards[0] }, body: { body: 'Fuzz' } }),
  'comments.list': (x) => ({ params: { id: x.A.cards[0] } }),
  'comments.update': (x) => ({ params: { id: x.commentA }, body: { body: 'Fuzz' } }),
  'comments.delete': (x) => ({ params: { id: x.commentA } }),
};

const allRows = Object.entries(routes) as [string, RouteRow][];
const fuzzedRows = allRows.filter(([, row]) => row.body || row.params);
const bodyRows = fuzzedRows.filter(([id, row]) => row.body && TEMPLATES[id]);
/** Path parameters that are ids: every one but GET /docs/{file}'s file name (fuzzed on its own below). */
const idNamesOf = (row: RouteRow) =>
  [...row.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => name!).filter((name) => name !== 'file');
const idRows = fuzzedRows.filter(([id, row]) => row.params && TEMPLATES[id] && idNamesOf(row).length > 0);
/** Rows that take no body: the contract's body rules still hold for one sent to them. */
const bodilessRows = allRows.filter(([id, row]) => !row.body && TEMPLATES[id] && row.method !== 'GET');

const pathOf = (row: RouteRow, params: Record<string, string>) =>
  row.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name]!));

/** Would the row's own validation refuse this raw body? (Then the service must answer 4xx.) */
function malformed(row: RouteRow, raw: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(wire(raw));
  } catch {
    return true;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return true;
  return !safeParse(row.body!(), parsed).success;
}

/** The answer to a rejected request: 4xx problem+json, documented for the row, nothing changed. */
async function expectRejected(row: RouteRow, reply: Reply, expected: number, before: Awaited<ReturnType<typeof observe>>) {
  if (reply.status !== expected) throw new Error(`expected ${expected}, got ${reply.status}: ${JSON.stringify(reply.body)}`);
  expect([row.success.status, ...errorStatuses(row)]).toContain(reply.status);
  const problem = expectProblem(reply, expected);
  expect(JSON.stringify(problem)).not.toMatch(/Exception|stack|TableName|BOARD#|task-board-local/);
  expect(await observe()).toEqual(before);
}

// ---- generators ---------------------------------------------------------------------------------

const interesting = [
  '',
  ' ',
  '\t\n',
  '\u00a0',
  '\u2003',
  '\u200b',
  '\ufeff',
  '\u0000',
  'é',
  'e\u0301',
  '😀',
  '👩‍👩‍👧',
  '\u202e',
  'ﷺ',
  '𝕏',
  '"',
  '\\',
  '</script>',
  "' OR 1=1 --",
  '{{7*7}}',
  '%00',
  '../',
];
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
/** Any code point, the interesting ones often, and now and then a lone surrogate (sent as a JSON escape). */
const unicodeString = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      { arbitrary: fc.constantFrom(...interesting), weight: 4 },
      { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 4 },
      { arbitrary: loneSurrogate, weight: 1 },
    ),
    maxLength,
  });
const whitespace = fc.string({
  unit: fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\u3000', '\ufeff'),
  maxLength: 20,
});
const hugeString = fc
  .tuple(fc.integer({ min: 257, max: 40_000 }), fc.constantFrom('x', 'é', '😀', ' ', '\u0000'))
  .map(([n, unit]) => unit.repeat(n));

/** Ids that are not UUIDs, most of them nearly. */
const almostUuid = fc
  .tuple(
    fc.uuid(),
    fc.nat(35),
    fc.constantFrom('drop', 'insert', 'replace', 'undash', 'braces', 'urn', 'pad', 'twice', 'suffix'),
    fc.constantFrom('g', 'z', 'G', '-', ' ', '\u0660', 'Ａ', '\u0000', '%', '/', '.', '\n', '\u200b', '０', '#', '?'),
  )
  .map(([id, at, how, char]) => {
    switch (how) {
      case 'drop':
        return id.slice(0, at) + id.slice(at + 1);
      case 'insert':
        return id.slice(0, at) + char + id.slice(at);
      case 'replace':
        return id.slice(0, at) + char + id.slice(at + 1);
      case 'undash':
        return id.replaceAll('-', '');
      case 'braces':
        return `{${id}}`;
      case 'urn':
        return `urn:uuid:${id}`;
      case 'pad':
        return ` ${id} `;
      case 'twice':
        return id + id;
      default:
        return `${id}${char}`;
    }
  });

const badId = fc
  .oneof(
    almostUuid,
    fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 2000 }),
    fc.constantFrom('null', 'undefined', '0', '-1', 'true', '[]', '{}', '*', '%', '%2F', 'a/b', '\\', 'ñ', '😀'),
  )
  .filter((id) => {
    if (UUID.test(id) || id === '.' || id === '..') return false;
    try {
      encodeURIComponent(id);
      return true;
    } catch {
      return false; // a lone surrogate cannot be put in a URL at all
    }
  });

const wrongValue = (world: World) =>
  fc.oneof(
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    unicodeString(300),
    fc.tuple(unicodeString(5), loneSurrogate, unicodeString(5)).map((parts) => parts.join('')),
    whitespace,
    hugeString,
    almostUuid,
    fc.constantFrom(world.B.id, world.B.columns[0], world.B.cards[0], 'OWNER', 'admin', 'not-an-email@', 'a@b'),
    // Near misses of a #rrggbb color.
    fc.constantFrom('#ABC', 'red', '#GGGGGG', 'abcdef', '#abcdef0', '#abcde', ' #abcdef', '#abcdef\n', '#ａｂｃｄｅｆ'),
  );

/** Raw JSON text nested `depth` levels deep at one field. */
const nested = (field: string, depth: number, open: '[' | '{"a":') =>
  `{"${field}":${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}}`;

function malformedBodies(row: RouteRow, template: Template) {
  const base = template.body!;
  const fields = Object.keys((row.body!() as unknown as { entries: Json }).entries);
  return fc
    .oneof(
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      fc.tuple(fc.constantFrom(...fields), wrongValue(w)).map(([field, value]) => JSON.stringify({ ...base, [field]: value })),
      fc
        .constantFrom(...fields)
        .map((field) => JSON.stringify(Object.fromEntries(Object.entries(base).filter(([k]) => k !== field)))),
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc
        .tuple(fc.constantFrom(...fields), fc.integer({ min: 10, max: 20_000 }), fc.constantFrom('[' as const, '{"a":' as const))
        .map(([field, depth, open]) => nested(field, depth, open)),
      fc.tuple(fc.nat(), fc.string({ maxLength: 3 })).map(([at, junk]) => {
        const text = JSON.stringify(base);
        const cut = at % text.length;
        return text.slice(0, cut) + junk;
      }),
      fc.constantFrom(
        '',
        ' ',
        'null',
        '[]',
        '"title"',
        '\ufeff{"title":"x"}',
        "{'title':'x'}",
        '{"title":"x",}',
        '{"title":"x"}{"title":"y"}',
        '{"title":NaN}',
        '{"title":"\\ud800"',
      ),
    )
    .filter((raw) => malformed(row, raw));
}

// ---- the properties -----------------------------------------------------------------------------

const RUNS = { bodies: 20, ids: 10, contentTypes: 8, sizes: 5, unicode: 12, mass: 6 };
const settings = (numRuns: number) => ({ numRuns, endOnFailure: true });

it('every row that takes a body or an id has a well-formed template (a new row must be fuzzed too)', () => {
  expect(fuzzedRows.map(([id]) => id).filter((id) => !TEMPLATES[id])).toEqual([]);
  expect(bodyRows.length).toBeGreaterThan(0);
  expect(idRows.length).toBeGreaterThan(0);
});

describe.each(bodyRows.map(([id, row]) => ({ id, row })))('$id: $row.method $row.path, generated bodies', ({ id, row }) => {
  it('a malformed body (any JSON, wrong type, missing field, huge or unicode value, deep nesting, broken JSON) is 400/413 and changes nothing', async () => {
    const template = TEMPLATES[id]!(w);
    const path = pathOf(row, template.params);
    const before = await observe();
    await fc.assert(
      fc.asyncProperty(malformedBodies(row, template), async (raw) => {
        const reply = await send(row.method, path, w.owner.token, raw);
        await expectRejected(row, reply, bytes(raw) > MAX_BODY_BYTES ? 413 : 400, before);
      }),
      settings(RUNS.bodies),
    );
  });

  it('a well-formed body with a content type that is not JSON is 415 and changes nothing', async () => {
    const template = TEMPLATES[id]!(w);
    const path = pathOf(row, template.params);
    const before = await observe();
    const contentTypes = fc.oneof(
      fc.constantFrom(
        'text/plain',
        'text/plain; charset=utf-8',
        'text/html',
        'application/xml',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/octet-stream',
        'image/png',
        'application/javascript',
        null,
      ),
      fc
        .tuple(fc.stringMatching(/^[a-z]{1,12}$/), fc.stringMatching(/^[a-z0-9.+-]{1,20}$/))
        .map(([type, subtype]) => `${type}/${subtype}`)
        .filter((type) => !type.includes('json')),
    );
    await fc.assert(
      fc.asyncProperty(contentTypes, async (contentType) => {
        const reply = await send(row.method, path, w.owner.token, JSON.stringify(template.body), contentType);
        await expectRejected(row, reply, 415, before);
      }),
      settings(RUNS.contentTypes),
    );
  });

  it('a well-formed body over 64 KiB (padded with an unknown field, counted in bytes) is 413 and changes nothing', async () => {
    const template = TEMPLATES[id]!(w);
    const path = pathOf(row, template.params);
    const before = await observe();
    const sizes = fc.tuple(
      fc.oneof(fc.constant(MAX_BODY_BYTES + 1), fc.integer({ min: MAX_BODY_BYTES + 1, max: 200_000 })),
      fc.constantFrom('x', 'é', '😀'),
    );
    await fc.assert(
      fc.asyncProperty(sizes, async ([size, unit]) => {
        const empty = JSON.stringify({ ...template.body, pad: '' });
        const raw = JSON.stringify({ ...template.body, pad: unit.repeat(Math.ceil((size - bytes(empty)) / bytes(unit))) });
        expect(bytes(raw)).toBeGreaterThan(MAX_BODY_BYTES);
        const reply = await send(row.method, path, w.owner.token, raw);
        await expectRejected(row, reply, 413, before);
      }),
      settings(RUNS.sizes),
    );
  });
});

describe.each(bodilessRows.map(([id, row]) => ({ id, row })))(
  '$id: $row.method $row.path, a body it does not take',
  ({ id, row }) => {
    it('not JSON is 415, JSON that is not an object 400, over 64 KiB 413, each changing nothing', async () => {
      const path = pathOf(row, TEMPLATES[id]!(w).params);
      const before = await observe();
      const contentTypes = fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', null);
      await fc.assert(
        fc.asyncProperty(contentTypes, async (contentType) => {
          await expectRejected(row, await send(row.method, path, w.owner.token, 'title=Fuzz', contentType), 415, before);
        }),
        settings(3),
      );
      const notObjects = fc.constantFrom('[]', '"text"', '42', 'null', '{"title":', 'not json');
      await fc.assert(
        fc.asyncProperty(notObjects, async (raw) => {
          await expectRejected(row, await send(row.method, path, w.owner.token, raw), 400, before);
        }),
        settings(3),
      );
      const huge = JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES) });
      await expectRejected(row, await send(row.method, path, w.owner.token, huge), 413, before);
    });
  },
);

it('a GET with a body (which fetch will not send, node:http will) follows the same rules', async () => {
  const read = (body: string, contentType: string) =>
    new Promise<{ status: number; type: string | undefined }>((resolve, reject) => {
      const req = request(
        new URL(`/boards/${w.A.id}`, baseUrl()),
        {
          method: 'GET',
          headers: {
            authorization: `Bearer ${w.owner.token}`,
            'content-type': contentType,
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'] }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const problem = 'application/problem+json';
  expect(await read('title=Fuzz', 'text/plain')).toEqual({ status: 415, type: problem });
  expect(await read('[]', 'application/json')).toEqual({ status: 400, type: problem });
  expect(await read('{"ignored": true}', 'application/json')).toEqual({ status: 200, type: 'application/json' });
});

describe.each(idRows.map(([id, row]) => ({ id, row })))('$id: $row.method $row.path, generated ids', ({ id, row }) => {
  const names = idNamesOf(row);

  it.each(names)('a {%s} that is not a UUID is 400 and changes nothing', async (name) => {
    const template = TEMPLATES[id]!(w);
    const before = await observe();
    await fc.assert(
      fc.asyncProperty(badId, async (bad) => {
        const path = pathOf(row, { ...template.params, [name]: bad });
        const raw = template.body === undefined ? undefined : JSON.stringify(template.body);
        const reply = await send(row.method, path, w.owner.token, raw);
        await expectRejected(row, reply, 400, before);
      }),
      settings(RUNS.ids),
    );
  });
});

describe('docs.file: GET /docs/{file}, generated names', () => {
  const row: RouteRow = routes['docs.file'];
  // Dot segments ('.', '..') are resolved by the URL parser before any request: not a {file}.
  const names = fc
    .oneof(
      fc.constantFrom(...DOCS_FILE_NAMES, 'index.html', 'swagger-ui.js', '../package.json', ...interesting),
      fc.stringMatching(/^[A-Za-z0-9._-]{1,120}$/),
      fc.string({ minLength: 1, maxLength: 40 }),
    )
    .filter((name) => !/^\.*$/.test(name));

  it('any name is the allow-listed file (200), another file name 404, anything else 400; never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(names, async (name) => {
        const reply = await call('GET', `/docs/${encodeURIComponent(name)}`);
        const expected = (DOCS_FILE_NAMES as string[]).includes(name) ? 200 : /^[A-Za-z0-9._-]{1,100}$/.test(name) ? 404 : 400;
        expect({ name, status: reply.status }).toEqual({ name, status: expected });
        expect([row.success.status, ...errorStatuses(row)]).toContain(reply.status);
        if (expected !== 200) expectProblem(reply, expected);
      }),
      settings(RUNS.ids * 3),
    );
  });
});

// ---- unicode that is valid: stored as sent, never a 5xx -----------------------------------------

// Well-formed text only: a lone surrogate is refused with 400 (see the test below).
const validTitle = unicodeString(120).filter((title) => /\S/.test(title) && title.isWellFormed());

describe.each([
  ['boards.rename', (x: World) => `/boards/${x.A.id}`, (x: World) => `/boards/${x.A.id}`],
  ['columns.rename', (x: World) => `/columns/${x.A.columns[1]}`, (x: World) => `/columns/${x.A.columns[1]}`],
  ['cards.update', (x: World) => `/cards/${x.A.cards[1]}`, (x: World) => `/cards/${x.A.cards[1]}`],
] as const)('%s with unicode titles', (id, target, read) => {
  it('stores any non-blank title within the limit exactly as sent (no 5xx, no normalisation)', async () => {
    const row = routes[id] as RouteRow;
    await fc.assert(
      fc.asyncProperty(validTitle, async (title) => {
        const reply = await call(row.method, target(w), { token: w.owner.token, body: { title } });
        expect({ status: reply.status, body: reply.status === 200 ? undefined : reply.body }).toEqual({
          status: 200,
          body: undefined,
        });
        const stored = await call('GET', read(w), { token: w.owner.token });
        expect(stored.body.title).toBe(title);
      }),
      settings(RUNS.unicode),
    );
  });

  it('refuses a lone surrogate (sent as a JSON escape) with 400: it is not text, and DynamoDB would refuse it', async () => {
    const row = routes[id] as RouteRow;
    const before = (await call('GET', read(w), { token: w.owner.token })).body.title;
    expectProblem(await call(row.method, target(w), { token: w.owner.token, body: { title: `x\ud800y` } }), 400);
    expect((await call('GET', read(w), { token: w.owner.token })).body.title).toBe(before);
  });
});

describe('limits count characters, as the published JSON Schema (maxLength) and the contract do', () => {
  // JSON Schema's maxLength counts Unicode code points (RFC 8259 characters); '😀' is one
  // character but two UTF-16 code units.
  const rename = (title: string) => call('PATCH', `/boards/${w.A.id}`, { token: w.owner.token, body: { title } });

  it('a title of 256 ASCII characters is accepted, 257 refused', async () => {
    expect((await rename('a'.repeat(256))).status).toBe(200);
    expectProblem(await rename('a'.repeat(257)), 400);
  });

  it('a title of 256 characters outside the BMP is accepted, 257 refused', async () => {
    const accepted = await rename('😀'.repeat(256));
    expect({ status: accepted.status, body: accepted.status === 200 ? undefined : accepted.body }).toEqual({
      status: 200,
      body: undefined,
    });
    expectProblem(await rename('😀'.repeat(257)), 400);
  });

  it('a description of 16,384 characters is accepted, 16,385 refused; characters outside the BMP count once', async () => {
    const update = (description: string) =>
      call('PATCH', `/cards/${w.A.cards[1]}`, { token: w.owner.token, body: { description } });
    expect((await update('é'.repeat(16_384))).status).toBe(200);
    expectProblem(await update('é'.repeat(16_385)), 400);
    // 10,000 characters, 20,000 UTF-16 code units, 40 KB: within every limit of the contract.
    expect((await update('𝕏'.repeat(10_000))).status).toBe(200);
  });

  it('a display name of 100 characters outside the BMP is accepted at registration', async () => {
    const reply = await call('POST', '/auth/register', {
      body: { email: uniqueEmail(), password: 'long enough password', display_name: '😀'.repeat(100) },
    });
    expect(reply.status).toBe(201);
  });
});

// ---- label names and colors ---------------------------------------------------------------------

/** Code points, as the contract counts a name's length. */
const codePoints = (text: string) => [...text].length;
const COLOR = /^#[0-9a-fA-F]{6}$/;
const validColor = fc.stringMatching(COLOR);
/** A name the contract accepts: 1–50 code points, well-formed, not only whitespace. */
const validName = fc
  .string({
    unit: fc.oneof(
      { arbitrary: fc.constantFrom(...interesting), weight: 2 },
      { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 4 },
    ),
    minLength: 1,
    maxLength: 50,
  })
  .filter((name) => name.isWellFormed() && codePoints(name) >= 1 && codePoints(name) <= 50 && name.trim().length > 0)
  // Clear of the other labels of A (the mass-assignment runs name theirs 'Label <n>').
  .filter((name) => !/^label /i.test(name));
/** Names the contract refuses, each for one of its rules. */
const invalidName = fc.oneof(
  whitespace,
  fc.constant(''),
  fc.string({ unit: 'binary', minLength: 51, maxLength: 80 }).filter((name) => codePoints(name) > 50),
  fc.tuple(fc.integer({ min: 51, max: 200 }), fc.constantFrom('a', 'é', '😀', '𝕏', 'e\u0301')).map(([n, unit]) => unit.repeat(n)),
  fc.tuple(validName, loneSurrogate).map(([name, lone]) => `${name.slice(0, 40)}${lone}`),
  fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.string(), { maxKeys: 2 }),
  ),
);
/** Colors the contract refuses: not exactly '#' and six hex digits. */
const invalidColor = fc.oneof(
  fc.string({ maxLength: 12 }).filter((color) => !COLOR.test(color)),
  fc.stringMatching(/^#[0-9a-fA-F]{3}$/),
  fc.stringMatching(/^[0-9a-fA-F]{6}$/),
  fc.stringMatching(/^#[0-9a-fA-F]{7,8}$/),
  fc
    .tuple(validColor, fc.nat(5), fc.constantFrom('g', 'G', 'z', ' ', '-', '\u0660', 'ａ', '\u0000'))
    .map(([color, at, bad]) => `${color.slice(0, at + 1)}${bad}${color.slice(at + 2)}`),
  fc.tuple(validColor, fc.constantFrom(' ', '\n', '\t', '#', '\u200b')).map(([color, pad]) => `${color}${pad}`),
  fc.tuple(validColor, fc.constantFrom(' ', '\n', '#')).map(([color, pad]) => `${pad}${color}`),
  fc.constantFrom('red', 'transparent', 'rgb(1,2,3)', '#', '0x123456', '＃123456'),
  fc.oneof(fc.integer(), fc.boolean(), fc.constant(['#abcdef']), fc.constant({ hex: '#abcdef' })),
);

describe('label bodies: names and colors as the contract states them', () => {
  // The other field is valid (or, on update only, null).
  const cases = [
    ['labels.create', () => `/boards/${w.A.id}/labels`, false],
    ['labels.update', () => `/labels/${w.labelA}`, true],
  ] as const;

  it.each(cases)(
    '%s: an invalid name or color (by the contract, not by our schema) is 400 and changes nothing',
    async (id, path, nullable) => {
      const row = routes[id] as RouteRow;
      const before = await observe();
      const body = fc.oneof(
        fc.record({ name: invalidName, color: nullable ? fc.oneof(validColor, fc.constant(null)) : validColor }),
        fc.record({ name: nullable ? fc.oneof(validName, fc.constant(null)) : validName, color: invalidColor }),
        fc.record({ name: invalidName, color: invalidColor }),
        // Create needs both: null or a missing field is refused there.
        ...(nullable
          ? []
          : [
              fc.record({ name: fc.constantFrom(null, undefined), color: validColor }),
              fc.record({ name: validName, color: fc.constantFrom(null, undefined) }),
            ]),
      );
      await fc.assert(
        fc.asyncProperty(body, async (sent) => {
          const raw = JSON.stringify(sent);
          // The generators are the contract's, independent of the schema: the schema must agree.
          expect(malformed(row, raw)).toBe(true);
          const reply = await send(row.method, path(), w.owner.token, raw);
          await expectRejected(row, reply, 400, before);
        }),
        settings(RUNS.bodies),
      );
    },
  );

  it('labels.update: any valid name is stored exactly as sent, any #rrggbb comes back in lower case', async () => {
    await fc.assert(
      fc.asyncProperty(validName, validColor, async (name, color) => {
        const reply = await call('PATCH', `/labels/${w.labelA}`, { token: w.owner.token, body: { name, color } });
        expect({ status: reply.status, body: reply.status === 200 ? undefined : reply.body }).toEqual({
          status: 200,
          body: undefined,
        });
        const expected = { id: w.labelA, board_id: w.A.id, name: wire(name), color: color.toLowerCase() };
        expect(reply.body).toEqual(expected);
        const listed = await call('GET', `/boards/${w.A.id}/labels`, { token: w.owner.token });
        expect(listed.body).toContainEqual(expected);
      }),
      settings(RUNS.unicode),
    );
  });

  it('labels.create: 50 characters outside the BMP are accepted, 51 refused; a whitespace-only name is refused', async () => {
    const create = (name: string) =>
      call('POST', `/boards/${w.B.id}/labels`, { token: w.other.token, body: { name, color: '#000000' } });
    const fifty = await create('𝕏'.repeat(50));
    expect({ status: fifty.status, name: fifty.body.name }).toEqual({ status: 201, name: '𝕏'.repeat(50) });
    expectProblem(await create('😀'.repeat(51)), 400);
    expectProblem(await create('\u3000\t\ufeff'), 400);
  });
});

// ---- mass assignment ----------------------------------------------------------------------------

/** Server-owned and internal attributes, with values that would hurt if any were taken. */
const extras = (x: World) =>
  fc.record({
    id: fc.constantFrom(x.B.id, x.A.columns[1], x.A.cards[1], x.B.cards[0], 'chosen-by-client'),
    owner_id: fc.constantFrom(x.other.id, x.member.id, ''),
    board_id: fc.constantFrom(x.B.id, randomUUID()),
    column_id: fc.constantFrom(x.B.columns[0], x.A.columns[1]),
    position: fc.oneof(fc.double(), fc.constantFrom(-1e308, 0, 'NaN', null)),
    created_at: fc.constantFrom('1999-01-01T00:00:00.000Z', 'yesterday', 0),
    pk: fc.constantFrom(`BOARD#${x.B.id}`, `USER#${x.other.id}`, 'EMAIL#x@example.test'),
    sk: fc.constantFrom('#BOARD', `#MEMBER#${x.other.id}`, `COLUMN#${x.B.columns[0]}`),
    colpos: fc.string({ maxLength: 40 }),
    type: fc.constantFrom('board', 'member', 'column', 'card', 'user_board'),
    card_version: fc.oneof(fc.integer(), fc.constant(-1)),
    column_version: fc.oneof(fc.integer(), fc.constant(-1)),
    owner_count: fc.constantFrom(0, -5, 1000),
    deleting_columns: fc.constantFrom([x.A.columns[0]], x.A.columns[0], { SS: [x.A.columns[0]] }),
    user_id: fc.constantFrom(x.other.id, x.member.id),
    joined_at: fc.constant('1999-01-01T00:00:00.000Z'),
    email: fc.constant('mass@example.test'),
    // A card's labels change only through attach and detach; a board's map only through label writes.
    label_ids: fc.constantFrom([x.labelA], [x.labelB], [x.labelA, x.labelB], ['chosen-by-client']),
    label_id: fc.constantFrom(x.labelA, x.labelB),
    labels: fc.constantFrom({ [x.labelB]: 'Injected' }, {}, { [x.labelA]: 'Renamed by the client' }),
    // The event log's counter and a change's event: always the server's, never the client's.
    seq: fc.constantFrom(0, -1, 1, 999_999, '7'),
    event: fc.constant({ type: 'board.deleted', event_id: 'chosen-by-client', actor_id: x.other.id, seq: 1 }),
    kept_until: fc.constantFrom(0, 4_102_444_800),
    ev: fc.constant({ id: 'chosen-by-client', kind: 'board.deleted', actor: x.other.id, at: '1999-01-01T00:00:00.000Z' }),
  });

/** Board A's latest seq as stored before the request (0 while it has had no change). */
const seqBefore = (before: Item[]) =>
  (before.find((i) => i.pk === `BOARD#${w.A.id}` && i.sk === '#BOARD')?.seq as number | undefined) ?? 0;
/** The key (as diff names it) of board A's log item for the change after `before`. */
const nextLog = (before: Item[]) => A(w, keys.logEntry(w.A.id, seqBefore(before) + 1).sk);
/**
 * The change's log item is the server's: board A's next seq, this kind, by the caller, now, with a
 * fresh id, whatever seq, event or event_id the body named (lib/data/event-log.ts).
 */
async function expectLogged(before: Item[], kind: string, actor: string) {
  const seq = seqBefore(before) + 1;
  const item = await itemOf(`BOARD#${w.A.id}`, keys.logEntry(w.A.id, seq).sk);
  expect(item).toMatchObject({ type: 'event', board_id: w.A.id, seq, kind });
  const event = item!.event as {
    type: string;
    event_id: string;
    board_id: string;
    actor_id: string;
    occurred_at: string;
    seq: number;
  };
  expect(event).toMatchObject({ type: kind, event_id: expect.stringMatching(UUID), board_id: w.A.id, actor_id: actor, seq });
  expect(recent(event.occurred_at)).toBe(true);
  expect((await itemOf(`BOARD#${w.A.id}`, '#BOARD'))!.seq).toBe(seq);
}
const itemOf = async (pk: string, sk: string) => (await partition(pk)).find((i) => i.sk === sk);

/** The raw partitions a mass-assignment attempt could reach. */
const watched = (x: World) => [
  `BOARD#${x.A.id}`,
  `BOARD#${x.B.id}`,
  `USER#${x.owner.id}`,
  `USER#${x.member.id}`,
  `USER#${x.other.id}`,
  ...x.A.columns.map((id) => `COLUMN#${id}`),
  ...cardLookupPartitions(x.A.cards),
  `LABEL#${x.labelA}`,
  `LABEL#${x.labelB}`,
  `COLUMN#${x.B.columns[0]}`,
  ...cardLookupPartitions([x.B.cards[0]!]),
];
const snapshot = async (x: World) => (await Promise.all(watched(x).map(partition))).flat();

let counter = 0;
const unique = (label: string) => `${label} ${++counter}`;
const A = (x: World, sk: string) => `BOARD#${x.A.id}|${sk}`;
const recent = (iso: string) => Math.abs(Date.parse(iso) - Date.now()) < 60_000;

describe('mass assignment: server-owned and key attributes in a valid body change nothing but the intended field', () => {
  /** Sends the valid body plus the extras; the intended field(s) win over the extras of the same name. */
  const massProperty = (
    build: (x: World) => { method: string; path: string; body: Json; token?: string },
    check: (reply: Reply, changes: ReturnType<typeof diff>, sent: Json, before: Item[]) => void | Promise<void>,
  ) =>
    fc.assert(
      fc.asyncProperty(extras(w), async (extra) => {
        const request = build(w);
        const before = await snapshot(w);
        const sent = { ...extra, ...request.body };
        const reply = await call(request.method, request.path, { token: request.token ?? w.owner.token, body: sent });
        expect([200, 201]).toContain(reply.status);
        await check(reply, diff(before, await snapshot(w)), sent, before);
      }),
      settings(RUNS.mass),
    );

  it('boards.rename: only the title of the board item changes', async () => {
    await massProperty(
      (x) => ({ method: 'PATCH', path: `/boards/${x.A.id}`, body: { title: unique('Board') } }),
      async (reply, changes, sent, before) => {
        expect(changes).toEqual({ added: [nextLog(before)], removed: [], changed: { [A(w, '#BOARD')]: ['seq', 'title'] } });
        expect(reply.body).toMatchObject({ id: w.A.id, owner_id: w.owner.id, title: sent.title });
        await expectLogged(before, 'board.updated', w.owner.id);
      },
    );
  });

  it('columns.rename: only the title of the column item changes', async () => {
    await massProperty(
      (x) => ({ method: 'PATCH', path: `/columns/${x.A.columns[0]}`, body: { title: unique('Column') } }),
      async (reply, changes, _sent, before) => {
        expect(changes).toEqual({
          added: [nextLog(before)],
          removed: [],
          changed: { [A(w, '#BOARD')]: ['seq'], [A(w, `COLUMN#${w.A.columns[0]}`)]: ['title'] },
        });
        await expectLogged(before, 'column.updated', w.owner.id);
        expect(reply.body).toMatchObject({ id: w.A.columns[0], board_id: w.A.id });
      },
    );
  });

  it('cards.update: only the title and description of the card item change (and its write counter)', async () => {
    await massProperty(
      (x) => ({ method: 'PATCH', path: `/cards/${x.A.cards[0]}`, body: { title: unique('Card'), description: unique('Text') } }),
      async (reply, changes, _sent, before) => {
        expect(changes).toEqual({
          added: [nextLog(before)],
          removed: [],
          // `version`: the card's write counter (its ETag's part), the service's own, never the body's.
          changed: { [A(w, '#BOARD')]: ['seq'], [A(w, `CARD#${w.A.cards[0]}`)]: ['description', 'title', 'version'] },
        });
        await expectLogged(before, 'card.updated', w.owner.id);
        expect(reply.body).toMatchObject({ id: w.A.cards[0] });
      },
    );
  });

  it('cards.move: only the card’s column and position (and their index key) change, to the target', async () => {
    let target = 0;
    await massProperty(
      (x) => {
        target = 1 - target;
        return { method: 'PATCH', path: `/cards/${x.A.cards[0]}/move`, body: { target_column_id: x.A.columns[target] } };
      },
      async (reply, changes, _sent, before) => {
        const card = A(w, `CARD#${w.A.cards[0]}`);
        expect(changes.added).toEqual([nextLog(before)]);
        expect(changes.removed).toEqual([]);
        expect(Object.keys(changes.changed).sort()).toEqual([A(w, '#BOARD'), card].sort());
        expect(changes.changed[A(w, '#BOARD')]).toEqual(['seq']);
        expect(['colpos', 'column_id', 'position', 'version']).toEqual(expect.arrayContaining(changes.changed[card]!));
        await expectLogged(before, 'card.moved', w.owner.id);
        expect(reply.body).toMatchObject({ id: w.A.cards[0], column_id: w.A.columns[target], position: 1 });
      },
    );
  });

  it('columns.move: only the column’s position changes', async () => {
    let flip = false;
    await massProperty(
      (x) => {
        flip = !flip;
        return {
          method: 'PATCH',
          path: `/columns/${x.A.columns[0]}/move`,
          body: flip ? { before_id: x.A.columns[1] } : { after_id: x.A.columns[1] },
        };
      },
      async (reply, changes, _sent, before) => {
        expect(changes).toEqual({
          added: [nextLog(before)],
          removed: [],
          changed: { [A(w, '#BOARD')]: ['seq'], [A(w, `COLUMN#${w.A.columns[0]}`)]: ['position'] },
        });
        await expectLogged(before, 'column.moved', w.owner.id);
        expect(reply.body).toMatchObject({ id: w.A.columns[0], board_id: w.A.id });
      },
    );
  });

  it('columns.create: one new column of this board at the end, with its own id and time; only the board’s seq moves', async () => {
    await massProperty(
      (x) => ({ method: 'POST', path: `/boards/${x.A.id}/columns`, body: { title: unique('New column') } }),
      async (reply, changes, sent, before) => {
        const column = reply.body as { id: string; board_id: string; position: number };
        expect(column.id).not.toBe(sent.id);
        expect(column.board_id).toBe(w.A.id);
        const positions = before
          .filter((i) => i.pk === `BOARD#${w.A.id}` && String(i.sk).startsWith('COLUMN#'))
          .map((i) => i.position as number);
        expect(column.position).toBe(Math.max(...positions) + 1);
        expect({ ...changes, added: [...changes.added].sort() }).toEqual({
          added: [A(w, `COLUMN#${column.id}`), nextLog(before)].sort(),
          removed: [],
          changed: { [A(w, '#BOARD')]: ['seq'] },
        });
        const item = (await partition(`BOARD#${w.A.id}`)).find((i) => i.sk === `COLUMN#${column.id}`)!;
        expect(Object.keys(item).sort()).toEqual(['board_id', 'created_at', 'id', 'pk', 'position', 'sk', 'title', 'type']);
        await expectLogged(before, 'column.created', w.owner.id);
        expect(item).toMatchObject({ type: 'column', id: column.id, board_id: w.A.id, title: sent.title });
        expect(recent(item.created_at as string)).toBe(true);
        const lookup = await partition(`COLUMN#${column.id}`);
        expect(lookup).toEqual([
          { pk: `COLUMN#${column.id}`, sk: '#LOOKUP', type: 'column_lookup', board_id: w.A.id, card_version: 0 },
        ]);
      },
    );
  });

  it('cards.create: one new card in the addressed column at its end; only that column’s card_version moves', async () => {
    await massProperty(
      (x) => ({ method: 'POST', path: `/columns/${x.A.columns[1]}/cards`, body: { title: unique('New card') } }),
      async (reply, changes, sent, before) => {
        const card = reply.body as { id: string; column_id: string; description: string | null; created_at: string };
        expect(card.id).not.toBe(sent.id);
        expect(card).toMatchObject({ column_id: w.A.columns[1], description: null });
        expect(recent(card.created_at)).toBe(true);
        expect({ ...changes, added: [...changes.added].sort() }).toEqual({
          added: [A(w, `CARD#${card.id}`), nextLog(before)].sort(),
          removed: [],
          changed: { [A(w, '#BOARD')]: ['seq'], [`COLUMN#${w.A.columns[1]}|#LOOKUP`]: ['card_version'] },
        });
        const item = (await partition(`BOARD#${w.A.id}`)).find((i) => i.sk === `CARD#${card.id}`)!;
        expect(Object.keys(item).sort()).toEqual([
          'board_id',
          'colpos',
          'column_id',
          'created_at',
          'description',
          'id',
          'pk',
          'position',
          'sk',
          'title',
          'type',
        ]);
        expect(item).toMatchObject({ type: 'card', board_id: w.A.id, column_id: w.A.columns[1] });
        expect(String(item.colpos).startsWith(`${w.A.columns[1]}#`)).toBe(true);
        await expectLogged(before, 'card.created', w.owner.id);
      },
    );
  });

  it('boards.create: a new board of the caller with its own id and time; nothing else is touched', async () => {
    await massProperty(
      () => ({ method: 'POST', path: '/boards', body: { title: unique('New board') } }),
      async (reply, changes, sent) => {
        const created = reply.body as { id: string; owner_id: string; created_at: string };
        expect(created.id).not.toBe(sent.id);
        expect(created.owner_id).toBe(w.owner.id);
        expect(recent(created.created_at)).toBe(true);
        expect(changes).toEqual({ added: [`USER#${w.owner.id}|BOARD#${created.id}`], removed: [], changed: {} });
        const items = await partition(`BOARD#${created.id}`);
        expect(items.map((i) => i.sk).sort()).toEqual(['#BOARD', `#MEMBER#${w.owner.id}`]);
        expect(items.find((i) => i.sk === '#BOARD')).toMatchObject({ owner_id: w.owner.id, owner_count: 1 });
        expect(items.find((i) => i.sk !== '#BOARD')).toMatchObject({ user_id: w.owner.id, role: 'owner' });
        // A new board has had no change: seq 0, whatever seq the body named.
        expect((await call('GET', `/boards/${created.id}`, { token: w.owner.token })).body.seq).toBe(0);
      },
    );
  });

  it('labels.create: one new label of this board with its own id, lookup and name items; only the board’s map gains it', async () => {
    await massProperty(
      (x) => ({ method: 'POST', path: `/boards/${x.A.id}/labels`, body: { name: unique('Label'), color: '#ABCDEF' } }),
      async (reply, changes, sent, before) => {
        const label = reply.body as { id: string; board_id: string; name: string; color: string };
        expect(label).toEqual({ id: expect.stringMatching(UUID), board_id: w.A.id, name: sent.name, color: '#abcdef' });
        expect([sent.id, w.labelA, w.labelB]).not.toContain(label.id);
        expect({ ...changes, added: [...changes.added].sort() }).toEqual({
          added: [A(w, `#LABELNAME#${String(sent.name).toLowerCase()}`), A(w, `LABEL#${label.id}`), nextLog(before)].sort(),
          removed: [],
          changed: { [A(w, '#BOARD')]: ['labels', 'seq'] },
        });
        const items = await partition(`BOARD#${w.A.id}`);
        const item = items.find((i) => i.sk === `LABEL#${label.id}`)!;
        expect(Object.keys(item).sort()).toEqual(['board_id', 'color', 'created_at', 'id', 'name', 'pk', 'sk', 'type']);
        expect(item).toMatchObject({ type: 'label', id: label.id, board_id: w.A.id, name: sent.name, color: '#abcdef' });
        expect(recent(item.created_at as string)).toBe(true);
        await expectLogged(before, 'label.created', w.owner.id);
        expect(items.find((i) => i.sk === `#LABELNAME#${String(sent.name).toLowerCase()}`)).toEqual({
          pk: `BOARD#${w.A.id}`,
          sk: `#LABELNAME#${String(sent.name).toLowerCase()}`,
          type: 'label_name',
          label_id: label.id,
        });
        const board = items.find((i) => i.sk === '#BOARD')!;
        expect(board.labels).toMatchObject({ [label.id]: sent.name });
        expect(board.labels).not.toHaveProperty(w.labelB);
        expect(board.seq).toBe(seqBefore(before) + 1);
        expect(await partition(`LABEL#${label.id}`)).toEqual([
          { pk: `LABEL#${label.id}`, sk: '#LOOKUP', type: 'label_lookup', board_id: w.A.id },
        ]);
      },
    );
  });

  it('labels.update: only the label’s name and color (its name item moving with a rename) and the board’s map change', async () => {
    let run = 0;
    await massProperty(
      (x) => {
        run++;
        const color = `#${((run * 0x2f1a3b) % 0xffffff).toString(16).padStart(6, '0').toUpperCase()}`;
        // Odd runs rename and recolour; even runs recolour only (name: null leaves it).
        return { method: 'PATCH', path: `/labels/${x.labelA}`, body: { name: run % 2 ? unique('Renamed') : null, color } };
      },
      async (reply, changes, sent, before) => {
        const was = before.find((i) => i.pk === `BOARD#${w.A.id}` && i.sk === `LABEL#${w.labelA}`)!;
        const name = (sent.name ?? was.name) as string;
        const color = String(sent.color).toLowerCase();
        expect(reply.body).toEqual({ id: w.labelA, board_id: w.A.id, name, color });
        const renamed = sent.name !== null;
        expect({ ...changes, added: [...changes.added].sort() }).toEqual({
          added: [...(renamed ? [A(w, `#LABELNAME#${name.toLowerCase()}`)] : []), nextLog(before)].sort(),
          removed: renamed ? [A(w, `#LABELNAME#${String(was.name).toLowerCase()}`)] : [],
          changed: {
            [A(w, '#BOARD')]: renamed ? ['labels', 'seq'] : ['seq'],
            [A(w, `LABEL#${w.labelA}`)]: renamed ? ['color', 'name'] : ['color'],
          },
        });
        const item = await itemOf(`BOARD#${w.A.id}`, `LABEL#${w.labelA}`);
        expect(item).toMatchObject({ id: w.labelA, board_id: w.A.id, name, color, created_at: was.created_at });
        await expectLogged(before, 'label.updated', w.owner.id);
        expect((await itemOf(`BOARD#${w.A.id}`, '#BOARD'))!.labels).toMatchObject({ [w.labelA]: name });
      },
    );
  });

  it('cards.labels.attach and detach: only the card’s label_ids (and the board’s seq) change; the ids in the body are ignored', async () => {
    // Start from a card without the label.
    expect((await call('DELETE', `/cards/${w.A.cards[0]}/labels/${w.labelA}`, { token: w.owner.token })).status).toBe(200);
    let on = false;
    await massProperty(
      (x) => {
        on = !on;
        return { method: on ? 'PUT' : 'DELETE', path: `/cards/${x.A.cards[0]}/labels/${x.labelA}`, body: {} };
      },
      async (reply, changes, _sent, before) => {
        expect(reply.body).toMatchObject({ id: w.A.cards[0], label_ids: on ? [w.labelA] : [] });
        expect(changes).toEqual({
          added: [nextLog(before)],
          removed: [],
          changed: { [A(w, '#BOARD')]: ['seq'], [A(w, `CARD#${w.A.cards[0]}`)]: ['label_ids', 'version'] },
        });
        const card = await itemOf(`BOARD#${w.A.id}`, `CARD#${w.A.cards[0]}`);
        expect(card?.label_ids === undefined ? [] : [...(card.label_ids as Set<string>)]).toEqual(on ? [w.labelA] : []);
        await expectLogged(before, 'card.updated', w.owner.id);
      },
    );
  });

  it('members.add: exactly the named user becomes a member with the asked role; user_id, board_id and the rest are ignored', async () => {
    // A fresh user per run: adding the same one twice is a 409.
    await fc.assert(
      fc.asyncProperty(extras(w), async (extra) => {
        const newcomer = await newUser();
        const before = await snapshot(w);
        const reply = await call('POST', `/boards/${w.A.id}/members`, {
          token: w.owner.token,
          body: { ...extra, email: newcomer.email, role: 'member' },
        });
        expect(reply.status).toBe(201);
        expect(reply.body).toMatchObject({ user_id: newcomer.id, role: 'member' });
        const changes = diff(before, await snapshot(w));
        expect({ ...changes, added: [...changes.added].sort() }).toEqual({
          added: [A(w, `#MEMBER#${newcomer.id}`), nextLog(before)].sort(),
          removed: [],
          // The board's member map gains the newcomer (what assignee_ids are shown against).
          changed: { [A(w, '#BOARD')]: ['members', 'seq'] },
        });
        await expectLogged(before, 'member.added', w.owner.id);
        expect(await partition(`USER#${newcomer.id}`)).toEqual(
          expect.arrayContaining([expect.objectContaining({ sk: `BOARD#${w.A.id}`, role: 'member', board_id: w.A.id })]),
        );
      }),
      settings(4),
    );
  });

  it('members.update: only the named member’s role (both sides) and the owner count change', async () => {
    let role: 'owner' | 'member' = 'member';
    await massProperty(
      (x) => {
        role = role === 'owner' ? 'member' : 'owner';
        return { method: 'PATCH', path: `/boards/${x.A.id}/members/${x.member.id}`, body: { role } };
      },
      async (reply, changes, _sent, before) => {
        expect(reply.body).toMatchObject({ user_id: w.member.id, role });
        await expectLogged(before, 'member.updated', w.owner.id);
        expect(changes).toEqual({
          added: [nextLog(before)],
          removed: [],
          changed: {
            [A(w, '#BOARD')]: ['owner_count', 'seq'],
            [A(w, `#MEMBER#${w.member.id}`)]: ['role'],
            [`USER#${w.member.id}|BOARD#${w.A.id}`]: ['role'],
          },
        });
      },
    );
    // Leave the member a member.
    await call('PATCH', `/boards/${w.A.id}/members/${w.member.id}`, { token: w.owner.token, body: { role: 'member' } });
  });

  it('auth.register: the new user’s id is the pool’s, whatever id, user_id or owner_id the body names', async () => {
    await fc.assert(
      fc.asyncProperty(extras(w), async (extra) => {
        const before = await snapshot(w);
        const email = uniqueEmail();
        const reply = await call('POST', '/auth/register', {
          body: { ...extra, email, password: 'long enough password', display_name: 'Mass' },
        });
        expect(reply.status).toBe(201);
        const sub = JSON.parse(Buffer.from(String(reply.body.token).split('.')[1]!, 'base64url').toString()).sub;
        expect([w.owner.id, w.member.id, w.other.id, extra.id, extra.user_id]).not.toContain(sub);
        expect(diff(before, await snapshot(w))).toEqual({ added: [], removed: [], changed: {} });
      }),
      settings(4),
    );
  });
});
