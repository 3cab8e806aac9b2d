import { DISABLE_AFTER_FAILED_DELIVERIES, DISABLE_AFTER_FAILING_MS, shouldSwitchOff } from '../../lib/data/deliveries';
import { receives, selects } from '../../lib/data/webhook-fanout';

/**
 * Switching a failing webhook off (webhooks.md "Deliveries": all deliveries failed for 5 days, or
 * 50 deliveries in a row), judged at an injected moment: no test waits 5 days.
 */
const start = new Date('2026-11-01T00:00:00.000Z');
const startPlus = (ms: number) => new Date(start.getTime() + ms);
const DAY = 24 * 3600 * 1000;

describe('switching a failing webhook off', () => {
  it('waits until 5 days after the first failure since the last success', () => {
    const fields = { active: true, failing_since: start.toISOString(), failed_in_row: 3 };
    expect(shouldSwitchOff(fields, startPlus(0))).toBe(false);
    expect(shouldSwitchOff(fields, startPlus(4 * DAY))).toBe(false);
    expect(shouldSwitchOff(fields, startPlus(5 * DAY - 1))).toBe(false);
    expect(shouldSwitchOff(fields, startPlus(5 * DAY))).toBe(true);
    expect(shouldSwitchOff(fields, startPlus(9 * DAY))).toBe(true);
    expect(DISABLE_AFTER_FAILING_MS).toBe(5 * DAY);
  });

  it('switches off at 50 deliveries ended failed in a row, whenever they began', () => {
    const at = startPlus(60_000);
    const since = start.toISOString();
    expect(shouldSwitchOff({ active: true, failing_since: since, failed_in_row: 49 }, at)).toBe(false);
    expect(shouldSwitchOff({ active: true, failing_since: since, failed_in_row: 50 }, at)).toBe(true);
    expect(DISABLE_AFTER_FAILED_DELIVERIES).toBe(50);
  });

  it('never for a webhook that is not failing, or already off', () => {
    expect(shouldSwitchOff({ active: true }, startPlus(30 * DAY))).toBe(false);
    expect(shouldSwitchOff({ active: true, failed_in_row: 0 }, startPlus(30 * DAY))).toBe(false);
    expect(shouldSwitchOff({ active: false, failing_since: start.toISOString(), failed_in_row: 80 }, startPlus(30 * DAY))).toBe(
      false,
    );
  });
});

describe('which webhooks get an event', () => {
  it('active ones selecting its type (empty: all), never access.revoked', () => {
    expect(selects({ active: true, events: [] }, 'card.created')).toBe(true);
    expect(selects({ active: true, events: ['card.created'] }, 'card.created')).toBe(true);
    expect(selects({ active: true, events: ['card.created'] }, 'card.moved')).toBe(false);
    expect(selects({ active: false, events: [] }, 'card.created')).toBe(false);
    expect(selects({ active: true, events: [] }, 'access.revoked')).toBe(false);
    expect(selects({ active: true, events: ['access.revoked'] }, 'access.revoked')).toBe(false);
  });
});

describe('which events a webhook receives', () => {
  it('only those committed after it was created or last switched on (seq above from_seq)', () => {
    const hook = { active: true, events: [], from_seq: 7 };
    expect(receives(hook, { type: 'card.created', seq: 7 })).toBe(false);
    expect(receives(hook, { type: 'card.created', seq: 3 })).toBe(false);
    expect(receives(hook, { type: 'card.created', seq: 8 })).toBe(true);
    expect(receives({ ...hook, active: false }, { type: 'card.created', seq: 8 })).toBe(false);
    expect(receives({ ...hook, events: ['card.moved'] }, { type: 'card.created', seq: 8 })).toBe(false);
    // A board's first events, for a webhook made before any change (from_seq 0).
    expect(receives({ active: true, events: [], from_seq: 0 }, { type: 'column.created', seq: 1 })).toBe(true);
  });
});
