/** Resolves after `ms` milliseconds. */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Retries `check` until it passes; once `timeoutMs` have run out, its last failure is thrown. For
 * what the service finishes after it answered (a cleanup, a sweep), which no event announces.
 * The default 60 s is a hang guard for a busy shared machine: a check that passes ends the wait.
 */
export async function eventually(check: () => Promise<void>, timeoutMs = 60_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await pause(everyMs);
    }
  }
}

/**
 * Waits until `done` holds or the clock passes `until` (epoch ms), without failing: for work a
 * test let run on in the background, whose outcome the test's own assertions then read.
 */
export async function settle(done: () => boolean, until: number, everyMs = 25): Promise<void> {
  while (!done() && Date.now() < until) await pause(everyMs);
}
