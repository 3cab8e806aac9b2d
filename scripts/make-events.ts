import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { keys } from '../lib/data/table';
import type { BoardEvent } from '../lib/domain/events';
import {
  type PoolTriggerId,
  poolTriggers,
  type QueueConsumerId,
  queueConsumers,
  type RouteId,
  type RouteRow,
  routeKeyOf,
  routes,
  type ScheduleId,
  SOCKET_STAGE,
  type SocketRouteId,
  type SocketRouteRow,
  type StreamConsumerId,
  schedules,
  socketRoutes,
  streamConsumers,
} from '../lib/routes';
import { answerArguments } from './cli';

/**
 * Writes one sample event per function row to events/, for `sam local invoke -e events/<row>.json`:
 * an HTTP API (payload v2) event per route row, an API Gateway WebSocket event per socket row, a
 * DynamoDB stream batch per stream consumer, an SQS batch per queue consumer, an EventBridge
 * scheduled event per schedule row and a Cognito trigger event per pool trigger.
 * Placeholders: replace ACCESS_TOKEN with a token from /auth/register or /auth/login, REFRESH_TOKEN with
 * its refresh_token, TICKET with
 * a ticket from POST /realtime/tickets, CONNECTION_ID with the id of a connection that ticket
 * opened, and the placeholder ids with real ones.
 * Run: node --import tsx scripts/make-events.ts
 */
export const PLACEHOLDER = {
  token: 'ACCESS_TOKEN',
  ticket: 'TICKET',
  connection: 'CONNECTION_ID',
  board: '11111111-1111-4111-8111-111111111111',
  column: '22222222-2222-4222-8222-222222222222',
  card: '33333333-3333-4333-8333-333333333333',
  user: '44444444-4444-4444-8444-444444444444',
  label: '55555555-5555-4555-8555-555555555555',
  /** The column a moved card came from. */
  fromColumn: '77777777-7777-4777-8777-777777777777',
  /** The id of a change (its event_id). */
  change: '66666666-6666-4666-8666-666666666666',
  teammateEmail: 'teammate@example.com',
  /** A refresh token from /auth/register or /auth/login (auth.refresh, auth.logout). */
  refreshToken: 'REFRESH_TOKEN',
  /** A webhook of the board (the /webhooks/{id} routes, the deliveries queue's messages). */
  webhook: '99999999-9999-4999-8999-999999999999',
  /** A comment on the card (the /comments/{id} routes). */
  comment: '88888888-8888-4888-8888-888888888888',
  /** A delivery's `webhook-id` (lib/webhooks/signature.ts deliveryId). */
  delivery: 'msg_c2FtcGxlLWRlbGl2ZXJ5AA',
  /** A personal access token's id (auth.tokens.delete). */
  personalToken: '88888888-8888-4888-8888-888888888888',
} as const;

/** Sample time: 2026-11-23T10:00:00Z. */
const TIME = { epochMs: 1795428000000, clf: '23/Nov/2026:10:00:00 +0000', iso: '2026-11-23T10:00:00.000Z' };
const ACCOUNT = '123456789012';
const REGION = 'us-east-1';
/** A deployed WebSocket API's id and domain, as API Gateway writes them into events. */
const SOCKET_API = 'a1b2c3d4e5';
const SOCKET_DOMAIN = `${SOCKET_API}.execute-api.${REGION}.amazonaws.com`;

type Sample = {
  id?: string;
  userId?: string;
  labelId?: string;
  file?: string;
  body?: unknown;
  path?: string;
  query?: Record<string, string>;
};
/**
 * Every route row's sample (the index signature lets rows not yet in the table have theirs ready:
 * `sampleEvent` fails for a row without one).
 */
const samples: Record<RouteId, Sample> & Record<string, Sample | undefined> = {
  health: {},
  openapi: {},
  asyncapi: {},
  docs: {},
  'docs.file': { file: 'swagger-ui.css' },
  'auth.register': { body: { email: 'new-user@example.com', password: 'correct horse battery', display_name: 'New User' } },
  'auth.login': { body: { email: 'new-user@example.com', password: 'correct horse battery' } },
  'auth.refresh': { body: { refresh_token: PLACEHOLDER.refreshToken } },
  'auth.logout': { body: { refresh_token: PLACEHOLDER.refreshToken } },
  'auth.me': {},
  'auth.verify-email.request': {},
  'auth.verify-email': { body: { code: '123456' } },
  'auth.password.forgot': { body: { email: 'new-user@example.com' } },
  'auth.password.reset': { body: { email: 'new-user@example.com', code: '123456', new_password: 'correct horse staple' } },
  'auth.password.change': { body: { current_password: 'correct horse battery', new_password: 'correct horse staple' } },
  'auth.account.delete': { body: { password: 'correct horse battery' } },
  'auth.tokens.create': {
    body: { name: 'CI: file release cards', scopes: ['boards:read', 'boards:write'], expires_in_days: 30 },
  },
  'auth.tokens.list': {},
  'auth.tokens.delete': { id: PLACEHOLDER.personalToken },
  'boards.list': {},
  'boards.create': { body: { title: 'Roadmap' } },
  'boards.get': { id: PLACEHOLDER.board },
  'boards.rename': { id: PLACEHOLDER.board, body: { title: 'Roadmap 2027' } },
  'boards.delete': { id: PLACEHOLDER.board },
  'boards.events': { id: PLACEHOLDER.board, query: { after: '0', limit: '100' } },
  'boards.archive': { id: PLACEHOLDER.board },
  'boards.batch': {
    id: PLACEHOLDER.board,
    body: {
      operations: [
        { op: 'card.create', column_id: PLACEHOLDER.column, title: 'Write the changelog', ref: 'changelog' },
        { op: 'card.update', card_ref: 'changelog', description: 'Batch changes first' },
        { op: 'card.update', card_id: PLACEHOLDER.card, title: 'Write the README and the changelog' },
      ],
    },
  },
  'columns.create': { id: PLACEHOLDER.board, body: { title: 'To do' } },
  'cards.create': { id: PLACEHOLDER.column, body: { title: 'Write the README', description: 'Quick start first' } },
  'cards.get': { id: PLACEHOLDER.card },
  'cards.update': { id: PLACEHOLDER.card, body: { description: 'Quick start and deploy' } },
  'cards.delete': { id: PLACEHOLDER.card },
  'cards.move': { id: PLACEHOLDER.card, body: { target_column_id: PLACEHOLDER.column } },
  'cards.due.clear': { id: PLACEHOLDER.card },
  'cards.assignees.add': { id: PLACEHOLDER.card, userId: PLACEHOLDER.user },
  'cards.assignees.remove': { id: PLACEHOLDER.card, userId: PLACEHOLDER.user },
  'cards.archive': { id: PLACEHOLDER.card },
  'cards.restore': { id: PLACEHOLDER.card },
  'comments.create': { id: PLACEHOLDER.card, body: { body: 'The copy is ready for review.' } },
  'comments.list': { id: PLACEHOLDER.card, query: { limit: '50' } },
  'comments.update': { id: PLACEHOLDER.comment, body: { body: 'The copy is ready: please review by Friday.' } },
  'comments.delete': { id: PLACEHOLDER.comment },
  'columns.get': { id: PLACEHOLDER.column },
  'columns.rename': { id: PLACEHOLDER.column, body: { title: 'Doing' } },
  'columns.delete': { id: PLACEHOLDER.column },
  'columns.move': { id: PLACEHOLDER.column, body: { after_id: null } },
  'members.add': { id: PLACEHOLDER.board, body: { email: PLACEHOLDER.teammateEmail, role: 'member' } },
  'realtime.tickets': {},
  'labels.create': { id: PLACEHOLDER.board, body: { name: 'Bug', color: '#d73a4a' } },
  'labels.list': { id: PLACEHOLDER.board },
  'labels.update': { id: PLACEHOLDER.label, body: { color: '#0e8a16' } },
  'labels.delete': { id: PLACEHOLDER.label },
  'cards.labels.attach': { id: PLACEHOLDER.card, labelId: PLACEHOLDER.label },
  'cards.labels.detach': { id: PLACEHOLDER.card, labelId: PLACEHOLDER.label },
  'members.list': { id: PLACEHOLDER.board },
  'members.update': { id: PLACEHOLDER.board, userId: PLACEHOLDER.user, body: { role: 'owner' } },
  'members.remove': { id: PLACEHOLDER.board, userId: PLACEHOLDER.user },
  fallback: { path: '/no/such/path' },
  'webhooks.create': {
    id: PLACEHOLDER.board,
    body: { url: 'https://hooks.example.com/task-board', events: ['card.moved', 'card.created'], description: 'CI' },
  },
  'webhooks.list': { id: PLACEHOLDER.board },
  'webhooks.get': { id: PLACEHOLDER.webhook },
  'webhooks.update': { id: PLACEHOLDER.webhook, body: { events: [], active: true } },
  'webhooks.delete': { id: PLACEHOLDER.webhook },
  'webhooks.rotate-secret': { id: PLACEHOLDER.webhook },
  'webhooks.ping': { id: PLACEHOLDER.webhook },
  'webhooks.deliveries': { id: PLACEHOLDER.webhook, query: { limit: '20' } },
};

export function sampleEvent(routeId: RouteId) {
  const row: RouteRow = routes[routeId];
  const sample = samples[routeId];
  if (!sample) throw new Error(`scripts/make-events.ts has no sample for ${routeId}`);
  const method = row.method === 'ANY' ? 'GET' : row.method;
  const path =
    sample.path ??
    row.path
      .replace('{id}', sample.id ?? '')
      .replace('{user_id}', sample.userId ?? '')
      .replace('{label_id}', sample.labelId ?? '')
      .replace('{file}', sample.file ?? '');
  const routeKey = routeKeyOf(row);
  const headers: Record<string, string> = { accept: 'application/json', host: 'localhost:3000' };
  if (row.access.scope !== 'public') headers.authorization = `Bearer ${PLACEHOLDER.token}`;
  if (sample.body) headers['content-type'] = 'application/json';
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: new URLSearchParams(sample.query ?? {}).toString(),
    headers,
    ...(sample.query ? { queryStringParameters: sample.query } : {}),
    ...(sample.id
      ? {
          pathParameters: {
            id: sample.id,
            ...(sample.userId ? { user_id: sample.userId } : {}),
            ...(sample.labelId ? { label_id: sample.labelId } : {}),
          },
        }
      : {}),
    ...(sample.file ? { pathParameters: { file: sample.file } } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'sample-event' },
      requestId: `sample-${routeId}`,
      routeKey,
      stage: '$default',
      time: '23/Nov/2026:10:00:00 +0000',
      timeEpoch: 1795428000000,
    },
    ...(sample.body ? { body: JSON.stringify(sample.body) } : {}),
    isBase64Encoded: false,
  };
}

/** The message a client sends on each action route (`$default`: one no route takes). */
const socketMessages: Record<SocketRouteId, unknown> = {
  'socket.connect': undefined,
  'socket.disconnect': undefined,
  'socket.watch': { action: 'watch', board_id: PLACEHOLDER.board },
  'socket.unwatch': { action: 'unwatch', board_id: PLACEHOLDER.board },
  'socket.ping': { action: 'ping' },
  'socket.default': { action: 'dance' },
};

/** An API Gateway WebSocket event (Lambda proxy integration) as the `live` stage hands it over. */
export function socketEvent(rowId: SocketRouteId) {
  const row: SocketRouteRow = socketRoutes[rowId];
  const eventType = row.routeKey === '$connect' ? 'CONNECT' : row.routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE';
  const message = socketMessages[rowId];
  const requestContext = {
    routeKey: row.routeKey,
    eventType,
    ...(eventType === 'MESSAGE' ? { messageId: 'c2FtcGxlLW1lc3NhZ2U=' } : {}),
    extendedRequestId: `sample-${rowId}`,
    requestTime: TIME.clf,
    messageDirection: 'IN',
    ...(eventType === 'DISCONNECT' ? { disconnectStatusCode: 1001, disconnectReason: 'Going away' } : {}),
    stage: SOCKET_STAGE,
    connectedAt: TIME.epochMs,
    requestTimeEpoch: TIME.epochMs,
    identity: { sourceIp: '127.0.0.1', userAgent: 'sample-event' },
    requestId: `sample-${rowId}`,
    domainName: SOCKET_DOMAIN,
    connectionId: PLACEHOLDER.connection,
    apiId: SOCKET_API,
  };
  if (eventType === 'CONNECT') {
    const headers = {
      Host: SOCKET_DOMAIN,
      'Sec-WebSocket-Key': 'c2FtcGxlLWV2ZW50LWtleQ==',
      'Sec-WebSocket-Version': '13',
      'User-Agent': 'sample-event',
      'X-Forwarded-For': '127.0.0.1',
      'X-Forwarded-Port': '443',
      'X-Forwarded-Proto': 'https',
    };
    return {
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
      queryStringParameters: { ticket: PLACEHOLDER.ticket },
      multiValueQueryStringParameters: { ticket: [PLACEHOLDER.ticket] },
      requestContext,
      isBase64Encoded: false,
    };
  }
  if (eventType === 'DISCONNECT') {
    const headers = { Host: SOCKET_DOMAIN, 'x-api-key': '', 'x-restapi': '' };
    return {
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
      requestContext,
      isBase64Encoded: false,
    };
  }
  return { requestContext, body: JSON.stringify(message), isBase64Encoded: false };
}

/**
 * A table stream batch as the event source hands it to a reader. The change reader's: the INSERT
 * of a board's log item (lib/data/event-log.ts) for a card moved to another column, its event
 * exactly as watchers and webhooks receive it. The cleanup reader's: one record of each of its
 * filters, a board's `board.deleted` log item and an account deletion's marker.
 */
export function streamEvent(rowId: StreamConsumerId) {
  if (rowId === 'children.collect') return { Records: [...boardDeletedEvent().Records, ...accountDeletedEvent().Records] };
  const moved: BoardEvent = {
    type: 'card.moved',
    event_id: PLACEHOLDER.change,
    board_id: PLACEHOLDER.board,
    actor_id: PLACEHOLDER.user,
    occurred_at: TIME.iso,
    seq: 2,
    card: {
      id: PLACEHOLDER.card,
      column_id: PLACEHOLDER.column,
      title: 'Write the README',
      description: 'Quick start first',
      position: 1,
      created_at: '2026-11-23T09:00:00.000Z',
      label_ids: [],
    },
    from_column_id: PLACEHOLDER.fromColumn,
    from_position: 1,
  };
  return logItemBatch(moved, {
    eventID: 'c4ca4238a0b923820dcc509a6f75849b',
    sequenceNumber: '4421584500000000017450439091',
    sizeBytes: 812,
  });
}

/** The cleanup reader's board input: the INSERT of a board's `board.deleted` log item. */
function boardDeletedEvent() {
  const deleted: BoardEvent = {
    type: 'board.deleted',
    event_id: PLACEHOLDER.change,
    board_id: PLACEHOLDER.board,
    actor_id: PLACEHOLDER.user,
    occurred_at: TIME.iso,
    seq: 3,
  };
  return logItemBatch(deleted, {
    eventID: 'a87ff679a2f3e71d9181a67b7542122c',
    sequenceNumber: '4421584500000000017450439092',
    sizeBytes: 320,
  });
}

/** A stream batch of one log item's INSERT, as lib/data/event-log.ts writes it. */
function logItemBatch(event: BoardEvent, record: { eventID: string; sequenceNumber: string; sizeBytes: number }) {
  const key = keys.logEntry(PLACEHOLDER.board, event.seq!);
  const keptUntil = TIME.epochMs / 1000 + 7 * 86_400;
  return streamBatch({
    ...record,
    eventName: 'INSERT',
    key,
    newImage: marshall({
      ...key,
      type: 'event',
      board_id: PLACEHOLDER.board,
      seq: event.seq,
      kind: event.type,
      event,
      kept_until: keptUntil,
      ttl: keptUntil,
    }),
  });
}

/**
 * A table stream batch of one record: the marker an account deletion writes (lib/data/accounts.ts),
 * for which the cleanup reader's account collector takes the account off its boards.
 */
function accountDeletedEvent() {
  const markerKey = keys.accountDeletion(PLACEHOLDER.user);
  return streamBatch({
    eventID: 'e4da3b7fbbce2345d7772b0674a318d5',
    eventName: 'INSERT',
    key: markerKey,
    newImage: marshall({
      ...markerKey,
      type: 'account_deletion',
      user_id: PLACEHOLDER.user,
      email: PLACEHOLDER.teammateEmail,
      requested_at: TIME.iso,
    }),
    sequenceNumber: '4421584600000000017450439093',
    sizeBytes: 180,
  });
}

/** A table stream batch of one record, as Lambda's DynamoDB event source hands it to a consumer. */
function streamBatch(record: {
  eventID: string;
  eventName: 'INSERT' | 'MODIFY';
  key: Record<string, unknown>;
  newImage: Record<string, AttributeValue>;
  oldImage?: Record<string, AttributeValue>;
  sequenceNumber: string;
  sizeBytes: number;
}) {
  return {
    Records: [
      {
        eventID: record.eventID,
        eventName: record.eventName,
        eventVersion: '1.1',
        eventSource: 'aws:dynamodb',
        awsRegion: REGION,
        dynamodb: {
          ApproximateCreationDateTime: TIME.epochMs / 1000,
          Keys: marshall(record.key),
          NewImage: record.newImage,
          ...(record.oldImage ? { OldImage: record.oldImage } : {}),
          SequenceNumber: record.sequenceNumber,
          SizeBytes: record.sizeBytes,
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
        eventSourceARN: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/TaskBoard-dev-Table/stream/2026-11-23T09:00:00.000`,
      },
    ],
  };
}

/**
 * An SQS batch of one message, as Lambda's SQS event source hands it to a queue consumer: a webhook
 * delivery's message (`{webhook_id, board_id, delivery_sk}`, lib/data/deliveries.ts), received once.
 */
export function queueEvent(_rowId: QueueConsumerId) {
  const body = JSON.stringify({
    webhook_id: PLACEHOLDER.webhook,
    board_id: PLACEHOLDER.board,
    delivery_sk: keys.delivery(PLACEHOLDER.webhook, TIME.iso, PLACEHOLDER.delivery).sk,
  });
  return {
    Records: [
      {
        messageId: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
        receiptHandle: 'AQEBsample-receipt-handle',
        body,
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: String(TIME.epochMs),
          SenderId: 'AROAEXAMPLE:TaskBoard-dev-events-broadcast',
          ApproximateFirstReceiveTimestamp: String(TIME.epochMs + 20),
        },
        messageAttributes: {},
        md5OfBody: createHash('md5').update(body, 'utf8').digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:${REGION}:${ACCOUNT}:TaskBoard-dev-WebhooksDeliveries`,
        awsRegion: REGION,
      },
    ],
  };
}

/** An EventBridge scheduled event, as the schedule rule invokes the function. */
export function scheduledEvent(rowId: ScheduleId) {
  return {
    version: '0',
    id: '88888888-8888-4888-8888-888888888888',
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: ACCOUNT,
    time: TIME.iso.replace('.000Z', 'Z'),
    region: REGION,
    resources: [`arn:aws:events:${REGION}:${ACCOUNT}:rule/TaskBoard-dev-${rowId.replaceAll('.', '-')}`],
    detail: {},
  };
}

/**
 * A Cognito CustomMessage trigger event, as the pool invokes the function for a password reset
 * code (POST /auth/password/forgot): the code is the parameter `{####}`, which Cognito replaces
 * in the message the function answers.
 */
export function poolTriggerEvent(_rowId: PoolTriggerId) {
  return {
    version: '1',
    region: REGION,
    userPoolId: `${REGION}_SamplePool`,
    userName: PLACEHOLDER.user,
    callerContext: { awsSdkVersion: 'aws-sdk-unknown-unknown', clientId: 'CLIENT_ID_NOT_APPLICABLE' },
    triggerSource: 'CustomMessage_ForgotPassword',
    request: {
      userAttributes: {
        sub: PLACEHOLDER.user,
        email_verified: 'true',
        'cognito:user_status': 'CONFIRMED',
        email: PLACEHOLDER.teammateEmail,
      },
      codeParameter: '{####}',
      linkParameter: '{##Click Here##}',
      usernameParameter: null,
    },
    response: { smsMessage: null, emailMessage: null, emailSubject: null },
  };
}

export const eventFileOf = (rowId: string) => `${rowId.replaceAll('.', '-')}.json`;

/** Every sample event, by row id: one per row of every table in lib/routes.ts. */
export function sampleEvents(): [string, unknown][] {
  return [
    ...(Object.keys(routes) as RouteId[]).map((id): [string, unknown] => [id, sampleEvent(id)]),
    ...(Object.keys(socketRoutes) as SocketRouteId[]).map((id): [string, unknown] => [id, socketEvent(id)]),
    ...(Object.keys(streamConsumers) as StreamConsumerId[]).map((id): [string, unknown] => [id, streamEvent(id)]),
    ...(Object.keys(queueConsumers) as QueueConsumerId[]).map((id): [string, unknown] => [id, queueEvent(id)]),
    ...(Object.keys(schedules) as ScheduleId[]).map((id): [string, unknown] => [id, scheduledEvent(id)]),
    ...(Object.keys(poolTriggers) as PoolTriggerId[]).map((id): [string, unknown] => [id, poolTriggerEvent(id)]),
  ];
}

/** JSON as the repository's formatter (Biome) writes it: two spaces, arrays of scalars on one line. */
const formatJson = (value: unknown) =>
  JSON.stringify(value, null, 2).replace(
    /\[\n\s*([^[\]{}]*?)\n\s*\]/g,
    (_, items: string) => `[${items.split(/,\n\s*/).join(', ')}]`,
  );

const USAGE = `usage: npm run events

Writes one sample event per function to events/<row>.json, for sam local invoke -e: an HTTP API
(payload v2) event per route, a WebSocket event per socket route, a DynamoDB stream batch per
stream consumer, an SQS batch per queue consumer, a scheduled event per schedule and a Cognito
trigger event per pool trigger. Replace the placeholders (ACCESS_TOKEN, REFRESH_TOKEN, TICKET,
CONNECTION_ID, the ids) with real values.

  -h, --help   this text`;

if (process.argv[1]?.endsWith('make-events.ts')) {
  answerArguments(USAGE);
  for (const [rowId, event] of sampleEvents()) {
    writeFileSync(join('events', eventFileOf(rowId)), `${formatJson(event)}\n`);
  }
}
