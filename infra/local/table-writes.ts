// biome-ignore-all lint/suspicious/noExplicitAny: the SDK's stack is generic over every command's input and output
import type { MiddlewareStack } from '@smithy/types';

/**
 * Tells the local stream poller that the functions of this process wrote the table, so that it
 * reads the stream at once instead of at its idle pace (infra/local/stream-poller.ts): an idle
 * GetRecords costs DynamoDB Local CPU, and a change still reaches its readers within
 * milliseconds. Writes from outside this process (a test's own client) are seen at the idle pace.
 */
const waiting = new Set<() => void>();
let signalled = 0;

/** How many writes have been signalled so far: a poller compares it across a read. */
export const tableWritesSignalled = () => signalled;

/**
 * The commands that put records on the stream. A document client's command runs as the one it
 * wraps, so these names are all a middleware sees (PutItemCommand for a PutCommand).
 */
const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

/** Signals every write `client` sends, once DynamoDB has answered it. */
export function signalTableWrites(client: { middlewareStack: MiddlewareStack<any, any> }): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!WRITES.has(String(context.commandName))) return next(args);
      try {
        return await next(args);
      } finally {
        signalled++;
        for (const wake of [...waiting]) wake();
      }
    },
    { step: 'initialize', name: 'taskBoardLocalTableWrites' },
  );
}

/** Whether a signalled write was answered within `ms` (true, at once) or not (false, after `ms`). */
export function nextTableWrite(ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const end = (written: boolean) => {
      clearTimeout(timer);
      waiting.delete(wake);
      resolve(written);
    };
    const wake = () => end(true);
    // A poller's wait keeps no process alive: the servers beside it do, until they stop.
    const timer = setTimeout(() => end(false), ms).unref();
    waiting.add(wake);
  });
}
