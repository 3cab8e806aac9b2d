import { Client, RouteSample } from './client';
import { DESCRIPTION_200, makeBoard } from './latency';
import { onOwnStack } from './own-stack';
import { range, round } from './util';

/**
 * What the per-request log line costs in own time: the local stack at LOG_LEVEL=INFO
 * (as deployed: one line per request) against WARN (no line for a success), alternated twice,
 * 500 sequential requests per route and run. Not part of `npm run bench`:
 * `node --import tsx bench/log-level.ts` (about a minute).
 */
const requests = 500;
const rows: string[] = [];
for (const level of ['INFO', 'WARN', 'INFO', 'WARN']) {
  await onOwnStack('log-level', { TASK_BOARD_TRACE: '1', LOG_LEVEL: level }, async (stack) => {
    const client = new Client(stack.url);
    const { token } = await client.register('log-level');
    const board = await makeBoard(client, token, 4, 25, DESCRIPTION_200);
    const samples = [new RouteSample('cards.get', 200), new RouteSample('cards.update', 200), new RouteSample('boards.get', 200)];
    for (const i of range(requests)) samples[0]!.add(await client.send('GET', `/cards/${board.cards[i % 100]}`, { token }));
    for (const i of range(requests)) {
      samples[1]!.add(await client.send('PATCH', `/cards/${board.cards[i % 100]}`, { token, body: { title: `T${i}` } }));
    }
    for (const _ of range(requests)) samples[2]!.add(await client.send('GET', `/boards/${board.id}`, { token }));
    for (const s of samples.map((x) => x.summary())) {
      rows.push(`| ${level} | ${s.route} | ${s.n} | ${round(s.ownMs.p50, 3)} | ${round(s.ownMs.p99, 3)} |`);
    }
  });
}
console.log('| log level | route | n | own p50 ms | own p99 ms |\n|---|---|---|---|---|');
console.log(rows.join('\n'));
