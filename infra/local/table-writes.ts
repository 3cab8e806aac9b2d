// biome-ignore-all lint/suspicious/noExplicitAny: the SDK's stack is generic over every command's input and output
import type { MiddlewareStack } from '@smithy/types';

/**
 * Tells the local stream poller that the functions of this process wrote the table, so that it
 * reads the stream at once instead of at its idle pace. Lambda's event source polls a shard about
 * four times a second; the poller keeps that pace when nothing is written (DynamoDB Local spends
 * CPU on every GetRecords, and at a fixed 20 ms two idle readers cost a sixth of a core in Java
 * and as much again in this process), and still delivers a change within milliseconds. Writes
 * from outside this process (a test's own client) are seen at the idle pace.
 */
const waiting = new Set<() => void>();

/** The write commands of DynamoDB, the ones that put records on the stream. */
const WRITES = new Set([
  'PutItemCommand',
  'PutCommand',
  'UpdateItemCommand',
  'UpdateCommand',
  'DeleteItemCommand',
  'DeleteCommand',
  'BatchWriteItemCommand',
  'BatchWriteCommand',
  'TransactWriteItemsCommand',
  'TransactWriteCommand',
]);

/** Signals every write `client` sends, once DynamoDB has answered it. */
export function signalTableWrites(client: { middlewareStack: MiddlewareStack<any, any> }): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!WRITES.has(String(context.commandName))) return next(args);
      try {
        return await next(args);
      } finally {
        for (const wake of [...waiting]) wake();
      }
    },
    { step: 'initialize', name: 'taskBoardLocalTableWrites' },
  );
}

/** Resolves after `ms`, or as soon as a signalled write has been answered, whichever comes first. */
export function nextTableWrite(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      waiting.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    waiting.add(wake);
  });
}
