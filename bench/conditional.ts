import { type Client, RouteSample, type RouteSummary } from './client';
import { seedBoard } from './scale';
import { log, range, round } from './util';

/**
 * Conditional re-reads of a board: for boards of 50, 500 and 5,000 cards (1 KB descriptions, cards
 * created through the batch route like the scale phase's), the tree answered in full (200) and to
 * an `If-None-Match` that names it (304), side by side: read units (the trace's capacity: reads only) and
 * latency. The two are measured in alternation so that a busy moment weighs on both alike.
 */

export interface ConditionalRun {
  cards: number;
  full: RouteSummary;
  notModified: RouteSummary;
  /** The 304's read units as a share of the 200's, per cent (median of each). */
  readShare: number;
}

export interface ConditionalReport {
  runs: number;
  boards: ConditionalRun[];
}

export async function benchConditional(
  client: Client,
  sizes: number[],
  columns: number,
  runs: number,
): Promise<ConditionalReport> {
  const owner = await client.register('conditional');
  const boards: ConditionalRun[] = [];
  for (const cards of sizes) {
    const board = await seedBoard(client, owner, Math.min(columns, cards), cards);
    const path = `/boards/${board.id}`;
    const first = await client.expect(200, 'GET', path, { token: owner.token }); // warm, and the tag
    const etag = first.etag;
    if (!etag) throw new Error(`GET ${path} answered no ETag`);
    const full = new RouteSample(`boards.get (${cards} cards)`, 200);
    const notModified = new RouteSample(`boards.get 304 (${cards} cards)`, 304);
    for (const _ of range(runs)) {
      full.add(await client.send('GET', path, { token: owner.token }));
      notModified.add(await client.send('GET', path, { token: owner.token, headers: { 'if-none-match': etag } }));
    }
    const run = { cards, full: full.summary(), notModified: notModified.summary(), readShare: 0 };
    run.readShare = round((100 * run.notModified.capacity.median) / run.full.capacity.median, 2);
    if (run.full.unexpected > 0 || run.notModified.unexpected > 0) {
      throw new Error(`unexpected answers: ${JSON.stringify([run.full.unexpectedExamples, run.notModified.unexpectedExamples])}`);
    }
    log(
      `${cards} cards: 200 ${run.full.capacity.median} read units, p50 ${run.full.wallMs.p50} ms; 304 ${run.notModified.capacity.median} read units (${run.readShare} %), p50 ${run.notModified.wallMs.p50} ms`,
    );
    boards.push(run);
    await client.expect(204, 'DELETE', path, { token: owner.token });
  }
  return { runs, boards };
}
