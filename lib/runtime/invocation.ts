import { ENV, requireEnv } from './config';
import { raceDeadline } from './deadline';
import { beginInvocation, type InvocationContext } from './logger';
import { countColdStart } from './metrics';

/** What the shared part of a trigger's chain reads of its row (lib/rows): its entry and table actions. */
interface TriggerRow {
  entry: string;
  table: readonly unknown[];
}

/** One invocation's work and its answer once the deadline is reached, sharing whatever state they need. */
export interface InvocationWork<R> {
  work: () => Promise<R>;
  onDeadline: () => R;
}

/**
 * What every non-HTTP trigger's chain does around its own work (stream, queue, schedule and socket
 * rows; lib/http/chain.ts has its own steps for the same): the table's name checked at cold start
 * when the row uses the table, then on each invocation its log fields and the container's
 * cold-start count, and the work raced against the function's deadline (`remainingMs`, from the
 * row: lib/rows/row.ts `remainingMsOf`). `start` makes the invocation's work and deadline answer.
 */
export function invocationChain<Row extends TriggerRow, E, C extends InvocationContext | undefined, R>(
  row: Row,
  remainingMs: (context: C, row: Row) => number,
  start: (event: E, context: C) => InvocationWork<R>,
): (event: E, context: C) => Promise<R> {
  if (row.table.length > 0) requireEnv(ENV.tableName);
  return (event, context) => {
    beginInvocation(context);
    countColdStart(row.entry);
    const { work, onDeadline } = start(event, context);
    return raceDeadline(remainingMs(context, row), work, onDeadline);
  };
}
