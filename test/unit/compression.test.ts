import { randomBytes, randomUUID } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as getBoard } from '../../functions/boards/get';
import { handler as listBoards } from '../../functions/boards/list';
import { handler as health } from '../../functions/health';
import { handler as openapi } from '../../functions/openapi';
import { accessTokenVerifier } from '../../lib/auth/verifier';
import { documentClient } from '../../lib/data/db';
import { keys } from '../../lib/data/table';
import { COMPRESS_MIN_BYTES, negotiateEncoding } from '../../lib/http/compress';
import { lambdaLimits } from '../../lib/runtime/aws-limits';
import { apiEvent } from '../support/events';
import { accessClaims, makeSigner } from '../support/tokens';

/**
 * Answers are compressed in the shared chain when the client accepts it, and an
 * answer that still does not fit in what Lambda may return (6 MB) is a clear problem+json 422
 * that says how to read the board in parts, never the gateway's 500. The handlers are the real
 * ones; DynamoDB is stubbed (aws-sdk-client-mock) on the DocumentClient they share.
 */

// Building and compressing answers of several MB on a loaded machine.
jest.setTimeout(120_000);

const context = {} as Context;

function withHeaders(event: APIGatewayProxyEventV2, headers: Record<string, string>): APIGatewayProxyEventV2 {
  return { ...event, headers: { ...event.headers, ...headers } };
}

/** The body's bytes as the client receives them (base64 decoded when the function says so). */
const wireBytes = (reply: APIGatewayProxyStructuredResultV2) =>
  Buffer.from(reply.body ?? '', reply.isBase64Encoded ? 'base64' : 'utf8');

/** What the Lambda runtime returns to the HTTP API, and what the 6 MB limit counts. */
const lambdaPayloadBytes = (reply: APIGatewayProxyStructuredResultV2) => Buffer.byteLength(JSON.stringify(reply));

describe('negotiateEncoding (Accept-Encoding, RFC 9110 §12.5.3)', () => {
  it.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['br, gzip', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['deflate, gzip', 'gzip'],
  ])('prefers brotli, else gzip: %j → %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });

  it.each([
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0.2, gzip;q=0.8', 'gzip'],
    ['br;q=0.8, gzip;q=0.2', 'br'],
    ['gzip;q=0.5, br;q=0.5', 'br'],
    ['br;q=1.0, gzip', 'br'],
    ['gzip;q=0.001', 'gzip'],
  ])('follows q-values: %j → %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });

  it.each([
    ['br;q=0, gzip', 'gzip'],
    ['gzip, br;q=0', 'gzip'],
    ['br;q=0.000, gzip;q=0.5', 'gzip'],
    ['br;q=0, gzip;q=0', undefined],
    ['gzip;q=0', undefined],
  ])('q=0 refuses an encoding: %j → %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });

  it.each([
    ['*', 'br'],
    ['*;q=0.5', 'br'],
    ['br;q=0, *', 'gzip'],
    ['gzip;q=0, *', 'br'],
    ['*;q=0', undefined],
    ['identity, *;q=0', undefined],
    ['gzip, *;q=0', 'gzip'],
    ['br;q=0.1, *;q=0.5', 'gzip'],
  ])('`*` stands for every encoding not named: %j → %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });

  it.each([
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['identity;q=1', undefined],
    ['deflate', undefined],
    ['compress, x-zip', undefined],
    ['zstd', undefined],
  ])('nothing this service sends: %j → none', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });

  it.each([
    [',,,', undefined],
    [';;;', undefined],
    ['   ', undefined],
    ['br;q=abc', undefined],
    ['br;q=abc, gzip', 'gzip'],
    ['br;q=-1, gzip', 'gzip'],
    ['\u0000\uffff', undefined],
    ['br;;;, ,gzip', 'br'],
    ['bro, gzipx, brgzip', undefined],
  ])('garbage never throws and never invents an encoding: %j → %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });

  it.each([
    ['BR', 'br'],
    ['GZIP', 'gzip'],
    ['Gzip, Br', 'br'],
    ['br;Q=0, gzip', 'gzip'],
    ['BR;Q=0.1, GZip;q=0.9', 'gzip'],
  ])('is case-insensitive: %j → %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });

  it.each([
    ['  br  ,  gzip  ', 'br'],
    ['br; q=0, gzip', 'gzip'],
    ['br ;q=0, gzip', 'gzip'],
    ['br ; q=0, gzip', 'gzip'],
    ['gzip ;q=0.9, br ;q=0.1', 'gzip'],
    ['br ;q=0, *', 'gzip'],
  ])('allows optional whitespace around ";" (RFC 9110 §12.4.2 weight = OWS ";" OWS "q="): %j → %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });
});

describe('the shared chain compresses what is worth it', () => {
  const publicEvent = (path: string, headers: Record<string, string> = {}) => {
    const event = apiEvent('', 'GET', path);
    return { ...event, headers };
  };
  let plainOpenApi: string;

  beforeAll(async () => {
    const reply = await openapi(publicEvent('/openapi.json'), context);
    expect(reply.statusCode).toBe(200);
    plainOpenApi = reply.body!;
  });

  it('GET /openapi.json is big enough to be worth compressing', () => {
    expect(Buffer.byteLength(plainOpenApi)).toBeGreaterThan(50 * COMPRESS_MIN_BYTES);
    expect(() => JSON.parse(plainOpenApi)).not.toThrow();
  });

  it('accept-encoding: br → brotli, base64 for the HTTP API, Vary, and the same JSON once decoded', async () => {
    const reply = await openapi(publicEvent('/openapi.json', { 'accept-encoding': 'br' }), context);
    expect(reply.statusCode).toBe(200);
    expect(reply.headers).toMatchObject({
      'content-type': 'application/json',
      'content-encoding': 'br',
      vary: 'accept-encoding',
      // The route's own headers survive compression.
      'cache-control': 'public, max-age=300',
    });
    expect(reply.isBase64Encoded).toBe(true);
    const wire = wireBytes(reply);
    expect(brotliDecompressSync(wire).toString('utf8')).toBe(plainOpenApi);
    expect(wire.length).toBeLessThan(Buffer.byteLength(plainOpenApi) / 4);
  });

  it('accept-encoding: gzip → gzip, and the same JSON once decoded', async () => {
    const reply = await openapi(publicEvent('/openapi.json', { 'accept-encoding': 'gzip' }), context);
    expect(reply.headers).toMatchObject({ 'content-encoding': 'gzip', vary: 'accept-encoding' });
    expect(reply.isBase64Encoded).toBe(true);
    const wire = wireBytes(reply);
    expect(gunzipSync(wire).toString('utf8')).toBe(plainOpenApi);
    expect(wire.length).toBeLessThan(Buffer.byteLength(plainOpenApi) / 4);
  });

  it("a browser's header (gzip, deflate, br, zstd) gets brotli", async () => {
    const reply = await openapi(publicEvent('/openapi.json', { 'accept-encoding': 'gzip, deflate, br, zstd' }), context);
    expect(reply.headers?.['content-encoding']).toBe('br');
    expect(brotliDecompressSync(wireBytes(reply)).toString('utf8')).toBe(plainOpenApi);
  });

  it('no Accept-Encoding → plain JSON, no content-encoding, still Vary', async () => {
    const reply = await openapi(publicEvent('/openapi.json'), context);
    expect(reply.headers).toMatchObject({ 'content-type': 'application/json', vary: 'accept-encoding' });
    expect(reply.headers).not.toHaveProperty('content-encoding');
    expect(reply.isBase64Encoded).toBeFalsy();
    expect(JSON.parse(reply.body!)).toMatchObject({ openapi: expect.stringMatching(/^3\.1/) });
  });

  it.each(['identity', 'deflate', 'br;q=0, gzip;q=0', '*;q=0'])('accept-encoding %j → plain JSON', async (header) => {
    const reply = await openapi(publicEvent('/openapi.json', { 'accept-encoding': header }), context);
    expect(reply.headers).not.toHaveProperty('content-encoding');
    expect(reply.isBase64Encoded).toBeFalsy();
    expect(reply.body).toBe(plainOpenApi);
  });

  it('a small answer (GET /health) is never compressed, whatever the client accepts', async () => {
    for (const header of ['br', 'gzip', 'gzip, deflate, br', '*']) {
      const reply = await health(publicEvent('/health', { 'accept-encoding': header }), context);
      expect(reply.statusCode).toBe(200);
      expect(Buffer.byteLength(reply.body!)).toBeLessThan(COMPRESS_MIN_BYTES);
      expect(reply.headers).not.toHaveProperty('content-encoding');
      expect(reply.isBase64Encoded).toBeFalsy();
      expect(JSON.parse(reply.body!)).toEqual({ status: 'ok' });
    }
  });
});

// The DocumentClient every handler shares (lib/data/db.ts), stubbed once for the file; one signer
// whose keys the verifier trusts.
const ddb = mockClient(documentClient);
afterAll(() => ddb.restore());
const signer = makeSigner();
accessTokenVerifier.cacheJwks(signer.jwks as any);

describe('GET /boards/{id}: a tree too large for one answer', () => {
  const userId = randomUUID();
  const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
  const boardId = randomUUID();
  const columnId = randomUUID();
  const createdAt = new Date().toISOString();
  const boardEvent = (headers: Record<string, string> = {}) =>
    withHeaders(apiEvent(token, 'GET', `/boards/${boardId}`, undefined, { id: boardId }), headers);

  /** The access check's BatchGetItem finds the board, the caller's membership and profile; the tree is one page. */
  function stubBoard(cards: number, description: (i: number) => string) {
    ddb.reset();
    ddb.on(BatchGetCommand).resolves({
      Responses: {
        [process.env.TABLE_NAME!]: [
          { ...keys.board(boardId), id: boardId, owner_id: userId, title: 'Big', created_at: createdAt, labels: {} },
          { ...keys.member(boardId, userId), board_id: boardId, user_id: userId, role: 'owner' },
          { ...keys.userProfile(userId), user_id: userId },
        ],
      },
    });
    const items = [
      {
        ...keys.column(boardId, columnId),
        id: columnId,
        board_id: boardId,
        title: 'Backlog',
        position: 1,
        created_at: createdAt,
      },
      ...Array.from({ length: cards }, (_, i) => {
        const id = randomUUID();
        return {
          ...keys.card(boardId, id),
          id,
          board_id: boardId,
          column_id: columnId,
          title: `Card ${i}`,
          description: description(i),
          position: i + 1,
          created_at: createdAt,
        };
      }),
    ];
    ddb.on(QueryCommand).resolves({ Items: items });
  }

  /** 450 cards of 16,000 random base64 characters: 7.2 MB of JSON, still over 6 MB compressed (as base64). */
  const INCOMPRESSIBLE_CARDS = 450;
  const incompressible = () => randomBytes(12_000).toString('base64');

  it('the stub reaches the real handler (a small board is 200)', async () => {
    stubBoard(2, () => 'short');
    const reply = await getBoard(boardEvent(), context);
    expect(reply.statusCode).toBe(200);
    const tree = JSON.parse(reply.body!);
    expect(tree).toMatchObject({ id: boardId, columns: [{ id: columnId, title: 'Backlog' }] });
    expect(tree.columns[0].cards).toHaveLength(2);
  });

  it('with Accept-Encoding: br and still over 6 MB compressed → 422 problem+json naming the columns to read one by one', async () => {
    stubBoard(INCOMPRESSIBLE_CARDS, incompressible);
    const reply = await getBoard(boardEvent({ 'accept-encoding': 'br' }), context);
    expect(reply.statusCode).toBe(422);
    expect(reply.headers).toMatchObject({ 'content-type': 'application/problem+json' });
    expect(reply.isBase64Encoded).toBeFalsy();
    const problem = JSON.parse(reply.body!);
    expect(problem).toMatchObject({
      type: expect.any(String),
      title: expect.any(String),
      status: 422,
      code: 'response_too_large',
      columns: [{ id: columnId, title: 'Backlog', cards: INCOMPRESSIBLE_CARDS }],
    });
    expect(problem.detail).toContain('GET /columns/{id}');
    expect(problem.detail).toMatch(/even compressed/);
    expect(problem.detail).not.toMatch(/Accept-Encoding/);
    expect(lambdaPayloadBytes(reply)).toBeLessThan(64 * 1024);
  });

  it('without Accept-Encoding → 422 whose detail says to send Accept-Encoding or read per column', async () => {
    stubBoard(INCOMPRESSIBLE_CARDS, incompressible);
    const reply = await getBoard(boardEvent(), context);
    expect(reply.statusCode).toBe(422);
    expect(reply.headers).toMatchObject({ 'content-type': 'application/problem+json' });
    const problem = JSON.parse(reply.body!);
    expect(problem).toMatchObject({ status: 422, columns: [{ id: columnId, title: 'Backlog', cards: INCOMPRESSIBLE_CARDS }] });
    expect(problem.detail).toContain('GET /columns/{id}');
    expect(problem.detail).toMatch(/Accept-Encoding/);
  });

  it('a tree over 6 MB as JSON fits compressed: 200 brotli for a client that accepts it, 422 for one that does not', async () => {
    // Text that compresses well: 450 cards × 16,000 characters is 7.2 MB as JSON.
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(400).slice(0, 16_000);
    stubBoard(INCOMPRESSIBLE_CARDS, (i) => `${i} ${prose}`);

    const compressed = await getBoard(boardEvent({ 'accept-encoding': 'gzip, br' }), context);
    expect(compressed.statusCode).toBe(200);
    expect(compressed.headers).toMatchObject({ 'content-encoding': 'br', vary: 'accept-encoding' });
    const json = brotliDecompressSync(wireBytes(compressed));
    expect(json.length).toBeGreaterThan(lambdaLimits.responseBytes);
    expect(lambdaPayloadBytes(compressed)).toBeLessThan(lambdaLimits.responseBytes);
    const tree = JSON.parse(json.toString('utf8'));
    expect(tree.columns[0].cards).toHaveLength(INCOMPRESSIBLE_CARDS);
    expect(tree.columns[0].cards[7].description).toBe(`7 ${prose}`);

    const plain = await getBoard(boardEvent(), context);
    expect(plain.statusCode).toBe(422);
    expect(JSON.parse(plain.body!).detail).toMatch(/Accept-Encoding/);
  });

  it('whatever passes the check is within what Lambda returns, counted as Lambda counts it (the JSON-escaped body)', async () => {
    // A plain answer just under the chain's threshold whose text has quotes and line breaks:
    // escaped inside the function's JSON answer (`"` → `\"`, `\n` → `\\n`), it grows by ~10 %.
    const markdown = 'Say "done" when\n"ready" \\ ok. '.repeat(200).slice(0, 4_000);
    const oneCard = {
      id: randomUUID(),
      column_id: columnId,
      title: 'Card 1000',
      description: markdown,
      position: 1000,
      created_at: createdAt,
      label_ids: [],
    };
    // Sized so that the tree's JSON text stays under 6 MB while the JSON Lambda returns (the body
    // escaped again) is over it.
    const cards = Math.floor((lambdaLimits.responseBytes - 20 * 1024) / (Buffer.byteLength(JSON.stringify(oneCard)) + 1));
    stubBoard(cards, () => markdown);
    const reply = await getBoard(boardEvent(), context);
    // Either the answer is within Lambda's limit, or it is the clear 4xx; never the gateway's 500.
    if (reply.statusCode === 200) expect(lambdaPayloadBytes(reply)).toBeLessThanOrEqual(lambdaLimits.responseBytes);
    else expect(reply.statusCode).toBe(422);
  });
});

describe('GET /boards: a list too large for one answer (the spec does not paginate it)', () => {
  const userId = randomUUID();
  const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
  const listEvent = (headers: Record<string, string> = {}) => withHeaders(apiEvent(token, 'GET', '/boards'), headers);

  /** 5,600 boards titled with 256 astral characters (4 bytes each in UTF-8): about 6.5 MB of JSON. */
  const BOARDS = 5_600;
  const randomAstral = (length: number) =>
    String.fromCodePoint(...Array.from({ length }, () => 0x20000 + Math.floor(Math.random() * 0xa6d0)));

  function stubBoards() {
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    const boards = Array.from({ length: BOARDS }, (_, i) => {
      const id = randomUUID();
      return { ...keys.board(id), id, owner_id: userId, title: randomAstral(256), created_at: new Date(start + i).toISOString() };
    });
    // The boards, and the caller's profile (the list reads it with them: a deleted account sees none).
    const byPk = new Map<string, object>(boards.map((board) => [board.pk, board]));
    byPk.set(keys.userProfile(userId).pk, { ...keys.userProfile(userId), user_id: userId });
    ddb.reset();
    ddb.on(QueryCommand).resolves({ Items: boards.map((board) => ({ board_id: board.id })) });
    ddb.on(BatchGetCommand).callsFake((input) => {
      const wanted = Object.values(input.RequestItems)[0] as { Keys: { pk: string }[] };
      return { Responses: { [process.env.TABLE_NAME!]: wanted.Keys.map((key) => byPk.get(key.pk)) } };
    });
    // Newest first, as the list is sorted.
    return boards.map((board) => board.id).reverse();
  }

  it('without Accept-Encoding → 422 naming every board, newest first, to be read one at a time', async () => {
    const newestFirst = stubBoards();
    const reply = await listBoards(listEvent(), context);
    expect(reply.statusCode).toBe(422);
    expect(reply.headers).toMatchObject({ 'content-type': 'application/problem+json' });
    const problem = JSON.parse(reply.body!);
    expect(problem).toMatchObject({ status: 422, code: 'response_too_large', board_ids: newestFirst });
    expect(problem.detail).toMatch(/send Accept-Encoding.*GET \/boards\/\{id\}/);
    expect(lambdaPayloadBytes(reply)).toBeLessThan(lambdaLimits.responseBytes);
  });

  it('with Accept-Encoding: br the same list fits: 200 with every board', async () => {
    const newestFirst = stubBoards();
    const reply = await listBoards(listEvent({ 'accept-encoding': 'br' }), context);
    expect(reply.statusCode).toBe(200);
    const json = brotliDecompressSync(wireBytes(reply));
    expect(json.length).toBeGreaterThan(lambdaLimits.responseBytes);
    expect(JSON.parse(json.toString('utf8')).map((board: { id: string }) => board.id)).toEqual(newestFirst);
  });
});
