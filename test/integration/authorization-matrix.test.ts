import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { errorStatuses } from '../../lib/http/openapi';
import { type RouteRow, routes } from '../../lib/routes';
import { createsBoard, personalTokenScopeOf } from '../../lib/rows/row';
import { addMember, call, expectProblem, newBoardWithCards, newUser, type Reply, signIn, type TestUser } from '../support/api';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import { codeSentBy } from '../support/mail';

/**
 * Deny by default: the authorization matrix, generated from the route table. Every row that is
 * not public is called by {owner of board A, plain member of A, registered stranger, no token,
 * bad token} with the addressed id taken from {board A, board B of somebody else, nothing}; the
 * move rows also take their body ids from {A, B, C (another board of A's owner and member),
 * nothing}; the card label rows also take their label id from {A, B, C, nothing}; the webhook rows address
 * A's or B's webhook or an unknown id; the assignee rows take their user id from {a member of A, the
 * owner of B only, nobody, a malformed id}; the comment rows address a comment of A's owner or member,
 * of B's owner, or an unknown id. The owner's personal access tokens call every row too: one
 * per scope, and one with every scope limited to board C (docs/tokens.md): a scope that does not
 * reach the row is 403 `insufficient_scope` (with the scope that would, where one would), the one
 * that does is the owner's answer, and the limited token gets a stranger's answer on any other board. The expected status is derived from the row's declared access rule, never written
 * per case; the few domain outcomes (a member removing somebody else, a cross-board target) are
 * the spec's. Every answer must also be one the row documents (errorStatuses ∪ success), and a
 * rejected write leaves the addressed board's partition exactly as it was.
 */

// ---- helpers ------------------------------------------------------------------------------------

type PersonalCaller = 'pat-read' | 'pat-write' | 'pat-admin' | 'pat-elsewhere';
type Caller = 'owner' | 'member' | 'stranger' | 'none' | 'bad' | PersonalCaller;
type Authorized = 'owner' | 'member';
type PathKind = 'A' | 'B' | 'missing';
type BodyKind = 'A' | 'B' | 'C' | 'missing';

const PERSONAL_CALLERS: PersonalCaller[] = ['pat-read', 'pat-write', 'pat-admin', 'pat-elsewhere'];
const CALLERS: Caller[] = ['owner', 'member', 'stranger', 'none', 'bad', ...PERSONAL_CALLERS];
/** The one scope of each single-scope token of the owner. */
const PAT_SCOPE: Record<Exclude<PersonalCaller, 'pat-elsewhere'>, string> = {
  'pat-read': 'boards:read',
  'pat-write': 'boards:write',
  'pat-admin': 'webhooks:admin',
};
const isPersonal = (caller: Caller): caller is PersonalCaller => (PERSONAL_CALLERS as string[]).includes(caller);
const PATH_KINDS: PathKind[] = ['A', 'B', 'missing'];
const BODY_KINDS: BodyKind[] = ['A', 'B', 'C', 'missing'];

interface BoardWorld {
  id: string;
  owner: TestUser;
  /** Two columns; both cards are in the first. */
  columns: [string, string];
  cards: [string, string];
  /** A label of the board. */
  label: string;
  /** A webhook of the board, delivering nowhere reachable (the discard port refuses). */
  webhook: string;
  /** A comment of the board's owner on its first card (A and B only: the comment rows' default id). */
  comment?: string;
}

interface World {
  owner: TestUser;
  member: TestUser;
  stranger: TestUser;
  /** Owner of board B; none of the callers is a member there. */
  other: TestUser;
  /** Added to fresh copies of A by members.add; removed from them by members.remove. */
  candidate: TestUser;
  /** `owner`'s access token with one signature byte flipped: names a real user, fails verification. */
  badToken: string;
  /** `owner`'s personal access tokens: one per scope, and one with every scope limited to board C. */
  pats: Record<PersonalCaller, string>;
  A: BoardWorld;
  B: BoardWorld;
  /** Another board of A's owner, where A's member is a member too (cross-board moves). */
  C: BoardWorld;
  /** A comment of A's member on A's first card (beside `A.comment`, its owner's). */
  memberComment: string;
}

/** A board with two columns and two cards in the first column, a label, a webhook, and the given members. */
async function buildBoard(owner: TestUser, members: TestUser[] = []): Promise<BoardWorld> {
  const board = await newBoardWithCards(owner, 'Matrix board');
  const [label, webhook] = await Promise.all([
    call('POST', `/boards/${board.id}/labels`, { token: owner.token, body: { name: 'Matrix label', color: '#336699' } }),
    matrixWebhook(owner, board.id),
    ...members.map((member) => addMember(owner, board.id, member)),
  ]);
  if (label.status !== 201) throw new Error(`create label failed: ${label.status} ${JSON.stringify(label.body)}`);
  if (webhook.status !== 201) throw new Error(`create webhook failed: ${webhook.status} ${JSON.stringify(webhook.body)}`);
  return { ...board, owner, label: label.body.id, webhook: webhook.body.id };
}

/** Where the matrix's webhooks point: an allowed host of the local stack, on the discard port (nothing listens). */
const MATRIX_WEBHOOK_URL = 'http://127.0.0.1:9/matrix';

/**
 * A webhook that selects only board.deleted and is then switched off: no board event is delivered to
 * it (not even the member and label events of the board's making, which may reach the fanout before
 * the PATCH), so the delivery worker never writes its failure fields into the board's partition while
 * a case compares that partition (pings still go, and a ping's failure leaves a switched-off webhook as it is).
 */
async function matrixWebhook(owner: TestUser, boardId: string): Promise<Reply> {
  const made = await call('POST', `/boards/${boardId}/webhooks`, {
    token: owner.token,
    body: { url: MATRIX_WEBHOOK_URL, events: ['board.deleted'] },
  });
  if (made.status !== 201) return made;
  const off = await call('PATCH', `/webhooks/${made.body.id}`, { token: owner.token, body: { active: false } });
  return off.status === 200 ? made : off;
}

/** A comment of `author` on the card, which must succeed. */
async function newComment(author: TestUser, cardId: string): Promise<string> {
  const reply = await call('POST', `/cards/${cardId}/comments`, { token: author.token, body: { body: 'Matrix comment' } });
  if (reply.status !== 201) throw new Error(`create comment failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.id;
}

/** `work` over `items`, at most `limit` at a time. */
async function mapLimit<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function tamperSignature(token: string): string {
  const [header, payload, signature] = token.split('.');
  const bytes = Buffer.from(signature!, 'base64url');
  bytes[10] = bytes[10]! ^ 0xff;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

/** A new personal token's id, made by `user` with a session token. */
async function tokenIdOf(user: TestUser): Promise<string> {
  const reply = await call('POST', '/auth/tokens', {
    token: user.token,
    body: { name: 'To delete', scopes: ['boards:read'], expires_in_days: 1 },
  });
  if (reply.status !== 201) throw new Error(`create token failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.id as string;
}

/** The owner's personal tokens (made again after the owner's password change deletes them). */
async function personalTokens(owner: TestUser, elsewhere: string): Promise<Record<PersonalCaller, string>> {
  const make = async (scopes: string[], boardIds?: string[]) => {
    const reply = await call('POST', '/auth/tokens', {
      token: owner.token,
      body: { name: 'Matrix', scopes, expires_in_days: 1, ...(boardIds ? { board_ids: boardIds } : {}) },
    });
    if (reply.status !== 201) throw new Error(`create token failed: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body.token as string;
  };
  const [read, write, admin, limited] = await Promise.all([
    make(['boards:read']),
    make(['boards:write']),
    make(['webhooks:admin']),
    make(['boards:read', 'boards:write', 'webhooks:admin'], [elsewhere]),
  ]);
  return { 'pat-read': read, 'pat-write': write, 'pat-admin': admin, 'pat-elsewhere': limited };
}

let documentClient: DynamoDBDocumentClient;
let tableName: string;
const partition = (pk: string) => readPartition(documentClient, tableName, pk);

function expectStatus(reply: Reply, expected: number) {
  if (reply.status !== expected) {
    throw new Error(`expected ${expected}, got ${reply.status}: ${JSON.stringify(reply.body)}`);
  }
}

// ---- what each row needs to be called well-formed -----------------------------------------------

interface CaseContext {
  world: World;
  /** The board the path id belongs to (a fresh copy for rows that need one), when it exists. */
  board?: BoardWorld;
  caller: Caller;
  /** The user behind the caller (the owner for the token-less and bad-token callers). */
  user: TestUser;
  /** The path's {id} as sent (board A or B only). */
  addressed?: string;
}

interface Variant {
  name: string;
  /** The body; it may depend on the caller (its own password, a code mailed to it). */
  body?: (world: World, ctx: CaseContext) => unknown;
  userId?: (ctx: CaseContext) => string;
  /** The {label_id} of the path (card label rows); default the label of A. */
  labelId?: (ctx: CaseContext) => string;
  /**
   * The path's {id} on board A or B, made ready for the case before the board is read (a card or a
   * comment of its own, a due date set); default, and for the callers refused before any id is read
   * (no token, a bad one): the board's item the row reaches its board by.
   */
  target?: (ctx: CaseContext) => string | Promise<string>;
  /** The answer every authenticated caller gets before the access check, whatever the path id (a malformed id: 400). */
  beforeAccess?: number;
  /** The {id} of the path of a row that reaches no board (a personal token's id). */
  pathId?: (ctx: CaseContext) => Promise<string>;
  /** The answer to an authorized caller (member of the path's board, owner where required). */
  outcome?: (caller: Authorized) => number;
  /** The problem's `code` when an authorized caller on A is refused by the row itself (outcome). */
  code?: string;
  /** A success that changes nothing: the board's partition is compared as for a refusal. */
  unchanged?: boolean;
  /** Checked after a success: the intended effect happened. */
  effect?: (ctx: CaseContext, reply: Reply) => Promise<void>;
}

interface Profile {
  /** Body of a well-formed request. */
  body?: (world: World, ctx: CaseContext) => unknown;
  /**
   * Where the row's success is shown instead, when a success here would destroy the matrix's own
   * callers (deleting the account): the denials are still checked here.
   */
  succeedsElsewhere?: string;
  /**
   * Rows whose success destroys something or changes membership get a fresh copy of A or B per
   * case; `candidate` says whether the candidate user is a member of it.
   */
  fresh?: { candidate: boolean };
  variants?: Variant[];
}

const bodyId = (world: World, kind: BodyKind, what: 'column' | 'card', index: 0 | 1 = 0): string =>
  kind === 'missing' ? randomUUID() : what === 'column' ? world[kind].columns[index] : world[kind].cards[index];

/** A card of A moved into a column of each board, or between neighbours from each board. */
const cardMoveVariants: Variant[] = [
  ...BODY_KINDS.map(
    (kind): Variant => ({
      name: `target_column_id from ${kind}`,
      body: (w) => ({ target_column_id: bodyId(w, kind, 'column', 1) }),
      // Spec: the target must exist (404), then be on the card's board (403).
      outcome: () => (kind === 'A' ? 200 : kind === 'missing' ? 404 : 403),
    }),
  ),
  ...(['before_id', 'after_id'] as const).flatMap((field) =>
    BODY_KINDS.map(
      (kind): Variant => ({
        name: `${field} from ${kind}`,
        body: (w) => ({ target_column_id: w.A.columns[0], [field]: bodyId(w, kind, 'card', 1) }),
        // A neighbour must be a card of the same board; one elsewhere is as good as missing.
        outcome: () => (kind === 'A' ? 200 : 404),
      }),
    ),
  ),
];

/**
 * A batch on the path's board naming a column or card of each board: one of another board is 403
 * and one that does not exist 404, both with the operation's index; nothing is applied.
 */
const batchVariants: Variant[] = BODY_KINDS.flatMap((kind): Variant[] => {
  const outcome = () => (kind === 'A' ? 200 : kind === 'missing' ? 404 : 403);
  const batch = (operation: (w: World) => Record<string, unknown>) => (w: World) => ({
    operations: [{ op: 'column.create', title: 'Column by the matrix' }, operation(w)],
  });
  return [
    {
      name: `card.create into a column from ${kind}`,
      body: batch((w) => ({ op: 'card.create', column_id: bodyId(w, kind, 'column'), title: 'Card by the matrix' })),
      outcome,
    },
    {
      name: `card.update of a card from ${kind}`,
      body: batch((w) => ({ op: 'card.update', card_id: bodyId(w, kind, 'card'), title: 'Updated by the matrix' })),
      outcome,
    },
    {
      name: `card.move of a card of A before a card from ${kind}`,
      body: batch((w) => ({
        op: 'card.move',
        card_id: w.A.cards[0],
        target_column_id: w.A.columns[1],
        before_id: bodyId(w, kind, 'card', 1),
      })),
      outcome,
    },
  ];
});

const columnMoveVariants: Variant[] = [
  { name: 'no neighbours', body: () => ({}), outcome: () => 200 },
  ...(['before_id', 'after_id'] as const).flatMap((field) =>
    BODY_KINDS.map(
      (kind): Variant => ({
        name: `${field} from ${kind}`,
        body: (w) => ({ [field]: bodyId(w, kind, 'column', 1) }),
        outcome: () => (kind === 'A' ? 200 : 404),
      }),
    ),
  ),
];

/** A card of the path's board given a label from each board: the label must exist (404), then be on the card's board (403). */
const cardLabelVariants = (on: boolean): Variant[] =>
  BODY_KINDS.map(
    (kind): Variant => ({
      name: `label_id from ${kind}`,
      labelId: (ctx) => (kind === 'missing' ? randomUUID() : ctx.world[kind].label),
      outcome: () => (kind === 'A' ? 200 : kind === 'missing' ? 404 : 403),
      effect: async (ctx) => {
        const card = await call('GET', `/cards/${ctx.board!.cards[0]}`, { token: ctx.world.owner.token });
        expectStatus(card, 200);
        expect(card.body.label_ids.includes(ctx.world.A.label)).toBe(on);
      },
    }),
  );

const gone = (path: (ctx: CaseContext) => string, status: number) => async (ctx: CaseContext) => {
  const reply = await call('GET', path(ctx), { token: ctx.world.owner.token });
  expectStatus(reply, status);
};

const title = { title: 'Renamed by the matrix' };

/** The addressed card as A's owner reads it (effects run on A only). */
async function addressedCard(ctx: CaseContext) {
  const card = await call('GET', `/cards/${ctx.addressed}`, { token: ctx.world.owner.token });
  expectStatus(card, 200);
  return card.body;
}

/** A card of the path's board's owner in its second column, which no other row uses: archived or not. */
async function cardOfItsOwn(ctx: CaseContext, archived: boolean): Promise<string> {
  const board = ctx.board!;
  const made = await call('POST', `/columns/${board.columns[1]}/cards`, {
    token: board.owner.token,
    body: { title: 'Matrix card' },
  });
  expectStatus(made, 201);
  if (archived) expectStatus(await call('POST', `/cards/${made.body.id}/archive`, { token: board.owner.token }), 200);
  return made.body.id;
}

/**
 * The assignee rows' user ids: a member of A (the path's card then made unassigned or assigned by
 * A's owner, so that both authorized callers change something), B's owner (a member of B only),
 * nobody, and a malformed id (400 before the card is looked up). A non-member is 409 `not_a_member`,
 * after the card's 404 and the caller's 403.
 */
const assigneeVariants = (assigned: boolean): Variant[] => [
  {
    name: 'user_id = a member of A',
    userId: (ctx) => ctx.world.member.id,
    target: async (ctx) => {
      const card = ctx.board!.cards[0];
      if (ctx.board === ctx.world.A) {
        const method = assigned ? 'DELETE' : 'PUT';
        const set = await call(method, `/cards/${card}/assignees/${ctx.world.member.id}`, { token: ctx.world.owner.token });
        expectStatus(set, 200);
      }
      return card;
    },
    effect: async (ctx, reply) => {
      expect(reply.body.assignee_ids.includes(ctx.world.member.id)).toBe(assigned);
      expect((await addressedCard(ctx)).assignee_ids.includes(ctx.world.member.id)).toBe(assigned);
    },
  },
  { name: 'user_id = a member of B only', userId: (ctx) => ctx.world.other.id, outcome: () => 409, code: 'not_a_member' },
  { name: 'user_id = an unknown user', userId: () => randomUUID(), outcome: () => 409, code: 'not_a_member' },
  { name: 'user_id malformed', userId: () => 'not-a-uuid', beforeAccess: 400 },
];

/** The comment of A's member on A (B has no member: there, its owner's comment). */
const membersComment = (ctx: CaseContext) => (ctx.board === ctx.world.A ? ctx.world.memberComment : ctx.board!.comment!);

/** A comment written for the case on the path board's first card, by A's `author` (on B: B's owner). */
const commentOfItsOwn = (author: 'owner' | 'member') => (ctx: CaseContext) =>
  newComment(ctx.board === ctx.world.A ? ctx.world[author] : ctx.board!.owner, ctx.board!.cards[0]);

/** Every non-public row must have a profile: a new row without one fails this suite. */
const PROFILES: Record<string, Profile> = {
  'boards.list': {},
  'boards.create': { body: () => ({ title: 'Created by the matrix' }) },
  'boards.get': {},
  'boards.events': {},
  'boards.rename': { body: () => title },
  'boards.delete': {
    fresh: { candidate: false },
    // The former owner is a non-member of a deleted board: 403.
    variants: [{ name: 'the board', effect: gone((ctx) => `/boards/${ctx.board!.id}`, 403) }],
  },
  'columns.create': { body: () => ({ title: 'Column by the matrix' }) },
  'boards.batch': { variants: batchVariants },
  'cards.create': { body: () => ({ title: 'Card by the matrix', description: 'x' }) },
  'cards.get': {},
  'cards.update': { body: () => ({ title: 'Updated by the matrix', description: 'y' }) },
  'cards.delete': {
    fresh: { candidate: false },
    variants: [{ name: 'the card', effect: gone((ctx) => `/cards/${ctx.board!.cards[0]}`, 404) }],
  },
  'cards.move': { variants: cardMoveVariants },
  'columns.get': {},
  'columns.rename': { body: () => title },
  'columns.delete': {
    fresh: { candidate: false },
    variants: [{ name: 'the column', effect: gone((ctx) => `/columns/${ctx.board!.columns[0]}`, 404) }],
  },
  'columns.move': { variants: columnMoveVariants },
  'members.add': {
    fresh: { candidate: false },
    body: (w) => ({ email: w.candidate.email }),
    variants: [
      {
        name: 'a registered non-member',
        effect: async (ctx) =>
          expectStatus(await call('GET', `/boards/${ctx.board!.id}`, { token: ctx.world.candidate.token }), 200),
      },
    ],
  },
  'members.list': {},
  // Any member manages a board's labels.
  'labels.create': { body: () => ({ name: `Matrix ${randomUUID()}`, color: '#ABCDEF' }) },
  'labels.list': {},
  'labels.update': { body: () => ({ name: 'Renamed by the matrix', color: '#123456' }) },
  'labels.delete': {
    fresh: { candidate: false },
    variants: [
      {
        name: 'the label',
        effect: async (ctx) => {
          expectStatus(await call('PATCH', `/labels/${ctx.board!.label}`, { token: ctx.world.owner.token, body: {} }), 404);
          const list = await call('GET', `/boards/${ctx.board!.id}/labels`, { token: ctx.world.owner.token });
          expectStatus(list, 200);
          expect(list.body).toEqual([]);
        },
      },
    ],
  },
  'cards.labels.attach': { variants: cardLabelVariants(true) },
  'cards.labels.detach': { variants: cardLabelVariants(false) },
  // Owners only, on the board's own webhooks; another board's webhook id is 403, an unknown one 404.
  // It selects only board.deleted, which board A never sends: no delivery touches A's partition.
  'webhooks.create': { body: () => ({ url: MATRIX_WEBHOOK_URL, events: ['board.deleted'], description: 'By the matrix' }) },
  'webhooks.list': {},
  'webhooks.get': {},
  'webhooks.update': { body: () => ({ description: 'Changed by the matrix', active: false }) },
  'webhooks.delete': {
    fresh: { candidate: false },
    variants: [{ name: 'the webhook', effect: gone((ctx) => `/webhooks/${ctx.board!.webhook}`, 404) }],
  },
  'webhooks.rotate-secret': {},
  'webhooks.ping': {},
  'webhooks.deliveries': {},
  // Any signed-in user may open a socket; what it may watch is the socket's own check.
  'realtime.tickets': {},
  // The account rows act on the caller's own account only: a stranger is as entitled as anybody.
  'auth.me': {},
  'auth.verify-email.request': {},
  'auth.verify-email': {
    body: async (_w, ctx) => ({
      code: await codeSentBy(ctx.user.email, () => call('POST', '/auth/verify-email/request', { token: ctx.user.token })),
    }),
  },
  // The same password again: a success that leaves every caller able to sign in.
  'auth.password.change': {
    body: (_w, ctx) => ({ current_password: ctx.user.password, new_password: ctx.user.password }),
    variants: [
      {
        name: 'the same password again',
        // A password change deletes the account's personal tokens, and a session from before it
        // may mint none: the caller signs in again, and the owner's tokens are made again.
        effect: async (ctx) => {
          Object.assign(ctx.user, await signIn(ctx.user.email, ctx.user.password));
          if (ctx.user === ctx.world.owner) ctx.world.pats = await personalTokens(ctx.world.owner, ctx.world.C.id);
        },
      },
    ],
  },
  // A session token makes, lists and deletes its user's own personal tokens; a personal token none.
  'auth.tokens.create': { body: () => ({ name: 'Made by the matrix', scopes: ['boards:read'], expires_in_days: 1 }) },
  'auth.tokens.list': {},
  'auth.tokens.delete': {
    variants: [
      { name: "a token of the caller's", pathId: (ctx) => tokenIdOf(ctx.user) },
      // Another user's token is as unknown as one that never was.
      { name: "another user's token", pathId: (ctx) => tokenIdOf(ctx.world.other), outcome: () => 404 },
    ],
  },
  'auth.account.delete': {
    succeedsElsewhere: 'test/integration/accounts.test.ts',
    variants: [{ name: 'a wrong password', body: () => ({ password: 'not the password' }), outcome: () => 403 }],
  },
  // Cards' details, archive and comments.
  'boards.archive': {
    variants: [{ name: 'the board', effect: async (_ctx, reply) => expect(Array.isArray(reply.body)).toBe(true) }],
  },
  'cards.due.clear': {
    variants: [
      {
        name: 'a card with a due date',
        target: async (ctx) => {
          const card = ctx.board!.cards[0];
          const due = { due_at: '2030-01-01T00:00:00.000Z' };
          expectStatus(await call('PATCH', `/cards/${card}`, { token: ctx.board!.owner.token, body: due }), 200);
          return card;
        },
        effect: async (ctx, reply) => {
          expect(reply.body.due_at).toBeNull();
          expect((await addressedCard(ctx)).due_at).toBeNull();
        },
      },
    ],
  },
  'cards.assignees.add': { variants: assigneeVariants(true) },
  'cards.assignees.remove': { variants: assigneeVariants(false) },
  'cards.archive': {
    variants: [
      {
        name: 'a card of its own',
        target: (ctx) => cardOfItsOwn(ctx, false),
        effect: async (ctx, reply) => {
          expect(reply.body.archived_at).not.toBeNull();
          const archive = await call('GET', `/boards/${ctx.board!.id}/archive`, { token: ctx.world.owner.token });
          expectStatus(archive, 200);
          expect(archive.body.map((card: { id: string }) => card.id)).toContain(ctx.addressed);
        },
      },
    ],
  },
  'cards.restore': {
    variants: [
      {
        name: 'an archived card of its own',
        target: (ctx) => cardOfItsOwn(ctx, true),
        effect: async (ctx, reply) => {
          expect(reply.body.archived_at).toBeNull();
          expect((await addressedCard(ctx)).archived_at).toBeNull();
        },
      },
      // Restoring a card that is not archived: the card as it is, nothing written.
      { name: 'a card not archived', unchanged: true, effect: async (_ctx, reply) => expect(reply.body.archived_at).toBeNull() },
    ],
  },
  'comments.create': {
    body: () => ({ body: 'Comment by the matrix' }),
    variants: [{ name: 'a comment', effect: async (ctx, reply) => expect(reply.body.author_id).toBe(ctx.user.id) }],
  },
  'comments.list': {},
  // Its author only: any other member, an owner too, is 403 (after the comment's 404 and the caller's 403).
  'comments.update': {
    body: () => ({ body: 'Edited by the matrix' }),
    variants: (['owner', 'member'] as const).map(
      (author): Variant => ({
        name: `the ${author}'s comment`,
        target: author === 'owner' ? undefined : membersComment,
        outcome: (caller) => (caller === author ? 200 : 403),
        code: 'forbidden',
        effect: async (ctx, reply) => {
          expect(reply.body).toMatchObject({ id: ctx.addressed, author_id: ctx.user.id, body: 'Edited by the matrix' });
          expect(reply.body.edited_at).not.toBeNull();
        },
      }),
    ),
  },
  // Its author or an owner of the board; a comment of its own per case, as each success deletes it.
  'comments.delete': {
    variants: (['owner', 'member'] as const).map(
      (author): Variant => ({
        name: `a comment of the ${author}`,
        target: commentOfItsOwn(author),
        outcome: (caller) => (caller === 'owner' || caller === author ? 204 : 403),
        code: 'forbidden',
        effect: async (ctx) => {
          const edit = await call('PATCH', `/comments/${ctx.addressed}`, { token: ctx.user.token, body: { body: 'x' } });
          expectStatus(edit, 404);
        },
      }),
    ),
  },
  'members.update': {
    // Self-promotion: a no-op for the owner, an escalation attempt for everybody else.
    body: () => ({ role: 'owner' }),
    variants: [{ name: 'user_id = the caller', userId: (ctx) => ctx.user.id }],
  },
  'members.remove': {
    fresh: { candidate: true },
    variants: [
      {
        name: 'user_id = another member',
        userId: (ctx) => ctx.world.candidate.id,
        // Spec of the members issue: an owner removes anyone, a member only themselves.
        outcome: (caller) => (caller === 'owner' ? 204 : 403),
        effect: async (ctx) =>
          expectStatus(await call('GET', `/boards/${ctx.board!.id}`, { token: ctx.world.candidate.token }), 403),
      },
      {
        name: 'user_id = the caller',
        userId: (ctx) => ctx.user.id,
        // The only owner cannot leave (409); a member may (204).
        outcome: (caller) => (caller === 'owner' ? 409 : 204),
        effect: async (ctx) => expectStatus(await call('GET', `/boards/${ctx.board!.id}`, { token: ctx.user.token }), 403),
      },
    ],
  },
};

// ---- the generated cases ------------------------------------------------------------------------

interface Case {
  name: string;
  caller: Caller;
  kind?: PathKind;
  variant?: Variant;
  expected: number;
  /** A personal token refused for its scope: the scope the answer's WWW-Authenticate names (null: none). */
  insufficient?: string | null;
}

const protectedRows = (Object.entries(routes) as [string, RouteRow][]).filter(([, row]) => row.access.scope !== 'public');

/**
 * A personal token's refusal for its scope, before anything else: undefined where its scope
 * reaches the row; else the scope to name in WWW-Authenticate (null: no token may call the row,
 * or a token limited to boards may not create one).
 */
function insufficientScope(row: RouteRow, caller: PersonalCaller): string | null | undefined {
  const needed = personalTokenScopeOf(row);
  if (!needed || (caller === 'pat-elsewhere' && createsBoard(row))) return null;
  if (caller !== 'pat-elsewhere' && PAT_SCOPE[caller] !== needed) return needed;
  return undefined;
}

/** The answer the row's access rule (then the spec's domain rule) prescribes. */
function expectedStatus(row: RouteRow, caller: Caller, kind: PathKind | undefined, variant: Variant | undefined): number {
  if (caller === 'none' || caller === 'bad') return 401;
  if (isPersonal(caller)) {
    if (insufficientScope(row, caller) !== undefined) return 403;
    // With the scope, a token acts as its user (the owner); limited to C, as a stranger to A and B.
    return expectedStatus(row, caller === 'pat-elsewhere' ? 'stranger' : 'owner', kind, variant);
  }
  if (variant?.beforeAccess) return variant.beforeAccess;
  const access = row.access;
  if (access.scope === 'public') throw new Error('public rows are not in the matrix');
  if (access.scope === 'board') {
    const memberOfPathBoard = kind === 'A' && (caller === 'owner' || caller === 'member');
    if (access.via === 'board') {
      // A non-member gets 403 on a board id, also on one that does not exist.
      if (!memberOfPathBoard) return 403;
    } else {
      // A column, card or label id is looked up first: unknown is 404, anybody else's is 403.
      if (kind === 'missing') return 404;
      if (!memberOfPathBoard) return 403;
    }
    if (access.role === 'owner' && caller !== 'owner') return 403;
  }
  return variant?.outcome?.(caller as Authorized) ?? row.success.status;
}

function casesOf(row: RouteRow, profile: Profile): Case[] {
  const kinds: (PathKind | undefined)[] = row.access.scope === 'board' ? PATH_KINDS : [undefined];
  const variants: (Variant | undefined)[] = profile.variants ?? [undefined];
  return CALLERS.flatMap((caller) =>
    kinds.flatMap((kind) =>
      variants.map((variant) => {
        const expected = expectedStatus(row, caller, kind, variant);
        const insufficient = isPersonal(caller) ? insufficientScope(row, caller) : undefined;
        const where = [kind && `path id from ${kind}`, variant?.name].filter(Boolean).join(', ');
        return { name: `${caller}${where ? `, ${where}` : ''} → ${expected}`, caller, kind, variant, expected, insufficient };
      }),
    ),
  );
}

let world: World;

beforeAll(async () => {
  const env = localEnv();
  tableName = env.TABLE_NAME!;
  documentClient = localDocumentClient(env);
  const [owner, member, stranger, other, candidate] = await Promise.all([newUser(), newUser(), newUser(), newUser(), newUser()]);
  const [A, B, C] = await Promise.all([buildBoard(owner, [member]), buildBoard(other), buildBoard(owner, [member])]);
  const [ownerComment, memberComment, otherComment] = await Promise.all([
    newComment(owner, A.cards[0]),
    newComment(member, A.cards[0]),
    newComment(other, B.cards[0]),
  ]);
  A.comment = ownerComment;
  B.comment = otherComment;
  const pats = await personalTokens(owner, C.id);
  world = { owner, member, stranger, other, candidate, badToken: tamperSignature(owner.token), pats, A, B, C, memberComment };
});

afterAll(() => documentClient?.destroy());

/** Status of every answer, per row, for the reachability check at the end of each row. */
const answers = new Map<string, { caller: Caller; kind?: PathKind; status: number }[]>();

it('every token-protected row of the route table has a matrix profile (deny by default)', () => {
  expect(protectedRows.length).toBeGreaterThan(0);
  expect(protectedRows.map(([id]) => id).filter((id) => !PROFILES[id])).toEqual([]);
  expect(Object.keys(PROFILES).filter((id) => !protectedRows.some(([rowId]) => rowId === id))).toEqual([]);
});

describe.each(protectedRows.filter(([id]) => PROFILES[id]).map(([id, row]) => ({ id, row, profile: PROFILES[id]! })))(
  '$id: $row.method $row.path',
  ({ id, row, profile }) => {
    const documented = [row.success.status, ...errorStatuses(row)];
    const cases = casesOf(row, profile);
    /** Fresh copies of A or B, one per case that needs one, built together before the row's cases. */
    const fresh = new Map<string, BoardWorld>();

    beforeAll(async () => {
      if (!profile.fresh) return;
      const extra = profile.fresh.candidate ? [world.candidate] : [];
      // A personal token refused (for its scope, or on a board it does not reach) changes nothing: it
      // needs no board of its own.
      const needing = cases.filter((c) => (c.kind === 'A' || c.kind === 'B') && (!isPersonal(c.caller) || c.expected < 400));
      const boards = await mapLimit(needing, 8, (c) =>
        c.kind === 'A' ? buildBoard(world.owner, [world.member, ...extra]) : buildBoard(world.other, extra),
      );
      for (const [i, c] of needing.entries()) fresh.set(c.name, boards[i]!);
    });

    it.each(cases)('$name', async ({ name, caller, kind, variant, expected, insufficient }) => {
      const user = caller === 'member' ? world.member : caller === 'stranger' ? world.stranger : world.owner;
      const board = kind === 'missing' || kind === undefined ? undefined : (fresh.get(name) ?? world[kind]);
      const ctx: CaseContext = { world, board, caller, user };

      const access = row.access;
      const addressed =
        access.scope !== 'board'
          ? undefined
          : !board
            ? randomUUID()
            : variant?.target && caller !== 'none' && caller !== 'bad'
              ? await variant.target(ctx)
              : access.via === 'board'
                ? board.id
                : access.via === 'column'
                  ? board.columns[0]
                  : access.via === 'label'
                    ? board.label
                    : access.via === 'webhook'
                      ? board.webhook
                      : access.via === 'comment'
                        ? board.comment!
                        : board.cards[0];
      ctx.addressed = addressed;
      const pathId = addressed ?? (await variant?.pathId?.(ctx)) ?? '';
      const path = row.path
        .replace('{id}', pathId)
        .replace('{user_id}', (variant?.userId ?? ((c: CaseContext) => c.world.member.id))(ctx))
        .replace('{label_id}', (variant?.labelId ?? ((c: CaseContext) => c.world.A.label))(ctx));
      const body = (await variant?.body?.(world, ctx)) ?? (await profile.body?.(world, ctx));
      const token =
        caller === 'none' ? undefined : caller === 'bad' ? world.badToken : isPersonal(caller) ? world.pats[caller] : user.token;

      const isWrite = row.method !== 'GET';
      const before = isWrite && board ? await partition(`BOARD#${board.id}`) : undefined;
      const reply = await call(row.method, path, { token, body });
      answers.set(id, [...(answers.get(id) ?? []), { caller, kind, status: reply.status }]);

      expect(documented).toContain(reply.status);
      expectStatus(reply, expected);
      if (reply.status >= 400) {
        expectProblem(reply, reply.status);
        if (reply.status === 401) {
          expect(reply.headers.get('www-authenticate')).toBe(caller === 'none' ? 'Bearer' : 'Bearer error="invalid_token"');
        }
        if (insufficient !== undefined) {
          expect((reply.body as { code: string }).code).toBe('insufficient_scope');
          expect(reply.headers.get('www-authenticate')).toBe(
            insufficient ? `Bearer error="insufficient_scope", scope="${insufficient}"` : 'Bearer error="insufficient_scope"',
          );
        } else if (reply.status === 403) {
          expect((reply.body as { code: string }).code).not.toBe('insufficient_scope');
        }
        // The row's own refusal of an authorized caller names its reason.
        if (
          insufficient === undefined &&
          variant?.code &&
          kind === 'A' &&
          (caller === 'owner' || caller === 'member') &&
          !variant.beforeAccess
        ) {
          expect(reply.body.code).toBe(variant.code);
        }
        // A rejected write changed nothing on the addressed board.
        if (before) expect(await partition(`BOARD#${board!.id}`)).toEqual(before);
      } else {
        // Nor did a success that is documented to change nothing.
        if (before && variant?.unchanged) expect(await partition(`BOARD#${board!.id}`)).toEqual(before);
        await variant?.effect?.(ctx, reply);
      }
    });

    it('reaches its success status only for an authenticated caller entitled to the addressed board', () => {
      const seen = answers.get(id) ?? [];
      expect(seen).toHaveLength(cases.length);
      const successes = seen.filter((answer) => answer.status === row.success.status);
      // Reachable at all (so the denials above are not a broken route answering 4xx to everybody) ...
      if (!profile.succeedsElsewhere) expect(successes.length).toBeGreaterThan(0);
      // ... and only after authentication, and for a board route only on the caller's own board.
      for (const success of successes) {
        expect(['owner', 'member', ...PERSONAL_CALLERS, ...(row.access.scope === 'user' ? ['stranger'] : [])]).toContain(
          success.caller,
        );
        if (row.access.scope === 'board') expect(success.kind).toBe('A');
      }
      const unauthenticated = seen.filter((answer) => answer.caller === 'none' || answer.caller === 'bad');
      expect(unauthenticated.length).toBeGreaterThan(0);
      expect(new Set(unauthenticated.map((answer) => answer.status))).toEqual(new Set([401]));
    });
  },
);
