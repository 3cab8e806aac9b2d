import { routes } from '../../lib/routes';
import {
  baseUrl,
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

/**
 * The HTTP-level decisions of the contract: unknown paths (404), wrong methods (405 + Allow),
 * body parsing (400, 413, 415), problem bodies without internals, non-UUID ids (400) and CORS.
 */

const MAX_BODY_BYTES = 64 * 1024;

const listBoards = async (user: TestUser) => {
  const reply = await call('GET', '/boards', { token: user.token });
  expect(reply.status).toBe(200);
  return reply.body as { id: string; title: string }[];
};

/** A JSON body `{"title":"ttt…"}` of exactly `bytes` bytes. */
const titleBodyOfSize = (bytes: number) => {
  const overhead = JSON.stringify({ title: '' }).length;
  const body = JSON.stringify({ title: 't'.repeat(bytes - overhead) });
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
};

const json = { 'content-type': 'application/json' };

/** Concrete rows of the route table (the catch-all excluded), grouped by path template. */
const concreteRows = Object.values(routes).filter((row) => row.method !== 'ANY');
const templates = [...new Set(concreteRows.map((row) => row.path))];
const methodsOf = (template: string) => concreteRows.filter((row) => row.path === template).map((row) => row.method as string);
const concretePath = (template: string, id: string = unknownId()) => template.replace('{id}', id);
const allowOf = (reply: Reply) =>
  (reply.headers.get('allow') ?? '')
    .split(',')
    .map((method) => method.trim().toUpperCase())
    .filter((method) => method !== '' && method !== 'OPTIONS' && method !== 'HEAD')
    .sort();

describe('unknown paths', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/nope'],
    ['POST', '/nope'],
    ['GET', '/board'],
    ['GET', `/boards/${unknownId()}/cards`],
    ['DELETE', `/tags/${unknownId()}`],
    ['GET', `/cards/${unknownId()}/move/now`],
    ['GET', '/v1/boards'],
  ])('%s %s answers 404 problem+json', async (method, path) => {
    expectProblem(await call(method, path), 404);
  });

  it('answers 404 problem+json to an authenticated caller as well', async () => {
    const user = await newUser();
    expectProblem(await call('GET', '/nope', { token: user.token }), 404);
  });
});

describe('known path, wrong method', () => {
  it('PUT /boards answers 405 with Allow: GET, POST', async () => {
    const reply = await call('PUT', '/boards', { body: { title: 'x' } });
    expectProblem(reply, 405);
    expect(allowOf(reply)).toEqual(['GET', 'POST']);
  });

  it('DELETE /boards answers 405 with Allow: GET, POST', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const reply = await call('DELETE', '/boards', { token: user.token });
    expectProblem(reply, 405);
    expect(allowOf(reply)).toEqual(['GET', 'POST']);
    expect(await listBoards(user)).toEqual([board]);
  });

  // Every path of the route table, with a method it does not serve.
  const cases = templates.map((template) => {
    const allowed = methodsOf(template);
    const wrong = ['PUT', 'DELETE', 'POST', 'PATCH', 'GET'].find((method) => !allowed.includes(method))!;
    return { template, wrong, allowed: [...allowed].sort() };
  });

  it.each(cases)('$wrong $template answers 405 with Allow listing $allowed', async ({ template, wrong, allowed }) => {
    const reply = await call(wrong, concretePath(template), { body: wrong === 'GET' ? undefined : { title: 'x' } });
    expectProblem(reply, 405);
    expect(allowOf(reply)).toEqual(allowed);
  });

  it('PUT /boards/{id} is refused with 405 and does not change the board', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Unchanged');
    const reply = await call('PUT', `/boards/${board.id}`, { token: user.token, body: { title: 'Replaced' } });
    expectProblem(reply, 405);
    expect(allowOf(reply)).toEqual(['DELETE', 'GET', 'PATCH']);
    expect((await call('GET', `/boards/${board.id}`, { token: user.token })).body).toEqual({
      ...board,
      seq: 0,
      columns: [],
      labels: [],
    });
  });
});

describe('request bodies', () => {
  it.each([
    ['truncated JSON', '{"title": "Roadmap"'],
    ['a trailing comma', '{"title": "Roadmap",}'],
    ['single quotes', "{'title': 'Roadmap'}"],
    ['not JSON at all', 'title=Roadmap'],
  ])('answers 400 problem+json for malformed JSON (%s) and creates nothing', async (_case, rawBody) => {
    const user = await newUser();
    expectProblem(await call('POST', '/boards', { token: user.token, rawBody, headers: json }), 400);
    expect(await listBoards(user)).toEqual([]);
  });

  it.each([
    ['an array', '[{"title": "Roadmap"}]'],
    ['a string', '"Roadmap"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
  ])('answers 400 problem+json for a JSON body that is %s and creates nothing', async (_case, rawBody) => {
    const user = await newUser();
    expectProblem(await call('POST', '/boards', { token: user.token, rawBody, headers: json }), 400);
    expect(await listBoards(user)).toEqual([]);
  });

  it('answers 400 problem+json for an empty body where one is required', async () => {
    const user = await newUser();
    expectProblem(await call('POST', '/boards', { token: user.token, rawBody: '', headers: json }), 400);
    expect(await listBoards(user)).toEqual([]);
  });

  it('answers 400 for malformed JSON on PATCH and leaves the board unchanged', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Unchanged');
    expectProblem(await call('PATCH', `/boards/${board.id}`, { token: user.token, rawBody: '{"title":', headers: json }), 400);
    expect((await call('GET', `/boards/${board.id}`, { token: user.token })).body.title).toBe('Unchanged');
  });

  it('answers 413 problem+json for a body larger than 64 KiB and creates nothing', async () => {
    const user = await newUser();
    const reply = await call('POST', '/boards', { token: user.token, rawBody: titleBodyOfSize(70_000), headers: json });
    expectProblem(reply, 413);
    expect(await listBoards(user)).toEqual([]);
  });

  it('answers 413 at 64 KiB + 1 byte, but judges a body of exactly 64 KiB by its content (400: title too long)', async () => {
    const user = await newUser();
    const atLimit = await call('POST', '/boards', { token: user.token, rawBody: titleBodyOfSize(MAX_BODY_BYTES), headers: json });
    expectProblem(atLimit, 400);
    const overLimit = await call('POST', '/boards', {
      token: user.token,
      rawBody: titleBodyOfSize(MAX_BODY_BYTES + 1),
      headers: json,
    });
    expectProblem(overLimit, 413);
    expect(await listBoards(user)).toEqual([]);
  });

  it('answers 413 for an oversized registration body (a public route)', async () => {
    const reply = await call('POST', '/auth/register', {
      body: { email: `${unknownId()}@example.test`, password: 'p'.repeat(MAX_BODY_BYTES), display_name: 'Big' },
    });
    expectProblem(reply, 413);
  });

  it('answers 415 problem+json for a JSON body sent as text/plain and creates nothing', async () => {
    const user = await newUser();
    const reply = await call('POST', '/boards', {
      token: user.token,
      rawBody: JSON.stringify({ title: 'Roadmap' }),
      headers: { 'content-type': 'text/plain' },
    });
    expectProblem(reply, 415);
    expect(await listBoards(user)).toEqual([]);
  });

  it('answers 415 for a form-encoded body on PATCH and leaves the board unchanged', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Unchanged');
    const reply = await call('PATCH', `/boards/${board.id}`, {
      token: user.token,
      rawBody: 'title=Changed',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectProblem(reply, 415);
    expect((await call('GET', `/boards/${board.id}`, { token: user.token })).body.title).toBe('Unchanged');
  });

  it('answers 400 for a body that is not UTF-8 and stores nothing (no U+FFFD in a title)', async () => {
    const user = await newUser();
    const notUtf8 = Buffer.concat([Buffer.from('{"title":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const reply = await call('POST', '/boards', {
      token: user.token,
      rawBody: notUtf8,
      headers: json,
    });
    expectProblem(reply, 400);
    expect(reply.body.detail).toBe('The request body is not valid UTF-8.');
    expect(await listBoards(user)).toEqual([]);
  });

  it('counts the bytes sent, not their replacement: 40,000 non-UTF-8 bytes are 400, not 413', async () => {
    const user = await newUser();
    const body = Buffer.concat([Buffer.from('{"title":"'), Buffer.alloc(40_000, 0xff), Buffer.from('"}')]);
    const reply = await call('POST', '/boards', {
      token: user.token,
      rawBody: body,
      headers: json,
    });
    expectProblem(reply, 400);
  });

  it('answers 415 for JSON declared in a charset other than UTF-8 and creates nothing', async () => {
    const user = await newUser();
    const reply = await call('POST', '/boards', {
      token: user.token,
      rawBody: Buffer.from('{"title":"café"}', 'latin1'),
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
    });
    expectProblem(reply, 415);
    expect(reply.body.detail).toBe(
      'Content-Type "application/json; charset=iso-8859-1" is not supported; send the JSON in UTF-8 (charset=utf-8, or no charset).',
    );
    expect(await listBoards(user)).toEqual([]);
  });

  it('accepts application/json with a charset parameter', async () => {
    const user = await newUser();
    const reply = await call('POST', '/boards', {
      token: user.token,
      rawBody: JSON.stringify({ title: 'Charset' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.title).toBe('Charset');
  });
});

describe('ids that are not UUIDs', () => {
  const rowsWithId = concreteRows.filter((row) => row.path.includes('{id}'));
  const bodies: Record<string, unknown> = {
    POST: { title: 'x' },
    PATCH: { title: 'x', target_column_id: unknownId() },
  };

  it.each(rowsWithId.map((row) => ({ method: row.method as string, path: row.path })))(
    '$method $path with a non-UUID path id answers 400 problem+json',
    async ({ method, path }) => {
      const user = await newUser();
      const body = path.endsWith('/move') ? { target_column_id: unknownId() } : bodies[method];
      expectProblem(await call(method, concretePath(path, 'not-a-uuid'), { token: user.token, body }), 400);
    },
  );

  it.each([
    ['target_column_id', { target_column_id: 'not-a-uuid' }],
    ['before_id', { before_id: 'not-a-uuid' }],
    ['after_id', { after_id: '1234' }],
  ])('a card move with a non-UUID %s answers 400 and leaves the card where it was', async (_field, ids) => {
    const user = await newUser();
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const card = await newCard(user, column.id);
    const reply = await call('PATCH', `/cards/${card.id}/move`, {
      token: user.token,
      body: { target_column_id: column.id, ...ids },
    });
    expectProblem(reply, 400);
    expect((await call('GET', `/cards/${card.id}`, { token: user.token })).body).toEqual(card);
  });
});

describe('problem bodies', () => {
  const FORBIDDEN = [
    'exception',
    'dynamodb',
    'stack',
    'task-board-local', // the local table name
    'board#',
    'card#',
    'column#',
    'user#',
    'email#',
    '#lookup',
    '#member',
    'conditionalcheck',
    'transactioncanceled',
    'node_modules',
    '.ts:',
  ];

  it('never carry exception names, storage names, keys or stack traces, and keep one title per kind', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    const registered = { email: `${unknownId()}@example.test`, password: 'password-1', display_name: 'Dup' };
    expect((await call('POST', '/auth/register', { body: registered })).status).toBe(201);

    const problems: [number, Reply][] = [
      [400, await call('POST', '/boards', { token: owner.token, rawBody: '{"title":', headers: json })],
      [400, await call('POST', '/boards', { token: owner.token, body: { title: 42 } })],
      [400, await call('GET', '/boards/not-a-uuid', { token: owner.token })],
      [401, await call('GET', '/boards')],
      [401, await call('GET', '/boards', { headers: { authorization: 'Bearer garbage' } })],
      [401, await call('POST', '/auth/login', { body: { email: registered.email, password: 'wrong-password' } })],
      [403, await call('GET', `/boards/${board.id}`, { token: stranger.token })],
      [403, await call('DELETE', `/boards/${unknownId()}`, { token: stranger.token })],
      [403, await call('GET', `/cards/${card.id}`, { token: stranger.token })],
      [404, await call('GET', `/cards/${unknownId()}`, { token: owner.token })],
      [404, await call('POST', `/columns/${unknownId()}/cards`, { token: owner.token, body: { title: 'x' } })],
      [404, await call('GET', '/nope')],
      [405, await call('PUT', '/boards')],
      [409, await call('POST', '/auth/register', { body: registered })],
      [413, await call('POST', '/boards', { token: owner.token, rawBody: titleBodyOfSize(70_000), headers: json })],
      [
        415,
        await call('POST', '/boards', {
          token: owner.token,
          rawBody: '{"title":"x"}',
          headers: { 'content-type': 'text/plain' },
        }),
      ],
    ];

    const titles = new Map<number, Set<string>>();
    for (const [status, reply] of problems) {
      const body = expectProblem(reply, status);
      expect(body.type).toMatch(/^(about:blank|https?:\/\/\S+)$/);
      const text = JSON.stringify(reply.body).toLowerCase();
      expect({ status, leaks: FORBIDDEN.filter((word) => text.includes(word)) }).toEqual({ status, leaks: [] });
      titles.set(status, (titles.get(status) ?? new Set()).add(body.title));
    }
    // `title` is short and stable per kind: one title per status.
    for (const [status, seen] of titles) expect({ status, titles: seen.size }).toEqual({ status, titles: 1 });
  });
});

describe('CORS', () => {
  const origin = 'https://app.example.test';
  const allowsOrigin = (reply: Reply) => {
    const allowed = reply.headers.get('access-control-allow-origin');
    expect(allowed === '*' || allowed === origin).toBe(true);
  };
  const listOf = (header: string | null) => (header ?? '').split(',').map((item) => item.trim().toLowerCase());

  it('answers a preflight OPTIONS /boards with 204, the origin, the method and the headers allowed, no token needed', async () => {
    const reply = await call('OPTIONS', '/boards', {
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,idempotency-key',
      },
    });
    expect(reply.status).toBe(204);
    allowsOrigin(reply);
    expect(listOf(reply.headers.get('access-control-allow-methods'))).toContain('post');
    // A web client may make a POST safe to retry (Idempotency-Key).
    expect(listOf(reply.headers.get('access-control-allow-headers'))).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']),
    );
    expect(reply.body).toBe('');
  });

  it('answers a preflight for PATCH and DELETE on a board path with 204 and both methods allowed', async () => {
    for (const method of ['PATCH', 'DELETE']) {
      const reply = await call('OPTIONS', `/boards/${unknownId()}`, {
        headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization' },
      });
      expect(reply.status).toBe(204);
      allowsOrigin(reply);
      expect(listOf(reply.headers.get('access-control-allow-methods'))).toContain(method.toLowerCase());
    }
  });

  it('puts access-control-allow-origin on ordinary answers and on errors, so a browser can read both', async () => {
    const user = await newUser();
    allowsOrigin(await call('GET', '/boards', { token: user.token, headers: { origin } }));
    const denied = await call('GET', '/boards', { headers: { origin } });
    expectProblem(denied, 401);
    allowsOrigin(denied);
    // ...and the script may read the headers that tell it what to do next.
    expect(listOf(denied.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(['www-authenticate', 'retry-after', 'idempotent-replayed']),
    );
  });
});

describe('X-Content-Type-Options: nosniff on every answer of the service', () => {
  const nosniff = (reply: Pick<Reply, 'headers'>) => reply.headers.get('x-content-type-options');
  /** A redirect as answered, not followed. */
  const unfollowed = async (path: string) => {
    const response = await fetch(`${baseUrl()}${path}`, { redirect: 'manual' });
    await response.arrayBuffer();
    return { status: response.status, headers: response.headers };
  };

  it('on successes, documents, health and the catch-all answers (200, 201, 204, 308)', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Sniffless');
    const column = await newColumn(user, board.id);
    const card = await newCard(user, column.id);
    const replies = {
      health: await call('GET', '/health'),
      'health, HEAD': await call('HEAD', '/health'),
      openapi: await call('GET', '/openapi.json'),
      asyncapi: await call('GET', '/asyncapi.json'),
      docs: await call('GET', '/docs'),
      'docs file': await call('GET', '/docs/swagger-ui.css'),
      'docs, trailing slash': await unfollowed('/docs/'),
      'board list': await call('GET', '/boards', { token: user.token }),
      'board tree, compressed': await call('GET', `/boards/${board.id}`, {
        token: user.token,
        headers: { 'accept-encoding': 'gzip' },
      }),
      'board create': await call('POST', '/boards', { token: user.token, body: { title: 'Another' } }),
      'card delete': await call('DELETE', `/cards/${card.id}`, { token: user.token }),
      me: await call('GET', '/auth/me', { token: user.token }),
      login: await call('POST', '/auth/login', { body: { email: user.email, password: user.password } }),
    };
    expect(Object.fromEntries(Object.entries(replies).map(([name, reply]) => [name, [reply.status, nosniff(reply)]]))).toEqual({
      health: [200, 'nosniff'],
      'health, HEAD': [200, 'nosniff'],
      openapi: [200, 'nosniff'],
      asyncapi: [200, 'nosniff'],
      docs: [200, 'nosniff'],
      'docs file': [200, 'nosniff'],
      'docs, trailing slash': [308, 'nosniff'],
      'board list': [200, 'nosniff'],
      'board tree, compressed': [200, 'nosniff'],
      'board create': [201, 'nosniff'],
      'card delete': [204, 'nosniff'],
      me: [200, 'nosniff'],
      login: [200, 'nosniff'],
    });
  });

  it('on problems, those refused before the handler included (400, 401, 403, 404, 405, 413, 415)', async () => {
    const user = await newUser();
    const replies = {
      'unknown path': await call('GET', '/nope'),
      'wrong method': await call('PUT', '/boards', { body: { title: 'x' } }),
      'no token': await call('GET', '/boards'),
      'bad token': await call('GET', '/boards', { token: 'not-a-token' }),
      'wrong password': await call('POST', '/auth/login', { body: { email: user.email, password: 'not-the-password' } }),
      'malformed JSON': await call('POST', '/boards', { token: user.token, rawBody: '{"title":', headers: json }),
      'schema refused': await call('POST', '/boards', { token: user.token, body: { title: '' } }),
      'id not a UUID': await call('GET', '/boards/not-a-uuid', { token: user.token }),
      'not a member': await call('GET', `/boards/${unknownId()}`, { token: user.token }),
      'card not found': await call('GET', `/cards/${unknownId()}`, { token: user.token }),
      'body over 64 KiB': await call('POST', '/boards', {
        token: user.token,
        rawBody: titleBodyOfSize(MAX_BODY_BYTES + 1),
        headers: json,
      }),
      'not JSON': await call('POST', '/boards', {
        token: user.token,
        rawBody: 'title=x',
        headers: { 'content-type': 'text/plain' },
      }),
      'unknown docs file': await call('GET', '/docs/nope.js'),
    };
    for (const reply of Object.values(replies)) expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(Object.fromEntries(Object.entries(replies).map(([name, reply]) => [name, [reply.status, nosniff(reply)]]))).toEqual({
      'unknown path': [404, 'nosniff'],
      'wrong method': [405, 'nosniff'],
      'no token': [401, 'nosniff'],
      'bad token': [401, 'nosniff'],
      'wrong password': [401, 'nosniff'],
      'malformed JSON': [400, 'nosniff'],
      'schema refused': [400, 'nosniff'],
      'id not a UUID': [400, 'nosniff'],
      'not a member': [403, 'nosniff'],
      'card not found': [404, 'nosniff'],
      'body over 64 KiB': [413, 'nosniff'],
      'not JSON': [415, 'nosniff'],
      'unknown docs file': [404, 'nosniff'],
    });
  });
});
