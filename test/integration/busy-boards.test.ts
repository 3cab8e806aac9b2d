import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { addMember, call, newBoard, newCard, newColumn, newUser, subjectOf, type TestUser } from '../support/api';
import { boardQueue } from '../support/board-queue';
import { oneTo, readAllEvents } from '../support/event-log';
import { localDocumentClient, localEnv } from '../support/local-table';
import { eventually } from '../support/wait';

/**
 * Busy boards: writers of one board wait their turn instead of failing. Checked over HTTP against
 * the local stack: many clients writing one board at once all get their success, every change is
 * numbered once and in order, and a writer that dies holding its turn does not stop the board.
 * (What a turn costs in calls and time is measured by `npm run bench`, never here.)
 */

const db = localDocumentClient();
const table = () => localEnv().TABLE_NAME!;

afterAll(() => db.destroy());
const { boardItemOf, stalledTicket, logItemsOf } = boardQueue(db, table);

let owner: TestUser;
beforeAll(async () => {
  owner = await newUser();
});

/** The board item's queue counters. */
async function queueOf(boardId: string): Promise<{ head: number; next: number }> {
  const board = await boardItemOf(boardId);
  return { head: (board.turn_head as number | undefined) ?? 0, next: (board.turn_next as number | undefined) ?? 0 };
}

/** Nobody is left queued, and no change is left posted. */
async function expectDrained(boardId: string): Promise<void> {
  const board = await boardItemOf(boardId);
  expect(board.turn_head).toBe(board.turn_next);
  expect(board.turn_posts).toEqual({});
}

describe('many writers on one board', () => {
  it('16 clients creating cards in one column at once all get 201, with distinct positions and one seq each', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const replies = await Promise.all(
      oneTo(16).map((i) => call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: `card ${i}` } })),
    );
    expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 201));
    const positions = replies.map((reply) => reply.body.position as number).sort((a, b) => a - b);
    expect(positions).toEqual(oneTo(16));
    const { events } = await readAllEvents(owner, board.id);
    const created = events.filter((event) => event.type === 'card.created');
    expect(created.map((event) => (event.card as { id: string } | undefined)?.id).sort()).toEqual(
      replies.map((reply) => reply.body.id).sort(),
    );
    // No gap, no repeat: the log is 1..n.
    expect(events.map((event) => event.seq)).toEqual(oneTo(events.length));
    // Everyone who queued handed the turn on: nobody is left waiting.
    const queue = await queueOf(board.id);
    expect(queue.head).toBe(queue.next);
  });

  it('16 clients editing their own cards of one board, three rounds each, all get 200 and every edit is in the log', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const cards = [];
    for (const i of oneTo(16)) cards.push(await newCard(owner, column.id, { title: `own ${i}` }));
    const replies = await Promise.all(
      cards.map(async (card) => {
        const statuses: number[] = [];
        for (const round of oneTo(3)) {
          statuses.push(
            (await call('PATCH', `/cards/${card.id}`, { token: owner.token, body: { title: `${card.id} ${round}` } })).status,
          );
        }
        return statuses;
      }),
    );
    expect(replies.flat()).toEqual(replies.flat().map(() => 200));
    const { events } = await readAllEvents(owner, board.id);
    const updates = events.filter((event) => event.type === 'card.updated');
    expect(updates).toHaveLength(48);
    expect(events.map((event) => event.seq)).toEqual(oneTo(events.length));
    // Each card's edits are in the order its client sent them.
    for (const card of cards) {
      const titles = updates
        .filter((event) => (event.card as { id: string } | undefined)?.id === card.id)
        .map((event) => (event.card as { title: string } | undefined)?.title);
      expect(titles).toEqual(oneTo(3).map((round) => `${card.id} ${round}`));
    }
  });

  it('creates queued into two columns while cards leave and join one of them each land after every card then in their column', async () => {
    const board = await newBoard(owner);
    const columns = [await newColumn(owner, board.id), await newColumn(owner, board.id)];
    const others: number[] = [];
    const mover = (async () => {
      // Deletes the newest card of the first column, and moves the second column's first card
      // to the end of the first, again and again, while the creates queue.
      for (let round = 0; round < 6; round++) {
        const [first, second] = await Promise.all(
          columns.map(async (column) => (await call('GET', `/columns/${column.id}`, { token: owner.token })).body),
        );
        const last = (first!.cards as { id: string }[]).at(-1);
        if (last) others.push((await call('DELETE', `/cards/${last.id}`, { token: owner.token })).status);
        const moving = (second!.cards as { id: string }[])[0];
        if (moving) {
          const body = { target_column_id: columns[0]!.id };
          others.push((await call('PATCH', `/cards/${moving.id}/move`, { token: owner.token, body })).status);
        }
      }
    })();
    const replies = await Promise.all(
      oneTo(16).map(async (i) => {
        const statuses: number[] = [];
        for (const round of oneTo(2)) {
          const column = columns[(i + round) % 2]!;
          statuses.push(
            (await call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: `${i}.${round}` } })).status,
          );
        }
        return statuses;
      }),
    );
    await mover;
    expect(replies.flat()).toEqual(replies.flat().map(() => 201));
    expect(others.filter((status) => status !== 204 && status !== 200)).toEqual([]);
    // Replayed in seq order: every create is placed after every card its column then held (a
    // card moved in may share its position: a create that read the column's end just before a
    // move lands beside it, and a move never writes the column's create counter).
    const { events } = await readAllEvents(owner, board.id);
    expect(events.map((event) => event.seq)).toEqual(oneTo(events.length));
    const held = new Map<string, Map<string, number>>(columns.map((column) => [column.id, new Map()]));
    const created = new Set<string>();
    let creates = 0;
    for (const event of events) {
      const card = event.card as { id: string; column_id: string; position: number } | undefined;
      if (event.type === 'card.created' && card) {
        const column = held.get(card.column_id)!;
        const ends = (ids: (id: string) => boolean) =>
          Math.max(0, ...[...column].filter(([id]) => ids(id)).map(([, position]) => position));
        expect(card.position).toBeGreaterThan(ends((id) => created.has(id)));
        expect(card.position).toBeGreaterThanOrEqual(ends((id) => !created.has(id)));
        column.set(card.id, card.position);
        created.add(card.id);
        creates++;
      } else if (event.type === 'card.deleted') {
        for (const column of held.values()) column.delete((event.card_id ?? card?.id) as string);
      } else if (event.type === 'card.moved' && card) {
        for (const column of held.values()) column.delete(card.id);
        held.get(card.column_id)!.set(card.id, card.position);
        created.delete(card.id);
      }
    }
    expect(creates).toBe(32);
  });
});

describe('creates posted while queued', () => {
  it('are committed by the writer at the head with its own, one transaction for all, each in its writer name', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const members = [await newUser(), await newUser(), await newUser()];
    for (const member of members) await addMember(owner, board.id, member);
    const writers = [owner, ...members];
    // The head stalls, so every create below queues behind it and posts itself; when the stalled
    // head is skipped, the first of them holds the turn and commits the others' posts with its own.
    await stalledTicket(board.id);
    const before = (await readAllEvents(owner, board.id)).events.length;
    const replies = await Promise.all(
      writers.flatMap((writer, w) =>
        oneTo(2).map((i) =>
          call('POST', `/columns/${column.id}/cards`, {
            token: writer.token,
            body: { title: `by ${w}.${i}`, description: `d ${w}` },
          }),
        ),
      ),
    );
    expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 201));
    const sentBy = new Map(replies.map((reply, n) => [reply.body.id as string, writers[Math.floor(n / 2)]!]));
    const { events } = await readAllEvents(owner, board.id);
    const created = events.slice(before);
    expect(created.map((event) => event.type)).toEqual(replies.map(() => 'card.created'));
    // One transaction: the eight events share one log item, numbered consecutively.
    const runs = (await logItemsOf(board.id)).filter((item) => item.events !== undefined);
    expect(runs.map((run) => run.events!.map((event) => event.seq))).toEqual([created.map((event) => event.seq)]);
    for (const event of created) {
      const card = event.card as { id: string };
      const reply = replies.find((one) => one.body.id === card.id)!;
      // Each writer got the card as it was written and as the log tells it, under its own name.
      expect(reply.body).toEqual(event.card);
      expect(event.actor_id).toBe(subjectOf(sentBy.get(card.id)!.token));
    }
    expect(created.map((event) => (event.card as { position: number }).position)).toEqual(oneTo(8));
    // Nothing is left queued or posted.
    await expectDrained(board.id);
  });

  it('edits and creates queued together are committed with the head, each once, in the log as answered', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const member = await newUser();
    await addMember(owner, board.id, member);
    const cards = [];
    for (const i of oneTo(6)) cards.push(await newCard(owner, column.id, { title: `card ${i}` }));
    await stalledTicket(board.id);
    const before = (await readAllEvents(owner, board.id)).events.length;
    // Six edits of six cards and four creates, from two users, all queued behind the stalled head.
    const writes = [
      ...cards.map((card, i) => ({
        by: i % 2 === 0 ? owner : member,
        send: () =>
          call('PATCH', `/cards/${card.id}`, { token: (i % 2 === 0 ? owner : member).token, body: { title: `edited ${i}` } }),
      })),
      ...oneTo(4).map((i) => ({
        by: member,
        send: () => call('POST', `/columns/${column.id}/cards`, { token: member.token, body: { title: `new ${i}` } }),
      })),
    ];
    const replies = await Promise.all(writes.map((write) => write.send()));
    expect(replies.map((reply) => reply.status)).toEqual([...cards.map(() => 200), 201, 201, 201, 201]);
    const { events } = await readAllEvents(owner, board.id);
    const after = events.slice(before);
    expect(after.map((event) => event.seq)).toEqual(oneTo(after.length).map((n) => before + n));
    expect(after).toHaveLength(10);
    // Every answer is its change's event, under its writer's id; every card once.
    replies.forEach((reply, n) => {
      const event = after.find(
        (one) => (one.card as { id: string }).id === reply.body.id && one.actor_id === subjectOf(writes[n]!.by.token),
      );
      expect(event?.card).toEqual(reply.body);
    });
    expect(new Set(after.map((event) => (event.card as { id: string }).id)).size).toBe(10);
    // Some went together: fewer log items than events.
    const items = (await logItemsOf(board.id)).filter((item) => item.seq > before);
    expect(items.length).toBeLessThan(10);
    await expectDrained(board.id);
    const tree = await call('GET', `/boards/${board.id}`, { token: owner.token });
    const titles = (tree.body.columns[0].cards as { title: string }[]).map((card) => card.title).sort();
    expect(titles).toEqual([...oneTo(6).map((i) => `edited ${i - 1}`), ...oneTo(4).map((i) => `new ${i}`)].sort());
  });

  it('an edit posted from a card that changed since is refused in the head transaction, and the rest still land', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const [first, changed, last] = [
      await newCard(owner, column.id, { title: 'first' }),
      await newCard(owner, column.id, { title: 'changed' }),
      await newCard(owner, column.id, { title: 'last' }),
    ];
    await stalledTicket(board.id);
    const head = (await boardItemOf(board.id)).turn_head as number;
    /** Sends an edit and waits until it has posted itself under `ticket` (its answer still to come). */
    const posted = async (cardId: string, title: string, ticket: number) => {
      const reply = call('PATCH', `/cards/${cardId}`, { token: owner.token, body: { title } });
      await eventually(async () => {
        expect(((await boardItemOf(board.id)).turn_posts as Record<string, unknown> | undefined)?.[String(ticket)]).toBeDefined();
      });
      return { reply };
    };
    const replies = [await posted(first.id, 'first edited', head + 1), await posted(changed.id, 'changed edited', head + 2)];
    // The second card changes behind its posted edit, as a label's deletion takes its id off cards
    // without queueing: the post's condition (the card as its writer read it) no longer holds.
    await db.send(
      new UpdateCommand({
        TableName: table(),
        Key: { pk: `BOARD#${board.id}`, sk: `CARD#${changed.id}` },
        UpdateExpression: 'SET label_ids = :gone',
        ExpressionAttributeValues: { ':gone': new Set(['0d3b5ad0-0000-4000-8000-00000000dead']) },
      }),
    );
    replies.push(await posted(last.id, 'last edited', head + 3));
    // When the stalled head is skipped, the first edit's writer takes the two posts behind it; the
    // second fails, so it commits with none, and the second writer, next, makes its own edit on the
    // card as it now is and takes the third with it.
    const answers = await Promise.all(replies.map((sent) => sent.reply));
    expect(answers.map((answer) => [answer.status, answer.body.title])).toEqual([
      [200, 'first edited'],
      [200, 'changed edited'],
      [200, 'last edited'],
    ]);
    const { events } = await readAllEvents(owner, board.id);
    const edits = events.filter((event) => event.type === 'card.updated');
    expect(edits.map((event) => (event.card as { title: string }).title)).toEqual([
      'first edited',
      'changed edited',
      'last edited',
    ]);
    answers.forEach((answer, n) => {
      expect(answer.body).toEqual(edits[n]!.card);
    });
    // The first edit went alone; the second took the third with it: one log run.
    const [firstSeq, secondSeq, lastSeq] = edits.map((event) => event.seq);
    const items = await logItemsOf(board.id);
    expect(
      items.filter((item) => item.seq >= firstSeq!).map((item) => item.events?.map((event) => event.seq) ?? item.seq),
    ).toEqual([firstSeq, [secondSeq, lastSeq]]);
    await expectDrained(board.id);
  });

  it('are never committed for a writer that is gone: its post is dropped when the head passes its ticket', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    // One writer died holding the turn, and the one behind it died after posting its create.
    await stalledTicket(board.id);
    const ghost = {
      kind: 'card.create',
      column_id: column.id,
      card_id: '0b8f1f52-9a43-4a57-9f0e-2d1d6ad7a001',
      title: 'never answered',
      description: null,
      actor: subjectOf(owner.token),
    };
    await stalledTicket(board.id, ghost);
    const reply = await call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: 'alive' } });
    expect(reply.status).toBe(201);
    expect((await call('GET', `/cards/${ghost.card_id}`, { token: owner.token })).status).toBe(404);
    const { events } = await readAllEvents(owner, board.id);
    expect(events.filter((event) => event.type === 'card.created').map((event) => (event.card as { id: string }).id)).toEqual([
      reply.body.id,
    ]);
    await expectDrained(board.id);
  });
});

describe('a writer that dies holding its turn', () => {
  it('is skipped: later writes still succeed, in order, and the head moves past its ticket', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    // A writer takes a ticket (the queue was empty: its turn is at once) and never writes: the
    // function that held it timed out or crashed.
    await db.send(
      new UpdateCommand({
        TableName: table(),
        Key: { pk: `BOARD#${board.id}`, sk: '#BOARD' },
        UpdateExpression: 'SET turn_next = if_not_exists(turn_next, :zero) + :one, turn_head = if_not_exists(turn_head, :zero)',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
      }),
    );
    const stuck = await queueOf(board.id);
    expect(stuck.next).toBe(stuck.head + 1);

    const replies = await Promise.all(
      oneTo(4).map((i) => call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: `after ${i}` } })),
    );
    expect(replies.map((reply) => reply.status)).toEqual([201, 201, 201, 201]);
    const after = await queueOf(board.id);
    expect(after.head).toBeGreaterThan(stuck.head);
    expect(after.head).toBe(after.next);
    const { events } = await readAllEvents(owner, board.id);
    expect(events.map((event) => event.seq)).toEqual(oneTo(events.length));
    expect(events.filter((event) => event.type === 'card.created')).toHaveLength(4);
  });

  it('writers refused when their turn comes (a stale If-Match) hand it on: exactly one of 12 wins, the board goes on', async () => {
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    const etag = (await call('GET', `/cards/${card.id}`, { token: owner.token })).headers.get('etag')!;
    // All send the same If-Match: the first change makes it stale for the others, who queued
    // after losing the race and find the card changed when their turn comes: 412.
    const replies = await Promise.all(
      oneTo(12).map((i) =>
        call('PATCH', `/cards/${card.id}`, { token: owner.token, headers: { 'if-match': etag }, body: { title: `edit ${i}` } }),
      ),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, ...Array(11).fill(412)]);
    const queue = await queueOf(board.id);
    expect(queue.head).toBe(queue.next);
    // The board is not stuck: the next write goes through at once.
    expect((await call('PATCH', `/cards/${card.id}`, { token: owner.token, body: { title: 'after' } })).status).toBe(200);
  });
});
