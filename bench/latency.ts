import { CardPlaces } from './card-places';
import { type Answer, type Client, RouteSample, type RouteSummary } from './client';
import { log, pool, range } from './util';

/**
 * Part 2 and 3: DynamoDB round trips, capacity and the service's own time per route, from
 * warm requests sent one at a time (so that no request waits on another's CPU), read from the
 * trace headers of each answer.
 */

export const DESCRIPTION_200 = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(4).slice(0, 200);

export interface BoardFixture {
  id: string;
  columns: string[];
  cards: string[];
}

export interface LatencyReport {
  requestsPerMainRoute: number;
  requestsPerOtherRoute: number;
  routes: RouteSummary[];
  /** GET /boards of a user with `boards` boards. */
  list: { boards: number; summary: RouteSummary };
  fixtures: { token: string; board: BoardFixture; listBoards: number };
}

/** A board with `columns` columns and `perColumn` cards in each, created over HTTP, one writer per column. */
export async function makeBoard(
  client: Client,
  token: string,
  columns: number,
  perColumn: number,
  description: string,
  onCard?: (answer: Answer) => void,
): Promise<BoardFixture> {
  const board = await client.expect(201, 'POST', '/boards', { token, body: { title: 'Bench board' } });
  const columnIds: string[] = [];
  for (const c of range(columns)) {
    const column = await client.expect(201, 'POST', `/boards/${board.body.id}/columns`, {
      token,
      body: { title: `Column ${c}` },
    });
    columnIds.push(column.body.id);
  }
  // One writer per column: creates into one column are serialised by the service (card_version).
  const perWorker = await pool(columnIds, columnIds.length, async (columnId) => {
    const ids: string[] = [];
    for (const i of range(perColumn)) {
      const card = await client.expect(201, 'POST', `/columns/${columnId}/cards`, {
        token,
        body: { title: `Card ${i}`, description },
      });
      onCard?.(card);
      ids.push(card.body.id);
    }
    return ids;
  });
  return { id: board.body.id, columns: columnIds, cards: perWorker.flat() };
}

export async function benchLatency(client: Client, n: number, nOther: number, listBoards: number): Promise<LatencyReport> {
  const samples = new Map<string, RouteSample>();
  const sample = (route: string, status: number) => {
    if (!samples.has(route)) samples.set(route, new RouteSample(route, status));
    return samples.get(route)!;
  };
  const repeat = async (
    route: string,
    status: number,
    count: number,
    request: (i: number) => [method: string, path: string, options?: Parameters<Client['send']>[2]],
    after?: (answer: Answer) => void,
  ) => {
    const s = sample(route, status);
    const started = performance.now();
    for (const i of range(count)) {
      const [method, path, options] = request(i);
      const answer = s.add(await client.send(method, path, options));
      if (answer.status === status) after?.(answer);
    }
    log(`${route}: ${count} requests in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };

  // Users. Registration and login wait on Cognito, which the trace does not count: reported apart.
  const register = sample('auth.register', 201);
  const latencyUser = await client.register('latency');
  register.add(latencyUser.answer);
  const boardsUser = await client.register('boards');
  register.add(boardsUser.answer);
  for (const i of range(8)) register.add((await client.register(`extra-${i}`)).answer);
  const token = latencyUser.token;
  await repeat('auth.login', 200, 50, () => [
    'POST',
    '/auth/login',
    { body: { email: latencyUser.email, password: 'bench password' } },
  ]);

  // Fixtures: a typical board (4 columns x 25 cards, 200-byte descriptions), nine more boards
  // for the same user (GET /boards lists ten), and a board to create cards in.
  const setupStarted = performance.now();
  const board = await makeBoard(client, token, 4, 25, DESCRIPTION_200);
  await pool(range(9), 3, (i) => client.expect(201, 'POST', '/boards', { token, body: { title: `Other ${i}` } }));
  const writeBoard = await makeBoard(client, token, 4, 0, DESCRIPTION_200);
  log(`fixtures in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`);

  const card = (i: number) => board.cards[i % board.cards.length]!;
  const otherCard = (i: number, k: number) => board.cards[(i * 7 + k * 13 + 1) % board.cards.length]!;

  await repeat('health', 200, n, () => ['GET', '/health']);
  await repeat('cards.get', 200, n, (i) => ['GET', `/cards/${card(i)}`, { token }]);
  await repeat('boards.get', 200, n, () => ['GET', `/boards/${board.id}`, { token }]);
  await repeat('boards.list', 200, n, () => ['GET', '/boards', { token }]);
  await repeat('cards.update', 200, n, (i) => ['PATCH', `/cards/${card(i)}`, { token, body: { title: `Card ${i}` } }]);
  const places = new CardPlaces((await client.expect(200, 'GET', `/boards/${board.id}`, { token })).body);
  await repeat(
    'cards.move',
    200,
    n,
    (i) => {
      const target = board.columns[i % board.columns.length]!;
      const moved = card(i);
      const [before, after] = [otherCard(i, 1), otherCard(i, 2)];
      const neighbours = i % 2 === 1 && before !== moved && after !== moved && before !== after;
      return [
        'PATCH',
        `/cards/${moved}/move`,
        { token, body: places.body(moved, target, neighbours ? { before, after } : undefined) },
      ];
    },
    (answer) => places.moved(answer.body),
  );
  const created: string[] = [];
  const createCards = sample('cards.create', 201);
  {
    const started = performance.now();
    for (const i of range(n)) {
      const answer = createCards.add(
        await client.send('POST', `/columns/${writeBoard.columns[i % writeBoard.columns.length]}/cards`, {
          token,
          body: { title: `New ${i}`, description: DESCRIPTION_200 },
        }),
      );
      if (answer.status === 201) created.push(answer.body.id);
    }
    log(`cards.create: ${n} requests in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  await repeat('cards.delete', 204, Math.min(nOther, created.length), (i) => ['DELETE', `/cards/${created[i]}`, { token }]);

  // Boards of the second user: the sequential creates are the sample, the rest (up to
  // `listBoards`) are created in parallel so that GET /boards lists that many.
  const boardIds: string[] = [];
  const createBoards = sample('boards.create', 201);
  {
    const started = performance.now();
    for (const i of range(n)) {
      const answer = createBoards.add(
        await client.send('POST', '/boards', { token: boardsUser.token, body: { title: `Board ${i}` } }),
      );
      if (answer.status === 201) boardIds.push(answer.body.id);
    }
    log(`boards.create: ${n} requests in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const more = await pool(range(Math.max(0, listBoards - boardIds.length)), 16, (i) =>
    client.expect(201, 'POST', '/boards', { token: boardsUser.token, body: { title: `Board ${n + i}` } }),
  );
  boardIds.push(...more.map((a) => a.body.id as string));

  const list = new RouteSample(`boards.list (${boardIds.length} boards)`, 200);
  await client.send('GET', '/boards', { token: boardsUser.token }); // warm
  for (const _ of range(5)) list.add(await client.send('GET', '/boards', { token: boardsUser.token }));
  const listed = list.answers[0]?.body;
  if (!Array.isArray(listed) || listed.length !== boardIds.length) {
    throw new Error(`GET /boards listed ${Array.isArray(listed) ? listed.length : '?'} boards, expected ${boardIds.length}`);
  }

  const m = Math.min(nOther, boardIds.length);
  await repeat('boards.rename', 200, m, (i) => [
    'PATCH',
    `/boards/${boardIds[i]}`,
    { token: boardsUser.token, body: { title: `R${i}` } },
  ]);
  await repeat('columns.create', 201, m, (i) => [
    'POST',
    `/boards/${boardIds[i]}/columns`,
    { token: boardsUser.token, body: { title: 'Only column' } },
  ]);
  await repeat('boards.delete', 204, m, (i) => ['DELETE', `/boards/${boardIds[i]}`, { token: boardsUser.token }]);

  return {
    requestsPerMainRoute: n,
    requestsPerOtherRoute: nOther,
    routes: [...samples.values()].map((s) => s.summary()),
    list: { boards: boardIds.length, summary: list.summary() },
    fixtures: { token, board, listBoards: boardIds.length },
  };
}
