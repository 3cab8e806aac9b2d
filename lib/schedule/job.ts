import type { Context } from 'aws-lambda';
import { remainingMsOf, type ScheduleRow } from '../rows/row';
import { DeadlineExceeded } from '../runtime/deadline';
import { invocationChain } from '../runtime/invocation';
import { logger } from '../runtime/logger';

/** What a run did, as counts (`{ closed: 3 }`): logged when any is non-zero, and returned. */
export type JobCounts = Record<string, number>;

const OUT_OF_TIME = Symbol('out of time');

/**
 * The chain of a schedule row, as lib/stream/consumer.ts is for stream rows: the shared trigger
 * steps (lib/runtime/invocation.ts), and one log line when a run did something or failed.
 * Shortly before the function would time out, the run's SDK calls are aborted (none starts after)
 * and the invocation fails on its own terms rather than being killed: still a function error for
 * the errors alarm, as a timeout was, and safe, because a scheduled job must be safe to cut short
 * (the next run picks up what this one left).
 */
export function scheduledJob(row: ScheduleRow, run: () => Promise<JobCounts>) {
  const { id } = row;
  const chain = invocationChain(row, remainingMsOf, (_event: unknown, _context: Context | undefined) => {
    let outOfTime = false;
    return {
      work: async (): Promise<JobCounts | typeof OUT_OF_TIME> => {
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
      onDeadline: (): typeof OUT_OF_TIME => {
        outOfTime = true;
        return OUT_OF_TIME;
      },
    };
  });
  return async (event: unknown, context?: Context): Promise<JobCounts> => {
    const outcome = await chain(event, context);
    if (outcome !== OUT_OF_TIME) return outcome;
    logger.error('scheduled job deadline reached; the next run takes over', { job: id });
    throw new DeadlineExceeded(`${id} ran out of time; the next run takes over`);
  };
}
