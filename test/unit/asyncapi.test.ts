import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiagnosticSeverity, type MessageInterface, type ParseOutput, Parser } from '@asyncapi/parser';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { BOARD_EVENT_KINDS } from '../../lib/domain/events';
import { socketRoutes } from '../../lib/routes';
import { asyncApiText } from '../../scripts/write-asyncapi';

// Copied by hand from ../shared/spec/realtime.md ("Server → client events"): the contract is the
// source of truth, so the list must not be derived from the document it checks.
const contractEventTypes = [
  'card.moved',
  'card.created',
  'card.updated',
  'card.deleted',
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
  'access.revoked',
];
const contractControlTypes = ['watch.ack', 'unwatch.ack', 'pong', 'error', 'token.expired'];
const contractClientActions = ['watch', 'unwatch', 'ping'];

type Schema = Record<string, any>;

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

  it('parses with no errors and no warnings', () => {
    // Only errors and warnings count: the parser also adds an information that 3.1.0 exists,
    // and the document stays on 3.0.0 on purpose.
    const problems = parsed.diagnostics
      .filter((d) => d.severity === DiagnosticSeverity.Error || d.severity === DiagnosticSeverity.Warning)
      .map((d) => `${d.code} at ${d.path.join('.')}: ${d.message}`);
    expect(problems).toEqual([]);
    expect(parsed.document?.version()).toBe('3.0.0');
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
