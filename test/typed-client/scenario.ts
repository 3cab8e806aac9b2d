/**
 * The whole spec through a client generated from the served OpenAPI document, as a
 * consumer would use it: openapi-typescript's types (`./schema`, generated next to a copy of this
 * file by test/integration/typed-client.test.ts) and openapi-fetch. The test compiles the copy
 * with `tsc --strict --noUncheckedIndexedAccess`, so a document that breaks a generated client
 * (a field renamed, dropped or retyped, a path or status gone) fails there; then runs it with
 * `node --import tsx scenario.ts <baseUrl>`, which throws on any unexpected answer.
 *
 * Not compiled by the project's tsconfig (`./schema` exists only in the generated copy).
 */
import { randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

type Schemas = components['schemas'];
type Problem = Schemas['Problem'];

const baseUrl = process.argv[2];
if (!baseUrl) throw new Error('usage: scenario.ts <baseUrl>');

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`scenario: ${message}`);
}

/** The body of a successful answer with the expected status, or a thrown error naming the step. */
function ok<T>(step: string, status: number, result: { data?: T; error?: unknown; response: Response }): T {
  check(
    result.response.status === status && result.data !== undefined,
    `${step}: expected ${status}, got ${result.response.status} ${JSON.stringify(result.error)}`,
  );
  return result.data;
}

/**
 * An error answer's body: a problem document; not API Gateway's own message (429, 413), nor the
 * rate limiter's 429 problem, which every counted operation may answer too.
 */
function problemOf(step: string, error: Problem | Schemas['RateLimitProblem'] | Schemas['GatewayMessage'] | undefined): Problem {
  check(
    error !== undefined && 'code' in error && error.code !== 'rate_limited',
    `${step}: expected a problem, got ${JSON.stringify(error)}`,
  );
  return error as Problem;
}

function noContent(step: string, result: { error?: unknown; response: Response }): void {
  check(result.response.status === 204, `${step}: expected 204, got ${result.response.status} ${JSON.stringify(result.error)}`);
}

const api = createClient<paths>({ baseUrl });
const steps: string[] = [];
const step = (name: string) => steps.push(name);

// --- users -----------------------------------------------------------------------------------------

const ada = { email: `ada-${randomUUID()}@example.test`, password: `pw-${randomUUID()}`, display_name: 'Ada' };
const grace = { email: `grace-${randomUUID()}@example.test`, password: `pw-${randomUUID()}`, display_name: 'Grace' };

const registered: Schemas['TokenResponse'] = ok('register', 201, await api.POST('/auth/register', { body: ada }));
check(registered.token_type === 'Bearer' && registered.expires_in > 0, 'register: a bearer token');
const graceTokens = ok('register second user', 201, await api.POST('/auth/register', { body: grace }));
step('register');

// Only a verified address can be added to a board: Grace proves hers with the code from her mail
// (the local stack's outbox, which is no route of the API and so not in the document).
const asGrace = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${graceTokens.token}` } });
const unverified: Schemas['Account'] = ok('me', 200, await asGrace.GET('/auth/me'));
check(unverified.email === grace.email && unverified.email_verified === false, 'me: a new account is unverified');
check((await asGrace.POST('/auth/verify-email/request')).response.status === 202, 'verify-email/request: 202');
const mail = (await (await fetch(`${baseUrl}/local/outbox?email=${encodeURIComponent(grace.email)}`)).json()) as {
  code: string;
}[];
noContent('verify-email', await asGrace.POST('/auth/verify-email', { body: { code: mail[0]!.code } }));
check(ok('me again', 200, await asGrace.GET('/auth/me')).email_verified === true, 'me: verified after the code');
step('verify email');

const login = ok('login', 200, await api.POST('/auth/login', { body: { email: ada.email, password: ada.password } }));
const token: string = login.token;
step('login');

const health: Schemas['Health'] = ok('health', 200, await api.GET('/health'));
check(typeof health === 'object', 'health: an object');

/** Every call from here on is Ada's. */
const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });

// --- boards and columns ----------------------------------------------------------------------------

const board: Schemas['Board'] = ok('create board', 201, await client.POST('/boards', { body: { title: 'Typed board' } }));
const boardPath = { params: { path: { id: board.id } } };
step('create board');

const boards: Schemas['Board'][] = ok('list boards', 200, await client.GET('/boards'));
check(
  boards.some((b) => b.id === board.id),
  'list boards: the new board is listed',
);
step('list boards');

const renamed = ok('rename board', 200, await client.PATCH('/boards/{id}', { ...boardPath, body: { title: 'Renamed board' } }));
check(renamed.title === 'Renamed board', 'rename board: the new title');
step('rename board');

const todo: Schemas['Column'] = ok(
  'add column',
  201,
  await client.POST('/boards/{id}/columns', { ...boardPath, body: { title: 'To do' } }),
);
const done = ok('add column', 201, await client.POST('/boards/{id}/columns', { ...boardPath, body: { title: 'Done' } }));
const scratch = ok('add column', 201, await client.POST('/boards/{id}/columns', { ...boardPath, body: { title: 'Scratch' } }));
step('add columns');

// --- cards -------------------------------------------------------------------------------------------

const inTodo = { params: { path: { id: todo.id } } };
const first: Schemas['Card'] = ok(
  'create card with a description',
  201,
  await client.POST('/columns/{id}/cards', { ...inTodo, body: { title: 'First', description: 'With a description' } }),
);
const second = ok('create card', 201, await client.POST('/columns/{id}/cards', { ...inTodo, body: { title: 'Second' } }));
// A retry after a lost answer, made safe by an Idempotency-Key: one card, the first answer again.
const once = { params: { path: { id: todo.id }, header: { 'Idempotency-Key': randomUUID() } } };
const third = ok('create card', 201, await client.POST('/columns/{id}/cards', { ...once, body: { title: 'Third' } }));
const retried = await client.POST('/columns/{id}/cards', { ...once, body: { title: 'Third' } });
check(
  ok('retry create card', 201, retried).id === third.id && retried.response.headers.get('idempotent-replayed') === 'true',
  'a retry with the same Idempotency-Key answers the first answer',
);
const noDescription: string | null = second.description;
check(noDescription === null && first.description === 'With a description', 'create card: description or null');
const labelIds: string[] = first.label_ids;
check(labelIds.length === 0, 'create card: no labels yet');
step('create cards');

const cardPath = (id: string) => ({ params: { path: { id } } });
const read: Schemas['Card'] = ok('read card', 200, await client.GET('/cards/{id}', cardPath(first.id)));
check(read.title === 'First' && read.column_id === todo.id, 'read card');

// Null-safe PATCH: null or omitted leaves a field as it is.
const patched = ok(
  'update card',
  200,
  await client.PATCH('/cards/{id}', { ...cardPath(first.id), body: { title: 'First, renamed', description: null } }),
);
check(patched.title === 'First, renamed' && patched.description === 'With a description', 'update card: null leaves the field');
const described = ok(
  'update card',
  200,
  await client.PATCH('/cards/{id}', { ...cardPath(second.id), body: { description: 'Now' } }),
);
check(described.description === 'Now' && described.title === 'Second', 'update card: omitted leaves the field');
step('read and update cards');

const moved: Schemas['Card'] = ok(
  'move card to an empty column',
  200,
  await client.PATCH('/cards/{id}/move', { ...cardPath(third.id), body: { target_column_id: done.id } }),
);
check(moved.column_id === done.id, 'move card: to the other column');
// before_id: the card that will precede the moved one; after_id: the card that will follow it.
ok(
  'move card ahead of another',
  200,
  await client.PATCH('/cards/{id}/move', { ...cardPath(first.id), body: { target_column_id: done.id, after_id: third.id } }),
);
const between = ok(
  'move card between two',
  200,
  await client.PATCH('/cards/{id}/move', {
    ...cardPath(second.id),
    body: { target_column_id: done.id, before_id: first.id, after_id: third.id },
  }),
);
check(between.position > 0, 'move card between two: a position');
step('move cards');

// --- a batch: several changes at once, all or none --------------------------------------------------

const batched = ok(
  'batch',
  200,
  await client.POST('/boards/{id}/batch', {
    ...boardPath,
    body: {
      operations: [
        { op: 'card.create', column_id: scratch.id, title: 'Batched', ref: 'note' },
        { op: 'card.update', card_ref: 'note', description: 'Made and edited in one request' },
        { op: 'card.move', card_ref: 'note', target_column_id: scratch.id, before_id: null },
      ],
    },
  }),
);
const [batchMade, batchEdited] = batched.results;
check(
  batchMade !== null && batchMade !== undefined && 'column_id' in batchMade && batchMade.column_id === scratch.id,
  'batch: the created card first',
);
check(
  batchEdited !== null &&
    batchEdited !== undefined &&
    'description' in batchEdited &&
    batchEdited.description === 'Made and edited in one request',
  'batch: then edited',
);
const batchRefused = await client.POST('/boards/{id}/batch', {
  ...boardPath,
  body: { operations: [{ op: 'card.delete', card_id: randomUUID() }] },
});
const batchRefusal = problemOf('batch with a missing card', batchRefused.error);
check(batchRefused.response.status === 404 && batchRefusal.operation === 0, 'batch: the failing operation named');
step('batch');

// --- columns -----------------------------------------------------------------------------------------

const columnPath = (id: string) => ({ params: { path: { id } } });
const column: Schemas['Column'] = ok('read column', 200, await client.GET('/columns/{id}', columnPath(scratch.id)));
check(column.board_id === board.id, 'read column');
ok('rename column', 200, await client.PATCH('/columns/{id}', { ...columnPath(scratch.id), body: { title: 'Scratch pad' } }));
const movedColumn = ok(
  'move column',
  200,
  await client.PATCH('/columns/{id}/move', { ...columnPath(scratch.id), body: { after_id: todo.id } }),
);
check(movedColumn.position < todo.position, 'move column: first');
ok('move column', 200, await client.PATCH('/columns/{id}/move', { ...columnPath(scratch.id), body: { before_id: done.id } }));
noContent('delete column', await client.DELETE('/columns/{id}', columnPath(scratch.id)));
step('read, rename, move and delete a column');

// --- members -----------------------------------------------------------------------------------------

const member: Schemas['Member'] = ok(
  'add member',
  201,
  await client.POST('/boards/{id}/members', { ...boardPath, body: { email: grace.email } }),
);
check(member.role === 'member' && member.display_name === 'Grace', 'add member: a member by default');
const members: Schemas['Member'][] = ok('list members', 200, await client.GET('/boards/{id}/members', boardPath));
check(members.length === 2, 'list members: owner and member');
const memberPath = { params: { path: { id: board.id, user_id: member.user_id } } };
const promoted = ok(
  'update member',
  200,
  await client.PATCH('/boards/{id}/members/{user_id}', { ...memberPath, body: { role: 'owner' } }),
);
const role: 'owner' | 'member' = promoted.role;
check(role === 'owner', 'update member: owner');
noContent('remove member', await client.DELETE('/boards/{id}/members/{user_id}', memberPath));
step('members');

// --- labels ------------------------------------------------------------------------------------------

const label: Schemas['Label'] = ok(
  'create label',
  201,
  await client.POST('/boards/{id}/labels', { ...boardPath, body: { name: 'Bug', color: '#d73a4a' } }),
);
const labels: Schemas['Label'][] = ok('list labels', 200, await client.GET('/boards/{id}/labels', boardPath));
check(labels.length === 1 && labels[0]?.color === '#d73a4a', 'list labels');
const labelPath = { params: { path: { id: label.id } } };
const recolored = ok(
  'update label',
  200,
  await client.PATCH('/labels/{id}', { ...labelPath, body: { name: null, color: '#0e8a16' } }),
);
check(recolored.name === 'Bug' && recolored.color === '#0e8a16', 'update label: null leaves the name');
const onCard = { params: { path: { id: first.id, label_id: label.id } } };
const labelled: Schemas['Card'] = ok('attach label', 200, await client.PUT('/cards/{id}/labels/{label_id}', onCard));
check(labelled.label_ids[0] === label.id, 'attach label');

// The tree: every field a consumer reads, typed from the document.
const tree: Schemas['BoardTree'] = ok('read tree', 200, await client.GET('/boards/{id}', boardPath));
const treeLabels: Schemas['Label'][] = tree.labels;
const columnsOfTree: Schemas['ColumnWithCards'][] = tree.columns;
const firstCardLabels: string[] | undefined = tree.columns[1]?.cards[0]?.label_ids;
const titles = columnsOfTree.map((c) => `${c.title}: ${c.cards.map((card: Schemas['Card']) => card.title).join(', ')}`);
check(
  JSON.stringify(titles) === JSON.stringify(['To do: ', 'Done: First, renamed, Second, Third']),
  `read tree: ${JSON.stringify(titles)}`,
);
check(treeLabels.length === 1 && firstCardLabels?.[0] === label.id, 'read tree: the label on the first card');
step('read tree');

// --- conditional requests: a cheap re-read, and an edit that cannot overwrite another's ------------

const treeRead = await client.GET('/boards/{id}', boardPath);
const treeTag = treeRead.response.headers.get('etag');
check(treeRead.response.status === 200 && treeTag !== null, 'read tree: an ETag');
const tagged = (id: string, header: { 'If-Match'?: string; 'If-None-Match'?: string }) => ({ params: { path: { id }, header } });
const unchanged = await client.GET('/boards/{id}', tagged(board.id, { 'If-None-Match': treeTag }));
check(
  unchanged.response.status === 304 && unchanged.response.headers.get('etag') === treeTag,
  `reread tree: expected 304, got ${unchanged.response.status}`,
);
const cardRead = await client.GET('/cards/{id}', cardPath(first.id));
const cardTag = cardRead.response.headers.get('etag');
check(cardRead.response.status === 200 && cardTag !== null, 'read card: an ETag');
const sameCard = await client.GET('/cards/{id}', tagged(first.id, { 'If-None-Match': cardTag }));
check(sameCard.response.status === 304, `reread card: expected 304, got ${sameCard.response.status}`);
const edited = await client.PATCH('/cards/{id}', {
  ...tagged(first.id, { 'If-Match': cardTag }),
  body: { description: 'Edited' },
});
const editedCard: Schemas['Card'] = ok('edit with If-Match', 200, edited);
const editedTag = edited.response.headers.get('etag');
check(editedCard.description === 'Edited' && editedTag !== null && editedTag !== cardTag, 'edit with If-Match: a new ETag');
// Another edit on the tag read before the first: refused, with the tag to retry on.
const stale = await client.PATCH('/cards/{id}', { ...tagged(first.id, { 'If-Match': cardTag }), body: { description: 'Lost' } });
check(stale.response.status === 412, `stale If-Match: expected 412, got ${stale.response.status}`);
check(problemOf('stale If-Match', stale.error).code === 'precondition_failed', 'stale If-Match: precondition_failed');
check(stale.response.headers.get('etag') === editedTag, 'stale If-Match: the current ETag');
const retriedEdit = await client.PATCH('/cards/{id}', {
  ...tagged(first.id, { 'If-Match': editedTag }),
  body: { description: 'Kept' },
});
check(ok('retry with the current tag', 200, retriedEdit).description === 'Kept', 'retry with the current tag');
const newerTree = await client.GET('/boards/{id}', tagged(board.id, { 'If-None-Match': treeTag }));
check(newerTree.response.status === 200, `reread tree after edits: expected 200, got ${newerTree.response.status}`);
step('conditional requests');

const unlabelled = ok('detach label', 200, await client.DELETE('/cards/{id}/labels/{label_id}', onCard));
check(unlabelled.label_ids.length === 0, 'detach label');
noContent('delete label', await client.DELETE('/labels/{id}', labelPath));
step('labels');

// --- the board's events: its history, and what a client that was away reads to catch up -----------

const eventsOf = (query: { after?: number; limit?: number }) => ({ params: { path: { id: board.id }, query } });
const history = ok('board events', 200, await client.GET('/boards/{id}/events', eventsOf({ after: 0, limit: 1000 })));
const seqs: number[] = history.events.map((event) => event.seq);
const latest: number = history.latest_seq;
check(
  latest >= tree.seq && seqs.length === latest && seqs.every((seq, index) => seq === index + 1),
  `board events: seq 1..${latest} with no gap, got ${JSON.stringify(seqs)}`,
);
const kinds: string[] = history.events.map((event) => event.type);
check(kinds[0] === 'board.updated' && kinds.at(-1) === 'label.deleted', `board events: in order, ${JSON.stringify(kinds)}`);
check(
  history.events.every((event) => event.board_id === board.id && event.actor_id === board.owner_id),
  'board events: every one of this board, by Ada',
);
// Page by page, as a client catching up reads it.
const paged: string[] = [];
for (let after = 0; after < latest; ) {
  const page = ok('board events page', 200, await client.GET('/boards/{id}/events', eventsOf({ after, limit: 2 })));
  check(page.events.length > 0 && page.events.length <= 2, `board events page after ${after}: ${page.events.length} events`);
  paged.push(...page.events.map((event) => event.event_id));
  after = page.events.at(-1)!.seq;
}
check(JSON.stringify(paged) === JSON.stringify(history.events.map((event) => event.event_id)), 'board events: the pages add up');
const none = ok('board events, none after', 200, await client.GET('/boards/{id}/events', eventsOf({ after: latest })));
check(none.events.length === 0 && none.latest_seq === latest, 'board events: nothing after the latest');
const badLimit = await client.GET('/boards/{id}/events', eventsOf({ limit: 0 }));
check(
  badLimit.response.status === 400 && problemOf('board events, limit 0', badLimit.error).code === 'bad_request',
  'board events: limit 0 is a 400',
);
step('board events');

// --- card details: a due date, assignees, comments, the archive, a filtered tree ------------------

const adaId: string = board.owner_id;
const due = ok(
  'set a due date',
  200,
  await client.PATCH('/cards/{id}', { ...cardPath(second.id), body: { due_at: '2026-12-01T17:00:00Z' } }),
);
const dueAt: string | null = due.due_at;
check(dueAt === '2026-12-01T17:00:00.000Z', `set a due date: stored with milliseconds, got ${dueAt}`);
const assigneePath = (id: string, userId: string) => ({ params: { path: { id, user_id: userId } } });
const assigned: Schemas['Card'] = ok(
  'assign',
  200,
  await client.PUT('/cards/{id}/assignees/{user_id}', assigneePath(second.id, adaId)),
);
const assignees: string[] = assigned.assignee_ids;
check(assignees.length === 1 && assignees[0] === adaId, 'assign: the member is on the card');
const again = ok('assign again', 200, await client.PUT('/cards/{id}/assignees/{user_id}', assigneePath(second.id, adaId)));
check(again.assignee_ids.length === 1, 'assign again: idempotent');
// Grace left the board above: only members can be assigned.
const outsider = await client.PUT('/cards/{id}/assignees/{user_id}', assigneePath(second.id, member.user_id));
check(
  outsider.response.status === 409 && problemOf('assign a non-member', outsider.error).code === 'not_a_member',
  `assign a non-member: expected 409 not_a_member, got ${outsider.response.status}`,
);

const filtered = await client.GET('/boards/{id}', {
  params: { path: { id: board.id }, query: { assignee_id: adaId, due_before: '2026-12-02T00:00:00Z', q: 'SECOND' } },
});
const filteredTree: Schemas['BoardTree'] = ok('filtered tree', 200, filtered);
const filteredTitles = filteredTree.columns.map((c) => `${c.title}: ${c.cards.map((card) => card.title).join(', ')}`);
check(
  JSON.stringify(filteredTitles) === JSON.stringify(['To do: ', 'Done: Second']),
  `filtered tree: every column, only the matching card, got ${JSON.stringify(filteredTitles)}`,
);
const filteredTag = filtered.response.headers.get('etag');
check(filteredTag !== null && filteredTag !== treeTag, 'filtered tree: an ETag of its own');
const badFilter = await client.GET('/boards/{id}', { params: { path: { id: board.id }, query: { due_before: 'tomorrow' } } });
check(badFilter.response.status === 400, `filtered tree, malformed due_before: expected 400, got ${badFilter.response.status}`);

const commentsOf = { params: { path: { id: second.id } } };
const comment = ok(
  'comment',
  201,
  await client.POST('/cards/{id}/comments', { ...commentsOf, body: { body: 'Blocked on the API review.' } }),
);
check(comment.card_id === second.id && comment.author_id === adaId && comment.edited_at === null, 'comment: by Ada');
const reply = ok(
  'comment again',
  201,
  await client.POST('/cards/{id}/comments', { ...commentsOf, body: { body: 'Unblocked.' } }),
);
const commentPath = (id: string) => ({ params: { path: { id } } });
const editedComment = ok(
  'edit comment',
  200,
  await client.PATCH('/comments/{id}', { ...commentPath(comment.id), body: { body: 'Blocked on the API review (Thursday).' } }),
);
const editedAt: string | null = editedComment.edited_at;
check(editedAt !== null && editedComment.body === 'Blocked on the API review (Thursday).', 'edit comment: edited_at set');
const firstPage = ok(
  'list comments',
  200,
  await client.GET('/cards/{id}/comments', { params: { path: { id: second.id }, query: { limit: 1 } } }),
);
check(
  firstPage.comments.length === 1 && firstPage.comments[0]?.id === comment.id && firstPage.next === comment.id,
  'list comments: oldest first',
);
const rest = ok(
  'list comments after',
  200,
  await client.GET('/cards/{id}/comments', {
    params: { path: { id: second.id }, query: { after: firstPage.next ?? undefined } },
  }),
);
check(rest.comments.length === 1 && rest.comments[0]?.id === reply.id && rest.next === null, 'list comments: the last page');
noContent('delete comment', await client.DELETE('/comments/{id}', commentPath(reply.id)));
const counted = ok('read commented card', 200, await client.GET('/cards/{id}', cardPath(second.id)));
const commentCount: number = counted.comment_count;
check(commentCount === 1, `comment_count: one left, got ${commentCount}`);

const archived = ok('archive', 200, await client.POST('/cards/{id}/archive', cardPath(second.id)));
const archivedAt: string | null = archived.archived_at;
check(archivedAt !== null && archived.comment_count === 1, 'archive: archived_at set');
const archive: Schemas['Card'][] = ok('list archive', 200, await client.GET('/boards/{id}/archive', boardPath));
check(archive.length === 1 && archive[0]?.id === second.id, 'list archive: the archived card');
const withoutIt = ok('read tree without the archived card', 200, await client.GET('/boards/{id}', boardPath));
check(!withoutIt.columns.some((c) => c.cards.some((card) => card.id === second.id)), 'archive: in no column of the tree');
const stuck = await client.PATCH('/cards/{id}/move', { ...cardPath(second.id), body: { target_column_id: todo.id } });
check(
  stuck.response.status === 409 && problemOf('move an archived card', stuck.error).code === 'archived',
  `move an archived card: expected 409 archived, got ${stuck.response.status}`,
);
const restoredRead = await client.GET('/cards/{id}', cardPath(second.id));
const restored = ok(
  'restore',
  200,
  await client.POST('/cards/{id}/restore', tagged(second.id, { 'If-Match': restoredRead.response.headers.get('etag') ?? '*' })),
);
const doneCards = withoutIt.columns.find((c) => c.id === done.id)?.cards ?? [];
check(
  restored.archived_at === null && restored.column_id === done.id && doneCards.every((card) => card.position < restored.position),
  'restore: back at the end of its column',
);
const cleared = ok('clear the due date', 200, await client.DELETE('/cards/{id}/due', cardPath(second.id)));
check(cleared.due_at === null, 'clear the due date');
const unassigned = ok('unassign', 200, await client.DELETE('/cards/{id}/assignees/{user_id}', assigneePath(second.id, adaId)));
check(unassigned.assignee_ids.length === 0, 'unassign');

// --- realtime ----------------------------------------------------------------------------------------

const ticket: Schemas['TicketResponse'] = ok('realtime ticket', 201, await client.POST('/realtime/tickets'));
check(ticket.ticket.length > 0 && /^wss?:/.test(ticket.url) && ticket.expires_in > 0, 'realtime ticket');
step('realtime ticket');

// --- a personal access token: what a script holds instead of a password ------------------------------

const made = ok(
  'create personal token',
  201,
  await client.POST('/auth/tokens', {
    body: { name: 'Typed script', scopes: ['boards:read', 'boards:write'], expires_in_days: 7, board_ids: [board.id] },
  }),
);
check(made.token.startsWith('tbp_') && made.board_ids?.[0] === board.id && made.last_used_at === null, 'personal token: made');
const script = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${made.token}` } });
const scripted = ok('tree by personal token', 200, await script.GET('/boards/{id}', boardPath));
check(scripted.id === board.id, 'personal token: reads its board');
const hooks = await script.GET('/boards/{id}/webhooks', boardPath);
check(
  hooks.response.status === 403 &&
    problemOf('webhooks by personal token', hooks.error).code === 'insufficient_scope' &&
    hooks.response.headers.get('www-authenticate') === 'Bearer error="insufficient_scope", scope="webhooks:admin"',
  'personal token: no webhooks without webhooks:admin',
);
const listedTokens = ok('list personal tokens', 200, await client.GET('/auth/tokens'));
check(
  listedTokens.length === 1 && listedTokens[0]?.id === made.id && !('token' in listedTokens[0]),
  'personal tokens: listed without text',
);
noContent('delete personal token', await client.DELETE('/auth/tokens/{id}', { params: { path: { id: made.id } } }));
check((await script.GET('/boards/{id}', boardPath)).response.status === 401, 'personal token: refused once deleted');
step('personal token');

// --- errors ------------------------------------------------------------------------------------------

const missing = await client.GET('/cards/{id}', cardPath(randomUUID()));
check(missing.response.status === 404 && missing.data === undefined, 'unknown card: 404');
const notFound: Problem = problemOf('unknown card', missing.error);
const code: Problem['code'] = notFound.code;
check(code === 'not_found' && notFound.status === 404 && notFound.type === 'about:blank', 'unknown card: a not_found problem');

const invalid = await client.POST('/boards', { body: { title: ' ' } });
check(invalid.response.status === 400, 'blank title: 400');
const badRequest: Problem = problemOf('blank title', invalid.error);
const fields: string[] = (badRequest.errors ?? []).map((entry) => entry.path);
check(badRequest.code === 'bad_request' && fields.includes('body.title'), `blank title: errors[] ${JSON.stringify(badRequest)}`);
step('errors');

// --- deletes -----------------------------------------------------------------------------------------

noContent('delete card', await client.DELETE('/cards/{id}', cardPath(third.id)));
const gone = await client.GET('/cards/{id}', cardPath(third.id));
check(gone.response.status === 404 && problemOf('deleted card', gone.error).code === 'not_found', 'deleted card: 404');
noContent('delete board', await client.DELETE('/boards/{id}', boardPath));
// A board one is not a member of (any more) is forbidden, whether or not it exists.
const deleted = await client.GET('/boards/{id}', boardPath);
check(
  deleted.response.status === 403 && problemOf('deleted board', deleted.error).code === 'forbidden',
  'deleted board: 403 forbidden',
);
const left = ok('list boards', 200, await client.GET('/boards'));
check(!left.some((b) => b.id === board.id), 'deleted board: no longer listed');
step('delete card and board');

console.log(JSON.stringify({ scenario: 'ok', steps }));
