import type { DynamoDBBatchResponse } from 'aws-lambda';
import type { ChangeRecord } from '../data/change-events';
import { logger } from '../runtime/logger';

/**
 * What a stream consumer is: a batch in, the records to run again from out (ReportBatchItemFailures;
 * Lambda checkpoints at the failure with the lowest sequence number and runs the batch again from
 * there, the local poller likewise).
 */
export type Consume = (records: ChangeRecord[]) => Promise<DynamoDBBatchResponse>;

const sequenceOf = (record: ChangeRecord | undefined) => record?.dynamodb?.SequenceNumber ?? '';

/**
 * The checkpoint of a batch: its earliest record (in batch order, which is the shard's) that any
 * part reported failed, or none. A failure naming no record of the batch cannot be placed, so the
 * whole batch runs again (its first record): repeating is safe, skipping is not.
 */
export function earliestFailure(records: ChangeRecord[], failures: string[]): DynamoDBBatchResponse {
  if (failures.length === 0) return { batchItemFailures: [] };
  const failed = new Set(failures);
  const index = records.findIndex((record) => failed.has(sequenceOf(record)));
  const known = failures.every((sequence) => records.some((record) => sequenceOf(record) === sequence));
  return { batchItemFailures: [{ itemIdentifier: sequenceOf(records[known ? index : 0]) }] };
}

/**
 * Several consumers of the same batch, run side by side: each sees every record, none waits for
 * another. The batch's checkpoint is the earliest record any of them failed (a part that threw
 * failed them all), so the event source runs the batch again from there for all of them: each part
 * must therefore be safe to repeat on records it already handled.
 */
export function sideBySide(parts: Record<string, Consume>): Consume {
  return async (records) => {
    const names = Object.keys(parts);
    const outcomes = await Promise.allSettled(names.map((name) => parts[name]!(records)));
    const failures = outcomes.flatMap((outcome, i) => {
      if (outcome.status === 'fulfilled') return (outcome.value?.batchItemFailures ?? []).map((f) => f.itemIdentifier);
      logger.error('stream consumer part failed; the batch runs again from its start', { part: names[i], error: outcome.reason });
      return records.length > 0 ? [sequenceOf(records[0])] : [];
    });
    return earliestFailure(records, failures);
  };
}

/**
 * Each record to the consumer its `route` picks (none: nothing to do), one record after another in
 * batch order; the first that fails is the checkpoint, and the records after it wait for the retry.
 */
export function oneByOne(route: (record: ChangeRecord) => Consume | undefined): Consume {
  return async (records) => {
    for (const record of records) {
      const consume = route(record);
      if (!consume) continue;
      let failures: string[];
      try {
        failures = ((await consume([record]))?.batchItemFailures ?? []).map((f) => f.itemIdentifier);
      } catch (error) {
        logger.error('stream record not finished; the batch runs again from it', { sequence: sequenceOf(record), error });
        failures = [sequenceOf(record)];
      }
      if (failures.length > 0) return earliestFailure(records, failures);
    }
    return { batchItemFailures: [] };
  };
}
