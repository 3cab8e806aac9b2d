import type { Context } from 'aws-lambda';
import { remainingMsOf, type ScheduleRow } from '../rows/row';
import { ENV, requireEnv } from '../runtime/config';
import { DeadlineExceeded, raceDeadline } from '../runtime/deadline';
import { beginInvocation, logger } from '../runtime/logger';
import { countColdStart } from '../runtime/metrics';

/** What a run did, as counts (`{ closed: 3 }`): logged when any is non-zero, and returned. */
export type JobCounts = Record<string, number>;

const OUT_OF_TIME = Symbol('out of time');

/**
 * The chain of a schedule row, as lib/stream/consumer.ts is for stream rows: the table checked at
 * cold start, the cold-start count, one log line when a run did something or failed, and the
 * deadline. Shortly before the function would time out, the run's SDK calls are aborted (none
 * starts after) and the invocation fails on its own terms rather than being killed: still a
 * function error for the errors alarm, as a timeout was, and safe, because a scheduled job must
 * be safe to cut short (the next run picks up what this one left).
 */
export function scheduledJob(row: ScheduleRow, run: () => Promise<JobCounts>) {
  const { id } = row;
  if (row.table.length > 0) requireEnv(ENV.tableName);
  return async (_event: unknown, context?: Context): Promise<JobCounts> => {
    beginInvocation(context);
    countColdStart(row.entry);
    const remaining = remainingMsOf(context, row);
    let outOfTime = false;
    const outcome = await raceDeadline<JobCounts | typeof OUT_OF_TIME>(
      remaining,
      async () => {
        try {
          const counts = await run();
          if (Object.values(counts).some((count) => count > 0)) logger.info('scheduled job ran', { job: id, ...counts });
          return counts;
        } catch (error) {
          // After the deadline the aborted calls fail too; the deadline's own line says it once.
          if (!outOfTime) logger.error('scheduled job failed', { job: id, error });
          throw error;
        }
      },
      () => {
        outOfTime = true;
        return OUT_OF_TIME;
      },
    );
    if (outcome !== OUT_OF_TIME) return outcome;
    logger.error('scheduled job deadline reached; the next run takes over', { job: id });
    throw new DeadlineExceeded(`${id} ran out of time; the next run takes over`);
  };
}
