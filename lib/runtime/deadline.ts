import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request's deadline as an AbortSignal, visible to everything the request calls (the SDK
 * clients check it before every attempt, see `stopAtDeadline`). Once a request has been
 * answered 503 for running out of time, none of its retries may still reach a backing service:
 * a write the client was told failed must not land afterwards.
 */
interface Deadline {
  signal: AbortSignal;
  /** Epoch milliseconds at which the request is answered 503 if its work has not finished. */
  at: number;
  /** The request's calls to backing services so far, every attempt counted: what is left of its call budget. */
  calls: number;
}
const deadlineStorage = new AsyncLocalStorage<Deadline>();

const runWithDeadline = <T>(signal: AbortSignal, fn: () => Promise<T>, at = Number.POSITIVE_INFINITY) =>
  deadlineStorage.run({ signal, at, calls: 0 }, fn);

/** Whether the current request's deadline has passed (its 503 answered): no backing call may start. */
export const deadlinePassed = () => deadlineStorage.getStore()?.signal.aborted === true;

/** Milliseconds left before the current request's deadline (Infinity outside a request). */
export const timeToDeadline = () => (deadlineStorage.getStore()?.at ?? Number.POSITIVE_INFINITY) - Date.now();

/**
 * The calls the current request has sent to backing services so far, attempts and retries
 * included (every client with this middleware: for a board write, DynamoDB's alone).
 */
export const callsSoFar = () => deadlineStorage.getStore()?.calls ?? 0;

/** Runs `fn` free of the request's deadline: for clean-up that must happen even after it. */
export const outsideDeadline = <T>(fn: () => Promise<T>) => deadlineStorage.exit(fn);

/**
 * The time a write must have before the deadline to be sent at all. A write cannot be recalled
 * once sent: one still in flight when the deadline answers 503 may commit afterwards, and the
 * client would have been told it failed. DynamoDB answers a write in milliseconds; the budget is
 * far above that, so that only a request already out of time is refused a write (503, nothing
 * written), even on a machine that runs DynamoDB Local under load.
 */
export const WRITE_BUDGET_MS = 3000;

/** The SDK commands that change something: they start only with WRITE_BUDGET_MS left. */
const WRITE_COMMANDS = new Set([
  'TransactWriteItemsCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
]);

export class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded';
}

type Stack = {
  add(
    middleware: (
      next: (args: unknown) => Promise<unknown>,
      context: { commandName?: string },
    ) => (args: unknown) => Promise<unknown>,
    options: object,
  ): void;
};

/**
 * SDK middleware, inside the retry loop: no attempt starts after the request's deadline, and no
 * write starts with less than WRITE_BUDGET_MS left before it. Every attempt that starts is counted
 * (`callsSoFar`).
 */
export function stopAtDeadline(client: { middlewareStack: unknown }): void {
  (client.middlewareStack as Stack).add(
    (next, context) => async (args) => {
      const deadline = deadlineStorage.getStore();
      if (deadline) {
        if (deadline.signal.aborted) throw new DeadlineExceeded('the request deadline passed; attempt not sent');
        if (WRITE_COMMANDS.has(context.commandName ?? '') && deadline.at - Date.now() < WRITE_BUDGET_MS) {
          throw new DeadlineExceeded('too little time left before the request deadline to send a write');
        }
        deadline.calls++;
      }
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
  const at = Date.now() + Math.max(0, remainingMs - DEADLINE_MARGIN_MS);
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
    return await Promise.race([runWithDeadline(controller.signal, work, at), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
