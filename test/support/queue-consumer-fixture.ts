import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

/**
 * A queue consumer for the SQS stand-in's event source tests (test/integration/webhook-stand-ins.test.ts):
 * each message's body says what to do (`ok`, `fail-once`, `fail`, `throw-once`), and every record
 * it is handed is kept in `fixtureCalls` (on globalThis, so the test sees what the event source's
 * own import of this module saw), with the number of invocations running at once.
 */
export interface FixtureState {
  records: { id: string; action: string; receiveCount: number; messageId: string }[];
  running: number;
  peak: number;
  thrown: Set<string>;
}

export const fixtureState = (): FixtureState => {
  const holder = globalThis as { queueFixture?: FixtureState };
  holder.queueFixture ??= { records: [], running: 0, peak: 0, thrown: new Set() };
  return holder.queueFixture;
};

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const state = fixtureState();
  state.running += 1;
  state.peak = Math.max(state.peak, state.running);
  try {
    // Long enough for other pollers to start theirs, if they were allowed to.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const failures: { itemIdentifier: string }[] = [];
    for (const record of event.Records) {
      const { id, action } = JSON.parse(record.body) as { id: string; action: string };
      const receiveCount = Number(record.attributes.ApproximateReceiveCount);
      state.records.push({ id, action, receiveCount, messageId: record.messageId });
      if (action === 'throw-once' && !state.thrown.has(id)) {
        state.thrown.add(id);
        throw new Error(`fixture: ${id} throws once`);
      }
      if (action === 'fail' || (action === 'fail-once' && receiveCount === 1))
        failures.push({ itemIdentifier: record.messageId });
    }
    return { batchItemFailures: failures };
  } finally {
    state.running -= 1;
  }
}
