import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { COMPRESS_MIN_BYTES } from '../../lib/http/compress';
import { newBoard, newCard, newColumn, newUser, type RawReply, rawGet, type TestUser } from '../support/api';

/**
 * Compressed answers, over HTTP against the local stack: a board tree comes compressed to a client
 * that accepts brotli or gzip, with `Vary: Accept-Encoding`, and as plain JSON to one that sends
 * no Accept-Encoding. fetch would decompress transparently (and send its own Accept-Encoding), so
 * these requests use node:http, which sends only the headers given and hands over raw bytes.
 */

const varyNames = (reply: RawReply) =>
  String(reply.headers.vary ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());

describe('GET /boards/{id} compressed on the wire', () => {
  let owner: TestUser;
  let path: string;
  let plain: RawReply;

  beforeAll(async () => {
    owner = await newUser();
    const board = await newBoard(owner, 'Compressed');
    const column = await newColumn(owner, board.id, 'To do');
    for (let n = 0; n < 4; n++) {
      await newCard(owner, column.id, {
        title: `Card ${n}`,
        description: `Step ${n}: write the test, run it, read the failure, fix the code, run it again. `.repeat(4),
      });
    }
    path = `/boards/${board.id}`;
    plain = await rawGet(path, { authorization: `Bearer ${owner.token}` });
  });

  it('without Accept-Encoding: identity JSON, no content-encoding, Vary still says accept-encoding', () => {
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('application/json');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(varyNames(plain)).toContain('accept-encoding');
    expect(plain.bytes.length).toBeGreaterThan(COMPRESS_MIN_BYTES);
    const tree = JSON.parse(plain.bytes.toString('utf8'));
    expect(tree.columns[0].cards).toHaveLength(4);
  });

  it('accept-encoding: br → brotli bytes, smaller than plain, the same JSON once decoded', async () => {
    const reply = await rawGet(path, { authorization: `Bearer ${owner.token}`, 'accept-encoding': 'br' });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-encoding']).toBe('br');
    expect(reply.headers['content-type']).toBe('application/json');
    expect(varyNames(reply)).toContain('accept-encoding');
    expect(reply.bytes.length).toBeLessThan(plain.bytes.length);
    expect(brotliDecompressSync(reply.bytes).toString('utf8')).toBe(plain.bytes.toString('utf8'));
  });

  it('accept-encoding: gzip → gzip bytes, smaller than plain, the same JSON once decoded', async () => {
    const reply = await rawGet(path, { authorization: `Bearer ${owner.token}`, 'accept-encoding': 'gzip' });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-encoding']).toBe('gzip');
    expect(varyNames(reply)).toContain('accept-encoding');
    expect(reply.bytes.length).toBeLessThan(plain.bytes.length);
    expect(gunzipSync(reply.bytes).toString('utf8')).toBe(plain.bytes.toString('utf8'));
  });

  it('a browser\'s "gzip, deflate, br, zstd" gets brotli; "br;q=0, gzip" gets gzip', async () => {
    const browser = await rawGet(path, { authorization: `Bearer ${owner.token}`, 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(browser.headers['content-encoding']).toBe('br');
    const noBrotli = await rawGet(path, { authorization: `Bearer ${owner.token}`, 'accept-encoding': 'br;q=0, gzip' });
    expect(noBrotli.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(noBrotli.bytes).toString('utf8')).toBe(plain.bytes.toString('utf8'));
  });

  it('accept-encoding: identity → plain JSON', async () => {
    const reply = await rawGet(path, { authorization: `Bearer ${owner.token}`, 'accept-encoding': 'identity' });
    expect(reply.headers['content-encoding']).toBeUndefined();
    expect(reply.bytes.toString('utf8')).toBe(plain.bytes.toString('utf8'));
  });

  it('a small answer (GET /health) is sent as is, even to a client that accepts brotli', async () => {
    const reply = await rawGet('/health', { 'accept-encoding': 'br, gzip' });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(reply.bytes.toString('utf8'))).toEqual({ status: 'ok' });
  });
});

describe('GET /boards/{id} too large for one answer', () => {
  it("a tree under 6 MB as text but over it as the JSON Lambda returns (escaped quotes) is the 422, never the gateway's 500", async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Quoted');
    const columns = [];
    for (let c = 0; c < 4; c++) columns.push(await newColumn(owner, board.id, `Quotes ${c}`));
    // The longest description allowed, all quotes: each `"` is 2 bytes in the tree's JSON (3.3 MB
    // for 100 cards) and 4 in the function's answer, where the body is a JSON string (6.6 MB).
    const description = '"'.repeat(16_384);
    // One writer per column (creates in one column are serialised), the columns in parallel.
    await Promise.all(
      columns.map(async (column) => {
        for (let n = 0; n < 25; n++) await newCard(owner, column.id, { title: `Card ${n}`, description });
      }),
    );
    const reply = await rawGet(`/boards/${board.id}`, { authorization: `Bearer ${owner.token}` });
    expect({ status: reply.status, type: reply.headers['content-type'] }).toEqual({
      status: 422,
      type: 'application/problem+json',
    });
    const problem = JSON.parse(reply.bytes.toString('utf8'));
    expect(problem.columns).toEqual(columns.map((column) => ({ id: column.id, title: column.title, cards: 25 })));
    expect(problem.detail).toMatch(/Accept-Encoding/);

    // Compressed, it fits.
    const compressed = await rawGet(`/boards/${board.id}`, { authorization: `Bearer ${owner.token}`, 'accept-encoding': 'br' });
    expect(compressed.status).toBe(200);
    const tree = JSON.parse(brotliDecompressSync(compressed.bytes).toString('utf8'));
    expect(tree.columns.flatMap((column: { cards: unknown[] }) => column.cards)).toHaveLength(100);
  });
});
