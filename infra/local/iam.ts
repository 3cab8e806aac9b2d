import { AsyncLocalStorage } from 'node:async_hooks';
import { KMSClient } from '@aws-sdk/client-kms';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { MiddlewareStack } from '@smithy/types';
import type { FunctionRow } from '../../lib/routes';
import { tableActionsOf } from '../../lib/rows/row';
import { inInvocationScope } from '../../lib/runtime/logger';

/**
 * The local stack's stand-in for each function's IAM role: every DynamoDB command a handler sends
 * is checked against its row's `table` and `index` actions, every SQS and KMS command against its
 * `queue` and `key` actions, and one its role would not allow is refused the way the service
 * refuses it (AccessDeniedException), so a missing grant fails a local test instead of a deployed
 * request. The checks are attached to the clients from outside, like the round-trip trace:
 * handler code is the same as on AWS.
 */
const roleStorage = new AsyncLocalStorage<{ entry: string; allowed: Set<string> }>();

/**
 * Runs `fn` as the function of `row`: its DynamoDB commands must be allowed by the row, and its
 * log lines carry its own invocation's request id (many run at once in this one process).
 */
export const asFunction = <T>(row: FunctionRow, fn: () => Promise<T>) =>
  roleStorage.run(
    {
      entry: row.entry,
      allowed: new Set([
        ...tableActionsOf(row),
        ...(row.index ?? []).map((a) => `index:${a}`),
        ...(row.queue ?? []),
        ...(row.key ?? []),
      ]),
    },
    () => inInvocationScope(fn),
  );

type TransactItem = Partial<Record<'Put' | 'Update' | 'Delete' | 'ConditionCheck', unknown>>;
const TRANSACT_ACTIONS = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' };

/** The IAM actions a command needs (a transaction needs those of the items in it). */
function actionsOf(commandName: string, input: Record<string, unknown>): string[] {
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

/** The IAM action of an SQS or KMS command (SendMessageBatch is allowed by sqs:SendMessage, as on AWS). */
function serviceActionOf(service: 'sqs' | 'kms', commandName: string): string {
  const name = commandName.replace(/Command$/, '').replace(/Batch$/, '');
  return `${service}:${name}`;
}

/**
 * The encryption context the key's grants require (infra/webhooks.ts: kms:EncryptionContext:purpose
 * = webhook-secret): a KMS call without it is refused, as the key's role condition refuses it.
 */
const KEY_PURPOSE = 'webhook-secret';

function refuse(entry: string, action: string, why = 'its route row does not grant it'): never {
  const error = new Error(`${entry} is not authorized to perform ${action} (${why})`);
  error.name = 'AccessDeniedException';
  console.error(`local IAM: ${error.message}`);
  throw error;
}

let servicesEnforced = false;
/**
 * Holds every SQS and KMS client in this process (whoever made it: lib/data makes its own) to the
 * running function's `queue` and `key` actions, by checking each command as it is sent. Outside a
 * function (the event source's own receives and deletes, tools) nothing is checked.
 */
export function enforceServiceActions(): void {
  if (servicesEnforced) return;
  servicesEnforced = true;
  for (const [service, client] of [
    ['sqs', SQSClient],
    ['kms', KMSClient],
  ] as const) {
    const send = client.prototype.send as (this: unknown, ...args: unknown[]) => Promise<unknown>;
    client.prototype.send = function checkedSend(this: unknown, ...args: unknown[]) {
      const role = roleStorage.getStore();
      if (role) {
        const command = args[0] as { constructor: { name: string }; input?: { EncryptionContext?: Record<string, string> } };
        const action = serviceActionOf(service, command.constructor.name);
        try {
          if (!role.allowed.has(action)) refuse(role.entry, action);
          if (service === 'kms' && command.input?.EncryptionContext?.purpose !== KEY_PURPOSE) {
            refuse(role.entry, action, `the key's grant requires the encryption context purpose=${KEY_PURPOSE}`);
          }
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return send.apply(this, args);
    } as typeof client.prototype.send;
  }
}
