import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request's deadline as an AbortSignal, visible to everything the request calls (the SDK
 * clients check it before every attempt, see `stopAtDeadline`). Once a request has been
 * answered 503 for running out of time, none of its retries may still reach a backing service:
 * a write the client was told failed must not land afterwards.
 */
const deadlineStorage = new AsyncLocalStorage<AbortSignal>();

export const runWithDeadline = <T>(signal: AbortSignal, fn: () => Promise<T>) => deadlineStorage.run(signal, fn);

/** Whether the current request's deadline has passed (its 503 answered): no backing call may start. */
export const deadlinePassed = () => deadlineStorage.getStore()?.aborted === true;

/** Runs `fn` free of the request's deadline: for clean-up that must happen even after it. */
export const outsideDeadline = <T>(fn: () => Promise<T>) => deadlineStorage.exit(fn);

export class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded';
}

type Stack = {
  add(middleware: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>, options: object): void;
};

/** SDK middleware, inside the retry loop: no attempt starts after the request's deadline. */
export function stopAtDeadline(client: { middlewareStack: unknown }): void {
  (client.middlewareStack as Stack).add(
    (next) => async (args) => {
      if (deadlinePassed()) throw new DeadlineExceeded('the request deadline passed; attempt not sent');
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'taskBoardStopAtDeadline' },
  );
}

/** Time kept back from the function timeout to answer and log before Lambda kills the invocation. */
export const DEADLINE_MARGIN_MS = 500;

/**
 * Runs `work` under a deadline `remainingMs - DEADLINE_MARGIN_MS` from now: past it, the answer
 * is `onTimeout()`, and the work's signal is aborted so that none of its SDK retries still starts.
 */
export async function raceDeadline<T>(remainingMs: number, work: () => Promise<T>, onTimeout: () => T): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<T>((resolve) => {
    timer = setTimeout(
      () => {
        controller.abort();
        resolve(onTimeout());
      },
      Math.max(0, remainingMs - DEADLINE_MARGIN_MS),
    );
  });
  try {
    return await Promise.race([runWithDeadline(controller.signal, work), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
