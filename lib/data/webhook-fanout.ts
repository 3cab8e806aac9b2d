import { logger } from '../runtime/logger';
import { type ChangeRecord, eventsByBoard } from './change-events';
import { expireWebhooks, type NewDelivery, scheduleDeliveries } from './deliveries';
import type { WebhookRecord } from './records';
import { getProfiles } from './users';
import type { StoredWebhook } from './webhook-creators';
import { boardWebhooks } from './webhooks';

/**
 * The webhook fanout (docs/webhooks.md "The pipeline"): the table stream's log-item INSERTs (the
 * same filter as the sockets' broadcaster, lib/data/changes.ts, and the same events, exactly as
 * watchers receive them) become one delivery per selecting webhook, each with its queue message.
 * It runs beside the broadcaster in the change reader (lib/stream/publish.ts; the stream has at
 * most two readers). It calls no receiver, so a slow or failing webhook never holds up the
 * sockets, and the REST request never waits for either.
 *
 * Per board of the batch: one strongly consistent Query of its webhooks (a webhook created or
 * switched off an instant before is seen), then its events in `seq` order. A board that fails
 * reports its first unscheduled record, from which the stream retries; scheduling is idempotent
 * (the delivery's id is derived from webhook and event, and its Put is conditional).
 */

/** Whether a webhook gets an event: active, selecting its type (empty `events`: all), never `access.revoked`. */
export const selects = (webhook: Pick<WebhookRecord, 'active' | 'events'>, type: string) =>
  webhook.active && type !== 'access.revoked' && (webhook.events.length === 0 || webhook.events.includes(type));

/**
 * Whether a webhook receives an event of its board: it selects the event, and the event was
 * committed after the webhook was created or last switched on (`seq` above `from_seq`). The stream
 * hands an event over after its commit, sometimes long after (a batch run again, a reader behind),
 * so a webhook made or switched on meanwhile is already in the read: `from_seq` keeps it from events
 * older than itself. A webhook whose creator left the owners was switched off in that very
 * change's transaction (lib/data/webhook-creators.ts), so it is off in any read made after an
 * event numbered above that change, unless another owner switched it on since: then `from_seq` is
 * at least that change's `seq`.
 */
export const receives = (
  webhook: Pick<StoredWebhook, 'active' | 'events' | 'from_seq'>,
  event: { type: string; seq?: number | null },
) => selects(webhook, event.type) && (event.seq ?? 0) > (webhook.from_seq ?? 0);

/**
 * The board's webhooks less the active ones whose creator's account is gone. Deleting an account
 * removes its profile at once, but leaves its boards to the account collector, whose membership
 * removal then switches the account's webhooks off: until it reaches this board, the creator's
 * missing profile is what says the webhook no longer speaks for anyone. One strongly consistent
 * BatchGetItem of at most 10 profiles, only for a board with an active webhook.
 */
async function speakingFor(webhooks: WebhookRecord[]): Promise<WebhookRecord[]> {
  const creators = [
    ...new Set(webhooks.filter((webhook) => webhook.active).flatMap((webhook) => (webhook as StoredWebhook).created_by ?? [])),
  ];
  if (creators.length === 0) return webhooks;
  const profiles = await getProfiles(creators);
  return webhooks.filter((webhook) => {
    const creator = (webhook as StoredWebhook).created_by;
    return !webhook.active || !creator || profiles.has(creator);
  });
}

/** Returns the stream sequence numbers to retry from (one per failed board at most). */
export async function fanOut(records: ChangeRecord[]): Promise<string[]> {
  const byBoard = eventsByBoard(records);
  const failures: string[] = [];
  await Promise.all(
    [...byBoard].map(async ([boardId, events]) => {
      events.sort((a, b) => (a.event.seq ?? 0) - (b.event.seq ?? 0));
      let next = 0;
      try {
        const all = await boardWebhooks(boardId);
        if (all.length === 0) return;
        const webhooks = await speakingFor(all);
        for (; next < events.length; next++) {
          const { event } = events[next]!;
          const items: NewDelivery[] = webhooks
            .filter((webhook) => receives(webhook as StoredWebhook, event))
            .map((webhook) => ({ webhookId: webhook.id, boardId, event }));
          await scheduleDeliveries(items);
          if (event.type === 'board.deleted')
            await expireWebhooks(
              boardId,
              all.map((webhook) => webhook.id),
            );
        }
      } catch (error) {
        logger.error('webhook deliveries not scheduled; the batch is retried from here', { boardId, error });
        failures.push(events[next]!.sequence);
      }
    }),
  );
  return failures;
}
