import { randomBytes } from 'node:crypto';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { Forbidden, LimitReached, Unauthorized } from '../domain/errors';
import { MAX_WATCHES_PER_SOCKET } from '../domain/limits';
import { nowSeconds } from './changes';
import {
  deleteItems,
  documentClient,
  getItems,
  isConditionFailure,
  type NamedItems,
  namesOf,
  queryAll,
  refusalOf,
  tableName,
  transactNamed,
} from './db';
import { seqOf } from './event-log';
import { type FoldedCount, transactWriteCounted } from './rate-limits';
import type { BoardRecord, MemberRecord, Role } from './records';
import { expiryMinute, keyHash, keys, TTL_ATTRIBUTE } from './table';
import { accountGone } from './users';

/**
 * Socket tickets, connections and watches (docs/realtime.md). A ticket is stored by the hash of
 * its value, so the table never holds a usable ticket. A connection never outlives the token its
 * ticket was issued for: its `expires_at` is the token's expiry, checked when it watches and
 * before every send, and the sweeper closes it then.
 */
export interface ConnectionRecord {
  connection_id: string;
  user_id: string;
  /** Epoch seconds: the access token's expiry. */
  expires_at: number;
  connected_at: string;
  watching?: Set<string>;
  /** A socket opened with a personal access token's ticket: that token's id (its deletion closes the socket). */
  token_id?: string;
  /** That token's boards, when it is limited to some: the only ones the socket may watch. */
  board_ids?: string[] | null;
}

/** The personal access token a ticket is issued for: its id and boards (docs/tokens.md). */
export interface TicketGrant {
  tokenId: string;
  boardIds: readonly string[] | null;
}

export interface WatchRecord {
  board_id: string;
  connection_id: string;
  user_id: string;
  expires_at: number;
}

/** Connection and watch items outlive their token by an hour, for the sweeper to find them first. */
const AFTER_EXPIRY_SECONDS = 60 * 60;

/**
 * A single-use ticket for the caller, bound to their token's expiry: one TransactWriteItems.
 * `expiresIn` is the seconds it really has, less than the configured lifetime when the token
 * expires first. A token that expired since it was verified (the second turned meanwhile) gets no
 * ticket. With a `count` (the rate limiter's, lib/data/rate-limits.ts), the counter's conditional
 * increment is one more item of that transaction: no round trip before it, and a refused request
 * writes nothing (QuotaUsedUp).
 */
export async function issueTicket(
  userId: string,
  tokenExpiresAt: number,
  lifetimeSeconds: number,
  count?: FoldedCount,
  grant?: TicketGrant,
): Promise<{ ticket: string; expiresIn: number }> {
  const ticket = randomBytes(32).toString('base64url');
  const now = nowSeconds();
  if (tokenExpiresAt <= now) throw new Unauthorized('The access token has expired.', true);
  const expiresAt = Math.min(now + lifetimeSeconds, tokenExpiresAt);
  const ticketHash = keyHash(ticket);
  // The ticket, its entry under the user (what an account deletion removes) and, in the same
  // transaction, the account's profile: a deleted account's token gets no ticket.
  const items = {
    ticket: {
      Put: {
        Item: {
          ...keys.ticket(ticketHash),
          type: 'ticket',
          user_id: userId,
          token_expires_at: tokenExpiresAt,
          ...(grant ? { token_id: grant.tokenId, board_ids: grant.boardIds } : {}),
          expires_at: expiresAt,
          [TTL_ATTRIBUTE]: expiresAt,
        },
      },
    },
    userTicket: { Put: { Item: { ...keys.userTicket(userId, ticketHash), type: 'user_ticket', [TTL_ATTRIBUTE]: expiresAt } } },
    profile: { ConditionCheck: { Key: keys.userProfile(userId), ConditionExpression: 'attribute_exists(pk)' } },
  } satisfies NamedItems;
  try {
    await transactWriteCounted(items, count);
  } catch (error) {
    if (refusalOf(error, namesOf(items))?.failed.has('profile')) throw accountGone();
    throw error;
  }
  return { ticket, expiresIn: expiresAt - now };
}

/**
 * Consumes a ticket with one conditional delete (a used, expired or unknown ticket fails it, so a
 * ticket can never open a second socket), then records the connection and its sweeper entry.
 */
export async function openConnection(ticket: string, connectionId: string): Promise<ConnectionRecord> {
  let consumed: { user_id: string; token_expires_at: number; token_id?: string; board_ids?: string[] | null } | undefined;
  try {
    const out = await documentClient.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.ticket(keyHash(ticket)),
        ConditionExpression: 'attribute_exists(pk) AND expires_at > :now',
        ExpressionAttributeValues: { ':now': nowSeconds() },
        ReturnValues: 'ALL_OLD',
      }),
    );
    consumed = out.Attributes as typeof consumed;
  } catch (error) {
    if (isConditionFailure(error)) throw invalidTicket();
    throw error;
  }
  // The ticket's expires_at is never past its token's, so the condition covered the token too.
  if (!consumed) throw invalidTicket();
  const connection: ConnectionRecord = {
    connection_id: connectionId,
    user_id: consumed.user_id,
    expires_at: consumed.token_expires_at,
    connected_at: new Date().toISOString(),
    ...(consumed.token_id ? { token_id: consumed.token_id, board_ids: consumed.board_ids ?? null } : {}),
  };
  const ttl = connection.expires_at + AFTER_EXPIRY_SECONDS;
  await openConnectionItems(connection, ttl, keyHash(ticket));
  return connection;
}

/**
 * The connection, its sweeper entry and its entry under the user (what an account deletion
 * closes), the ticket's entry under the user gone, as long as the account still exists.
 */
async function openConnectionItems(connection: ConnectionRecord, ttl: number, ticketHash: string): Promise<void> {
  const { connection_id: connectionId, user_id: userId } = connection;
  const items = {
    connection: { Put: { Item: { ...keys.connection(connectionId), type: 'connection', ...connection, [TTL_ATTRIBUTE]: ttl } } },
    expiry: {
      Put: {
        Item: {
          ...keys.connectionExpiry(expiryMinute(connection.expires_at), connectionId),
          type: 'connection_expiry',
          connection_id: connectionId,
          expires_at: connection.expires_at,
          [TTL_ATTRIBUTE]: ttl,
        },
      },
    },
    userSocket: {
      Put: {
        Item: {
          ...keys.userSocket(userId, connectionId),
          type: 'user_socket',
          // What a personal token's deletion looks for: the sockets it opened, and their sweeper entry.
          ...(connection.token_id ? { token_id: connection.token_id, expires_at: connection.expires_at } : {}),
          [TTL_ATTRIBUTE]: ttl,
        },
      },
    },
    userTicket: { Delete: { Key: keys.userTicket(userId, ticketHash) } },
    profile: { ConditionCheck: { Key: keys.userProfile(userId), ConditionExpression: 'attribute_exists(pk)' } },
  } satisfies NamedItems;
  try {
    await transactNamed(items);
  } catch (error) {
    // The account was deleted since the ticket was issued: the ticket opens nothing.
    if (refusalOf(error, namesOf(items))?.failed.has('profile')) throw invalidTicket();
    throw error;
  }
}

const invalidTicket = () => new Unauthorized('The ticket is missing, unknown, used or expired.', true);

/** The socket's connection item, strongly consistent; undefined once it is closed or swept. */
export async function readConnection(connectionId: string): Promise<ConnectionRecord | undefined> {
  return (await getItems([keys.connection(connectionId)])).get<ConnectionRecord>(keys.connection(connectionId));
}

export const isExpired = (connection: { expires_at: number }) => connection.expires_at <= nowSeconds();

/** A message on a socket the table no longer has (swept, or gone): the client must reconnect. */
export const socketClosed = () => new Forbidden('This socket is closed; reconnect with a new ticket.');

/**
 * Watches a board for a connection whose caller is a member: the membership read (with the
 * board) and, in one transaction, the watch item beside the board's members plus the board in
 * the connection's set, whose size is the limit (a board watched already counts once). The
 * transaction also requires the membership still to exist, so a removal racing it wins.
 */
/**
 * Starts a watch and answers the board's latest `seq` read after the watch is written: a change
 * numbered higher commits after that read, so its stream record is handled after the watch
 * exists, and the broadcaster's read of the watchers finds it (realtime.md: every event with a
 * higher `seq` reaches the socket while it watches). One read more than the watch itself needs.
 */
export async function watchBoard(connection: ConnectionRecord, boardId: string): Promise<number> {
  // A personal token limited to boards: any other board is answered as a non-member's.
  if (connection.board_ids && !connection.board_ids.includes(boardId)) throw new Forbidden();
  const memberKey = keys.member(boardId, connection.user_id);
  const profileKey = keys.userProfile(connection.user_id);
  const found = await getItems([keys.board(boardId), memberKey, profileKey]);
  // A deleted account is a member of nothing, even before the account collector has removed it.
  if (!found.get<BoardRecord>(keys.board(boardId)) || !found.get<MemberRecord>(memberKey) || !found.get(profileKey)) {
    throw new Forbidden();
  }
  const watch: WatchRecord = {
    board_id: boardId,
    connection_id: connection.connection_id,
    user_id: connection.user_id,
    expires_at: connection.expires_at,
  };
  const items = {
    watch: {
      Put: {
        Item: {
          ...keys.watch(boardId, connection.connection_id),
          type: 'watch',
          ...watch,
          [TTL_ATTRIBUTE]: connection.expires_at + AFTER_EXPIRY_SECONDS,
        },
      },
    },
    connection: {
      Update: {
        Key: keys.connection(connection.connection_id),
        UpdateExpression: 'ADD watching :board',
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(watching) OR size(watching) < :max OR contains(watching, :id))',
        ExpressionAttributeValues: { ':board': new Set([boardId]), ':max': MAX_WATCHES_PER_SOCKET, ':id': boardId },
      },
    },
    member: { ConditionCheck: { Key: memberKey, ConditionExpression: 'attribute_exists(pk)' } },
  } satisfies NamedItems;
  try {
    await transactNamed(items);
  } catch (error) {
    const refusal = refusalOf(error, namesOf(items));
    if (refusal?.failed.has('member')) throw new Forbidden();
    if (refusal?.failed.has('connection')) {
      if (!(await readConnection(connection.connection_id))) throw socketClosed();
      throw new LimitReached(`A socket may watch at most ${MAX_WATCHES_PER_SOCKET} boards; unwatch one first.`);
    }
    throw error;
  }
  const board = (await getItems([keys.board(boardId)])).get<BoardRecord>(keys.board(boardId));
  // Deleted in between: its board.deleted ends this watch (the broadcaster finds it).
  return seqOf(board);
}

/** Ends one watch of a connection (also when it was not watching the board). */
export async function unwatchBoard(connectionId: string, boardId: string): Promise<void> {
  await dropWatches([{ board_id: boardId, connection_id: connectionId }]);
}

/**
 * Drops watches: each watch item with its board taken out of its connection's set, in one
 * transaction per watch (run in parallel). A connection already gone leaves only its watch item.
 */
export async function dropWatches(watches: Pick<WatchRecord, 'board_id' | 'connection_id'>[]): Promise<void> {
  await Promise.all(
    watches.map(async ({ board_id, connection_id }) => {
      const items = {
        watch: { Delete: { Key: keys.watch(board_id, connection_id) } },
        connection: {
          Update: {
            Key: keys.connection(connection_id),
            UpdateExpression: 'DELETE watching :board',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':board': new Set([board_id]) },
          },
        },
      } satisfies NamedItems;
      try {
        await transactNamed(items);
      } catch (error) {
        if (!refusalOf(error, namesOf(items))?.failed.has('connection')) throw error;
        await deleteItems([keys.watch(board_id, connection_id)]);
      }
    }),
  );
}

/**
 * Forgets a connection: its item (read back as it is deleted, for the boards it watched), then
 * its watches and sweeper entry. Safe to repeat: `$disconnect`, a GoneException and the sweeper
 * may all get here for the same socket.
 */
export async function closeConnection(connectionId: string): Promise<void> {
  const out = await documentClient.send(
    new DeleteCommand({ TableName: tableName(), Key: keys.connection(connectionId), ReturnValues: 'ALL_OLD' }),
  );
  const connection = out.Attributes as ConnectionRecord | undefined;
  if (!connection) return;
  await deleteItems([
    ...[...(connection.watching ?? [])].map((boardId) => keys.watch(boardId, connectionId)),
    keys.connectionExpiry(expiryMinute(connection.expires_at), connectionId),
    keys.userSocket(connection.user_id, connectionId),
  ]);
}

/**
 * Hands the sockets opened with these personal tokens (just deleted) to the sweeper: each one's
 * expiry becomes now, in a sweeper entry of this minute, so that it is told `token.expired` and
 * closed at the sweeper's next run (within a minute), as at its token's own expiry. One query of
 * the user's sockets, then one transaction per socket of those tokens, in parallel.
 */
export async function expireTokenSockets(userId: string, tokenIds: string[]): Promise<void> {
  const sockets = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':prefix': keys.userSocketPrefix },
  });
  const at = nowSeconds();
  const ended = sockets.filter((item) => tokenIds.includes(item.token_id as string) && (item.expires_at as number) > at);
  await Promise.all(
    ended.map(async (item) => {
      const connectionId = item.sk.slice(keys.userSocketPrefix.length);
      const ttl = at + AFTER_EXPIRY_SECONDS;
      const items = {
        connection: {
          Update: {
            Key: keys.connection(connectionId),
            UpdateExpression: 'SET expires_at = :at',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':at': at },
          },
        },
        earlier: { Delete: { Key: keys.connectionExpiry(expiryMinute(item.expires_at as number), connectionId) } },
        expiry: {
          Put: {
            Item: {
              ...keys.connectionExpiry(expiryMinute(at), connectionId),
              type: 'connection_expiry',
              connection_id: connectionId,
              expires_at: at,
              [TTL_ATTRIBUTE]: ttl,
            },
          },
        },
        userSocket: {
          Update: {
            Key: keys.userSocket(userId, connectionId),
            UpdateExpression: 'SET expires_at = :at',
            ExpressionAttributeValues: { ':at': at },
          },
        },
      } satisfies NamedItems;
      try {
        await transactNamed(items);
      } catch (error) {
        // Closed meanwhile: nothing left to hand over.
        if (!refusalOf(error, namesOf(items))?.failed.has('connection')) throw error;
      }
    }),
  );
}

export interface Audience {
  /** False once the board's deletion has begun (its memberships are going too). */
  boardExists: boolean;
  members: Map<string, Role>;
  watches: WatchRecord[];
}

/**
 * Who may hear a board's events (its members' roles) and who listens (its watches), in one
 * strongly consistent query: the board item, the label names, the memberships and the watches are
 * the `#` items at the head of the partition, before its cards and columns.
 */
export async function readAudience(boardId: string): Promise<Audience> {
  const boardKey = keys.board(boardId);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': boardKey.pk, ':from': boardKey.sk, ':to': `${keys.watchPrefix}\uffff` },
  });
  const audience: Audience = { boardExists: false, members: new Map(), watches: [] };
  for (const item of items) {
    if (item.sk === boardKey.sk) audience.boardExists = true;
    else if (item.sk.startsWith(keys.memberPrefix)) audience.members.set(item.user_id as string, item.role as Role);
    else if (item.sk.startsWith(keys.watchPrefix)) audience.watches.push(item as unknown as WatchRecord);
  }
  return audience;
}

/** Connections whose token expired in the given minutes (the sweeper's buckets), strongly consistent. */
export async function connectionsExpiringIn(minutes: number[]): Promise<{ connection_id: string; expires_at: number }[]> {
  const pages = await Promise.all(
    minutes.map((minute) =>
      queryAll({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.expiryBucket(minute) },
      }),
    ),
  );
  return pages.flat().map((item) => ({ connection_id: item.connection_id as string, expires_at: item.expires_at as number }));
}
