import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, expectProblem, newBoard, newColumn, newUser, type TestUser } from '../support/api';
import { getEvents, readSeqTree } from '../support/event-log';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { eventually } from '../support/wait';

/**
 * realtime.md, "Sequence numbers and catching up": events are kept EVENT_RETENTION_SECONDS
 * (default 7 days, configurable on the local stack for tests); when the first event after `after`
 * is no longer kept, the answer is 410 problem+json `resync_required`, and the client reads the
 * tree again and goes on from its seq. The shared stack keeps events 7 days, so this file starts a
 * stack of its own that keeps them 2 seconds, and waits (for the answer, not for a duration) until
 * they are past it. Nothing asserts how long anything took: an event is only ever checked once its
 * retention is certainly over, never while it might still be kept.
 */

const RETENTION_SECONDS = 2;

const dataDir = mkdtempSync(join(tmpdir(), 'task-board-retention-'));
let stack: RunningStack | undefined;
let url: string;

beforeAll(async () => {
  stack = await startStackProcess(dataDir, { EVENT_RETENTION_SECONDS: String(RETENTION_SECONDS) });
  url = stack.url;
});

afterAll(async () => {
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

const renameBoard = (user: TestUser, id: string, title: string) =>
  call('PATCH', `/boards/${id}`, { token: user.token, body: { title }, url });

it('answers 410 resync_required once the events after `after` are past the retention; the tree and its seq go on', async () => {
  const user = await newUser(url, { verified: false });
  const board = await newBoard(user, 'Short memory', url);
  const column = await newColumn(user, board.id, 'Kept in the tree', url);
  expect((await renameBoard(user, board.id, 'Renamed')).status).toBe(200);

  // Wait for the retention of the latest event (seq 2) to pass: until then the log may answer 200.
  // Waiting on seq 1 alone is not enough: on a loaded machine the rename can land seconds after
  // the column, so seq 1 can be gone while seq 2 is still kept (CI saw after=1 answer 200).
  // Seq 2 was written last, so once it is past its retention so is seq 1.
  await eventually(
    async () => {
      const reply = await getEvents(user, board.id, { after: 1 }, url);
      expect(reply.status).toBe(410);
    },
    120_000,
    250,
  );
  const gone = await getEvents(user, board.id, { after: 0 }, url);
  expect(expectProblem(gone, 410).code).toBe('resync_required');
  expect(expectProblem(await getEvents(user, board.id, { after: 1 }, url), 410).code).toBe('resync_required');

  // The recipe: the tree again, then the log from its seq (nothing after it: an empty page).
  const tree = await readSeqTree(user, board.id, url);
  expect(tree).toMatchObject({ title: 'Renamed', seq: 2, columns: [expect.objectContaining({ id: column.id, cards: [] })] });
  expect(await getEvents(user, board.id, { after: tree.seq }, url)).toMatchObject({
    status: 200,
    body: { events: [], latest_seq: 2 },
  });
  // The board's numbering goes on from there.
  expect((await renameBoard(user, board.id, 'Again')).status).toBe(200);
  expect((await readSeqTree(user, board.id, url)).seq).toBe(3);
});
