import type { DynamoDBStreamEvent } from 'aws-lambda';
import { countColdStart } from '../../lib/runtime/metrics';
import { broadcast } from '../../lib/socket/fanout';

/** The table stream's consumer (filtered to stamped changes; see lib/data/changes.ts). */
export const handler = async (event: DynamoDBStreamEvent) => {
  countColdStart('functions/events/broadcast.ts');
  return broadcast(event.Records as Parameters<typeof broadcast>[0]);
};
