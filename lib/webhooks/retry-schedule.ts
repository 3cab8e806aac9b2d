import { ENV } from '../runtime/config';

/**
 * The delays between a delivery's attempts (docs/reference.md, "Webhooks"): about 5 s,
 * 5 min, 30 min, 2 h, 5 h, 10 h, 10 h by default, 8 attempts over about a day. n delays make n + 1
 * attempts. `WEBHOOK_RETRY_SCHEDULE` overrides it (the local stack's tests: "1,1", or "" for a
 * single attempt).
 */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** The longest delay one value may ask for: a week (a longer one is a typo, not a schedule). */
const MAX_DELAY_SECONDS = 7 * 24 * 3600;
/** At most this many delays (the queue's hops and the deliveries log stay bounded). */
const MAX_DELAYS = 50;

/**
 * Parses a schedule: comma-separated whole seconds, each ≥ 0 (spaces around a value allowed). An
 * unset value is the default; an empty (or blank) one means a single attempt. Anything else throws
 * naming the variable, so a mistyped setting fails the cold start instead of retrying wrongly.
 */
export function parseRetrySchedule(value: string | undefined): readonly number[] {
  if (value === undefined) return DEFAULT_RETRY_SCHEDULE;
  if (value.trim() === '') return [];
  const parts = value.split(',').map((part) => part.trim());
  if (parts.length > MAX_DELAYS) throw new Error(`${ENV.webhookRetrySchedule} holds more than ${MAX_DELAYS} delays`);
  return parts.map((part) => {
    if (!/^\d+$/.test(part) || Number(part) > MAX_DELAY_SECONDS)
      throw new Error(
        `${ENV.webhookRetrySchedule} must be comma-separated whole seconds (0 to ${MAX_DELAY_SECONDS}), not ${JSON.stringify(part)}`,
      );
    return Number(part);
  });
}

let cached: readonly number[] | undefined;
/** The schedule of this process, read once (at cold start by the rows that list the variable). */
export const retrySchedule = (): readonly number[] => (cached ??= parseRetrySchedule(process.env[ENV.webhookRetrySchedule]));

/** How many attempts a delivery gets: one more than the delays. */
export const attemptsOf = (schedule: readonly number[]) => schedule.length + 1;

/** The whole schedule in seconds: how long a delivery may stay pending after its first attempt. */
export const scheduleSeconds = (schedule: readonly number[]) => schedule.reduce((sum, delay) => sum + delay, 0);

/**
 * After `attempts` failed attempts, the delay before the next one in seconds, or undefined when
 * the schedule is spent (the delivery ends failed).
 */
export const delayAfter = (schedule: readonly number[], attempts: number): number | undefined =>
  attempts >= 1 && attempts <= schedule.length ? schedule[attempts - 1] : undefined;
