import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { queueConsumer } from '../../lib/queue/consumer';
import { webhooksDeliver } from '../../lib/rows/webhooks';

/**
 * The queue consumer's chain (lib/queue/consumer.ts): each message on its own, a partial batch
 * response naming exactly the messages that failed, and, at the deadline, every message not yet
 * handled (so none is lost to a killed invocation). The deadline is the invocation's remaining
 * time as Lambda's context gives it: a short one here, and a message that never ends.
 */
const record = (messageId: string): SQSRecord =>
  ({ messageId, body: JSON.stringify({ id: messageId }), attributes: { ApproximateReceiveCount: '1' } }) as unknown as SQSRecord;
const event = (...ids: string[]): SQSEvent => ({ Records: ids.map(record) });
const context = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs }) as unknown as Context;

describe('the queue consumer chain', () => {
  it('reports only the messages that threw', async () => {
    const handled: string[] = [];
    const handler = queueConsumer(webhooksDeliver, async (r) => {
      if (r.messageId.startsWith('bad')) throw new Error('boom');
      handled.push(r.messageId);
    });
    const answer = await handler(event('a', 'bad-1', 'b', 'bad-2'), context(60_000));
    expect(answer.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['bad-1', 'bad-2']);
    expect(handled.sort()).toEqual(['a', 'b']);
  });

  it('handles the messages of a batch in parallel: one that never ends holds up no other', async () => {
    const handled: string[] = [];
    const handler = queueConsumer(webhooksDeliver, async (r) => {
      if (r.messageId === 'stuck') await new Promise(() => {});
      handled.push(r.messageId);
    });
    const answer = await handler(event('stuck', 'a', 'b'), context(800));
    expect(handled.sort()).toEqual(['a', 'b']);
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: 'stuck' }]);
  });

  it('answers an empty batch with no failures', async () => {
    const handler = queueConsumer(webhooksDeliver, async () => {});
    expect(await handler(event(), context(60_000))).toEqual({ batchItemFailures: [] });
  });
});
