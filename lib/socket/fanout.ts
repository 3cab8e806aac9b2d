import type { DynamoDBBatchResponse } from 'aws-lambda';
import { type ChangeRecord, eventsByBoard } from '../data/change-events';
import { type Audience, closeConnection, dropWatches, isExpired, readAudience, type WatchRecord } from '../data/sockets';
import type { BoardEvent } from '../domain/events';
import { logger } from '../runtime/logger';
import { emitMetric, SERVICE } from '../runtime/metrics';
import { closeSocket, sendFrame } from './management';

/**
 * Sends a batch of stream records' events to the watchers of their boards. Each board's events go
 * out in `seq` order (one board's records share a partition, so the stream keeps them in order
 * across batches too); boards are served in parallel, each with one read of its members and
 * watches. A board that fails reports its first undelivered record, from which Lambda (or the
 * local poller) retries: delivery is at least once, and clients drop repeats by `event_id`.
 */
export async function broadcast(records: ChangeRecord[]): Promise<DynamoDBBatchResponse> {
  const byBoard = eventsByBoard(records);
  const failures: string[] = [];
  let sent = 0;
  await Promise.all(
    [...byBoard].map(async ([boardId, events]) => {
      events.sort((a, b) => (a.event.seq ?? 0) - (b.event.seq ?? 0));
      let next = 0;
      try {
        const audience = await readAudience(boardId);
        // The members read now are those after the whole batch: a member removed by one of its
        // events still hears what happened before, until that event ends their watch.
        for (const { event } of events) {
          if (event.type === 'member.removed') audience.members.set(event.user_id as string, 'member');
        }
        for (; next < events.length; next++) sent += await deliver(events[next]!.event, audience);
      } catch (error) {
        logger.error('board events not delivered; the batch is retried from here', { boardId, error });
        failures.push(events[next]!.sequence);
      }
    }),
  );
  if (sent > 0) emitMetric('EventsSent', { service: SERVICE }, sent);
  return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
}

/**
 * One event to every watcher still allowed to hear it. Membership and token expiry are checked
 * here, at sending time: a watcher who is no longer a member hears nothing, and the member a
 * `member.removed` is about gets `access.revoked` with that event's envelope and loses the watch;
 * a socket whose token expired gets `token.expired` and is closed. Returns the number of frames sent.
 */
async function deliver(event: BoardEvent, audience: Audience): Promise<number> {
  if (event.type === 'member.removed') audience.members.delete(event.user_id as string);
  const ended = new Set<WatchRecord>();
  const sends = audience.watches.map(async (watch): Promise<number> => {
    if (isExpired(watch)) {
      ended.add(watch);
      await endExpiredSocket(watch.connection_id);
      return 0;
    }
    if (event.type === 'board.deleted') {
      ended.add(watch);
      return (await send(watch, event)) ? 1 : 0;
    }
    if (event.type === 'member.removed' && event.user_id === watch.user_id) {
      ended.add(watch);
      const revoked: BoardEvent = { ...envelopeOf(event), type: 'access.revoked' };
      return (await send(watch, revoked)) ? 1 : 0;
    }
    // Removed by a change this batch does not hold yet: that change's member.removed ends the
    // watch with the remover's envelope; until then the watcher hears nothing more. A board whose
    // deletion has begun has lost its memberships, but not its watches: every watch still there
    // was a member's until the deletion (a removal ends the watch first, in seq order), and every
    // change answered 2xx reaches it before board.deleted (realtime.md).
    if (audience.boardExists && !audience.members.has(watch.user_id)) return 0;
    return (await send(watch, event)) ? 1 : 0;
  });
  const counts = await Promise.all(sends);
  if (ended.size > 0) {
    // The board is gone, or these watchers may no longer hear it: no later event reaches them.
    await dropWatches([...ended]);
    audience.watches = audience.watches.filter((watch) => !ended.has(watch));
  }
  return counts.reduce((sum, n) => sum + n, 0);
}

const envelopeOf = ({ event_id, board_id, actor_id, occurred_at }: BoardEvent) => ({ event_id, board_id, actor_id, occurred_at });

/** A socket API Gateway no longer has (410) is forgotten with all its watches. */
async function send(watch: WatchRecord, frame: unknown): Promise<boolean> {
  if (await sendFrame(watch.connection_id, frame)) return true;
  await closeConnection(watch.connection_id);
  return false;
}

/** A connection's token has expired: it is told, closed and forgotten. */
export async function endExpiredSocket(connectionId: string): Promise<void> {
  await sendFrame(connectionId, { type: 'token.expired' });
  await closeSocket(connectionId);
  await closeConnection(connectionId);
}
