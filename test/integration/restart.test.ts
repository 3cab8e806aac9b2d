import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CardView, call, newBoard, newCard, newColumn, newUser } from '../support/api';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { identify, isDead, type ProcessIdentity } from '../support/processes';

// --- helpers -------------------------------------------------------------------------------------

function processesOf(stack: RunningStack): ProcessIdentity[] {
  return [stack.child.pid!, stack.pids.dynamodb, stack.pids.cognito].map(identify);
}

async function treeOf(url: string, token: string, boardId: string) {
  const reply = await call('GET', `/boards/${boardId}`, { token, url });
  expect(reply.status).toBe(200);
  return reply.body;
}

// --- the test ------------------------------------------------------------------------------------

describe('restart of the local stack on the same data directory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'task-board-restart-'));
  const running: RunningStack[] = [];

  afterAll(async () => {
    for (const stack of running) await stopStackProcess(stack.child);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps users, tokens and boards; stops every process it started', async () => {
    // First life: a user, a board with two columns, cards in both, one moved.
    const first = await startStackProcess(dataDir);
    running.push(first);
    expect((await call('GET', '/health', { url: first.url })).status).toBe(200);
    const user = await newUser(first.url);
    const board = await newBoard(user, 'Survives restarts', first.url);
    const todo = await newColumn(user, board.id, 'To do', first.url);
    const done = await newColumn(user, board.id, 'Done', first.url);
    const cards: CardView[] = [];
    for (const title of ['one', 'two', 'three'])
      cards.push(await newCard(user, todo.id, { title, description: `about ${title}` }, first.url));
    cards.push(await newCard(user, done.id, { title: 'finished' }, first.url));
    const moved = await call<CardView>('PATCH', `/cards/${cards[2]!.id}/move`, {
      token: user.token,
      url: first.url,
      body: { target_column_id: todo.id, before_id: cards[0]!.id, after_id: cards[1]!.id },
    });
    expect(moved.body.position).toBe(1.5);
    const treeBefore = await treeOf(first.url, user.token, board.id);
    expect(treeBefore.columns.map((c: { cards: unknown[] }) => c.cards.length)).toEqual([3, 1]);

    const firstProcesses = processesOf(first);
    expect(firstProcesses.map(isDead)).toEqual([false, false, false]);
    await stopStackProcess(first.child);
    running.splice(running.indexOf(first), 1);
    expect(firstProcesses.filter(isDead).map((p) => p.pid)).toEqual(firstProcesses.map((p) => p.pid));
    await expect(fetch(`${first.url}/health`)).rejects.toThrow();

    // Second life on the same data directory (on another port).
    const second = await startStackProcess(dataDir);
    running.push(second);
    // The token issued before the restart still works, and the tree is identical.
    expect(await treeOf(second.url, user.token, board.id)).toEqual(treeBefore);
    const list = await call('GET', '/boards', { token: user.token, url: second.url });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([board]);
    // Logging in still works, and the new token sees the same board.
    const login = await call('POST', '/auth/login', { url: second.url, body: { email: user.email, password: user.password } });
    expect(login.status).toBe(200);
    expect(login.body.token).toEqual(expect.any(String));
    expect(await treeOf(second.url, login.body.token, board.id)).toEqual(treeBefore);
    // The email is still taken.
    const again = await call('POST', '/auth/register', {
      url: second.url,
      body: { email: user.email, password: user.password, display_name: 'Again' },
    });
    expect(again.status).toBe(409);
    // Positions continue from the stored data.
    expect((await newCard(user, todo.id, { title: 'four' }, second.url)).position).toBe(3);
    expect((await newColumn(user, board.id, 'Later', second.url)).position).toBe(3);

    const secondProcesses = processesOf(second);
    expect(secondProcesses.map(isDead)).toEqual([false, false, false]);
    await stopStackProcess(second.child);
    running.splice(running.indexOf(second), 1);
    expect(secondProcesses.filter(isDead).map((p) => p.pid)).toEqual(secondProcesses.map((p) => p.pid));
  });
});
