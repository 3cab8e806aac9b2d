import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { stopWhenOrphaned } from '../infra/local/orphan';
import { fetchFailure } from './fetch-failure';

/**
 * `npm run watch -- <board_id>`: logs in and prints a board's live events as they arrive, one
 * JSON line each, the way a client should consume them: it watches after every (re)connect,
 * pings so that API Gateway's 10-minute idle limit never closes the socket, and on
 * `token.expired` or any close logs in again and reconnects with a new ticket.
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

async function postJson(path: string, body: unknown, token?: string) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: unknown) => {
    throw new Error(`${baseUrl} did not answer: ${fetchFailure(error)}`);
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : undefined;
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${parsed?.detail ?? text}`);
  return parsed;
}

let stopping = false;
let socket: WebSocket | undefined;

async function connect(): Promise<void> {
  const { token } = await postJson('/auth/login', { email, password });
  const { ticket, url } = await postJson('/realtime/tickets', undefined, token);
  const ws = new WebSocket(`${url}?ticket=${encodeURIComponent(ticket)}`);
  socket = ws;
  const pinger = setInterval(
    () => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ action: 'ping' })),
    PING_EVERY_MS,
  );
  ws.on('open', () => ws.send(JSON.stringify({ action: 'watch', board_id: boardId })));
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { type: string };
    if (frame.type === 'pong') return;
    console.log(JSON.stringify(frame));
    // The board is gone or out of reach: the watch is over.
    if (frame.type === 'access.revoked' || frame.type === 'board.deleted') finish(0);
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

function retry(error: Error) {
  note('could not connect; retrying in 5 s', { error: error.message });
  setTimeout(() => void connect().catch(retry), 5000);
}

function finish(exitCode: number) {
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
