import type { Answer, Client } from './client';
import { DESCRIPTION_200 } from './latency';
import { log, median, range, round } from './util';

/**
 * Catching up (docs/reference.md, "Sequence numbers and catching up"): a client
 * that missed N events reads them with GET /boards/{id}/events?after=0, page by page until
 * `latest_seq`. This phase makes N changes on one board (a mix: columns, card creates with
 * 200-byte descriptions, title edits, moves between columns, deletes), then times reading them all
 * with limit=1000 and with limit=100, and reading the tree instead (what a client without the log
 * would do). Each read is repeated and the median taken; bytes are the JSON as decoded, and as
 * gzip on the wire once. The pages are checked: seq 1..N in order, no gap, no repeat.
 */

export interface CatchUpRead {
  how: string;
  limit?: number;
  runs: number;
  pages: number;
  events: number;
  /** Client wall time of the whole catch-up (every page, one after another), median of the runs. */
  wallMs: number;
  /** Sum over the pages of the server's time (x-trace-total-ms), median of the runs. */
  serverMs: number;
  /** JSON bytes of all pages (as decoded). */
  bytes: number;
  /** Bytes on the wire with Accept-Encoding: gzip (one run). */
  gzipBytes: number;
  dynamoCalls: number;
  /** Read units DynamoDB Local reported (strongly consistent Query: 1 per 4 KB). */
  capacity: number;
}

export interface CatchUpReport {
  changes: number;
  /** What the changes were, by route. */
  mix: Record<string, number>;
  latestSeq: number;
  /** seq 1..latestSeq, in order, each once, in every read. */
  complete: boolean;
  makeSeconds: number;
  reads: CatchUpRead[];
}

const RUNS = 5;

async function readAll(
  client: Client,
  token: string,
  board: string,
  limit: number | undefined,
): Promise<{ answers: Answer[]; seqs: number[] }> {
  const answers: Answer[] = [];
  const seqs: number[] = [];
  let after = 0;
  for (let page = 0; page < 10_000; page++) {
    const answer = await client.send('GET', `/boards/${board}/events?after=${after}${limit ? `&limit=${limit}` : ''}`, { token });
    if (answer.status !== 200) throw new Error(`GET events after ${after}: ${answer.status} ${JSON.stringify(answer.body)}`);
    answers.push(answer);
    const events = answer.body.events as { seq: number }[];
    seqs.push(...events.map((e) => e.seq));
    if (events.length > 0) after = events.at(-1)!.seq;
    if (after >= answer.body.latest_seq || events.length === 0) break;
  }
  return { answers, seqs };
}

async function wireBytes(client: Client, token: string, paths: string[]): Promise<number> {
  let total = 0;
  for (const path of paths) total += (await client.wire(path, token, 'gzip')).wireBytes;
  return total;
}

export async function benchCatchUp(client: Client, changes: number): Promise<CatchUpReport> {
  const { token } = await client.register('catch-up');
  const board = (await client.expect(201, 'POST', '/boards', { token, body: { title: 'Catch-up' } })).body.id as string;
  const mix: Record<string, number> = {};
  const change = async (route: string, status: number, method: string, path: string, body?: unknown) => {
    mix[route] = (mix[route] ?? 0) + 1;
    return (await client.expect(status, method, path, { token, body })).body;
  };
  const started = performance.now();
  log(`catch-up: ${changes} changes on one board`);
  const columns: string[] = [];
  for (const i of range(Math.min(4, changes))) {
    columns.push((await change('columns.create', 201, 'POST', `/boards/${board}/columns`, { title: `Column ${i}` })).id);
  }
  const cards: string[] = [];
  /** Each card's column, so that a move always goes to another column (a move to where a card is may change nothing). */
  const columnOf = new Map<string, number>();
  // Then in rounds of ten: 3 creates, 4 title edits, 2 moves, 1 delete (of a card created here).
  for (let i = 0; columns.length + i < changes; i++) {
    const k = i % 10;
    if (k < 3 || cards.length < 2) {
      const column = i % columns.length;
      const created = await change('cards.create', 201, 'POST', `/columns/${columns[column]}/cards`, {
        title: `Card ${i}`,
        description: DESCRIPTION_200,
      });
      cards.push(created.id);
      columnOf.set(created.id, column);
    } else if (k < 7) {
      await change('cards.update', 200, 'PATCH', `/cards/${cards[(i * 7) % cards.length]}`, { title: `Edit ${i}` });
    } else if (k < 9) {
      const card = cards[(i * 5) % cards.length]!;
      const target = (columnOf.get(card)! + 1) % columns.length;
      await change('cards.move', 200, 'PATCH', `/cards/${card}/move`, { target_column_id: columns[target] });
      columnOf.set(card, target);
    } else {
      const [card] = cards.splice((i * 3) % cards.length, 1);
      await change('cards.delete', 204, 'DELETE', `/cards/${card}`);
    }
  }
  const makeSeconds = round((performance.now() - started) / 1000, 1);

  const reads: CatchUpRead[] = [];
  let complete = true;
  let latestSeq = 0;
  for (const limit of [1000, 100]) {
    log(`catch-up: reading the log with limit=${limit}`);
    const runs: { wall: number; server: number; answers: Answer[] }[] = [];
    for (const _ of range(RUNS + 1)) {
      const t = performance.now();
      const { answers, seqs } = await readAll(client, token, board, limit);
      runs.push({ wall: performance.now() - t, server: answers.reduce((s, a) => s + (a.trace?.totalMs ?? 0), 0), answers });
      latestSeq = answers.at(-1)!.body.latest_seq;
      complete &&= seqs.length === latestSeq && seqs.every((seq, i) => seq === i + 1);
    }
    runs.shift(); // warm-up
    const last = runs.at(-1)!.answers;
    const paths: string[] = [];
    let after = 0;
    for (const answer of last) {
      paths.push(`/boards/${board}/events?after=${after}&limit=${limit}`);
      after = (answer.body.events as { seq: number }[]).at(-1)?.seq ?? after;
    }
    reads.push({
      how: `GET /boards/{id}/events?after=…&limit=${limit}`,
      limit,
      runs: RUNS,
      pages: last.length,
      events: last.reduce((s, a) => s + (a.body.events as unknown[]).length, 0),
      wallMs: round(median(runs.map((r) => r.wall)), 1),
      serverMs: round(median(runs.map((r) => r.server)), 1),
      bytes: last.reduce((s, a) => s + a.bytes, 0),
      gzipBytes: await wireBytes(client, token, paths),
      dynamoCalls: last.reduce((s, a) => s + (a.trace?.calls ?? 0), 0),
      capacity: round(
        last.reduce((s, a) => s + (a.trace?.capacity ?? 0), 0),
        1,
      ),
    });
  }

  // The alternative without the log: the whole tree again.
  const trees: Answer[] = [];
  for (const _ of range(RUNS + 1)) trees.push(await client.expect(200, 'GET', `/boards/${board}`, { token }));
  trees.shift();
  const tree = trees.at(-1)!;
  reads.push({
    how: 'GET /boards/{id} (the tree, instead)',
    runs: RUNS,
    pages: 1,
    events: 0,
    wallMs: round(median(trees.map((a) => a.wallMs)), 1),
    serverMs: round(median(trees.map((a) => a.trace?.totalMs ?? Number.NaN)), 1),
    bytes: tree.bytes,
    gzipBytes: await wireBytes(client, token, [`/boards/${board}`]),
    dynamoCalls: tree.trace?.calls ?? Number.NaN,
    capacity: tree.trace?.capacity ?? Number.NaN,
  });
  for (const r of reads) log(`catch-up: ${r.how}: ${r.pages} page(s), ${r.wallMs} ms, ${r.bytes} B`);
  return { changes, mix, latestSeq, complete, makeSeconds, reads };
}

export function renderCatchUp(r: CatchUpReport): string[] {
  const mix = Object.entries(r.mix)
    .map(([route, n]) => `${n} ${route}`)
    .join(', ');
  return [
    `## Catching up: ${r.changes} missed events (GET /boards/{id}/events, page by page to latest_seq)`,
    `${r.changes} changes on one board by one user (${mix}), made in ${r.makeSeconds} s; latest_seq ${r.latestSeq}; every read listed seq 1..${r.latestSeq} in order, each once: ${r.complete ? 'yes' : '**no**'}. Times are the client's wall time for all pages one after another (median of ${r.reads[0]?.runs ?? 0} runs after a warm-up), on DynamoDB Local; bytes are the JSON as decoded and, once, gzip on the wire; capacity as DynamoDB Local reports it.`,
    '| read | pages | events | client ms | server ms (sum of pages) | JSON bytes | gzip bytes | DynamoDB calls | read units |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.reads.map(
      (x) =>
        `| ${x.how} | ${x.pages} | ${x.events || '–'} | ${x.wallMs} | ${x.serverMs} | ${x.bytes.toLocaleString('en-US')} | ${x.gzipBytes.toLocaleString('en-US')} | ${x.dynamoCalls} | ${x.capacity} |`,
    ),
  ];
}
