import {
  attemptsOf,
  DEFAULT_RETRY_SCHEDULE,
  delayAfter,
  parseRetrySchedule,
  scheduleSeconds,
} from '../../lib/webhooks/retry-schedule';

/** WEBHOOK_RETRY_SCHEDULE (webhooks.md "Deliveries"): n delays, n + 1 attempts; a bad value fails naming the variable. */
describe('the retry schedule', () => {
  it('is about a day by default: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 8 attempts', () => {
    expect(parseRetrySchedule(undefined)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(attemptsOf(DEFAULT_RETRY_SCHEDULE)).toBe(8);
    const hours = scheduleSeconds(DEFAULT_RETRY_SCHEDULE) / 3600;
    expect(hours).toBeGreaterThan(20);
    expect(hours).toBeLessThan(30);
  });

  it.each([
    ['1,1', [1, 1]],
    [' 5 , 300 ', [5, 300]],
    ['0', [0]],
    ['', []],
    ['   ', []],
  ])('reads %j as %j', (value, delays) => {
    expect(parseRetrySchedule(value)).toEqual(delays);
    expect(attemptsOf(delays)).toBe(delays.length + 1);
  });

  it.each([['1,,2'], ['-1'], ['1.5'], ['5s'], ['1;2'], ['1e3'], ['0x10'], ['999999999'], [Array(52).fill('1').join(',')]])(
    'refuses %j, naming the variable',
    (value) => {
      expect(() => parseRetrySchedule(value)).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    },
  );

  it('gives the delay after each failed attempt, and none once spent', () => {
    const schedule = [1, 2, 3];
    expect([1, 2, 3, 4].map((n) => delayAfter(schedule, n))).toEqual([1, 2, 3, undefined]);
    expect(delayAfter([], 1)).toBeUndefined();
  });
});
