import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { stopWhenOrphaned } from '../infra/local/orphan';
import { fetchFailure } from './fetch-failure';

/**
 * `npm run watch -- <board_id>`: logs in and prints a board's events, one JSON line each, the way
 * a client should consume them (docs/asyncapi.yaml, "Catching up"): it watches after every
 * (re)connect, pings so that API Gateway's 10-minute idle limit never closes the socket, and on
 * `token.expired` or any close logs in again and reconnects with a new ticket. Nothing is lost
 * across a reconnect: the first `watch.ack` sets where it starts; after a reconnect it reads what
 * it missed from the board's log (`GET /boards/{id}/events?after=<last seq printed>`, page by
 * page), prints it in order, then the live events; an event twice (at-least-once delivery) or
 * already printed is dropped by its `seq`. When the missed events are no longer kept (410
 * `resync_required`), it says so on stderr, prints the board as read again on one line
 * `{"type": "board.tree", "board_id": …, "seq": …, "board": <GET /boards/{id}>}` (not a server
 * frame) and goes on from its `seq`.
 *
 *   TASK_BOARD_EMAIL=ada@example.com TASK_BOARD_PASSWORD='correct horse' npm run watch -- <board_id>
 *
 * Options: --url (default TASK_BOARD_URL or http://127.0.0.1:3000), --email, --password.
 */
const USAGE =
  'usage: TASK_BOARD_EMAIL=… TASK_BOARD_PASSWORD=… npm run watch -- <board_id> [--url http://127.0.0.1:3000] [--email …] [--password …]';
let parsed: ReturnType<typeof parseOptions>;
try {
  parsed = parseOptions();
} catch (error) {
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
function parseOptions() {
  return parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const boardId = positionals[0];
const baseUrl = (values.url ?? process.env.TASK_BOARD_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
const email = values.email ?? process.env.TASK_BOARD_EMAIL;
const password = values.password ?? process.env.TASK_BOARD_PASSWORD;
if (!boardId || !email || !password) {
  console.error(USAGE);
  process.exit(2);
}

const PING_EVERY_MS = 5 * 60 * 1000;
const note = (message: string, fields: Record<string, unknown> = {}) =>
  console.error(JSON.stringify({ note: message, at: new Date().toISOString(), ...fields }));

async function request(method: 'GET' | 'POST', path: string, { body, token }: { body?: unknown; token?: string } = {}) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: unknown) => {
    throw new Error(`${baseUrl} did not answer: ${fetchFailure(error)}`);
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : undefined;
  return { status: response.status, ok: response.ok, body: parsed, text };
}

async function postJson(path: string, body: unknown, token?: string) {
  const answer = await request('POST', path, { body, token });
  if (!answer.ok) throw new Error(`${path} answered ${answer.status}: ${answer.body?.detail ?? answer.text}`);
  return answer.body;
}

interface BoardEvent {
  type: string;
  seq?: number;
  [field: string]: unknown;
}

let stopping = false;
let socket: WebSocket | undefined;
/** The access token of the current connection: the log and the tree are read with it. */
let token = '';
/** The `seq` of the last event printed; unknown until the first `watch.ack`. */
let last: number | undefined;
/** Events received but not printed yet, by `seq`: ahead of a gap, or before `last` is known. */
const held = new Map<number, BoardEvent>();
/** A read of the log (or of the tree) is under way: live events wait in `held` meanwhile. */
let catchingUp = false;

async function connect(): Promise<void> {
  ({ token } = await postJson('/auth/login', { email, password }));
  const { ticket, url } = await postJson('/realtime/tickets', undefined, token);
  const ws = new WebSocket(`${url}?ticket=${encodeURIComponent(ticket)}`);
  socket = ws;
  const pinger = setInterval(
    () => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ action: 'ping' })),
    PING_EVERY_MS,
  );
  ws.on('open', () => ws.send(JSON.stringify({ action: 'watch', board_id: boardId })));
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as BoardEvent;
    if (frame.type === 'pong') return;
    if (typeof frame.seq === 'number' && frame.type !== 'watch.ack') return hold(frame);
    console.log(JSON.stringify(frame));
    if (frame.type === 'watch.ack') return acknowledged(frame.seq ?? 0, ws);
    // Out of reach (access.revoked carries no seq: it is this watcher's alone): the watch is over.
    if (frame.type === 'access.revoked') finish(0);
    if (frame.type === 'error') {
      const { code } = frame as { code?: string };
      // A watch refused (not a member, no such board, not a board id) is a failure; any other
      // error (storage unavailable, internal) is met by reconnecting and watching again.
      if (code === 'forbidden' || code === 'bad_request') finish(1);
      else ws.close();
    }
  });
  ws.on('unexpected-response', (_request, response) => note('handshake refused', { status: response.statusCode }));
  ws.on('error', (error) => note('socket error', { error: error.message }));
  ws.on('close', (code) => {
    clearInterval(pinger);
    if (stopping) return;
    note('socket closed; reconnecting', { code });
    setTimeout(() => void connect().catch(retry), 1000);
  });
}

/** The watch is made: every event above `seq` reaches this socket; what lies between is in the log. */
function acknowledged(seq: number, ws: WebSocket) {
  if (last === undefined) last = seq; // the first watch: print what happens from now on
  if (seq > last) void catchUp(ws);
  else printHeld(ws);
}

/** A board event: printed in `seq` order, once. */
function hold(event: BoardEvent) {
  const seq = event.seq!;
  if (last !== undefined && seq <= last) return; // a redelivery, or already read from the log
  held.set(seq, event);
  if (socket) printHeld(socket);
}

/** Prints the held events that follow `last`; a gap before the next one is read from the log. */
function printHeld(ws: WebSocket) {
  if (last === undefined || catchingUp) return;
  for (let next = held.get(last + 1); next; next = held.get(last + 1)) print(next);
  for (const seq of held.keys()) if (seq <= last) held.delete(seq);
  if (held.size > 0) void catchUp(ws);
}

function print(event: BoardEvent) {
  held.delete(event.seq!);
  last = event.seq!;
  console.log(JSON.stringify(event));
  // The board's last event: the watch is over.
  if (event.type === 'board.deleted') finish(0);
}

/**
 * Reads the events after `last` from the board's log, page by page, until the board's latest,
 * printing each in order; on 410 reads the tree and goes on from its `seq`. A failure closes the
 * socket: the reconnect catches up again from where this stopped.
 */
async function catchUp(ws: WebSocket) {
  if (catchingUp || last === undefined) return;
  catchingUp = true;
  const from = last;
  try {
    for (;;) {
      const page = await request('GET', `/boards/${boardId}/events?after=${last}&limit=1000`, { token });
      if (page.status === 410 && page.body?.code === 'resync_required') {
        await resync(from);
        break;
      }
      if (!page.ok) throw new Error(`the board's events answered ${page.status}: ${page.body?.detail ?? page.text}`);
      const { events, latest_seq } = page.body as { events: BoardEvent[]; latest_seq: number };
      for (const event of events) if (event.seq === last + 1 && !stopping) print(event);
      if (stopping || events.length === 0 || last >= latest_seq) break;
    }
    if (last > from) note('caught up from the log', { after: from, printed: last - from, seq: last });
  } catch (error) {
    note('could not catch up; reconnecting', { error: (error as Error).message });
    ws.close();
  } finally {
    catchingUp = false;
  }
  if (!stopping) printHeld(ws);
}

/** The events after `from` are no longer kept: the board as it is now, and its `seq` to go on from. */
async function resync(from: number) {
  const tree = await request('GET', `/boards/${boardId}`, { token });
  if (!tree.ok) throw new Error(`the board answered ${tree.status}: ${tree.body?.detail ?? tree.text}`);
  const seq = tree.body.seq as number;
  note('the events missed are no longer kept (410 resync_required): the board was read again', { after: from, seq });
  console.log(JSON.stringify({ type: 'board.tree', board_id: boardId, seq, board: tree.body }));
  last = Math.max(last ?? 0, seq);
}

function retry(error: Error) {
  note('could not connect; retrying in 5 s', { error: error.message });
  setTimeout(() => void connect().catch(retry), 5000);
}

function finish(exitCode: number) {
  if (stopping) return;
  stopping = true;
  socket?.close();
  // After what was printed has reached a pipe (its writes are asynchronous).
  process.stdout.write('', () => process.exit(exitCode));
}
const stop = () => finish(0);
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
stopWhenOrphaned(stop);

connect().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
