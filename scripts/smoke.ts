import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { fetchFailure } from './fetch-failure';

/**
 * `npm run smoke -- <ApiUrl> [--keep] [--timeout <seconds>]`: exercises a running task-board API
 * end to end, deployed (the stack's `ApiUrl` output) or local (`npm start`): health, two throwaway
 * users (registered, one logged in again), the member's address verified, a board, a column, two
 * cards, a move, the board tree, a member, a live-events ticket, a socket opened with it that
 * watches the board and sees the event of a card the script then creates, then deletes the board,
 * checks that it is gone and deletes the throwaway users. Without a URL argument it uses
 * TASK_BOARD_URL. `--timeout` bounds each request and each wait on the socket (default 15 s).
 *
 * Member-add finds only accounts whose address is verified (docs/accounts.md). Locally the script
 * verifies the member's address with the code from the local outbox (GET /local/outbox), as its
 * owner would from the mailbox. A deployed stage has no outbox and the script reads no mail, so
 * there the member is an account an operator registered and verified once:
 * TASK_BOARD_SMOKE_MEMBER_EMAIL and TASK_BOARD_SMOKE_MEMBER_PASSWORD (it is logged in, never
 * deleted). Without them, against a stage without an outbox, the verification step fails saying so.
 *
 * Quiet on success: one summary line on stdout, exit code 0. On a wrong answer: one line on
 * stderr naming the step, the request, what was expected and the HTTP status and body received,
 * exit code 1 (the board it made is still deleted, unless --keep). When the API does not answer
 * at all (refused, unknown host, TLS error, timeout): exit code 2. A usage error: exit code 64.
 *
 * The users are `smoke+<run>-owner@example.com` and `smoke+<run>-member@example.com` (example.com
 * never receives mail); the last step deletes them (DELETE /auth/account). `--keep` leaves the
 * board and the users, and prints one JSON line with the board id and both users' emails and
 * passwords, for a person to log in and look.
 *
 * Only the global fetch and WebSocket of Node.js (22 and later; `ws`, a dev dependency, where
 * Node has no WebSocket): it runs wherever the repository does.
 */

const EXIT = { ok: 0, failed: 1, unreachable: 2, usage: 64 } as const;

interface Answer {
  status: number;
  body: unknown;
  text: string;
}

/** The API answered, but not as it should. */
class WrongAnswer extends Error {
  constructor(
    readonly expected: string,
    readonly answer: Answer,
  ) {
    super(`expected ${expected}, got ${answer.status}`);
  }
}

/** No HTTP answer at all. */
class NoAnswer extends Error {}

/** The socket did not open, closed, or did not bring the frame it should have in time. */
class SocketProblem extends Error {
  constructor(
    readonly expected: string,
    readonly got: string,
  ) {
    super(`expected ${expected}, got ${got}`);
  }
}

/** A frame from the server, as JSON. */
type Frame = Record<string, unknown> & { type?: unknown };

/** The part of the WebSocket API (Node's global, or `ws`) the script uses. */
interface Socket {
  readyState: number;
  send(data: string): void;
  close(): void;
  addEventListener(
    type: 'open' | 'close' | 'error' | 'message',
    listener: (event: { data?: unknown; code?: number }) => void,
  ): void;
}
type SocketClass = new (url: string) => Socket;

/**
 * A socket that keeps every frame, so that one that comes before its wait is not missed: `next`
 * resolves with the first frame (received or to come) that `test` accepts, and fails with what it
 * saw on a close or after `timeoutMs`.
 */
async function openSocket(url: string, timeoutMs: number) {
  const Impl: SocketClass =
    (globalThis as { WebSocket?: SocketClass }).WebSocket ?? ((await import('ws')).default as unknown as SocketClass);
  const socket = new Impl(url);
  const frames: Frame[] = [];
  let closed: string | undefined;
  let wake = () => {};
  socket.addEventListener('open', () => wake());
  socket.addEventListener('message', (event) => {
    try {
      frames.push(JSON.parse(String(event.data)) as Frame);
    } catch {
      frames.push({ type: '<not JSON>', text: String(event.data) });
    }
    wake();
  });
  socket.addEventListener('close', (event) => {
    closed = `the socket closed (code ${event.code ?? '?'})`;
    wake();
  });
  socket.addEventListener('error', () => {
    closed ??= 'a socket error (the handshake was refused, or nothing answered)';
    wake();
  });
  const until = <T>(ready: () => T | undefined, expected: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        wake = () => {};
        reject(new SocketProblem(expected, `nothing in ${timeoutMs / 1000} s; frames so far: ${JSON.stringify(frames)}`));
      }, timeoutMs);
      wake = () => {
        const value = ready();
        if (value !== undefined) {
          clearTimeout(timer);
          wake = () => {};
          resolve(value);
        } else if (closed) {
          clearTimeout(timer);
          wake = () => {};
          reject(new SocketProblem(expected, `${closed}; frames so far: ${JSON.stringify(frames)}`));
        }
      };
      wake();
    });
  await until(() => (socket.readyState === 1 ? true : undefined), 'the socket to open with the ticket');
  return {
    send: (message: unknown) => socket.send(JSON.stringify(message)),
    next: (test: (frame: Frame) => boolean, expected: string) => until(() => frames.find(test), expected),
    close: () => {
      if (socket.readyState <= 1) socket.close();
    },
  };
}

type Step = {
  name: string;
  method: string;
  path: string;
};

const usage =
  'usage: npm run smoke -- <ApiUrl> [--keep] [--timeout <seconds>]   (e.g. https://abc123.execute-api.eu-west-1.amazonaws.com)';

const HELP = `${usage}

Exercises a running task-board API end to end: health, two throwaway users, a board with a column
and cards, a move, a member, a live-events ticket and a socket that watches the board and sees the
event of a change, then deletes what it made. Without <ApiUrl>, TASK_BOARD_URL.

  --keep               leave the board and the users, and print how to log in to look
  --timeout <seconds>  bound of each request and of each wait on the socket (default 15)
  -h, --help           this text

Against a stage without the local outbox, TASK_BOARD_SMOKE_MEMBER_EMAIL and
TASK_BOARD_SMOKE_MEMBER_PASSWORD name an operator's verified account, used as the member.
Exit codes: 0 passed, 1 a wrong answer (the step named), 2 no answer, 64 a usage error.
`;

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      keep: { type: 'boolean', default: false },
      timeout: { type: 'string', default: '15' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help' as const;
  const raw = positionals[0] ?? process.env.TASK_BOARD_URL;
  if (!raw || positionals.length > 1) throw new Error(usage);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`not a URL: ${raw}\n${usage}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`not an http(s) URL: ${raw}\n${usage}`);
  const timeoutSeconds = Number(values.timeout);
  if (!(timeoutSeconds > 0)) throw new Error(`--timeout must be a positive number of seconds, not ${values.timeout}`);
  return { baseUrl: url.href.replace(/\/+$/, ''), keep: values.keep ?? false, timeoutMs: timeoutSeconds * 1000 };
}

/** What a body looks like in a one-line message: JSON compacted, anything cut at 1,000 characters. */
function shown(text: string): string {
  let compact = text;
  try {
    compact = JSON.stringify(JSON.parse(text));
  } catch {
    compact = text.replace(/\s+/g, ' ').trim();
  }
  if (compact === '') return '(empty body)';
  return compact.length > 1000 ? `${compact.slice(0, 1000)}… (${compact.length} characters)` : compact;
}

/** Why a step's fetch failed; a timeout names the option that sets it. */
const reason = (error: unknown) => fetchFailure(error).replace(/^no answer in time$/, 'no answer in time (--timeout)');

async function runSmoke(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    console.error(`smoke: ${(error as Error).message}`);
    return EXIT.usage;
  }
  if (parsed === 'help') {
    process.stdout.write(HELP);
    return EXIT.ok;
  }
  const options = parsed;
  const { baseUrl, keep, timeoutMs } = options;
  const started = performance.now();
  const run = randomUUID();
  const owner = { email: `smoke+${run}-owner@example.com`, password: `smoke-${randomUUID()}`, token: '' };
  const operatorMember = process.env.TASK_BOARD_SMOKE_MEMBER_EMAIL && process.env.TASK_BOARD_SMOKE_MEMBER_PASSWORD;
  const member = operatorMember
    ? { email: process.env.TASK_BOARD_SMOKE_MEMBER_EMAIL!, password: process.env.TASK_BOARD_SMOKE_MEMBER_PASSWORD!, token: '' }
    : { email: `smoke+${run}-member@example.com`, password: `smoke-${randomUUID()}`, token: '' };
  // An operator's member is logged in (one step) instead of registered and verified (three).
  const plannedSteps = (keep ? 17 : 20) - (operatorMember ? 2 : 0);
  let socket: Awaited<ReturnType<typeof openSocket>> | undefined;
  let done = 0;
  let boardId: string | undefined;
  let usersDeleted = false;
  let current: Step = { name: 'start', method: '', path: '' };

  /** One request of the current step; the answer must have `expected` status. */
  async function request(step: Step, expected: number, options: { token?: string; body?: unknown } = {}): Promise<Answer> {
    current = step;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${baseUrl}${step.path}`, {
        method: step.method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
      text = await response.text();
    } catch (error) {
      throw new NoAnswer(reason(error));
    }
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: kept as text, and shown as such if a check fails
    }
    const answer = { status: response.status, body, text };
    if (response.status !== expected) throw new WrongAnswer(String(expected), answer);
    return answer;
  }

  /** Fails the current step unless `ok`: the answer did not have the shape the contract gives it. */
  function check(ok: boolean, expected: string, answer: Answer) {
    if (!ok) throw new WrongAnswer(expected, answer);
  }

  const field = (value: unknown, name: string): unknown =>
    value && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined;
  const isText = (value: unknown) => typeof value === 'string' && value.length > 0;

  async function steps() {
    const health = await request({ name: 'health', method: 'GET', path: '/health' }, 200);
    check(field(health.body, 'status') === 'ok', '200 {"status":"ok"}', health);
    done++;

    for (const [user, role] of [
      [owner, 'owner'],
      [member, 'member'],
    ] as const) {
      if (user === member && operatorMember) {
        const signedIn = await request({ name: "log in the operator's member", method: 'POST', path: '/auth/login' }, 200, {
          body: { email: user.email, password: user.password },
        });
        check(isText(field(signedIn.body, 'token')), '200 with a token', signedIn);
        user.token = field(signedIn.body, 'token') as string;
        done++;
        continue;
      }
      const registered = await request({ name: `register the ${role}`, method: 'POST', path: '/auth/register' }, 201, {
        body: { email: user.email, password: user.password, display_name: `Smoke test ${role}` },
      });
      check(isText(field(registered.body, 'token')), '201 with a token', registered);
      user.token = field(registered.body, 'token') as string;
      done++;
    }

    if (!operatorMember) {
      await request({ name: "request the member's code", method: 'POST', path: '/auth/verify-email/request' }, 202, {
        token: member.token,
      });
      done++;
      const outboxPath = `/local/outbox?email=${encodeURIComponent(member.email)}`;
      current = { name: "verify the member's address", method: 'GET', path: outboxPath };
      const mail = await request(current, 200).catch((error: unknown) => {
        if (error instanceof WrongAnswer && error.answer.status === 404) {
          throw new WrongAnswer(
            '200 from the local outbox (a deployed stage has none: set TASK_BOARD_SMOKE_MEMBER_EMAIL and TASK_BOARD_SMOKE_MEMBER_PASSWORD to an account whose address is verified)',
            error.answer,
          );
        }
        throw error;
      });
      const code = Array.isArray(mail.body) ? field(mail.body[0], 'code') : undefined;
      check(isText(code), '200 with the code mailed to the member', mail);
      await request({ name: "verify the member's address", method: 'POST', path: '/auth/verify-email' }, 204, {
        token: member.token,
        body: { code },
      });
      done++;
    }

    const login = await request({ name: 'log in', method: 'POST', path: '/auth/login' }, 200, {
      body: { email: owner.email, password: owner.password },
    });
    check(isText(field(login.body, 'token')), '200 with a token', login);
    owner.token = field(login.body, 'token') as string;
    done++;

    const board = await request({ name: 'create a board', method: 'POST', path: '/boards' }, 201, {
      token: owner.token,
      body: { title: `smoke ${run}` },
    });
    check(isText(field(board.body, 'id')), '201 Board with an id', board);
    boardId = field(board.body, 'id') as string;
    done++;

    const column = await request({ name: 'create a column', method: 'POST', path: `/boards/${boardId}/columns` }, 201, {
      token: owner.token,
      body: { title: 'To do' },
    });
    const columnId = field(column.body, 'id') as string;
    check(isText(columnId) && field(column.body, 'board_id') === boardId, '201 Column of the board', column);
    done++;

    const cardIds: string[] = [];
    for (const title of ['first card', 'second card']) {
      const card = await request({ name: `create the ${title}`, method: 'POST', path: `/columns/${columnId}/cards` }, 201, {
        token: owner.token,
        body: { title, description: 'made by npm run smoke' },
      });
      check(isText(field(card.body, 'id')) && field(card.body, 'column_id') === columnId, '201 Card in the column', card);
      cardIds.push(field(card.body, 'id') as string);
      done++;
    }
    const [first, second] = cardIds as [string, string];

    // The second card goes above the first: after the move the first card comes after it.
    const moved = await request({ name: 'move a card', method: 'PATCH', path: `/cards/${second}/move` }, 200, {
      token: owner.token,
      body: { target_column_id: columnId, after_id: first },
    });
    check(field(moved.body, 'id') === second, '200 with the moved card', moved);
    done++;

    const tree = await request({ name: 'read the board tree', method: 'GET', path: `/boards/${boardId}` }, 200, {
      token: owner.token,
    });
    const columns = field(tree.body, 'columns');
    const cards = Array.isArray(columns) && columns.length === 1 ? field(columns[0], 'cards') : undefined;
    const order = Array.isArray(cards) ? cards.map((card) => field(card, 'id')) : [];
    check(
      field(tree.body, 'id') === boardId && order.length === 2 && order[0] === second && order[1] === first,
      '200 with one column holding the second card, then the first (the move)',
      tree,
    );
    done++;

    const added = await request({ name: 'add a member', method: 'POST', path: `/boards/${boardId}/members` }, 201, {
      token: owner.token,
      body: { email: member.email },
    });
    check(field(added.body, 'role') === 'member', '201 member with role "member"', added);
    done++;

    const seen = await request({ name: "list the member's boards", method: 'GET', path: '/boards' }, 200, {
      token: member.token,
    });
    check(
      Array.isArray(seen.body) && seen.body.some((b) => field(b, 'id') === boardId),
      "200 list holding the member's new board",
      seen,
    );
    done++;

    const ticket = await request({ name: 'get a live-events ticket', method: 'POST', path: '/realtime/tickets' }, 201, {
      token: owner.token,
    });
    check(
      isText(field(ticket.body, 'ticket')) && /^wss?:\/\//.test(String(field(ticket.body, 'url'))),
      '201 {ticket, url: ws(s)://…}',
      ticket,
    );
    done++;

    // The WebSocket API: the ticket opens a socket, which watches the board…
    const address = `${field(ticket.body, 'url')}?ticket=${encodeURIComponent(field(ticket.body, 'ticket') as string)}`;
    current = { name: 'open a socket and watch the board', method: 'WS', path: String(field(ticket.body, 'url')) };
    socket = await openSocket(address, timeoutMs);
    socket.send({ action: 'watch', board_id: boardId });
    await socket
      .next(
        (frame) => frame.board_id === boardId && (frame.type === 'watch.ack' || frame.type === 'error'),
        `{"type":"watch.ack","board_id":"${boardId}"}`,
      )
      .then((frame) => {
        if (frame.type !== 'watch.ack')
          throw new SocketProblem(`{"type":"watch.ack","board_id":"${boardId}"}`, JSON.stringify(frame));
      });
    done++;

    // …and sees the event of a change made over REST.
    const watched = await request(
      { name: 'see the event of a change', method: 'POST', path: `/columns/${columnId}/cards` },
      201,
      {
        token: owner.token,
        body: { title: 'watched card', description: 'its card.created event must reach the socket' },
      },
    );
    const watchedId = field(watched.body, 'id');
    check(isText(watchedId), '201 Card with an id', watched);
    current = { name: 'see the event of a change', method: 'WS', path: String(field(ticket.body, 'url')) };
    await socket.next(
      (frame) => frame.type === 'card.created' && frame.board_id === boardId && field(frame.card, 'id') === watchedId,
      `{"type":"card.created","board_id":"${boardId}","card":{"id":"${watchedId}",…}}`,
    );
    socket.close();
    done++;

    if (keep) return;
    await request({ name: 'delete the board', method: 'DELETE', path: `/boards/${boardId}` }, 204, { token: owner.token });
    const deleted = boardId;
    boardId = undefined;
    done++;

    const after = await request({ name: 'check the board is gone', method: 'GET', path: '/boards' }, 200, {
      token: owner.token,
    });
    check(
      Array.isArray(after.body) && !after.body.some((b) => field(b, 'id') === deleted),
      '200 list without the deleted board',
      after,
    );
    done++;

    // The throwaway users go; an operator's member stays for the next run.
    current = { name: 'delete the throwaway users', method: 'DELETE', path: '/auth/account' };
    for (const user of operatorMember ? [owner] : [owner, member]) {
      await request(current, 204, { token: user.token, body: { password: user.password } });
    }
    usersDeleted = true;
    done++;
  }

  /** After a failure: delete the board the run made, unless --keep. Says what happened, in a few words. */
  async function cleanUp(): Promise<string> {
    if (!boardId) return 'no board was left';
    if (keep) return `board ${boardId} kept (--keep)`;
    try {
      const response = await fetch(`${baseUrl}/boards/${boardId}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${owner.token}` },
        signal: AbortSignal.timeout(timeoutMs),
      });
      return response.status === 204 ? `board ${boardId} deleted` : `board ${boardId} NOT deleted (${response.status})`;
    } catch (error) {
      return `board ${boardId} NOT deleted (${reason(error)})`;
    }
  }

  const where = () => `step ${done + 1}/${plannedSteps} "${current.name}" (${current.method} ${current.path})`;
  try {
    await steps();
  } catch (error) {
    socket?.close();
    if (error instanceof SocketProblem) {
      const failedAt = where();
      console.error(`smoke: FAILED at ${failedAt} against ${baseUrl}: ${error.message} [clean-up: ${await cleanUp()}]`);
      return EXIT.failed;
    }
    if (error instanceof WrongAnswer) {
      const failedAt = where();
      console.error(
        `smoke: FAILED at ${failedAt} against ${baseUrl}: expected ${error.expected}, got HTTP ${error.answer.status}: ${shown(error.answer.text)} [clean-up: ${await cleanUp()}]`,
      );
      return EXIT.failed;
    }
    if (error instanceof NoAnswer) {
      const failedAt = where();
      console.error(
        `smoke: UNREACHABLE: ${baseUrl} did not answer at ${failedAt}: ${error.message} [clean-up: ${await cleanUp()}]`,
      );
      return EXIT.unreachable;
    }
    throw error;
  }

  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const throwaway = operatorMember ? `user smoke+${run}-owner@example.com` : `users smoke+${run}-{owner,member}@example.com`;
  const users = usersDeleted ? `${throwaway} deleted` : `${throwaway} kept (--keep)`;
  if (keep) {
    console.log(
      JSON.stringify({
        kept: {
          api: baseUrl,
          board_id: boardId,
          owner: { email: owner.email, password: owner.password },
          member: { email: member.email, password: member.password },
        },
      }),
    );
    console.log(`smoke: ${done} steps passed against ${baseUrl} in ${seconds} s; board ${boardId} kept (--keep); ${users}`);
  } else {
    console.log(`smoke: ${done} steps passed against ${baseUrl} in ${seconds} s; board deleted; ${users}`);
  }
  return EXIT.ok;
}

runSmoke(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error('smoke: internal error', error);
    process.exitCode = EXIT.failed;
  },
);
