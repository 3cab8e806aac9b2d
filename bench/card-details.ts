import { type Answer, type Client, RouteSample, type RouteSummary, type SendOptions } from './client';
import { DESCRIPTION_200 } from './latency';
import { Table } from './scale';
import { log, percentile, pool, range, round } from './util';

/**
 * Card details: what comments, archived cards and the tree's filters cost.
 *
 * 1. The tree does not pay for what it does not show. Two boards of the same 100 cards (4 columns,
 *    200-character descriptions, the same labels, assignees, due dates and titles on the same
 *    cards): A has nothing else; B has 1,000 comments spread over its cards and 1,000 more cards
 *    created and archived (comments at `~COMMENT#…`, archived cards at `ARCHIVED#…`, both outside
 *    the tree's key range). GET /boards/{id} on each, in alternation, unfiltered and with each
 *    filter and all four: round trips (sequential DynamoDB calls), read units (the trace's
 *    capacity: the route makes reads only) and latency.
 * 2. Each new route's round trips and capacity, on a small board of its own, each change followed
 *    by the same request again where that changes nothing (the idempotent no-op makes the same
 *    reads and no transaction): the change's capacity less the no-op's is the transaction's units
 *    as DynamoDB Local reports them. A TransactWriteItems of k small Puts sent straight to
 *    DynamoDB Local shows how it reports transactions (bench/cost.ts UNIT_MODEL: it under-reports).
 *
 * Seeding is over HTTP with bounded parallelism: every change of a board is serialised on its
 * board item (the event log's seq), so more writers only lose more races.
 */

const COLUMNS = 4;
const CARDS = 100;
const LABEL_EVERY = 4;
const ASSIGN_EVERY = 3;
const DUE_EVERY = 2;
const Q_EVERY = 5;
const Q = 'release';
const DUE_BEFORE = '2026-12-15T00:00:00.000Z';

/**
 * The items of each route's transaction, as lib/data writes them (every change also updates the
 * board item's `seq` and puts its log item: lib/data/event-log.ts commitChange), for what DynamoDB
 * bills: 2 WRU per item under 1 KB (all of these are at 200-character descriptions), and an
 * index entry of the position LSI (`colpos`) written or removed, assumed billed at the same rate,
 * as bench/cost.ts UNIT_MODEL does. DynamoDB Local does not report a transaction's units per item.
 */
export const TRANSACTION_ITEMS: Record<string, { items: string[]; lsiEntries: number }> = {
  'PATCH /cards/{id} (title)': { items: ['card Update', 'board Update', 'log Put'], lsiEntries: 0 },
  'PATCH /cards/{id} (due_at)': { items: ['card Update', 'board Update', 'log Put'], lsiEntries: 0 },
  'DELETE /cards/{id}/due': { items: ['card Update', 'board Update', 'log Put'], lsiEntries: 0 },
  'PUT /cards/{id}/assignees/{user_id}': { items: ['card Update', 'board Update', 'log Put'], lsiEntries: 0 },
  'DELETE /cards/{id}/assignees/{user_id}': { items: ['card Update', 'board Update', 'log Put'], lsiEntries: 0 },
  'POST /cards/{id}/comments': {
    items: ['comment Put', 'comment lookup Put', 'card Update (comment_count)', 'board Update', 'log Put'],
    lsiEntries: 0,
  },
  'PATCH /comments/{id}': {
    items: ['comment Update', 'card ConditionCheck', 'board Update', 'log Put'],
    lsiEntries: 0,
  },
  'DELETE /comments/{id}': {
    items: ['comment Delete', 'comment lookup Delete', 'card Update (comment_count)', 'board Update', 'log Put'],
    lsiEntries: 0,
  },
  'POST /cards/{id}/archive': {
    items: ['CARD# Delete', 'ARCHIVED# Put', 'board Update', 'log Put'],
    lsiEntries: 1,
  },
  'POST /cards/{id}/restore': {
    items: ['ARCHIVED# Delete', 'CARD# Put', 'column card_version Update', 'board Update', 'log Put'],
    lsiEntries: 1,
  },
};

/** Billed write units of a route's transaction by TRANSACTION_ITEMS (undefined: no transaction). */
export const billedWriteUnits = (route: string) => {
  const t = TRANSACTION_ITEMS[route];
  return t ? 2 * (t.items.length + t.lsiEntries) : undefined;
};

export interface TreeSummary extends RouteSummary {
  /** Client-side wall time, 95th percentile (RouteSummary has p50 and p99). */
  wallP95: number;
  /** Cards listed in the tree (all columns), from the last answer. */
  cardsShown: number;
}

export interface TreeCase {
  filter: string;
  query: string;
  a: TreeSummary;
  b: TreeSummary;
  /** B's read units over A's, median of each. */
  readRatio: number;
}

export interface PartitionShape {
  /** The whole partition: board, members, columns, cards, labels, archived cards, comments, the log. */
  partition: { items: number; bytes: number };
  /** The tree's key range only (CARD# .. LABEL#\uffff). */
  treeRange: { items: number; bytes: number };
}

export interface RouteCase {
  route: string;
  summary: RouteSummary & { wallP95: number };
  /** The same request again, which changes nothing: its reads without the transaction. */
  noop?: RouteSummary & { wallP95: number };
  /** What the read part is taken from when there is no no-op of the route itself. */
  readsFrom?: string;
  /** Median capacity less the no-op's (or readsFrom's): the transaction's units as DynamoDB Local reports them. */
  writeUnits?: number;
}

export interface CardDetailsReport {
  runs: number;
  routeRuns: number;
  parallelism: number;
  seed: { commentsS: number; archivesS: number; comments: number; archived: number; retried503: number };
  boards: { a: PartitionShape; b: PartitionShape };
  trees: TreeCase[];
  routes: RouteCase[];
  archiveLists: { board: string; archived: number; summary: RouteSummary & { wallP95: number } }[];
  /** TransactWriteItems of k small Puts, as DynamoDB Local reports them (DynamoDB bills 2 WRU per item < 1 KB). */
  transactionCalibration: { puts: number; reported: number; billed: number }[];
}

interface DetailBoard {
  id: string;
  columns: string[];
  cards: string[];
  label: string;
}

const withP95 = (sample: RouteSample) => ({
  ...sample.summary(),
  wallP95: round(
    percentile(
      sample.answers.map((a) => a.wallMs),
      95,
    ),
    3,
  ),
});

export async function benchCardDetails(
  client: Client,
  dataDir: string,
  settings: { runs: number; routeRuns: number; comments: number; archived: number; parallelism: number },
): Promise<CardDetailsReport> {
  const table = new Table(dataDir);
  let retried503 = 0;
  /** One seeding request: a 503 (a race lost too often, storage busy) is tried again, up to 20 times. */
  const seed = async (status: number, method: string, path: string, options: SendOptions): Promise<Answer> => {
    for (let attempt = 1; ; attempt++) {
      const answer = await client.send(method, path, options);
      if (answer.status === status) return answer;
      if (answer.status === 503 && attempt < 20) {
        retried503++;
        await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
        continue;
      }
      throw new Error(
        `${method} ${path}: expected ${status}, got ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}`,
      );
    }
  };
  try {
    const owner = await client.register('details');
    const token = owner.token;

    /** 100 cards in 4 columns, and the details the filters look at, the same on every board made here. */
    const makeDetailBoard = async (title: string, columns: number, cards: number): Promise<DetailBoard> => {
      const board = await seed(201, 'POST', '/boards', { token, body: { title } });
      const id = board.body.id as string;
      const columnIds: string[] = [];
      for (const c of range(columns))
        columnIds.push((await seed(201, 'POST', `/boards/${id}/columns`, { token, body: { title: `Column ${c}` } })).body.id);
      const label = (await seed(201, 'POST', `/boards/${id}/labels`, { token, body: { name: 'urgent', color: '#d73a4a' } })).body
        .id as string;
      const perColumn = Math.ceil(cards / columns);
      // One writer per column, cards numbered k = column + columns × i, so both boards number alike.
      const byColumn = await pool(columnIds, columns, async (columnId, c) => {
        const ids: [number, string][] = [];
        for (const i of range(perColumn)) {
          const k = c + columns * i;
          if (k >= cards) break;
          const created = await seed(201, 'POST', `/columns/${columnId}/cards`, {
            token,
            body: { title: k % Q_EVERY === 0 ? `Release task ${k}` : `Card ${k}`, description: DESCRIPTION_200 },
          });
          ids.push([k, created.body.id]);
        }
        return ids;
      });
      const numbered = byColumn.flat().sort((x, y) => x[0] - y[0]);
      await pool(numbered, 4, async ([k, cardId]) => {
        if (k % LABEL_EVERY === 0) await seed(200, 'PUT', `/cards/${cardId}/labels/${label}`, { token });
        if (k % ASSIGN_EVERY === 0) await seed(200, 'PUT', `/cards/${cardId}/assignees/${owner.userId}`, { token });
        if (k % DUE_EVERY === 0) {
          const day = String(1 + (k % 28)).padStart(2, '0');
          await seed(200, 'PATCH', `/cards/${cardId}`, { token, body: { due_at: `2026-12-${day}T12:00:00.000Z` } });
        }
      });
      return { id, columns: columnIds, cards: numbered.map(([, cardId]) => cardId), label };
    };

    log(`card details: boards A and B (${CARDS} cards each)`);
    const a = await makeDetailBoard('Details A', COLUMNS, CARDS);
    const b = await makeDetailBoard('Details B', COLUMNS, CARDS);

    // B's comments: comment n on card n mod 100, so that writers in flight together write on different cards.
    let started = performance.now();
    await pool(range(settings.comments), settings.parallelism, async (n) => {
      await seed(201, 'POST', `/cards/${b.cards[n % b.cards.length]}/comments`, {
        token,
        body: { body: `Comment ${n}: ${DESCRIPTION_200.slice(0, 80)}` },
      });
    });
    const commentsS = round((performance.now() - started) / 1000, 1);
    log(`card details: ${settings.comments} comments on B in ${commentsS} s (${retried503} retried 503s so far)`);

    // B's archive: each writer creates a card in a column and archives it at once; card j in column j mod 4.
    started = performance.now();
    await pool(range(settings.archived), settings.parallelism, async (j) => {
      const created = await seed(201, 'POST', `/columns/${b.columns[j % COLUMNS]}/cards`, {
        token,
        body: { title: `Archived ${j}`, description: DESCRIPTION_200 },
      });
      await seed(200, 'POST', `/cards/${created.body.id}/archive`, { token });
    });
    const archivesS = round((performance.now() - started) / 1000, 1);
    log(`card details: ${settings.archived} cards created and archived on B in ${archivesS} s (${retried503} retried 503s)`);

    const shape = async (board: DetailBoard): Promise<PartitionShape> => {
      const pk = `BOARD#${board.id}`;
      return { partition: await table.partition(pk), treeRange: await table.partition(pk, ['CARD#', 'LABEL#\uffff']) };
    };
    const boards = { a: await shape(a), b: await shape(b) };

    // 1. The trees, alternating A and B so that a busy moment weighs on both alike.
    const variants: [string, (board: DetailBoard) => string][] = [
      ['none', () => ''],
      ['label_id', (board) => `label_id=${board.label}`],
      ['assignee_id', () => `assignee_id=${owner.userId}`],
      ['due_before', () => `due_before=${encodeURIComponent(DUE_BEFORE)}`],
      ['q', () => `q=${Q}`],
      [
        'all four',
        (board) => `label_id=${board.label}&assignee_id=${owner.userId}&due_before=${encodeURIComponent(DUE_BEFORE)}&q=${Q}`,
      ],
    ];
    const trees: TreeCase[] = [];
    for (const [filter, query] of variants) {
      const samples = { a: new RouteSample(`boards.get A ${filter}`, 200), b: new RouteSample(`boards.get B ${filter}`, 200) };
      const shown = { a: 0, b: 0 };
      const path = (board: DetailBoard) => `/boards/${board.id}${query(board) ? `?${query(board)}` : ''}`;
      // One warm-up each.
      await client.expect(200, 'GET', path(a), { token });
      await client.expect(200, 'GET', path(b), { token });
      for (const _ of range(settings.runs)) {
        for (const [name, board] of [
          ['a', a],
          ['b', b],
        ] as const) {
          const answer = samples[name].add(await client.send('GET', path(board), { token }));
          if (answer.status === 200)
            shown[name] = (answer.body.columns as { cards: unknown[] }[]).reduce((sum, c) => sum + c.cards.length, 0);
        }
      }
      const treeCase: TreeCase = {
        filter,
        query: query(a).replace(a.label, '<label>').replace(owner.userId, '<user>'),
        a: { ...withP95(samples.a), cardsShown: shown.a },
        b: { ...withP95(samples.b), cardsShown: shown.b },
        readRatio: 0,
      };
      treeCase.readRatio = round(treeCase.b.capacity.median / treeCase.a.capacity.median, 3);
      if (treeCase.a.unexpected > 0 || treeCase.b.unexpected > 0)
        throw new Error(
          `tree ${filter}: unexpected answers ${JSON.stringify([treeCase.a.unexpectedExamples, treeCase.b.unexpectedExamples])}`,
        );
      if (shown.a !== shown.b) throw new Error(`tree ${filter}: A lists ${shown.a} cards, B ${shown.b}`);
      log(
        `card details: tree ${filter}: A ${treeCase.a.capacity.median} RRU / ${treeCase.a.sequential.max} sequential, B ${treeCase.b.capacity.median} RRU / ${treeCase.b.sequential.max} sequential (×${treeCase.readRatio}), ${shown.a} cards`,
      );
      trees.push(treeCase);
    }

    // 2. The new routes, on a small board of their own (2 columns of 10 cards).
    const c = await makeDetailBoard('Details C', 2, 20);
    const cards = c.cards.slice(0, settings.routeRuns);
    while (cards.length < settings.routeRuns) {
      cards.push(
        (
          await seed(201, 'POST', `/columns/${c.columns[0]}/cards`, {
            token,
            body: { title: 'More', description: DESCRIPTION_200 },
          })
        ).body.id,
      );
    }
    const samples = new Map<string, RouteSample>();
    const sample = (route: string, status: number) => {
      if (!samples.has(route)) samples.set(route, new RouteSample(route, status));
      return samples.get(route)!;
    };
    const timed = async (route: string, status: number, method: string, path: string, options: SendOptions = {}) =>
      sample(route, status).add(await client.send(method, path, { token, ...options }));
    const noopOf = (route: string) => `${route} (again: no-op)`;
    // A member who is not the caller, to assign (any member may assign any member).
    const other = await client.register('details-member');
    await seed(201, 'POST', `/boards/${c.id}/members`, { token, body: { email: other.email, role: 'member' } });
    for (const [i, cardId] of cards.entries()) {
      const due = `2026-12-${String(1 + (i % 28)).padStart(2, '0')}T09:00:00.000Z`;
      await timed('PATCH /cards/{id} (title)', 200, 'PATCH', `/cards/${cardId}`, { body: { title: `Renamed ${i}` } });
      await timed('PATCH /cards/{id} (due_at)', 200, 'PATCH', `/cards/${cardId}`, { body: { due_at: due } });
      await timed('DELETE /cards/{id}/due', 200, 'DELETE', `/cards/${cardId}/due`);
      await timed(noopOf('DELETE /cards/{id}/due'), 200, 'DELETE', `/cards/${cardId}/due`);
      await timed('PUT /cards/{id}/assignees/{user_id}', 200, 'PUT', `/cards/${cardId}/assignees/${other.userId}`);
      await timed(noopOf('PUT /cards/{id}/assignees/{user_id}'), 200, 'PUT', `/cards/${cardId}/assignees/${other.userId}`);
      await timed('DELETE /cards/{id}/assignees/{user_id}', 200, 'DELETE', `/cards/${cardId}/assignees/${other.userId}`);
      await timed(noopOf('DELETE /cards/{id}/assignees/{user_id}'), 200, 'DELETE', `/cards/${cardId}/assignees/${other.userId}`);
      const comment = await timed('POST /cards/{id}/comments', 201, 'POST', `/cards/${cardId}/comments`, {
        body: { body: `Bench comment ${i}` },
      });
      await timed('GET /cards/{id}/comments', 200, 'GET', `/cards/${cardId}/comments`);
      await timed('GET /cards/{id}', 200, 'GET', `/cards/${cardId}`);
      const commentId = comment.body?.id as string;
      await timed('PATCH /comments/{id}', 200, 'PATCH', `/comments/${commentId}`, { body: { body: `Edited ${i}` } });
      await timed(noopOf('PATCH /comments/{id}'), 200, 'PATCH', `/comments/${commentId}`, { body: { body: `Edited ${i}` } });
      await timed('DELETE /comments/{id}', 204, 'DELETE', `/comments/${commentId}`);
      await timed('POST /cards/{id}/archive', 200, 'POST', `/cards/${cardId}/archive`);
      await timed(noopOf('POST /cards/{id}/archive'), 200, 'POST', `/cards/${cardId}/archive`);
      await timed('POST /cards/{id}/restore', 200, 'POST', `/cards/${cardId}/restore`);
      await timed(noopOf('POST /cards/{id}/restore'), 200, 'POST', `/cards/${cardId}/restore`);
    }
    const summaries = new Map([...samples].map(([route, s]) => [route, withP95(s)]));
    const unexpected = [...summaries.values()].filter((s) => s.unexpected > 0);
    if (unexpected.length > 0)
      throw new Error(`unexpected answers: ${JSON.stringify(unexpected.map((s) => [s.route, s.unexpectedExamples]))}`);
    // Routes without a no-op of their own: the reads of a request with the same access check.
    const readsOf: Record<string, string> = {
      'PATCH /cards/{id} (title)': noopOf('DELETE /cards/{id}/due'),
      'PATCH /cards/{id} (due_at)': noopOf('DELETE /cards/{id}/due'),
      'POST /cards/{id}/comments': 'GET /cards/{id}',
      'DELETE /comments/{id}': noopOf('PATCH /comments/{id}'),
    };
    // Reads a change makes that its no-op does not: a restore reads its column's lookup (1 RRU) and
    // the column's highest position (a Query of one index entry, 1 RRU) before its transaction.
    const readsBeyondNoop: Record<string, number> = { 'POST /cards/{id}/restore': 2 };
    const routes: RouteCase[] = [];
    for (const [route, summary] of summaries) {
      if (route.endsWith('(again: no-op)') || route === 'GET /cards/{id}') continue;
      const noop = summaries.get(noopOf(route));
      const readsFrom = noop ? undefined : readsOf[route];
      const reads = noop ?? (readsFrom ? summaries.get(readsFrom) : undefined);
      routes.push({
        route,
        summary,
        noop,
        readsFrom,
        writeUnits:
          reads && !route.startsWith('GET ')
            ? round(summary.capacity.median - reads.capacity.median - (readsBeyondNoop[route] ?? 0), 2)
            : undefined,
      });
    }
    routes.push({ route: 'GET /cards/{id}', summary: summaries.get('GET /cards/{id}')! });

    // GET /boards/{id}/archive on the three boards: none, routeRuns's worth archived (C), 1,000 (B).
    for (const cardId of cards) await seed(200, 'POST', `/cards/${cardId}/archive`, { token });
    const archiveLists: CardDetailsReport['archiveLists'] = [];
    for (const [name, board, archived] of [
      ['A', a, 0],
      ['C', c, cards.length],
      ['B', b, settings.archived],
    ] as const) {
      const s = new RouteSample(`GET /boards/{id}/archive (${archived})`, 200);
      await client.expect(200, 'GET', `/boards/${board.id}/archive`, { token });
      for (const _ of range(Math.min(settings.routeRuns, 20)))
        s.add(await client.send('GET', `/boards/${board.id}/archive`, { token }));
      archiveLists.push({ board: name, archived, summary: withP95(s) });
    }

    // How DynamoDB Local reports a transaction's capacity (a scratch partition, removed after).
    const transactionCalibration: CardDetailsReport['transactionCalibration'] = [];
    const { TransactWriteItemsCommand, BatchWriteItemCommand } = await import('@aws-sdk/client-dynamodb');
    const scratch = `BENCH#calibration-${Date.now()}`;
    for (const puts of [1, 2, 3, 4, 6]) {
      const items = range(puts).map((i) => ({
        pk: { S: scratch },
        sk: { S: `ITEM#${puts}#${i}` },
        body: { S: DESCRIPTION_200 },
      }));
      const out = await table.client.send(
        new TransactWriteItemsCommand({
          TransactItems: items.map((Item) => ({ Put: { TableName: table.name, Item } })),
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      const reported = (out.ConsumedCapacity ?? []).reduce((sum, cc) => sum + (cc.CapacityUnits ?? 0), 0);
      transactionCalibration.push({ puts, reported, billed: 2 * puts });
      await table.client.send(
        new BatchWriteItemCommand({
          RequestItems: { [table.name]: items.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })) },
        }),
      );
    }

    return {
      runs: settings.runs,
      routeRuns: settings.routeRuns,
      parallelism: settings.parallelism,
      seed: { commentsS, archivesS, comments: settings.comments, archived: settings.archived, retried503 },
      boards,
      trees,
      routes,
      archiveLists,
      transactionCalibration,
    };
  } finally {
    table.client.destroy();
  }
}
