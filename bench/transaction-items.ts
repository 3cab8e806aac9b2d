import { rmSync } from 'node:fs';
import { ensureTable, startDynamoDbLocal } from '../infra/local/dynamodb';
import { newCardWrites } from '../lib/data/cards';
import { uuid7 } from '../lib/domain/uuid7';
import { stackDataDir } from './own-stack';
import { log, median, range, round } from './util';

/**
 * What one DynamoDB Local transaction costs by the items in it, on the service's table (its
 * stream and its column-position index) and with a new card's real writes (newCardWrites: the
 * card, conditioned on not existing, and its own lookup item, as for a card id not under a board's
 * prefix: the ids here are not). The batch route's per-card target is a ratio of two local
 * latencies, so this says what each item of a batch of 25 creates costs it.
 *
 *   node --import tsx bench/transaction-items.ts
 *
 * Rounds alternate the cases; each case in a round is 20 transactions unmeasured, then 40
 * measured. Prints the p50 of each case in each round, in milliseconds.
 */
const ROUNDS = 4;
const port = 18_000 + Math.floor(Math.random() * 1000);
const dataDir = stackDataDir('transaction-items');
Object.assign(process.env, { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
const java = await startDynamoDbLocal(port, dataDir, 'tiered');
const endpoint = `http://127.0.0.1:${port}`;
const tableName = 'transaction-items';
// The service's own transactWrite (lib/data/db.ts), which reads its endpoint and table at import.
Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: endpoint, TABLE_NAME: tableName });
const { documentClient, transactWrite } = await import('../lib/data/db');
try {
  await ensureTable(endpoint, tableName);
  const boardId = uuid7();
  const columnId = uuid7();
  let position = 0;
  const card = () => ({
    id: uuid7(),
    board_id: boardId,
    column_id: columnId,
    title: `Card ${position}`,
    description: 'A description of about the length people write.',
    position: ++position,
    created_at: new Date().toISOString(),
    version: 1,
  });
  const writesOf = (cards: number, lookups: boolean) =>
    range(cards).flatMap(() => {
      const made = newCardWrites(boardId, card());
      return lookups && made.lookup ? [made.card, made.lookup] : [made.card];
    });
  const cases: [string, () => ReturnType<typeof writesOf>][] = [
    ['25 cards and their lookups (50 items)', () => writesOf(25, true)],
    ['25 cards without lookups (25 items)', () => writesOf(25, false)],
    ['1 card and its lookup (2 items)', () => writesOf(1, true)],
  ];
  const results = new Map<string, number[]>();
  for (const round_ of range(ROUNDS)) {
    for (const [name, make] of cases) {
      const times: number[] = [];
      for (const i of range(60)) {
        const items = make();
        const start = performance.now();
        await transactWrite(items);
        if (i >= 20) times.push(performance.now() - start);
      }
      results.set(name, [...(results.get(name) ?? []), round(median(times), 1)]);
      log(`round ${round_ + 1}: ${name} p50 ${round(median(times), 1)} ms`);
    }
  }
  documentClient.destroy();
  console.log('| transaction | p50 ms, each round |\n|---|---|');
  for (const [name, p50s] of results) console.log(`| ${name} | ${p50s.join(', ')} |`);
} finally {
  java.kill('SIGTERM');
  await new Promise((resolve) => java.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
