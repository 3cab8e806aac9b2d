import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, newBoard, newUser } from '../test/support/api';
import { type Stats, stats } from './client';
import { type WebhookCostReport, webhookCostModel } from './cost';
import { median, percentile, round } from './util';

/**
 * Webhook delivery latency on the local stack (docs/webhooks.md "Figures"): the time
 * from the REST answer of a change arriving here to its delivery's POST arriving at a receiver on
 * 127.0.0.1. The path: REST write → DynamoDB Local's stream → the local poller → the change
 * reader (events.broadcast: the webhook fanout beside the sockets) (Query of the board's webhooks, delivery Put, SendMessage) → the local SQS stand-in → Lambda's
 * SQS event source stand-in → webhooks.deliver (BatchGetItem, claim, KMS stand-in Decrypt (cached),
 * address check, the POST) → the receiver. Changes go one at a time, each waiting for its delivery
 * (or a 30 s timeout) before the next, so no delivery queues behind another. A board rename per
 * change: its event names the title, which tells the deliveries apart.
 */

export interface WebhookBench {
  events: number;
  delivered: number;
  missed: number;
  duplicates: number;
  /** REST answer → receiver, ms. */
  ms: Stats & { p90: number; mean: number };
  /** Bytes of the delivered bodies (the event's JSON). */
  bodyBytes: { median: number; max: number };
  seconds: number;
  loadAverage: number[];
  cost: WebhookCostReport;
}

const DELIVERY_TIMEOUT_MS = 30_000;

export async function benchWebhooks(url: string, events: number): Promise<WebhookBench> {
  const started = performance.now();
  const arrivals = new Map<string, number[]>();
  const bodies: number[] = [];
  const waiters = new Map<string, () => void>();
  const server = http.createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(204).end();
      const body = Buffer.concat(chunks);
      bodies.push(body.length);
      const title = (JSON.parse(body.toString('utf8')) as { board?: { title?: string } }).board?.title ?? '';
      arrivals.set(title, [...(arrivals.get(title) ?? []), at]);
      waiters.get(title)?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const owner = await newUser(url, { verified: false });
    const board = await newBoard(owner, 'Webhook bench', url);
    const created = await call('POST', `/boards/${board.id}/webhooks`, {
      token: owner.token,
      body: { url: `http://127.0.0.1:${port}/bench`, events: ['board.updated'] },
      url,
    });
    if (created.status !== 201) throw new Error(`webhook create: ${created.status} ${JSON.stringify(created.body)}`);
    const latencies: number[] = [];
    let missed = 0;
    // Warm-up: the first delivery starts the functions of the path (not counted).
    for (let i = -3; i < events; i++) {
      const title = `bench ${i}`;
      const arrived = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), DELIVERY_TIMEOUT_MS);
        waiters.set(title, () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      const reply = await call('PATCH', `/boards/${board.id}`, { token: owner.token, body: { title }, url });
      const answered = performance.now();
      if (reply.status !== 200) throw new Error(`rename: ${reply.status}`);
      const ok = await arrived;
      waiters.delete(title);
      if (i < 0) continue;
      if (!ok) missed++;
      else latencies.push(arrivals.get(title)![0]! - answered);
    }
    const duplicates = [...arrivals.values()].reduce((sum, list) => sum + list.length - 1, 0);
    const mean = latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length);
    const bodyMedian = median(bodies);
    const report: WebhookBench = {
      events,
      delivered: latencies.length,
      missed,
      duplicates,
      ms: { ...stats(latencies), p90: round(percentile(latencies, 90), 3), mean: round(mean, 3) },
      bodyBytes: { median: bodyMedian, max: Math.max(...bodies) },
      seconds: round((performance.now() - started) / 1000, 1),
      loadAverage: [],
      cost: webhookCostModel({ bodyBytes: bodyMedian }),
    };
    return report;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

export function renderWebhooks(r: WebhookBench): string {
  const lines = [
    '## Webhook deliveries (local stack)',
    '',
    `${r.delivered} of ${r.events} deliveries arrived (${r.missed} missed, ${r.duplicates} repeated) in ${r.seconds} s; load average ${r.loadAverage.join(' / ')}.`,
    '',
    '| REST answer → receiver | p50 | p90 | p99 | max | mean |',
    '|---|---|---|---|---|---|',
    `| ms | ${r.ms.p50} | ${r.ms.p90} | ${r.ms.p99} | ${r.ms.max} | ${r.ms.mean} |`,
    '',
    `Body: median ${r.bodyBytes.median} bytes, max ${r.bodyBytes.max}.`,
    '',
    `### Cost per 1,000 deliveries (${r.cost.asOf})`,
    '',
    '| part | units per delivery | $ per 1,000 deliveries |',
    '|---|---|---|',
    ...r.cost.rows.map((row) => `| ${row.part} | ${row.units} | ${row.dollarsPerThousand} |`),
    `| **total** (128 MB / 256 MB worker) | | **${r.cost.totalPerThousand128} / ${r.cost.totalPerThousand256}** |`,
    '',
    ...r.cost.notes.map((note) => `- ${note}`),
    '',
  ];
  return lines.join('\n');
}
