import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { freePort, stopChild } from '../../infra/local/processes';
import { keys } from '../../lib/data/table';
import { addMember, baseUrl, call, newBoard, newColumn, newUser, type TestUser, unknownId } from '../support/api';
import { deafen } from '../support/deaf-socket';
import { useLocalTable } from '../support/local-table';
import { REPO_ROOT, runNode } from '../support/run-node';

/**
 * `npm run watch -- <board_id>` (scripts/watch.ts), run as a child process against the local stack
 * of global setup: it logs in, watches, prints each event as one JSON line, and says how it ended
 * in its exit code.
 */

/**
 * A hang guard, not a speed requirement: a line after a reconnect waits for the script's 1 s pause,
 * a login, a ticket, the watch and a read of the log, on a machine that may be busy.
 */
const LINE_TIMEOUT_MS = 120_000;
const started: ChildProcessWithoutNullStreams[] = [];
const table = useLocalTable();
// Stopped by its own pid, whatever a test left running.
afterEach(() => Promise.all(started.splice(0).map((child) => stopChild(child))));

/** The script running for `user`, with its stdout lines as they come and its exit. */
function watch(user: TestUser, boardId: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/watch.ts', boardId, '--url', baseUrl()], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_NO_WARNINGS: '1', TASK_BOARD_EMAIL: user.email, TASK_BOARD_PASSWORD: user.password },
  });
  started.push(child);
  const lines: Record<string, unknown>[] = [];
  let waiting: { test: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void } | undefined;
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = JSON.parse(buffered.slice(0, end)) as Record<string, unknown>;
      buffered = buffered.slice(end + 1);
      lines.push(line);
      if (waiting?.test(line)) waiting.resolve(line);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const line = (test: (line: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const seen = lines.find(test);
      if (seen) return resolve(seen);
      const timer = setTimeout(() => reject(new Error(`no such line; printed: ${JSON.stringify(lines)}`)), LINE_TIMEOUT_MS);
      waiting = {
        test,
        resolve: (found) => {
          clearTimeout(timer);
          resolve(found);
        },
      };
    });
  return { child, lines, line, exited };
}

type Line = Record<string, unknown>;

/** The board events printed (every line with a seq but the acks), as [seq, type]. */
const printedEvents = (lines: Line[]) =>
  lines.filter((line) => typeof line.seq === 'number' && line.type !== 'watch.ack').map((line) => [line.seq, line.type]);

describe('npm run watch', () => {
  it("prints the board's events as they arrive, one JSON line each, and stops with exit 0 on SIGINT", async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Watched');
    const run = watch(user, board.id);
    await run.line((line) => line.type === 'watch.ack');
    const column = await call('POST', `/boards/${board.id}/columns`, { token: user.token, body: { title: 'Heard' } });
    expect(column.status).toBe(201);
    expect(await run.line((line) => line.type === 'column.created')).toMatchObject({
      board_id: board.id,
      actor_id: user.id,
      column: column.body,
    });
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });

  it('after a reconnect prints what it missed (changes by two users), in order and once, then the live events', async () => {
    const [owner, member] = await Promise.all([newUser(), newUser()]);
    const board = await newBoard(owner, 'Caught up');
    const run = watch(owner, board.id);
    const firstAck = await run.line((line) => line.type === 'watch.ack');
    expect(firstAck).toEqual({ type: 'watch.ack', board_id: board.id, seq: 0 });
    const todo = await newColumn(owner, board.id, 'To do');
    await run.line((line) => line.type === 'column.created');

    const socket = await deafen(table, board.id);
    // Missed: by the owner and by a member, while the script's socket hears nothing.
    await addMember(owner, board.id, member);
    const card = await call('POST', `/columns/${todo.id}/cards`, { token: member.token, body: { title: 'Missed' } });
    expect(card.status).toBe(201);
    const edited = await call('PATCH', `/cards/${card.body.id}`, { token: owner.token, body: { title: 'Missed, then edited' } });
    expect(edited.status).toBe(200);
    expect(printedEvents(run.lines)).toEqual([[1, 'column.created']]);

    await socket.drop();
    const secondAck = await run.line((line) => line.type === 'watch.ack' && line !== firstAck);
    expect(secondAck).toEqual({ type: 'watch.ack', board_id: board.id, seq: 4 });
    await run.line((line) => line.type === 'card.updated');
    // Live again after the catch-up.
    const done = await call('POST', `/boards/${board.id}/columns`, { token: member.token, body: { title: 'Done' } });
    expect(done.status).toBe(201);
    await run.line((line) => line.type === 'column.created' && (line.column as { id?: string }).id === done.body.id);

    expect(printedEvents(run.lines)).toEqual([
      [1, 'column.created'],
      [2, 'member.added'],
      [3, 'card.created'],
      [4, 'card.updated'],
      [5, 'column.created'],
    ]);
    // The missed ones came after the second watch.ack, each exactly as the log keeps it.
    const missed = run.lines.slice(run.lines.indexOf(secondAck) + 1, -1);
    expect(missed).toEqual([
      expect.objectContaining({ type: 'member.added', seq: 2, actor_id: owner.id }),
      expect.objectContaining({ type: 'card.created', seq: 3, actor_id: member.id, card: card.body }),
      expect.objectContaining({ type: 'card.updated', seq: 4, actor_id: owner.id, card: edited.body }),
    ]);
    const log = await call('GET', `/boards/${board.id}/events?after=1&limit=3`, { token: owner.token });
    expect(missed).toEqual(log.body.events);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });

  it('reads a gap in the live events from the log, without a reconnect, and prints everything once in order', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Gappy');
    const run = watch(user, board.id);
    await run.line((line) => line.type === 'watch.ack');
    const socket = await deafen(table, board.id);
    // Lost on the way: seq 1 and 2 never reach the socket.
    const column = await newColumn(user, board.id, 'Lost');
    await call('PATCH', `/columns/${column.id}`, { token: user.token, body: { title: 'Lost twice' } });
    await socket.restore();
    // Heard: seq 3, after a gap, which the script fills from the log first.
    await call('PATCH', `/boards/${board.id}`, { token: user.token, body: { title: 'Heard' } });
    await run.line((line) => line.type === 'board.updated');
    expect(printedEvents(run.lines)).toEqual([
      [1, 'column.created'],
      [2, 'column.updated'],
      [3, 'board.updated'],
    ]);
    expect(run.lines.filter((line) => line.type === 'watch.ack')).toHaveLength(1);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });

  it('when the missed events are no longer kept (410), says so, prints the board read again and goes on from its seq', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Forgotten');
    const run = watch(user, board.id);
    await run.line((line) => line.type === 'watch.ack');
    const column = await newColumn(user, board.id, 'Kept');
    await run.line((line) => line.type === 'column.created');

    const socket = await deafen(table, board.id);
    const card = await call('POST', `/columns/${column.id}/cards`, { token: user.token, body: { title: 'Missed' } });
    expect(card.status).toBe(201);
    await call('PATCH', `/cards/${card.body.id}`, { token: user.token, body: { title: 'Missed twice' } });
    // Seq 2 is gone from the log, as TTL removes an event past its retention.
    await table.client.send(new DeleteCommand({ TableName: table.name, Key: keys.logEntry(board.id, 2) }));
    expect((await call('GET', `/boards/${board.id}/events?after=1`, { token: user.token })).status).toBe(410);

    await socket.drop();
    const resync = await run.line((line) => line.type === 'board.tree');
    const tree = await call('GET', `/boards/${board.id}`, { token: user.token });
    expect(resync).toEqual({ type: 'board.tree', board_id: board.id, seq: 3, board: tree.body });
    const live = await call('PATCH', `/cards/${card.body.id}`, { token: user.token, body: { title: 'Heard' } });
    await run.line((line) => line.type === 'card.updated');
    expect(printedEvents(run.lines)).toEqual([
      [1, 'column.created'],
      [3, 'board.tree'],
      [4, 'card.updated'],
    ]);
    expect(run.lines.at(-1)).toMatchObject({ card: live.body });
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });

  it('ends with exit 0 when the board is deleted, after printing board.deleted', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Short-lived');
    const run = watch(user, board.id);
    await run.line((line) => line.type === 'watch.ack');
    expect((await call('DELETE', `/boards/${board.id}`, { token: user.token })).status).toBe(204);
    expect(await run.exited).toBe(0);
    expect(run.lines.at(-1)).toMatchObject({ type: 'board.deleted', board_id: board.id });
  });

  it('fails (exit 1) on a board the user may not watch, after printing the refusal', async () => {
    const [owner, stranger] = await Promise.all([newUser(), newUser()]);
    const board = await newBoard(owner, 'Private');
    const run = watch(stranger, board.id);
    expect(await run.exited).toBe(1);
    expect(run.lines).toEqual([expect.objectContaining({ type: 'error', code: 'forbidden', board_id: board.id })]);
  });

  it('fails (exit 1) on an id that is not a board id, after printing the bad_request error', async () => {
    const user = await newUser();
    const run = watch(user, 'board-1');
    expect(await run.exited).toBe(1);
    expect(run.lines).toEqual([expect.objectContaining({ type: 'error', code: 'bad_request' })]);
  });

  it('names the address that did not answer (exit 1)', async () => {
    // A port that was free a moment ago: nothing listens there.
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await runNode(['scripts/watch.ts', unknownId(), '--url', url], {
      env: { ...process.env, NODE_NO_WARNINGS: '1', TASK_BOARD_EMAIL: 'a@example.com', TASK_BOARD_PASSWORD: 'password' },
    });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(new RegExp(`^${url.replace(/[.]/g, '\\.')} did not answer: .*ECONNREFUSED`));
  });

  it('--help prints the usage (exit 0); an unknown option or no board id is a usage error (exit 2)', async () => {
    const help = await runNode(['scripts/watch.ts', '--help']);
    expect({ code: help.code, stdout: help.stdout }).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^usage: .*npm run watch -- <board_id>/),
    });
    const unknown = await runNode(['scripts/watch.ts', '--board', unknownId()]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--board'[\s\S]*usage: /);
    const none = await runNode(['scripts/watch.ts'], {
      // Credentials given: only the board id is missing.
      env: { ...process.env, NODE_NO_WARNINGS: '1', TASK_BOARD_EMAIL: 'a@example.com', TASK_BOARD_PASSWORD: 'password' },
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^usage: /);
  });
});
