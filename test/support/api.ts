import { randomUUID } from 'node:crypto';
import { type IncomingHttpHeaders, request } from 'node:http';
import { verifyAddress } from './mail';

/**
 * HTTP helpers for integration tests: every test makes its own users and boards (no resets),
 * against the stack that global setup started.
 */
export const baseUrl = () => {
  const url = process.env.TASK_BOARD_URL;
  if (!url) throw new Error('TASK_BOARD_URL is not set: integration tests run under the integration project');
  return url;
};

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is, instead of JSON.stringify(body). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  url?: string;
}

export async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let payload: string | Buffer | undefined = options.rawBody;
  if (payload === undefined && options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${options.url ?? baseUrl()}${path}`, { method, headers, body: payload });
  const text = await response.text();
  let body: unknown = text;
  if (text && /json/.test(response.headers.get('content-type') ?? '')) body = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: body as T };
}

export interface TestUser {
  id: string;
  email: string;
  password: string;
  token: string;
  /** The refresh token registration answered with (POST /auth/refresh, /auth/logout). */
  refreshToken?: string;
}

export const uniqueEmail = () => `user-${randomUUID()}@example.test`;

export function subjectOf(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).sub;
}

/**
 * A registered user whose address is verified (through the outbox, as its owner would: only such
 * accounts can be added to boards by email); `verified: false` leaves it as registration does.
 */
export async function newUser(url?: string, { verified = true }: { verified?: boolean } = {}): Promise<TestUser> {
  const email = uniqueEmail();
  const password = `pw-${randomUUID()}`;
  const reply = await call('POST', '/auth/register', { body: { email, password, display_name: 'Test User' }, url });
  if (reply.status !== 201) throw new Error(`register failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  const user = {
    id: subjectOf(reply.body.token),
    email,
    password,
    token: reply.body.token,
    refreshToken: reply.body.refresh_token,
  };
  if (verified) await verifyAddress(user, url);
  return user;
}

/** A new session of an account, by its password (POST /auth/login). */
export async function signIn(email: string, password: string, url?: string): Promise<TestUser> {
  const reply = await call('POST', '/auth/login', { body: { email, password }, url });
  if (reply.status !== 200) throw new Error(`login failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { id: subjectOf(reply.body.token), email, password, token: reply.body.token, refreshToken: reply.body.refresh_token };
}

export async function newBoard(user: TestUser, title = 'A board', url?: string) {
  const reply = await call('POST', '/boards', { token: user.token, body: { title }, url });
  if (reply.status !== 201) throw new Error(`create board failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as { id: string; owner_id: string; title: string; created_at: string };
}

export async function newColumn(user: TestUser, boardId: string, title = 'A column', url?: string) {
  const reply = await call('POST', `/boards/${boardId}/columns`, { token: user.token, body: { title }, url });
  if (reply.status !== 201) throw new Error(`create column failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as { id: string; board_id: string; title: string; position: number };
}

export interface CardView {
  id: string;
  column_id: string;
  title: string;
  description: string | null;
  position: number;
  created_at: string;
}

/** A card as every answer shows it, with what the card-detail routes keep on it. */
export interface DetailedCard extends CardView {
  label_ids: string[];
  due_at: string | null;
  assignee_ids: string[];
  archived_at: string | null;
  comment_count: number;
}

/** Exactly the fields of a card answer, sorted: REST, the tree, the column and events all show these. */
export const CARD_FIELDS = [
  'archived_at',
  'assignee_ids',
  'column_id',
  'comment_count',
  'created_at',
  'description',
  'due_at',
  'id',
  'label_ids',
  'position',
  'title',
];

export async function newCard(
  user: TestUser,
  columnId: string,
  body: { title: string; description?: string } = { title: 'A card' },
  url?: string,
) {
  const reply = await call('POST', `/columns/${columnId}/cards`, { token: user.token, body, url });
  if (reply.status !== 201) throw new Error(`create card failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as CardView;
}

/** An id that no resource has. */
export const unknownId = () => randomUUID();

/** Asserts an RFC 9457 problem answer with the given status, and returns its body. */
export function expectProblem(reply: Reply, status: number) {
  expect({ status: reply.status, type: reply.headers.get('content-type') }).toEqual({
    status,
    type: 'application/problem+json',
  });
  expect(reply.body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    code: expect.any(String),
  });
  return reply.body as { type: string; title: string; status: number; detail: string; code: string };
}

export interface ColumnView {
  id: string;
  board_id: string;
  title: string;
  position: number;
}

export interface TreeView {
  id: string;
  owner_id: string;
  title: string;
  created_at: string;
  columns: (ColumnView & { cards: CardView[] })[];
}

/** GET /boards/{id} as `user`, which must succeed. */
export async function readTree(user: TestUser, boardId: string, url?: string): Promise<TreeView> {
  const reply = await call<TreeView>('GET', `/boards/${boardId}`, { token: user.token, url });
  expect(reply.status).toBe(200);
  return reply.body;
}

/** POST /boards/{id}/members as the owner, which must succeed. */
export async function addMember(owner: TestUser, boardId: string, user: { email: string }, role: 'owner' | 'member' = 'member') {
  const reply = await call('POST', `/boards/${boardId}/members`, { token: owner.token, body: { email: user.email, role } });
  if (reply.status !== 201) throw new Error(`add member failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as { user_id: string; email: string; display_name: string; role: 'owner' | 'member' };
}

export interface BoardFixture {
  id: string;
  /** Two columns; both cards are in the first. */
  columns: [string, string];
  cards: [string, string];
}

/** A board of `owner` with two columns and two cards in the first column. */
export async function newBoardWithCards(owner: TestUser, title = 'A board', firstDescription?: string): Promise<BoardFixture> {
  const board = await newBoard(owner, title);
  const first = await newColumn(owner, board.id, 'First');
  const [second, card1] = await Promise.all([
    newColumn(owner, board.id, 'Second'),
    newCard(owner, first.id, { title: 'One', ...(firstDescription ? { description: firstDescription } : {}) }),
  ]);
  const card2 = await newCard(owner, first.id, { title: 'Two' });
  return { id: board.id, columns: [first.id, second.id], cards: [card1.id, card2.id] };
}

/** A lower-case UUID as the service issues them. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An answer as sent on the wire: fetch would decompress it (and send its own Accept-Encoding). */
export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  bytes: Buffer;
}

/** A GET with exactly these headers (node:http), its body's bytes as received, not decoded. */
export function rawGet(path: string, headers: Record<string, string> = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, baseUrl()), { method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
