import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseUrl, newBoard, newCard, newColumn, newUser } from '../support/api';
import { eventually } from '../support/wait';

/**
 * examples/board-watch.js while no socket can be opened (a proxy that refuses WebSockets): it
 * keeps its copy current by asking GET /boards/{id} with If-None-Match, so an unchanged board
 * answers 304 (the copy stays, nothing is sent again) and a changed one answers the new tree.
 * Run in this process on Node's own fetch against the local stack; the browser run of the same
 * file is test/integration/browser-watch.test.ts.
 */

type Watcher = { stop(): void; board(): { seq: number; columns: { cards: { title: string }[] }[] } | null };
type WatchBoard = (options: {
  api: string;
  boardId: string;
  login: () => Promise<string>;
  onChange?: (board: unknown, why: { type: string }) => void;
  onNote?: (text: string) => void;
}) => Watcher;

const source = readFileSync(join(__dirname, '../../examples/board-watch.js'), 'utf8');

/** The example's `watchBoard`, with a WebSocket that can never be opened and every GET's answer recorded. */
function loadExample(answers: { status: number; ifNoneMatch: string | null }[]): WatchBoard {
  const recordingFetch = async (input: string, init?: { method?: string; headers?: Record<string, string> }) => {
    const response = await fetch(input, init);
    if ((init?.method ?? 'GET') === 'GET' && /\/boards\/[^/]+$/.test(input)) {
      answers.push({ status: response.status, ifNoneMatch: init?.headers?.['if-none-match'] ?? null });
    }
    return response;
  };
  class RefusedWebSocket {
    static OPEN = 1;
    constructor() {
      throw new Error('WebSockets are refused here');
    }
  }
  return new Function('fetch', 'WebSocket', 'setTimeout', `${source}\nreturn watchBoard;`)(
    recordingFetch,
    RefusedWebSocket,
    // Retries in 50 ms instead of 5 s: the test waits on what is asked, not on the clock.
    (fn: () => void) => setTimeout(fn, 50),
  ) as WatchBoard;
}

it('keeps the copy with If-None-Match while the socket is down: 304 unchanged, the new tree once changed', async () => {
  const owner = await newUser();
  const board = await newBoard(owner, 'Offline board');
  const column = await newColumn(owner, board.id, 'Todo');
  const answers: { status: number; ifNoneMatch: string | null }[] = [];
  const watcher = loadExample(answers)({ api: baseUrl(), boardId: board.id, login: async () => owner.token });
  try {
    // The tree read whole once, then only asked about: 304 while nothing changes.
    await eventually(async () => expect(answers.filter((answer) => answer.status === 304).length).toBeGreaterThanOrEqual(2));
    expect(answers[0]).toEqual({ status: 200, ifNoneMatch: null });
    expect(answers.slice(1).every((answer) => answer.ifNoneMatch !== null)).toBe(true);

    await newCard(owner, column.id, { title: 'written while offline' });
    await eventually(async () =>
      expect(watcher.board()?.columns[0]?.cards.map((card) => card.title)).toEqual(['written while offline']),
    );
    const changed = answers.findIndex((answer, index) => index > 0 && answer.status === 200);
    expect(changed).toBeGreaterThan(0);
    // Asked again with the new tree's tag: unchanged once more.
    await eventually(async () => expect(answers.slice(changed + 1).some((answer) => answer.status === 304)).toBe(true));
  } finally {
    watcher.stop();
  }
});
