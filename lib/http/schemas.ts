import * as v from 'valibot';

/**
 * Request and response schemas: the validators of lib/http/parse.ts and the OpenAPI document are
 * both made from these, so the two cannot disagree. Limits are the contract's.
 *
 * Valibot, with each schema built on its first use: every function bundles the whole route
 * table but builds only the schemas its row names, and valibot is a few KiB of plain functions
 * where classic zod was 90 KiB built at import. Measured on the SDK-only bundle with every schema
 * built (docs/performance.md): classic zod added 12 ms to a cold start, zod/mini 3-5 ms, valibot
 * 1-1.8 ms; a function builds only its own schemas, so it pays less than that.
 */

/** A schema built when first asked for, then reused for the life of the container. */
export type Lazy<T extends v.GenericSchema = v.GenericSchema> = () => T;
function onFirstUse<T extends v.GenericSchema>(build: () => T): Lazy<T> {
  let built: T | undefined;
  return () => {
    built ??= build();
    return built;
  };
}

const UUID_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Any 8-4-4-4-12 hex id, compared in lower case (ids are issued in lower case). */
const uuid = () =>
  v.pipe(
    v.string(),
    v.regex(UUID_SHAPE, 'must be a UUID'),
    v.transform((id: string) => id.toLowerCase()),
  );

/** A lone surrogate is not Unicode text; DynamoDB would refuse it (as a 500), so it is a 400 here. */
const wellFormed = () => v.check((s: string) => s.isWellFormed(), 'must be well-formed Unicode text');
const notBlank = () => v.check((s: string) => s.trim().length > 0, 'must contain a non-whitespace character');

/** Characters (code points), as JSON Schema's minLength/maxLength count them; String#length counts UTF-16 units. */
function characterCount(s: string): number {
  let count = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const unit = s.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

type LengthLimit = { minLength?: number; maxLength?: number };
/** JSON Schema keywords of the actions valibot's converter cannot describe (or not fully). */
const documentedKeywords = new WeakMap<object, Record<string, unknown>>();
function documented<A extends object>(action: A, keywords: Record<string, unknown>): A {
  documentedKeywords.set(action, keywords);
  return action;
}

/**
 * A length limit in characters. Valibot's own length actions count UTF-16 units, so an emoji
 * would count twice; the contract and the published JSON Schema count characters.
 */
function characters(limit: LengthLimit) {
  const { minLength = 0, maxLength = Number.POSITIVE_INFINITY } = limit;
  const message =
    limit.maxLength === undefined
      ? `must be at least ${minLength} characters`
      : limit.minLength === undefined
        ? `must be at most ${maxLength} characters`
        : `must be ${minLength} to ${maxLength} characters`;
  const action = v.check((s: string) => {
    const count = characterCount(s);
    return count >= minLength && count <= maxLength;
  }, message);
  return documented(action, limit);
}

/** The JSON Schema keywords this module attached to an action, if any. */
export function documentedKeywordsOf(action: object): Record<string, unknown> | undefined {
  return documentedKeywords.get(action);
}

/**
 * The address shape zod accepted and the document published before valibot: apostrophes in the
 * local part, punycode (`xn--`) and other `--` labels in the domain. Valibot's own email action
 * refuses those, which would lock such users out of registration and of being added to boards.
 */
const EMAIL_SHAPE = /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/;

const title = () => v.pipe(v.string(), wellFormed(), characters({ maxLength: 256 }), notBlank());
const description = () => v.pipe(v.string(), wellFormed(), characters({ maxLength: 16_384 }));
const email = () =>
  v.pipe(
    v.string(),
    documented(v.regex(EMAIL_SHAPE, 'must be an email address'), { format: 'email' }),
    characters({ maxLength: 254 }),
  );
const role = () => v.picklist(['owner', 'member']);

export const idParams = onFirstUse(() => v.object({ id: uuid() }));
export const cardLabelParams = onFirstUse(() => v.object({ id: uuid(), label_id: uuid() }));
export const memberParams = onFirstUse(() => v.object({ id: uuid(), user_id: uuid() }));

export const registerBody = onFirstUse(() =>
  v.object({
    email: email(),
    password: v.pipe(v.string(), characters({ minLength: 8, maxLength: 256 })),
    display_name: v.pipe(v.string(), wellFormed(), characters({ minLength: 1, maxLength: 100 }), notBlank()),
  }),
);

export const loginBody = onFirstUse(() =>
  v.object({
    email: v.pipe(v.string(), characters({ minLength: 1, maxLength: 254 })),
    password: v.pipe(v.string(), characters({ minLength: 1, maxLength: 256 })),
  }),
);

export const titleBody = onFirstUse(() => v.object({ title: title() }));

export const createCardBody = onFirstUse(() => v.object({ title: title(), description: v.nullish(description()) }));

export const updateCardBody = onFirstUse(() => v.object({ title: v.nullish(title()), description: v.nullish(description()) }));

export const moveCardBody = onFirstUse(() =>
  v.object({ target_column_id: uuid(), before_id: v.nullish(uuid()), after_id: v.nullish(uuid()) }),
);

export const addMemberBody = onFirstUse(() => v.object({ email: email(), role: v.optional(role(), 'member') }));
export const changeRoleBody = onFirstUse(() => v.object({ role: role() }));

/** A socket message about one board (watch, unwatch); `action` routed it here. */
export const boardAction = onFirstUse(() => v.object({ action: v.string(), board_id: uuid() }));

const labelName = () => v.pipe(v.string(), wellFormed(), characters({ minLength: 1, maxLength: 50 }), notBlank());
/** `#rrggbb`, stored and returned in lower case. */
const color = () =>
  v.pipe(
    v.string(),
    v.regex(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb hex color'),
    v.transform((value: string) => value.toLowerCase()),
  );
export const createLabelBody = onFirstUse(() => v.object({ name: labelName(), color: color() }));
export const updateLabelBody = onFirstUse(() => v.object({ name: v.nullish(labelName()), color: v.nullish(color()) }));

export const moveColumnBody = onFirstUse(() => v.object({ before_id: v.nullish(uuid()), after_id: v.nullish(uuid()) }));

// Responses (documentation and contract tests): strict, so an undocumented field fails the contract tests.
const id = () => v.pipe(v.string(), v.uuid());
const timestamp = () => v.pipe(v.string(), v.isoTimestamp());
const int = () => v.pipe(v.number(), v.integer());
const boardEntries = () => ({ id: id(), owner_id: v.string(), title: v.string(), created_at: timestamp() });
const columnEntries = () => ({ id: id(), board_id: id(), title: v.string(), position: v.number() });

export const board = onFirstUse(() => v.strictObject(boardEntries()));
export const boardList = onFirstUse(() => v.array(board()));
export const column = onFirstUse(() => v.strictObject(columnEntries()));
export const card = onFirstUse(() =>
  v.strictObject({
    id: id(),
    column_id: id(),
    title: v.string(),
    description: v.nullable(v.string()),
    position: v.number(),
    created_at: timestamp(),
    label_ids: v.array(id()),
  }),
);
export const label = onFirstUse(() =>
  v.strictObject({ id: id(), board_id: id(), name: v.string(), color: v.pipe(v.string(), v.regex(/^#[0-9a-f]{6}$/)) }),
);
export const labelList = onFirstUse(() => v.array(label()));
export const columnWithCards = onFirstUse(() => v.strictObject({ ...columnEntries(), cards: v.array(card()) }));
export const boardTree = onFirstUse(() =>
  v.strictObject({ ...boardEntries(), columns: v.array(columnWithCards()), labels: v.array(label()) }),
);
export const tokenResponse = onFirstUse(() =>
  v.strictObject({
    token: v.string(),
    token_type: v.literal('Bearer'),
    expires_in: int(),
    refresh_token: v.optional(v.string()),
  }),
);
export const ticketResponse = onFirstUse(() =>
  v.strictObject({
    ticket: v.string(),
    url: v.pipe(v.string(), v.url()),
    expires_in: int(),
  }),
);
export const health = onFirstUse(() => v.strictObject({ status: v.literal('ok') }));
export const problem = onFirstUse(() =>
  v.looseObject({
    type: v.string(),
    title: v.string(),
    status: int(),
    detail: v.string(),
    code: v.optional(v.string()),
    instance: v.optional(v.string()),
    errors: v.optional(v.array(v.strictObject({ path: v.string(), message: v.string() }))),
  }),
);
export const member = onFirstUse(() =>
  v.strictObject({ user_id: v.string(), email: v.string(), display_name: v.string(), role: role() }),
);
export const memberList = onFirstUse(() => v.array(member()));
