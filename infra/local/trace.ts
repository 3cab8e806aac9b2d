import { AsyncLocalStorage } from 'node:async_hooks';
import type { MiddlewareStack } from '@smithy/types';

/**
 * What a trace records. `capacity` (TASK_BOARD_TRACE=1) asks DynamoDB for every command's consumed
 * capacity, which the deployed service never asks for: DynamoDB Local then spends about a sixth
 * more on a transaction of 54 items (40 against 34 ms). `calls` (TASK_BOARD_TRACE=calls) records
 * the calls and their times only, so a timed request makes exactly the calls the deployed
 * service makes.
 */
export type TraceMode = 'off' | 'calls' | 'capacity';

export function traceModeFrom(value: string | undefined): TraceMode {
  if (value === undefined || value === '' || value === '0') return 'off';
  if (value === '1') return 'capacity';
  if (value === 'calls') return 'calls';
  throw new Error(`TASK_BOARD_TRACE must be 1, calls or 0, got ${value}`);
}

/**
 * Per-request DynamoDB accounting for the local stack (TASK_BOARD_TRACE) and the benchmark:
 * every command a request sends, when it started and ended, and the capacity it consumed. It is
 * attached from outside the handlers (the SDK client's middleware stack), so handler code is
 * the same as on AWS.
 */
export interface CallRecord {
  command: string;
  start: number;
  end: number;
  capacityUnits: number;
}

export interface RequestTrace {
  calls: CallRecord[];
}

export const traceStorage = new AsyncLocalStorage<RequestTrace>();

type Capacity = { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;
const sumCapacity = (c: Capacity) => [c ?? []].flat().reduce((sum, item) => sum + (item.CapacityUnits ?? 0), 0);

// biome-ignore lint/suspicious/noExplicitAny: the SDK's stack is generic over every command's input and output
export function instrumentClient(client: { middlewareStack: MiddlewareStack<any, any> }, mode: TraceMode = 'capacity'): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const trace = traceStorage.getStore();
      if (!trace) return next(args);
      if (mode === 'capacity') (args.input as Record<string, unknown>).ReturnConsumedCapacity ??= 'TOTAL';
      const record: CallRecord = { command: String(context.commandName), start: performance.now(), end: 0, capacityUnits: 0 };
      trace.calls.push(record);
      try {
        const result = await next(args);
        record.capacityUnits = sumCapacity((result.output as { ConsumedCapacity?: Capacity }).ConsumedCapacity);
        return result;
      } finally {
        record.end = performance.now();
      }
    },
    { step: 'initialize', name: 'taskBoardRoundTripTrace' },
  );
}

/** Round trips one after another: the most calls of which none overlaps the next (earliest-end greedy). */
export function sequentialRoundTrips(calls: CallRecord[]): number {
  let count = 0;
  let lastEnd = Number.NEGATIVE_INFINITY;
  for (const call of [...calls].sort((a, b) => a.end - b.end)) {
    if (call.start >= lastEnd) {
      count++;
      lastEnd = call.end;
    }
  }
  return count;
}

/** Wall time spent waiting on DynamoDB (union of the calls' intervals). */
export function timeInDynamoDb(calls: CallRecord[]): number {
  let total = 0;
  let coveredUntil = Number.NEGATIVE_INFINITY;
  for (const call of [...calls].sort((a, b) => a.start - b.start)) {
    const start = Math.max(call.start, coveredUntil);
    if (call.end > start) total += call.end - start;
    coveredUntil = Math.max(coveredUntil, call.end);
  }
  return total;
}
