import { InternalServerError } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { ScopeVia } from '../../lib/data/access';
import type { BoardRecord, ColumnRecord, PostedCreate } from '../../lib/data/records';
import { keys } from '../../lib/data/table';
import { DEADLINE_MARGIN_MS, WRITE_BUDGET_MS } from '../../lib/runtime/deadline';
import { call, newBoard, newColumn, newUser, subjectOf, type TestUser } from '../support/api';
import { boardQueue } from '../support/board-queue';
import { readAllEvents } from '../support/event-log';
import { localDocumentClient, localEnv, runStorageCodeOn } from '../support/local-table';
import { eventually } from '../support/wait';

/**
 * A queued card create posts itself on the board item for the writer at the head to commit with
 * its own (lib/data/board-turns.ts). Its endings that no client can time from outside are
 * driven here with the service's own create, run in this process on the local stack's table
 * while the test plays the rest of the queue by hand: the writer gives up while the head is
 * stalled (its post must go with its ticket, so nobody commits it after its 503); the head
 * commits the post before the writer's turn comes (the writer answers with the card it made);
 * and DynamoDB fails the writer's withdrawal itself, every time (the writer's answer must still
 * say whether its change landed).
 */

const env = localEnv();
runStorageCodeOn(env);
const db = localDocumentClient(env);
afterAll(() => db.destroy());

const { boardItemOf: storedBoard, stalledTicket } = boardQueue(db, () => env.TABLE_NAME!);
const boardItemOf = async (boardId: string) => (await storedBoard(boardId)) as unknown as BoardRecord;

/** What the create route hands the service's create: the column, the board and the member as read. */
async function scopeOf(user: TestUser, boardId: string, column: { id: string }): Promise<ScopeVia<'column'>> {
  const board = await boardItemOf(boardId);
  const { Item: lookup } = await db.send(
    new GetCommand({ TableName: env.TABLE_NAME, Key: keys.columnLookup(column.id), ConsistentRead: true }),
  );
  return {
    via: 'column',
    boardId,
    board,
    member: { board_id: boardId, user_id: subjectOf(user.token), role: 'owner', joined_at: new Date().toISOString() },
    column: { ...column, board_id: boardId } as ColumnRecord,
    columnCardVersion: lookup?.card_version as number | undefined,
  } as unknown as ScopeVia<'column'>;
}

let owner: TestUser;
beforeAll(async () => {
  owner = await newUser();
});

/** The service's create, imported once the environment points at the local stack's table. */
const service = async () => {
  const [{ createCard }, { raceDeadline }, { StorageBusy }] = await Promise.all([
    import('../../lib/data/cards'),
    import('../../lib/runtime/deadline'),
    import('../../lib/data/db'),
  ]);
  return { createCard, raceDeadline, StorageBusy };
};

/**
 * The test as the writer at the head (`head`, stalled until now): it takes the post of the ticket
 * behind it and commits it as a head does, handing the turn past both. Answers the card as the
 * head shows it in its event and hands its writer, with the tag `"as-the-head-wrote-it"`.
 */
async function commitAsHead(boardId: string, columnId: string, head: number) {
  const post = (await boardItemOf(boardId)).turn_posts![String(head + 1)] as PostedCreate;
  const card = {
    id: post.card_id,
    board_id: boardId,
    column_id: columnId,
    title: post.title,
    description: post.description,
    position: 1,
    created_at: new Date().toISOString(),
  };
  const shown = { ...card, due_at: null, label_ids: [], assignee_ids: [], archived: false };
  await db.send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: env.TABLE_NAME, Item: { ...keys.card(boardId, card.id), type: 'card', ...card } } },
        // What tells the writer its post committed, with the card as written.
        {
          Put: {
            TableName: env.TABLE_NAME,
            Item: { ...keys.turnDone(boardId, head + 1), type: 'turn_done', card: shown, etag: '"as-the-head-wrote-it"' },
          },
        },
        {
          Update: {
            TableName: env.TABLE_NAME,
            Key: keys.board(boardId),
            UpdateExpression: 'SET turn_head = :after REMOVE turn_posts.#post',
            ConditionExpression: 'turn_head = :head AND attribute_exists(turn_posts.#post)',
            ExpressionAttributeNames: { '#post': String(head + 1) },
            ExpressionAttributeValues: { ':head': head, ':after': head + 2 },
          },
        },
      ],
    }),
  );
  return shown;
}

/**
 * A create sent now, behind a stalled head and a ticket whose writer gave up, skips them both and
 * lands alone: the only card the board's log ever created.
 */
async function expectOnlyTheNextCreateLands(boardId: string, columnId: string) {
  const reply = await call('POST', `/columns/${columnId}/cards`, { token: owner.token, body: { title: 'next' } });
  expect(reply.status).toBe(201);
  const { events } = await readAllEvents(owner, boardId);
  const created = events.filter((event) => event.type === 'card.created');
  expect(created.map((event) => (event.card as { title: string }).title)).toEqual(['next']);
}

/**
 * Each create's request time here: the writer gives up with a write's budget and more left before
 * its deadline (DEADLINE_MARGIN_MS before this), long before it would skip the stalled head (after
 * three seconds of it), so its post is still waiting.
 */
const REQUEST_MS = 6_000;
/** The last moment a head takes the post of such a request: a write's budget before its deadline. */
const LAST_TAKE_MS = REQUEST_MS - DEADLINE_MARGIN_MS - WRITE_BUDGET_MS;
/** When its writer may know the post's fate at the earliest: half a write's budget after that. */
const SETTLED_AFTER_MS = LAST_TAKE_MS + WRITE_BUDGET_MS / 2;
/** A timer may fire a millisecond before Date.now() says its time came. */
const TIMER_SLACK_MS = 5;

describe('a queued create that posted itself', () => {
  it('gives up with its post: 503, and no head commits it afterwards', async () => {
    const { createCard, raceDeadline, StorageBusy } = await service();
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const head = await stalledTicket(board.id);
    const scope = await scopeOf(owner, board.id, column);
    const outcome = await raceDeadline(
      REQUEST_MS,
      () => createCard(scope, { title: 'gave up' }, undefined).then(() => 'created' as const),
      () => 'deadline' as const,
    ).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(StorageBusy);
    const after = await boardItemOf(board.id);
    expect(after.turn_gone).toEqual(new Set([head + 1]));
    expect(after.turn_posts).toEqual({});

    // The next writer skips the dead head and the ticket given up, and commits only its own.
    await expectOnlyTheNextCreateLands(board.id, column.id);
  });

  it('answers with the card the head made of its post, its own turn never needed', async () => {
    const { createCard, raceDeadline } = await service();
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const head = await stalledTicket(board.id);
    const scope = await scopeOf(owner, board.id, column);
    const created = raceDeadline(
      20_000,
      () => createCard(scope, { title: 'posted', description: 'by the head' }, undefined),
      () => {
        throw new Error('the create was not answered in time');
      },
    );
    // The test is the head now: it takes the post and commits it, handing the turn past it.
    let post: PostedCreate | undefined;
    await eventually(async () => {
      post = (await boardItemOf(board.id)).turn_posts?.[String(head + 1)] as PostedCreate | undefined;
      expect(post).toBeDefined();
    });
    const shown = await commitAsHead(board.id, column.id, head);
    const answer = await created;
    // Exactly what the head wrote for it: the card and the tag (not recomputed from a later board).
    expect(answer).toEqual({ card: shown, etag: '"as-the-head-wrote-it"' });
    expect(post!.actor).toBe(subjectOf(owner.token));
    // It left nothing behind: no ticket given up, nobody queued.
    const after = await boardItemOf(board.id);
    expect(after.turn_gone).toBeUndefined();
    expect(after.turn_head).toBe(after.turn_next);
  });

  /**
   * The service's create, giving up behind a stalled head as in the first case, while DynamoDB
   * fails every withdrawal of its post with an internal error (`beforeFirst`: run just before the
   * first is refused). Answers the create's outcome, how long after its start it came, and when
   * the last withdrawal was refused.
   */
  async function giveUpUnwithdrawn(boardId: string, columnId: string, beforeFirst: () => Promise<unknown>) {
    const { createCard, raceDeadline } = await service();
    const { documentClient } = await import('../../lib/data/db');
    const scope = await scopeOf(owner, boardId, { id: columnId });
    let withdrawals = 0;
    let started = Number.NaN;
    let lastRefusedAfterMs = Number.NaN;
    documentClient.middlewareStack.add(
      (next) => async (args) => {
        const update = (args.input as { UpdateExpression?: string }).UpdateExpression ?? '';
        if (!update.startsWith('ADD turn_gone')) return next(args);
        if (withdrawals++ === 0) await beforeFirst();
        lastRefusedAfterMs = Date.now() - started;
        throw new InternalServerError({ message: 'We encountered an internal error. Please try again.', $metadata: {} });
      },
      { step: 'initialize', name: 'refusedWithdrawal' },
    );
    started = Date.now();
    try {
      const outcome = await raceDeadline(
        REQUEST_MS,
        () => createCard(scope, { title: 'withdrawn?' }, undefined),
        () => {
          throw new Error('the create was not answered in time');
        },
      ).catch((error: unknown) => error);
      return { outcome, afterMs: Date.now() - started, lastRefusedAfterMs };
    } finally {
      documentClient.middlewareStack.remove('refusedWithdrawal');
    }
  }

  it('whose withdrawal DynamoDB refuses waits until no head can take its post, then answers what one made', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const head = await stalledTicket(board.id);
    let shown: Awaited<ReturnType<typeof commitAsHead>> | undefined;
    const { outcome, afterMs, lastRefusedAfterMs } = await giveUpUnwithdrawn(board.id, column.id, async () => {
      shown = await commitAsHead(board.id, column.id, head);
    });
    // Not the 5xx of a change that did not land: the change did land, and this is its card.
    expect(outcome).toEqual({ card: shown, etag: '"as-the-head-wrote-it"' });
    // Sent again while a head could still take the post, then known only once none could.
    expect(lastRefusedAfterMs).toBeGreaterThanOrEqual(LAST_TAKE_MS - TIMER_SLACK_MS);
    expect(afterMs).toBeGreaterThanOrEqual(SETTLED_AFTER_MS);
  });

  it('whose withdrawal DynamoDB refuses and whose post nobody takes answers its error, and the post never lands', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    await stalledTicket(board.id);
    const { outcome, afterMs } = await giveUpUnwithdrawn(board.id, column.id, async () => undefined);
    expect(outcome).toBeInstanceOf(InternalServerError);
    expect(afterMs).toBeGreaterThanOrEqual(SETTLED_AFTER_MS);

    // Its post is still on the board, past its time: the next writer skips the stalled head and
    // the ticket left behind, and commits only its own card.
    await expectOnlyTheNextCreateLands(board.id, column.id);
  });
});
