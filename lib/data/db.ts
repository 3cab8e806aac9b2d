import { type AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ENV, requireEnv } from '../runtime/config';
import { stopAtDeadline } from '../runtime/deadline';
import { sdkLogger } from '../runtime/logger';
import { cancellationCodes } from './sdk-errors';
import type { ItemKey } from './table';

let cachedTableName: string | undefined;
/**
 * The table's name, read once per container. Read on first use rather than at module load,
 * because every handler bundles this module but only the routes that use the table are given
 * TABLE_NAME; those check it at cold start (lib/http/route.ts).
 */
export const tableName = () => (cachedTableName ??= requireEnv(ENV.tableName));

export const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({ logger: sdkLogger }), {
  marshallOptions: { removeUndefinedValues: true },
});
stopAtDeadline(documentClient);

export type Item = Record<string, unknown> & ItemKey;

const keyId = (key: ItemKey) => `${key.pk}\u0000${key.sk}`;

/** Items by key from one map, so callers ask `found.get(key)` without caring about order. */
export class ItemSet {
  private readonly items = new Map<string, Item>();
  add(item: Item) {
    this.items.set(keyId(item), item);
  }
  get<T = Item>(key: ItemKey): T | undefined {
    return this.items.get(keyId(key)) as T | undefined;
  }
}

const BATCH_GET_LIMIT = 100;
const BATCH_WRITE_LIMIT = 25;
const MAX_UNPROCESSED_ROUNDS = 8;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Strongly consistent BatchGetItem of up to any number of keys (chunks of 100 run in parallel),
 * retrying unprocessed keys with backoff. One round trip in the common case.
 */
export async function getItems(keyList: ItemKey[]): Promise<ItemSet> {
  const found = new ItemSet();
  const unique = [...new Map(keyList.map((k) => [keyId(k), { pk: k.pk, sk: k.sk }])).values()];
  const chunks: ItemKey[][] = [];
  for (let i = 0; i < unique.length; i += BATCH_GET_LIMIT) chunks.push(unique.slice(i, i + BATCH_GET_LIMIT));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending: ItemKey[] = chunk;
      for (let round = 0; pending.length > 0; round++) {
        if (round >= MAX_UNPROCESSED_ROUNDS) throw new StorageBusy('BatchGetItem kept returning unprocessed keys');
        if (round > 0) await pause(20 * 2 ** round);
        const out = await documentClient.send(
          new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const item of out.Responses?.[tableName()] ?? []) found.add(item as Item);
        pending = (out.UnprocessedKeys?.[tableName()]?.Keys as ItemKey[] | undefined) ?? [];
      }
    }),
  );
  return found;
}

/** Strongly consistent query, following pages; `onPage` may stop early by returning false. */
export async function queryPages(
  input: Omit<QueryCommandInput, 'TableName' | 'ConsistentRead' | 'ExclusiveStartKey'>,
  onPage: (items: Item[]) => boolean | undefined,
  startAfter?: Record<string, unknown>,
): Promise<{ pages: number; lastKey?: Record<string, unknown> }> {
  let startKey = startAfter;
  let pages = 0;
  do {
    const out = await documentClient.send(
      new QueryCommand({ ...input, TableName: tableName(), ConsistentRead: true, ExclusiveStartKey: startKey }),
    );
    pages++;
    startKey = out.LastEvaluatedKey;
    if (onPage((out.Items ?? []) as Item[]) === false) return { pages, lastKey: startKey };
  } while (startKey);
  return { pages };
}

export async function queryAll(
  input: Omit<QueryCommandInput, 'TableName' | 'ConsistentRead' | 'ExclusiveStartKey'>,
): Promise<Item[]> {
  const items: Item[] = [];
  await queryPages(input, (page) => {
    items.push(...page);
  });
  return items;
}

type SdkTransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
/** A transaction item without `TableName`: there is one table, and `transactWrite` names it. */
export type TransactItem = { [Op in keyof SdkTransactItem]?: Omit<NonNullable<SdkTransactItem[Op]>, 'TableName'> };

/**
 * A transaction's items by name, in the order they are sent; an item left undefined is not sent.
 * Its cancellation is read by the same names (`refusalOf`), never by position. Names must not look
 * like array indexes ("0", "12"): an object lists those first, whatever order they were written in.
 */
export type NamedItems<N extends string = string> = { readonly [K in N]: TransactItem | undefined };

/** The names of the items `named` sends, in the order it sends them. */
export const namesOf = <N extends string>(named: NamedItems<N>): N[] =>
  (Object.keys(named) as N[]).filter((name) => named[name] !== undefined);

/** The items `named` sends, in order. */
export const itemsOf = (named: NamedItems): TransactItem[] =>
  Object.values(named).filter((item): item is TransactItem => item !== undefined);

/** Why a transaction was cancelled, by the names of its items. */
export interface Refusal<N extends string> {
  /** The items whose condition failed. */
  failed: ReadonlySet<N>;
  /**
   * The item as it was when its condition failed (sent with `ReturnValuesOnConditionCheckFailure:
   * 'ALL_OLD'`); undefined if it did not exist, or did not fail.
   */
  itemAt<T>(name: N): T | undefined;
}

/**
 * The cancellation of a transaction whose first items were `names` (in order; a wrapper may send
 * more after them), read by name; undefined when `error` is no cancellation.
 */
export function refusalOf<N extends string>(error: unknown, names: readonly N[]): Refusal<N> | undefined {
  const codes = cancellationCodes(error);
  if (!codes) return undefined;
  return {
    failed: new Set(names.filter((_, index) => codes[index] === 'ConditionalCheckFailed')),
    itemAt: <T>(name: N) => itemAtCancellation<T>(error, names.indexOf(name)),
  };
}

/** TransactWriteItems of named items (see `transactWrite`); its cancellation is read with `refusalOf(error, namesOf(named))`. */
export const transactNamed = (named: NamedItems) => transactWrite(itemsOf(named));

/** How a write that met other writes in flight is sent again: see `sendAgainOnConflict`. */
interface ConflictRetry {
  /** The refusals that say nothing about the request, only that another write held its items. */
  conflict: (error: unknown) => boolean;
  /** Tries in all, the first included. */
  attempts: number;
  /** The pause before try n+1 is random in 0 to n·stepMs ms, so that the writers spread out. */
  stepMs: number;
  /** What is thrown when the last try is refused too; default: that refusal. */
  exhausted?: (error: unknown) => unknown;
}

/**
 * Runs `write` until it is not refused with a `conflict`, with a jittered pause before each new
 * try. The SDK retries none of these refusals, and none says anything about the request (nothing
 * was written), so the caller sees one only when every try met one.
 */
export async function sendAgainOnConflict<T>(write: () => Promise<T>, retry: ConflictRetry): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!retry.conflict(error)) throw error;
      if (attempt >= retry.attempts) throw retry.exhausted ? retry.exhausted(error) : error;
      await pause(Math.random() * retry.stepMs * attempt);
    }
  }
}

/** A single write refused because a transaction in flight holds the same item. */
export const isTransactionConflict = (error: unknown) => error instanceof Error && error.name === 'TransactionConflictException';

/**
 * TransactWriteItems on this table (the table name is filled in). A cancellation caused only by
 * another transaction in flight on the same items (TransactionConflict) is retried here: the
 * caller never sees it unless it lasts. Any other cancellation reaches the caller, who reads
 * it by the names of its items (`refusalOf`) to tell which check failed.
 */
export async function transactWrite(items: TransactItem[]): Promise<void> {
  const withTable = items.map((item) => {
    const [[op, body]] = Object.entries(item) as unknown as [[string, Record<string, unknown>]];
    return { [op]: { ...body, TableName: tableName() } } as SdkTransactItem;
  });
  await sendAgainOnConflict(() => documentClient.send(new TransactWriteCommand({ TransactItems: withTable })), {
    conflict: (error) => {
      const codes = cancellationCodes(error);
      return codes?.includes('TransactionConflict') === true && !codes.includes('ConditionalCheckFailed');
    },
    attempts: 6,
    stepMs: 15,
  });
}

/**
 * A single write (PutItem, UpdateItem, DeleteItem) that meets a transaction in flight on the same
 * item is refused with TransactionConflictException: it is sent again, with jitter, a few times
 * before it surfaces as StorageBusy (503 on a route, never 500). Users: the webhook writes beside a
 * DELETE's or a create's transaction; the delivery worker's record and slot release beside a
 * duplicate message's claim transaction on the same delivery (lib/data/deliveries.ts).
 */
export const retryingConflicts = <T>(write: () => Promise<T>): Promise<T> =>
  sendAgainOnConflict(write, {
    conflict: isTransactionConflict,
    attempts: 6,
    stepMs: 20,
    exhausted: () => new StorageBusy('a write kept meeting transactions on the same item'),
  });

/** Deletes keys in BatchWriteItem chunks of 25, a few chunks at a time, retrying unprocessed ones. */
export async function deleteItems(keyList: ItemKey[], parallelism = 16): Promise<void> {
  const chunks: ItemKey[][] = [];
  for (let i = 0; i < keyList.length; i += BATCH_WRITE_LIMIT) chunks.push(keyList.slice(i, i + BATCH_WRITE_LIMIT));
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) {
      let pending = chunks[next++]!.map((key) => ({ DeleteRequest: { Key: { pk: key.pk, sk: key.sk } } }));
      for (let round = 0; pending.length > 0; round++) {
        if (round >= MAX_UNPROCESSED_ROUNDS) throw new StorageBusy('BatchWriteItem kept returning unprocessed items');
        if (round > 0) await pause(20 * 2 ** round);
        const out = await documentClient.send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
        pending = (out.UnprocessedItems?.[tableName()] as typeof pending | undefined) ?? [];
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, chunks.length) }, worker));
}

/** Raised when DynamoDB keeps deferring work; mapped to 503 like SDK throttling. */
export class StorageBusy extends Error {
  override name = 'StorageBusy';
}

/**
 * Takes `value` out of the string set `attribute` of the item at `key`, if the item still exists:
 * an item deleted meanwhile has nothing to take out, and must not be made again by the update.
 */
export async function removeFromSet(key: ItemKey, attribute: string, value: string): Promise<void> {
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: `DELETE ${attribute} :value`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':value': new Set([value]) },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/**
 * The item as it was when a single write failed its condition, from a write sent with
 * `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`; undefined if the item did not exist.
 */
export function itemAtConditionFailure<T>(error: unknown): T | undefined {
  const item = (error as { Item?: Record<string, AttributeValue> }).Item;
  return item ? (unmarshall(item) as T) : undefined;
}

/** Thrown by an optimistic attempt whose version check lost a race; the attempt is run again. */
export class LostRace extends Error {
  override name = 'LostRace';
}

/**
 * The item as it was when a transaction's write at `index` failed its condition, from an update
 * sent with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`; undefined if the item did not exist.
 * Callers read it by name (`refusalOf`).
 */
function itemAtCancellation<T>(error: unknown, index: number): T | undefined {
  if (index < 0) return undefined;
  const reasons = (error as { CancellationReasons?: { Item?: Record<string, AttributeValue> }[] }).CancellationReasons;
  const item = reasons?.[index]?.Item;
  return item ? (unmarshall(item) as T) : undefined;
}

const MAX_OPTIMISTIC_ATTEMPTS = 40;

/**
 * Runs `attempt` until it does not throw LostRace, with jittered backoff so that a burst of
 * writers to one column spreads out. Attempt 0 may use data read earlier in the request;
 * later attempts re-read. Exhaustion is a 503 (the client did nothing wrong), never a 500.
 */
export async function retryLostRaces<T>(attempt: (n: number) => Promise<T>): Promise<T> {
  for (let n = 0; n < MAX_OPTIMISTIC_ATTEMPTS; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof LostRace)) throw error;
      // Jittered, and shorter the more often this writer has lost: a writer that keeps losing to
      // fresher ones tries again sooner than they do, so nobody is starved on a busy board.
      await pause(Math.random() * Math.max(5, 160 / (n + 1)));
    }
  }
  throw new StorageBusy('too many concurrent writers to the same column or board');
}
