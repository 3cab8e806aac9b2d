import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { keys } from '../../lib/data/table';
import { addMember, baseUrl, call, newBoard, newCard, newColumn, newUser, type TestUser } from '../support/api';
import { deafen } from '../support/deaf-socket';
import { useLocalTable } from '../support/local-table';

/**
 * examples/browser-watch.html and examples/board-watch.js in a real browser (the system's
 * Chromium, driven by puppeteer-core, which downloads no browser), against the local stack: the
 * page keeps a copy of a board from its tree and its events; after a reconnect it catches up from
 * the board's log (and from the tree again when the log no longer has what it missed), and its
 * copy is then exactly the tree the server returns.
 */

const EXAMPLES = join(__dirname, '../../examples');
const table = useLocalTable();

/** Chromium from PATH (Debian's `chromium`; `apt-get install -y chromium`, as .ci/run does). */
function chromiumPath(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new Error('No chromium on PATH: install it (apt-get install -y chromium), see README "Quick start"');
}

let browser: Browser | undefined;
let launching: Promise<Browser> | undefined;
let examples: Server;
let examplesOrigin: string;
const problems: string[] = [];

beforeAll(async () => {
  // The example files over HTTP on the loopback address, as a developer serves a page.
  examples = createServer((request, response) => {
    const name = new URL(request.url ?? '/', 'http://x').pathname.slice(1);
    const types: Record<string, string> = { 'browser-watch.html': 'text/html', 'board-watch.js': 'text/javascript' };
    if (!types[name]) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': `${types[name]}; charset=utf-8` }).end(readFileSync(join(EXAMPLES, name)));
  });
  await new Promise<void>((resolve) => examples.listen(0, '127.0.0.1', resolve));
  examplesOrigin = `http://127.0.0.1:${(examples.address() as AddressInfo).port}`;
  launching = puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // /dev/shm is 64 MB in a default container: Chromium then uses /tmp instead.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  browser = await launching;
}, 300_000);

afterAll(async () => {
  await (browser ?? (await launching?.catch(() => undefined)))?.close();
  await new Promise((resolve) => examples?.close(resolve));
});

/** The example page, logged in as `user` and watching `boardId`. */
async function openExample(user: TestUser, boardId: string): Promise<Page> {
  const page = await browser!.newPage();
  // Hang guards inside jest's own: the machine is small and shared.
  page.setDefaultTimeout(120_000);
  page.on('pageerror', (error) => problems.push(`page error: ${error}`));
  page.on('console', (message) => {
    // Chromium logs every 4xx answer; the 410 of a log past its retention is the page's to handle.
    if (message.type() === 'error' && !/status of 410 \(Gone\)/.test(message.text())) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  const query = new URLSearchParams({ api: baseUrl(), board: boardId });
  await page.goto(`${examplesOrigin}/browser-watch.html?${query}`);
  await page.type('#email', user.email);
  await page.type('#password', user.password);
  await page.click('#watch');
  // Watching: the socket's watch.ack has arrived.
  await page.waitForSelector('xpath///div[@id="notes"][contains(., "watching; the board is at seq")]');
  return page;
}

/** The page's copy of the board, once it has applied every change up to `seq`. */
async function copyAt(page: Page, seq: number) {
  await page.waitForFunction((at) => (globalThis as any).watcher?.board()?.seq >= at, {}, seq);
  return page.evaluate(() => (globalThis as any).watcher.board());
}

/** The page's copy equals the tree the server returns now (same data, same order). */
async function expectSameTree(page: Page, user: TestUser, boardId: string) {
  const tree = (await call('GET', `/boards/${boardId}`, { token: user.token })).body;
  expect(await copyAt(page, tree.seq)).toEqual(tree);
  return tree;
}

const notes = (page: Page) => page.$eval('#notes', (element) => element.textContent ?? '');

async function ok(status: number, reply: Promise<{ status: number; body: any }>) {
  const answer = await reply;
  expect({ status: answer.status, body: answer.body }).toEqual({ status, body: expect.anything() });
  return answer.body;
}

describe('examples/browser-watch.html in Chromium', () => {
  afterEach(() => expect(problems.splice(0)).toEqual([]));

  it('keeps a copy equal to the tree: live changes, then changes by two users missed while away and caught up from the log', async () => {
    const [owner, member] = await Promise.all([newUser(), newUser()]);
    const board = await newBoard(owner, 'Seen in a browser');
    const todo = await newColumn(owner, board.id, 'To do');
    const first = await newCard(owner, todo.id, { title: 'First' });
    await addMember(owner, board.id, member);
    const page = await openExample(member, board.id);
    await expectSameTree(page, member, board.id);
    expect(await page.$eval('#title', (element) => element.textContent)).toBe('Seen in a browser');

    // Live.
    await ok(201, call('POST', `/columns/${todo.id}/cards`, { token: owner.token, body: { title: 'Second' } }));
    await expectSameTree(page, member, board.id);

    // Missed: the socket hears nothing of these, then is closed; the page reconnects.
    const socket = await deafen(table, board.id);
    const done = await ok(201, call('POST', `/boards/${board.id}/columns`, { token: member.token, body: { title: 'Done' } }));
    const urgent = await ok(
      201,
      call('POST', `/boards/${board.id}/labels`, { token: owner.token, body: { name: 'urgent', color: '#d73a4a' } }),
    );
    const later = await ok(
      201,
      call('POST', `/boards/${board.id}/labels`, { token: member.token, body: { name: 'later', color: '#0e8a16' } }),
    );
    await ok(200, call('PUT', `/cards/${first.id}/labels/${urgent.id}`, { token: owner.token }));
    await ok(200, call('PUT', `/cards/${first.id}/labels/${later.id}`, { token: member.token }));
    // Renamed after 'urgent': the card's label_ids change order with no card event.
    await ok(200, call('PATCH', `/labels/${later.id}`, { token: owner.token, body: { name: 'zzz later' } }));
    await ok(200, call('PATCH', `/cards/${first.id}/move`, { token: member.token, body: { target_column_id: done.id } }));
    await ok(200, call('PATCH', `/columns/${done.id}/move`, { token: owner.token, body: { after_id: todo.id } }));
    await ok(200, call('PATCH', `/columns/${todo.id}`, { token: owner.token, body: { title: 'Doing' } }));
    await ok(200, call('PATCH', `/boards/${board.id}`, { token: owner.token, body: { title: 'Renamed while away' } }));
    const doomed = await ok(201, call('POST', `/columns/${todo.id}/cards`, { token: member.token, body: { title: 'Doomed' } }));
    expect((await call('DELETE', `/cards/${doomed.id}`, { token: owner.token })).status).toBe(204);
    const missedFrom = (await copyAt(page, 0)).seq;
    await socket.drop();
    const tree = await expectSameTree(page, member, board.id);
    expect(tree.seq - missedFrom).toBe(12);
    expect(tree.columns.map((column: { title: string }) => column.title)).toEqual(['Done', 'Doing']);
    expect(await notes(page)).toContain(`caught up: 12 missed change(s) applied, now at seq ${tree.seq}`);
    expect(await page.$eval('#title', (element) => element.textContent)).toBe('Renamed while away');

    // Live again after the catch-up.
    expect((await call('DELETE', `/labels/${urgent.id}`, { token: owner.token })).status).toBe(204);
    await expectSameTree(page, member, board.id);
    await page.close();
  });

  it('fills a gap in the live events from the log without reconnecting', async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Gappy');
    const column = await newColumn(owner, board.id, 'Only');
    const page = await openExample(owner, board.id);
    await expectSameTree(page, owner, board.id);
    const socket = await deafen(table, board.id);
    // Lost on the way: never sent to the page's socket.
    const card = await newCard(owner, column.id, { title: 'Lost' });
    await ok(200, call('PATCH', `/cards/${card.id}`, { token: owner.token, body: { title: 'Lost twice' } }));
    await socket.restore();
    // Heard, after a gap: the page reads the two lost ones from the log first.
    await ok(200, call('PATCH', `/columns/${column.id}`, { token: owner.token, body: { title: 'Heard' } }));
    const tree = await expectSameTree(page, owner, board.id);
    expect(tree.columns[0].cards.map((c: { title: string }) => c.title)).toEqual(['Lost twice']);
    expect((await notes(page)).match(/watching; /g)).toHaveLength(1);
    await page.close();
  });

  it('reads the tree again when the missed changes are no longer kept (410), then goes on live; board.deleted ends it', async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Forgetful');
    const column = await newColumn(owner, board.id, 'Only');
    const page = await openExample(owner, board.id);
    await expectSameTree(page, owner, board.id);

    const socket = await deafen(table, board.id);
    const card = await newCard(owner, column.id, { title: 'Missed' });
    await ok(200, call('PATCH', `/cards/${card.id}`, { token: owner.token, body: { title: 'Missed twice' } }));
    // The first missed event is gone from the log, as TTL removes one past its retention.
    const { seq } = await copyAt(page, 0);
    await table.client.send(new DeleteCommand({ TableName: table.name, Key: keys.logEntry(board.id, seq + 1) }));
    await socket.drop();
    await expectSameTree(page, owner, board.id);
    expect(await notes(page)).toContain(`the changes after seq ${seq} are no longer kept: reading the board again`);

    await ok(201, call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: 'Live' } }));
    await expectSameTree(page, owner, board.id);

    expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
    await page.waitForFunction(() => (globalThis as any).watcher.board() === null);
    expect(await page.$eval('#title', (element) => element.textContent)).toBe('The board was deleted');
    // The log went with the board: its events route answers as the tree does.
    expect((await call('GET', `/boards/${board.id}/events`, { token: owner.token })).status).toBe(403);
    await page.close();
  });
});
