import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiagnosticSeverity, type MessageInterface, type ParseOutput, Parser } from '@asyncapi/parser';
import { BatchGetCommand, type BatchGetCommandInput, DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as defaultRoute } from '../../functions/socket/default';
import { handler as ping } from '../../functions/socket/ping';
import { handler as unwatch } from '../../functions/socket/unwatch';
import { handler as watch } from '../../functions/socket/watch';
import type { Item } from '../../lib/data/db';
import { keys } from '../../lib/data/table';
import { BOARD_EVENT_KINDS } from '../../lib/domain/events';
import { withSocketServer } from '../../lib/http/asyncapi';
import { socketRoutes } from '../../lib/routes';
import { DEADLINE_MARGIN_MS } from '../../lib/runtime/deadline';
import type { SocketEvent, SocketResult } from '../../lib/socket/chain';
import { asyncApiText } from '../../scripts/write-asyncapi';
import { REPO_ROOT, runCommand } from '../support/run-node';
import { cancelled, throttled } from '../support/sdk-failures';

// Copied by hand from docs/reference.md ("Live events"): the contract is the
// source of truth, so the list must not be derived from the document it checks.
const contractEventTypes = [
  'card.moved',
  'card.created',
  'card.updated',
  'card.deleted',
  'card.archived',
  'card.restored',
  'column.created',
  'column.updated',
  'column.moved',
  'column.deleted',
  'board.updated',
  'board.deleted',
  'member.added',
  'member.updated',
  'member.removed',
  'label.created',
  'label.updated',
  'label.deleted',
  'comment.created',
  'comment.updated',
  'comment.deleted',
  'access.revoked',
];
const contractControlTypes = ['watch.ack', 'unwatch.ack', 'pong', 'error', 'token.expired'];
const contractClientActions = ['watch', 'unwatch', 'ping'];

type Schema = Record<string, any>;

const SPECTRAL_DEADLINE_MS = 40_000;
/** What code generators can use as a class or type name as it is. */
const IDENTIFIER = /^[A-Z][A-Za-z0-9]*$/;

/** The values a payload schema pins `key` to, across allOf/oneOf/anyOf branches. */
function pinned(schema: Schema, key: string): string[] {
  const own = schema.properties?.[key]?.const;
  const branches = [...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])] as Schema[];
  return [...new Set([...(own === undefined ? [] : [own]), ...branches.flatMap((branch) => pinned(branch, key))])];
}

/**
 * Fields of an example that no schema branch declares. The schemas stay open (clients must ignore
 * unknown fields), so the validator alone would accept a misspelt field in an example.
 */
function undeclared(schema: Schema, value: unknown, path: string): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const declared = new Map<string, Schema>();
  const collect = (s: Schema) => {
    for (const [name, sub] of Object.entries(s.properties ?? {})) if (!declared.has(name)) declared.set(name, sub as Schema);
    for (const branch of [...(s.allOf ?? []), ...(s.oneOf ?? []), ...(s.anyOf ?? [])]) collect(branch);
  };
  collect(schema);
  return Object.entries(value).flatMap(([name, field]) => {
    const sub = declared.get(name);
    return sub ? undeclared(sub, field, `${path}.${name}`) : [`${path}.${name}`];
  });
}

const source = readFileSync(join(__dirname, '../../docs/asyncapi.yaml'), 'utf8');
let parsed: ParseOutput;

beforeAll(async () => {
  parsed = await new Parser().parse(source);
});

function document() {
  if (!parsed.document) throw new Error('docs/asyncapi.yaml did not parse; see the diagnostics test');
  return parsed.document;
}

/** What the server sends: `send` operations (the document describes the server) and the replies to what it receives. */
function serverMessages(): MessageInterface[] {
  return document()
    .operations()
    .all()
    .flatMap((operation) => (operation.isSend() ? operation.messages().all() : (operation.reply()?.messages().all() ?? [])));
}

function payload(message: MessageInterface): Schema {
  return message.payload()!.json<Schema>();
}

function clientMessages(): MessageInterface[] {
  return document()
    .operations()
    .all()
    .filter((operation) => operation.isReceive())
    .flatMap((operation) => operation.messages().all());
}

describe('the service against the contract', () => {
  it('emits exactly the contract event kinds (and access.revoked at sending time)', () => {
    expect([...BOARD_EVENT_KINDS, 'access.revoked'].sort()).toEqual([...contractEventTypes].sort());
  });

  it('routes exactly the contract client actions, each to a socket route of its own', () => {
    const actions = Object.values(socketRoutes)
      .map((row) => row.routeKey)
      .filter((key) => !key.startsWith('$'));
    expect(actions.sort()).toEqual([...contractClientActions].sort());
  });
});

describe('AsyncAPI document of the live board events', () => {
  it('docs/asyncapi.json, which the service serves, is docs/asyncapi.yaml (run `npm run asyncapi` after editing it)', () => {
    expect(readFileSync(join(__dirname, '../../docs/asyncapi.json'), 'utf8')).toBe(asyncApiText());
  });

  it.each([
    ['a deployment on AWS', 'wss://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/live', 'production'],
    ['the local stack on another port', 'ws://127.0.0.1:4718/live', 'local'],
  ])('as served by %s: that server names the address, and the document still parses clean', async (_, url, name) => {
    const served = withSocketServer(JSON.parse(asyncApiText()), url);
    const server = served.servers[name];
    expect(`${server.protocol}://${server.host}${server.pathname}`).toBe(url);
    expect(server).not.toHaveProperty('variables');
    const reparsed = await new Parser().parse(JSON.stringify(served));
    expect(reparsed.diagnostics.filter((d) => d.code !== 'asyncapi-latest-version').map((d) => d.message)).toEqual([]);
  });

  it('parses with no diagnostic of any severity but the note that 3.1.0 exists', () => {
    // The document stays on 3.0.0 on purpose: the newest @asyncapi/modelina cannot read 3.1.0
    // (.spectral-asyncapi.yaml says more). That information is the one diagnostic allowed.
    const problems = parsed.diagnostics
      .filter((d) => !(d.code === 'asyncapi-latest-version' && d.severity === DiagnosticSeverity.Information))
      .map((d) => `${d.code} (severity ${d.severity}) at ${d.path.join('.')}: ${d.message}`);
    expect(problems).toEqual([]);
    expect(parsed.document?.version()).toBe('3.0.0');
  });

  it(
    "lints clean with Spectral's AsyncAPI rules (.spectral-asyncapi.yaml), hints and information included",
    async () => {
      const spectral = await runCommand(
        join(REPO_ROOT, 'node_modules/.bin/spectral'),
        [
          'lint',
          'docs/asyncapi.yaml',
          '--ruleset',
          '.spectral-asyncapi.yaml',
          '--format',
          'json',
          '--fail-severity',
          'hint',
          '--quiet',
        ],
        { env: { ...process.env, NO_COLOR: '1' }, timeoutMs: SPECTRAL_DEADLINE_MS },
      );
      const results = JSON.parse(spectral.stdout) as { code: string; message: string; path: string[] }[];
      expect(results.map(({ code, message, path }) => `${code} at ${path.join('.')}: ${message}`)).toEqual([]);
      expect(spectral.code).toBe(0);
    },
    SPECTRAL_DEADLINE_MS + 5_000,
  );

  it('names every payload, oneOf branch and enum with an identifier, so that generated models have names', () => {
    const problems: string[] = [];
    const enums = new Map<string, string>();
    const walk = (schema: Schema, where: string) => {
      if (typeof schema !== 'object' || schema === null) return;
      const title = schema.title as string | undefined;
      if (schema.enum !== undefined) {
        if (!title || !IDENTIFIER.test(title)) problems.push(`${where}: an enum titled ${JSON.stringify(title)}`);
        else if ((enums.get(title) ?? JSON.stringify(schema.enum)) !== JSON.stringify(schema.enum))
          problems.push(`${where}: the title ${title} names two different enums`);
        else enums.set(title, JSON.stringify(schema.enum));
      }
      for (const [index, branch] of [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])].entries()) {
        if (!IDENTIFIER.test(branch.title ?? ''))
          problems.push(`${where}: branch ${index} titled ${JSON.stringify(branch.title)}`);
      }
      for (const [name, sub] of Object.entries(schema.properties ?? {})) walk(sub as Schema, `${where}.${name}`);
      for (const [index, sub] of [...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])].entries())
        walk(sub, `${where}[${index}]`);
      if (schema.items) walk(schema.items, `${where}[]`);
    };
    for (const message of document().messages().all()) {
      const schema = payload(message);
      if (!/^[A-Z][A-Za-z0-9]*Message$/.test(schema.title ?? ''))
        problems.push(`${message.id()}: payload titled ${JSON.stringify(schema.title)}, not <PascalCase>Message`);
      walk(schema, message.id());
    }
    expect(problems).toEqual([]);
  });

  it('the server sends exactly the contract message types, and each is named after its type', () => {
    const messages = serverMessages();
    const types = messages.map((message) => {
      const values = pinned(payload(message), 'type');
      expect({ message: message.name(), types: values }).toEqual({ message: message.name(), types: [message.name()] });
      return values[0];
    });
    expect([...new Set(types)].sort()).toEqual([...contractEventTypes, ...contractControlTypes].sort());
  });

  it('every board event and watch.ack require seq (an integer, at least 1 on events); access.revoked has none', () => {
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    const byType = new Map(serverMessages().map((message) => [message.name(), message]));
    const requiresSeq = (type: string, minimum: number) => {
      const message = byType.get(type)!;
      const validate = ajv.compile(payload(message));
      const example = message.examples().all()[0]!.payload() as Record<string, unknown>;
      const { seq: _seq, ...withoutSeq } = example;
      return {
        type,
        example: validate(example),
        without: validate(withoutSeq),
        below: validate({ ...example, seq: minimum - 1 }),
        fraction: validate({ ...example, seq: minimum + 0.5 }),
      };
    };
    const boardEvents = contractEventTypes.filter((type) => type !== 'access.revoked');
    expect(boardEvents.map((type) => requiresSeq(type, 1))).toEqual(
      boardEvents.map((type) => ({ type, example: true, without: false, below: false, fraction: false })),
    );
    expect(requiresSeq('watch.ack', 0)).toEqual({
      type: 'watch.ack',
      example: true,
      without: false,
      below: false,
      fraction: false,
    });
    const revoked = byType.get('access.revoked')!;
    expect(undeclared(payload(revoked), { seq: 1 }, 'access.revoked')).toEqual(['access.revoked.seq']);
  });

  it('the server receives exactly the contract client actions, each answered by a reply', () => {
    const actions = clientMessages().map((message) => pinned(payload(message), 'action'));
    expect(actions.flat().sort()).toEqual([...contractClientActions].sort());
    const receiving = document()
      .operations()
      .all()
      .filter((operation) => operation.isReceive());
    expect(receiving.filter((operation) => !operation.reply()).map((operation) => operation.id())).toEqual([]);
  });

  it('every message is complete, and every example validates against its own payload', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const problems: string[] = [];
    const messages = document().messages().all();
    expect(messages).toHaveLength(contractEventTypes.length + contractControlTypes.length + contractClientActions.length);
    for (const message of messages) {
      const name = message.name() ?? message.id();
      if (!message.title() || !message.summary()) problems.push(`${name}: title or summary missing`);
      if (message.contentType() !== 'application/json') problems.push(`${name}: contentType is ${message.contentType()}`);
      const examples = message.examples().all();
      if (examples.length === 0) problems.push(`${name}: no example`);
      const schema = payload(message);
      const validate = ajv.compile(schema);
      for (const [index, example] of examples.entries()) {
        const where = `${name} example ${example.name() ?? index}`;
        if (!validate(example.payload())) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
        problems.push(...undeclared(schema, example.payload(), where).map((field) => `${field} is not in the schema`));
      }
    }
    expect(problems).toEqual([]);
  });
});

/**
 * The frames the socket routes really answer, each checked against the reply messages of its
 * operation (`$default` against `sendError`): its `type` must be one of them, and it must
 * validate against that message's payload with no field the payload does not declare. The
 * handlers and the chain are the real ones; only DynamoDB is stubbed, to reach each outcome.
 */
describe('the frames the socket routes answer are the replies the document lists', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const table = process.env.TABLE_NAME!;
  const connectionId = 'unit-connection';
  const userId = randomUUID();
  const boardId = randomUUID();
  const now = () => Math.floor(Date.now() / 1000);
  const connection = (expiresAt: number): Item => ({
    ...keys.connection(connectionId),
    type: 'connection',
    connection_id: connectionId,
    user_id: userId,
    expires_at: expiresAt,
    connected_at: new Date().toISOString(),
  });
  const board: Item = { ...keys.board(boardId), type: 'board', id: boardId, owner_id: userId, title: 'B' };
  const member: Item = { ...keys.member(boardId, userId), type: 'member', user_id: userId, role: 'owner' };
  const profile: Item = { ...keys.userProfile(userId), type: 'user', user_id: userId };
  /** BatchGetItem answers with those of `items` it was asked for. */
  const stored = (...items: Item[]) =>
    ddb.on(BatchGetCommand).callsFake((input: BatchGetCommandInput) => {
      const asked = (input.RequestItems?.[table]?.Keys ?? []) as { pk: string; sk: string }[];
      return { Responses: { [table]: items.filter((item) => asked.some((key) => key.pk === item.pk && key.sk === item.sk)) } };
    });

  type Route = (event: SocketEvent, context: Context) => Promise<SocketResult>;
  const routes: Record<string, { handler: Route; operation: string }> = {
    watch: { handler: watch, operation: 'watch' },
    unwatch: { handler: unwatch, operation: 'unwatch' },
    ping: { handler: ping, operation: 'ping' },
    $default: { handler: defaultRoute, operation: 'sendError' },
  };
  const frame = (action: string, fields: Record<string, unknown> = {}) => JSON.stringify({ action, ...fields });
  type Case = {
    name: string;
    route: keyof typeof routes;
    body: string;
    setup?: () => void;
    remainingMs?: number;
    answer: Record<string, unknown>;
  };
  /** The action's first DynamoDB command throttled (retryable: `unavailable`) or failing (`internal`). */
  const storageFailures = (action: 'watch' | 'unwatch', failWith: (error: Error) => void): Case[] =>
    (
      [
        ['storage throttled', throttled(), 'unavailable'],
        ['unexpected failure', new Error('boom'), 'internal'],
      ] as const
    ).map(([what, error, code]) => ({
      name: `${action}, ${what}`,
      route: action,
      body: frame(action, { board_id: boardId }),
      setup: () => failWith(error),
      answer: { type: 'error', code },
    }));
  const cases: Case[] = [
    {
      name: 'watch',
      route: 'watch',
      body: frame('watch', { board_id: boardId }),
      setup: () => {
        stored(connection(now() + 600), board, member, profile);
        ddb.on(TransactWriteCommand).resolves({});
      },
      answer: { type: 'watch.ack' },
    },
    { name: 'watch, no board_id', route: 'watch', body: frame('watch'), answer: { type: 'error', code: 'bad_request' } },
    {
      name: 'watch, board_id not a UUID',
      route: 'watch',
      body: frame('watch', { board_id: 'board-1' }),
      answer: { type: 'error', code: 'bad_request' },
    },
    {
      name: 'watch, socket already forgotten',
      route: 'watch',
      body: frame('watch', { board_id: boardId }),
      setup: () => stored(),
      answer: { type: 'error', code: 'forbidden' },
    },
    {
      name: 'watch, token expired',
      route: 'watch',
      body: frame('watch', { board_id: boardId }),
      setup: () => stored(connection(now() - 1)),
      answer: { type: 'token.expired' },
    },
    {
      name: 'watch, not a member',
      route: 'watch',
      body: frame('watch', { board_id: boardId }),
      setup: () => stored(connection(now() + 600)),
      answer: { type: 'error', code: 'forbidden' },
    },
    {
      name: 'watch, a 21st board',
      route: 'watch',
      body: frame('watch', { board_id: boardId }),
      setup: () => {
        stored(connection(now() + 600), board, member, profile);
        ddb.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed', 'None'));
      },
      answer: { type: 'error', code: 'limit' },
    },
    ...storageFailures('watch', (error) => ddb.on(BatchGetCommand).rejects(error)),
    {
      name: 'watch, out of time',
      route: 'watch',
      body: frame('watch', { board_id: boardId }),
      setup: () => ddb.on(BatchGetCommand).callsFake(() => new Promise(() => {})),
      remainingMs: DEADLINE_MARGIN_MS + 20,
      answer: { type: 'error', code: 'unavailable' },
    },
    {
      name: 'unwatch',
      route: 'unwatch',
      body: frame('unwatch', { board_id: boardId }),
      setup: () => ddb.on(TransactWriteCommand).resolves({}),
      answer: { type: 'unwatch.ack' },
    },
    {
      name: 'unwatch, board_id not a UUID',
      route: 'unwatch',
      body: frame('unwatch', { board_id: 7 }),
      answer: { type: 'error', code: 'bad_request' },
    },
    ...storageFailures('unwatch', (error) => ddb.on(TransactWriteCommand).rejects(error)),
    { name: 'ping', route: 'ping', body: frame('ping'), answer: { type: 'pong' } },
    {
      name: 'unknown action',
      route: '$default',
      body: frame('subscribe', { board_id: boardId }),
      answer: { type: 'error', code: 'bad_request' },
    },
    { name: 'no action', route: '$default', body: '[1, 2]', answer: { type: 'error', code: 'bad_request' } },
    // API Gateway routes a frame that is not JSON to $default.
    { name: 'not JSON', route: '$default', body: 'watch?', answer: { type: 'error', code: 'bad_request' } },
  ];

  afterAll(() => ddb.restore());

  it('every answer, error frames included, is a reply of its operation and validates against it', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const problems: string[] = [];
    const outcomes: { name: string; answer: Record<string, unknown> }[] = [];
    for (const { name, route, body, setup, remainingMs, answer } of cases) {
      ddb.reset();
      setup?.();
      const { handler, operation } = routes[route]!;
      const result = await handler(
        { requestContext: { routeKey: route, eventType: 'MESSAGE', connectionId, requestId: name }, body },
        { getRemainingTimeInMillis: () => remainingMs ?? 10_000 } as Context,
      );
      const sent = JSON.parse(result.body ?? '{}') as Record<string, unknown>;
      outcomes.push({ name, answer: Object.fromEntries(Object.keys(answer).map((key) => [key, sent[key]])) });
      const op = document().operations().get(operation)!;
      const replies = op.isSend() ? op.messages().all() : (op.reply()?.messages().all() ?? []);
      const message = replies.find((candidate) => candidate.name() === sent.type);
      if (!message) {
        problems.push(`${name}: answered ${sent.type}, not a reply of operation ${operation}`);
        continue;
      }
      const schema = payload(message);
      const validate = ajv.compile(schema);
      if (!validate(sent)) problems.push(`${name}: ${JSON.stringify(sent)}: ${ajv.errorsText(validate.errors)}`);
      // A field must be declared by the oneOf branch the frame matches, not just by some branch.
      const matched = (schema.oneOf as Schema[] | undefined)?.filter((branch) => ajv.validate(branch, sent));
      const declaring = matched?.length === 1 ? matched[0]! : schema;
      problems.push(...undeclared(declaring, sent, name).map((field) => `${field} is not in the schema`));
    }
    // Each case reached the outcome it is named after.
    expect(outcomes).toEqual(cases.map(({ name, answer }) => ({ name, answer })));
    expect(problems).toEqual([]);
  });
});
