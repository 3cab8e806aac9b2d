import { AsyncLocalStorage } from 'node:async_hooks';
import type { MiddlewareStack } from '@smithy/types';
import type { FunctionRow } from '../../lib/routes';
import { tableActionsOf } from '../../lib/rows/row';
import { inInvocationScope } from '../../lib/runtime/logger';

/**
 * The local stack's stand-in for each function's IAM role: every DynamoDB command a handler sends
 * is checked against its row's `table` and `index` actions, and one its role would not allow is
 * refused the way DynamoDB refuses it (AccessDeniedException), so a missing grant fails a local
 * test instead of a deployed request. The checks are attached to the shared client from outside,
 * like the round-trip trace: handler code is the same as on AWS.
 */
const roleStorage = new AsyncLocalStorage<{ entry: string; allowed: Set<string> }>();

/**
 * Runs `fn` as the function of `row`: its DynamoDB commands must be allowed by the row, and its
 * log lines carry its own invocation's request id (many run at once in this one process).
 */
export const asFunction = <T>(row: FunctionRow, fn: () => Promise<T>) =>
  roleStorage.run(
    { entry: row.entry, allowed: new Set([...tableActionsOf(row), ...(row.index ?? []).map((a) => `index:${a}`)]) },
    () => inInvocationScope(fn),
  );

type TransactItem = Partial<Record<'Put' | 'Update' | 'Delete' | 'ConditionCheck', unknown>>;
const TRANSACT_ACTIONS = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' };

/** The IAM actions a command needs (a transaction needs those of the items in it). */
export function actionsOf(commandName: string, input: Record<string, unknown>): string[] {
  const name = commandName.replace(/Command$/, '');
  if (name === 'TransactWrite' || name === 'TransactWriteItems') {
    return ((input.TransactItems ?? []) as TransactItem[]).flatMap((item) =>
      Object.keys(item).map((op) => `dynamodb:${TRANSACT_ACTIONS[op as keyof typeof TRANSACT_ACTIONS]}`),
    );
  }
  const action =
    {
      BatchGet: 'BatchGetItem',
      BatchWrite: 'BatchWriteItem',
      Put: 'PutItem',
      Get: 'GetItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
    }[name] ?? name;
  const scope = name === 'Query' && input.IndexName ? 'index:' : '';
  return [`${scope}dynamodb:${action}`];
}

// biome-ignore lint/suspicious/noExplicitAny: the SDK's stack is generic over every command's input and output
export function enforceRowActions(client: { middlewareStack: MiddlewareStack<any, any> }): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const role = roleStorage.getStore();
      if (!role) return next(args);
      const missing = actionsOf(String(context.commandName), args.input as Record<string, unknown>).filter(
        (action) => !role.allowed.has(action),
      );
      if (missing.length > 0) {
        const error = new Error(
          `${role.entry} is not authorized to perform ${missing.join(', ')} (its route row does not grant it)`,
        );
        error.name = 'AccessDeniedException';
        console.error(`local IAM: ${error.message}`);
        throw error;
      }
      return next(args);
    },
    { step: 'initialize', name: 'taskBoardLocalIam' },
  );
}
