import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request's deadline as an AbortSignal, visible to everything the request calls (the SDK
 * clients check it before every attempt, see `stopAtDeadline`). Once a request has been
 * answered 503 for running out of time, none of its retries may still reach a backing service:
 * a write the client was told failed must not land afterwards.
 */
const deadlineStorage = new AsyncLocalStorage<AbortSignal>();

export const runWithDeadline = <T>(signal: AbortSignal, fn: () => Promise<T>) => deadlineStorage.run(signal, fn);

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
      if (deadlineStorage.getStore()?.aborted) throw new DeadlineExceeded('the request deadline passed; attempt not sent');
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'taskBoardStopAtDeadline' },
  );
}
