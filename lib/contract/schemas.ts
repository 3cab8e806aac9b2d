import * as v from 'valibot';
import { BOARD_EVENT_KINDS, type BoardEventKind } from '../domain/events';
import {
  DEFAULT_COMMENTS_PAGE,
  MAX_ASSIGNEES_PER_CARD,
  MAX_BATCH_OPERATIONS,
  MAX_BATCH_REF_LENGTH,
  MAX_COMMENT_LENGTH,
  MAX_COMMENTS_PAGE,
  MAX_DESCRIPTION_LENGTH,
  MAX_LABELS_PER_BOARD,
  MAX_LABELS_PER_CARD,
  MAX_SEQ,
  MAX_TOKEN_LENGTH,
  MAX_TREE_QUERY_LENGTH,
} from '../domain/limits';
import {
  MAX_PERSONAL_TOKEN_BOARDS,
  MAX_PERSONAL_TOKEN_DAYS,
  MAX_PERSONAL_TOKENS,
  PERSONAL_TOKEN_LENGTH,
  PERSONAL_TOKEN_SCOPES,
  type PersonalTokenScope,
} from '../domain/personal-tokens';
import { KINDS } from './error-kinds';

/**
 * Request and response schemas: the validators of lib/http/parse.ts and the OpenAPI document are
 * both made from these, so the two cannot disagree. Limits are the contract's.
 *
 * Valibot, with each schema built on its first use, and valibot is a few KiB of plain functions
 * where classic zod was 90 KiB built at import. Measured on the SDK-only bundle with every schema
 * built (docs/performance.md): classic zod added 12 ms to a cold start, zod/mini 3-5 ms, valibot
 * 1-1.8 ms. A function bundles only the schemas its own row names: each export below is marked
 * `@__PURE__`, so that esbuild drops those no import uses (it cannot know on its own that calling
 * `onFirstUse` has no side effect), and response schemas are named by the rows, not referenced
 * (`responseSchemas`), since only the documents and the contract tests read them.
 */

/** A schema built when first asked for, then reused for the life of the container. */
export type Lazy<T extends v.GenericSchema = v.GenericSchema> = () => T;
export function onFirstUse<T extends v.GenericSchema>(build: () => T): Lazy<T> {
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
    documented(v.regex(UUID_SHAPE, 'must be a UUID'), { minLength: 36, maxLength: 36 }),
    v.transform((id: string) => id.toLowerCase()),
  );

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
export function documented<A extends object>(action: A, keywords: Record<string, unknown>): A {
  documentedKeywords.set(action, keywords);
  return action;
}

/**
 * Well-formed UTF-16 as a JSON Schema pattern (ECMA-262, with or without the `u` flag): every
 * surrogate is half of a pair. The validator uses String#isWellFormed; a unit test holds the two
 * to the same answers.
 */
export const WELL_FORMED_PATTERN = '^(?:[^\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$';
/** A non-whitespace character anywhere (JSON Schema patterns are unanchored); `\\s` is what String#trim removes. */
export const NOT_BLANK_PATTERN = '\\S';
// Pure, so that a bundle that imports this module for a row alone leaves it out.
const notBlankShape = /* @__PURE__ */ new RegExp(NOT_BLANK_PATTERN);

/** A lone surrogate is not Unicode text; DynamoDB would refuse it (as a 500), so it is a 400 here. */
const wellFormed = () =>
  documented(
    v.check((s: string) => s.isWellFormed(), 'must be well-formed Unicode text'),
    { pattern: WELL_FORMED_PATTERN },
  );
const notBlank = () =>
  documented(
    v.check((s: string) => notBlankShape.test(s), 'must contain a non-whitespace character'),
    { pattern: NOT_BLANK_PATTERN },
  );

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

/** Documentation of a field or schema (converted to JSON Schema `description` and `examples`). */
export const about = <T>(description: string, ...examples: unknown[]) =>
  v.metadata<T, Record<string, unknown>>(examples.length > 0 ? { description, examples } : { description });

const title = () => v.pipe(v.string(), wellFormed(), characters({ maxLength: 256 }), notBlank());
/** The longest `detail` a problem may carry (the service's own are one or two sentences). */
const PROBLEM_DETAIL_MAX_LENGTH = 16_384;
const description = () => v.pipe(v.string(), wellFormed(), characters({ maxLength: MAX_DESCRIPTION_LENGTH }));
const email = () =>
  v.pipe(
    v.string(),
    documented(v.regex(EMAIL_SHAPE, 'must be an email address'), { format: 'email' }),
    characters({ maxLength: 254 }),
  );
const role = () =>
  v.pipe(
    v.picklist(['owner', 'member']),
    about('`owner`: everything, including deleting the board and managing members; `member`: everything else.'),
  );

/**
 * A point in time as a client sends it: ISO 8601 in UTC with a `Z` (seconds, optionally a
 * fraction), a real calendar date. Stored and answered with milliseconds, as every timestamp.
 */
const TIMESTAMP_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;
const instant = () =>
  v.pipe(
    v.string(),
    documented(v.regex(TIMESTAMP_SHAPE, 'must be an ISO 8601 UTC timestamp ending in Z, such as 2026-12-01T17:00:00.000Z'), {
      format: 'date-time',
      maxLength: 30,
    }),
    v.check((text: string) => isCalendarInstant(text), 'must be a real date and time'),
    v.transform((text: string) => new Date(text).toISOString()),
  );
/** Whether the date and time written exist (no 30 February, no hour 24): Date would roll them over. */
function isCalendarInstant(text: string): boolean {
  const time = Date.parse(text);
  if (Number.isNaN(time)) return false;
  return new Date(time).toISOString().slice(0, 19) === text.slice(0, 19);
}

const POSITION_RULES =
  'The new position is (before + after) / 2 with both, before + 1.0 with only `before_id`, ' +
  'after - 1.0 with only `after_id`, and 1.0 with neither.';
const neighbour = (what: 'card' | 'column', side: 'before' | 'after') =>
  v.pipe(
    v.nullish(uuid()),
    about(
      side === 'before'
        ? `The ${what} that will PRECEDE the moved ${what} (come just before it)${what === 'card' ? ', in the target column' : ''}; null or omitted: none. ${POSITION_RULES}`
        : `The ${what} that will FOLLOW the moved ${what} (come just after it)${what === 'card' ? ', in the target column' : ''}; null or omitted: none. ${POSITION_RULES}`,
      '3f0c8a52-5b7e-4c1a-9d2e-8f6b1a2c3d4e',
    ),
  );

export const idParams = /* @__PURE__ */ onFirstUse(() => v.object({ id: uuid() }));

/** The most events one page of a board's log holds (realtime.md: `limit` 1-1000, default 100). */
export const MAX_EVENTS_PAGE = 1000;
export const DEFAULT_EVENTS_PAGE = 100;
/**
 * A query parameter holding a whole number in decimal digits (no sign, no exponent, any length),
 * held to [min, max]. Digits above 2^53 - 1 read as a number above it (2^53, or Infinity for very
 * long ones, never rounded down to it), so a `max` of Number.MAX_SAFE_INTEGER refuses them as the
 * OpenAPI `maximum` says.
 */
const wholeNumber = (min: number, max: number, text: string, example: string) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be a whole number written in digits'),
    v.transform((digits: string) => Number(digits)),
    v.number(),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
    about(text, example),
  );
/** `GET /boards/{id}/events`: where to start and how many to return. */
export const eventsQuery = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    after: v.optional(
      wholeNumber(
        0,
        Number.MAX_SAFE_INTEGER,
        'The `seq` the client has seen last: events with a higher one are returned. Omitted: 0 (from the first event).',
        '41',
      ),
      '0',
    ),
    limit: v.optional(
      wholeNumber(
        1,
        MAX_EVENTS_PAGE,
        `The most events to return, 1 to ${MAX_EVENTS_PAGE} (default ${DEFAULT_EVENTS_PAGE}).`,
        '100',
      ),
      String(DEFAULT_EVENTS_PAGE),
    ),
  }),
);
/** `GET /webhooks/{id}/deliveries`: how many. */
export const deliveriesQuery = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    limit: v.optional(
      wholeNumber(
        1,
        MAX_DELIVERIES_PAGE,
        `The most deliveries to return, 1 to ${MAX_DELIVERIES_PAGE} (default ${DEFAULT_DELIVERIES_PAGE}).`,
        '20',
      ),
      String(DEFAULT_DELIVERIES_PAGE),
    ),
  }),
);
export const cardLabelParams = /* @__PURE__ */ onFirstUse(() => v.object({ id: uuid(), label_id: uuid() }));
export const cardAssigneeParams = /* @__PURE__ */ onFirstUse(() => v.object({ id: uuid(), user_id: uuid() }));

/** `GET /cards/{id}/comments`: where to start and how many. */
export const commentsQuery = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    after: v.pipe(
      v.optional(uuid()),
      about('The `next` of the previous page: the comments written after that one. Omitted: from the first comment.'),
    ),
    limit: v.optional(
      wholeNumber(
        1,
        MAX_COMMENTS_PAGE,
        `The most comments to return, 1 to ${MAX_COMMENTS_PAGE} (default ${DEFAULT_COMMENTS_PAGE}).`,
        '50',
      ),
      String(DEFAULT_COMMENTS_PAGE),
    ),
  }),
);

/** `GET /boards/{id}`: the tree's filters, all optional, combined with AND. */
export const treeQuery = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    label_id: v.pipe(v.optional(uuid()), about('Only the cards that carry this label.')),
    assignee_id: v.pipe(v.optional(uuid()), about('Only the cards assigned to this user.')),
    due_before: v.pipe(
      v.optional(instant()),
      about(
        'Only the cards whose due date is strictly earlier than this (cards without one are left out).',
        '2026-12-01T00:00:00Z',
      ),
    ),
    q: v.pipe(
      v.optional(v.pipe(v.string(), wellFormed(), characters({ minLength: 1, maxLength: MAX_TREE_QUERY_LENGTH }))),
      about(
        `Only the cards whose title or description contains this text, compared case-insensitively; 1 to ${MAX_TREE_QUERY_LENGTH} characters.`,
        'release',
      ),
    ),
  }),
);
export const memberParams = /* @__PURE__ */ onFirstUse(() => v.object({ id: uuid(), user_id: uuid() }));

export const registerBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    email: v.pipe(email(), about('Sign-in address; compared case-insensitively, unique among users.', 'ada@example.com')),
    password: v.pipe(
      v.string(),
      characters({ minLength: 8, maxLength: 256 }),
      v.metadata({ format: 'password', description: '8 to 256 characters.', examples: ['correct horse'] }),
    ),
    display_name: v.pipe(
      v.string(),
      wellFormed(),
      characters({ minLength: 1, maxLength: 100 }),
      notBlank(),
      about('Name shown to the members of shared boards; not only whitespace.', 'Ada'),
    ),
  }),
);

export const loginBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    // The contract's input rules hold here too: an address that is not one, or a password no
    // account can have, is 400 on its shape alone, which tells nothing about any account.
    email: v.pipe(
      email(),
      about('The address registered (any case). A wrong address or password gets the same 401.', 'ada@example.com'),
    ),
    password: v.pipe(
      v.string(),
      characters({ minLength: 8, maxLength: 256 }),
      v.metadata({ format: 'password', description: '8 to 256 characters, as at registration.', examples: ['correct horse'] }),
    ),
  }),
);

/** A password of the contract's input rules (8 to 256 characters). */
const password = (description: string) =>
  v.pipe(
    v.string(),
    characters({ minLength: 8, maxLength: 256 }),
    v.metadata({ format: 'password', description, examples: ['correct horse'] }),
  );
/** A code mailed to the address (docs/accounts.md); its shape is Cognito's: no whitespace. */
const mailedCode = () =>
  v.pipe(
    v.string(),
    v.regex(/^\S+$/, 'must be a code without whitespace'),
    characters({ minLength: 1, maxLength: 64 }),
    about('The code from the message mailed to the address. Wrong, expired or used: 400 `invalid_code`.', '123456'),
  );

export const verifyEmailBody = /* @__PURE__ */ onFirstUse(() => v.object({ code: mailedCode() }));

export const forgotPasswordBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    email: v.pipe(
      email(),
      about('The address to mail a reset code to. The answer is 202 whether or not an account holds it.', 'ada@example.com'),
    ),
  }),
);

export const resetPasswordBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    email: v.pipe(email(), about('The address the code was mailed to (any case).', 'ada@example.com')),
    code: mailedCode(),
    new_password: password('The new password: 8 to 256 characters.'),
  }),
);

export const changePasswordBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    current_password: password('The password now (a wrong one: 403 `wrong_password`).'),
    new_password: password('The new password: 8 to 256 characters.'),
  }),
);

export const deleteAccountBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({ password: password("The account's password, to confirm the deletion (a wrong one: 403 `wrong_password`).") }),
);

/** `POST /auth/refresh` and `POST /auth/logout`: the refresh token is the credential (no bearer token). */
export const refreshBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    refresh_token: v.pipe(
      v.string(),
      v.regex(/^\S+$/, 'must be a token without whitespace'),
      characters({ minLength: 1, maxLength: MAX_TOKEN_LENGTH }),
      about(
        'The `refresh_token` of `POST /auth/register` or `POST /auth/login` (opaque; kept by the client).',
        'eyJjdHkiOiJKV1QiLCJlbmMiOiJBMjU2R0NNIiwiYWxnIjoiUlNBLU9BRVAifQ.example',
      ),
    ),
  }),
);

export const titleBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({ title: v.pipe(title(), about('1 to 256 characters, at least one not whitespace; stored as sent.', 'Roadmap')) }),
);

export const createCardBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    title: v.pipe(title(), about('1 to 256 characters, at least one not whitespace; stored as sent.', 'Write the release notes')),
    description: v.pipe(
      v.nullish(description()),
      about('Up to 16,384 characters; null or omitted: the card has no description (null).', 'Cover the new label endpoints.'),
    ),
  }),
);

export const updateCardBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    title: v.pipe(
      v.nullish(title()),
      about('The new title; null or omitted leaves the title unchanged.', 'Write the release notes for 1.2'),
    ),
    description: v.pipe(
      v.nullish(description()),
      about(
        'The new description; null or omitted leaves the description unchanged (null does NOT clear it: a description cannot go back to null, send "" to empty it).',
        'Cover the new label endpoints and the move rules.',
      ),
    ),
    due_at: v.pipe(
      v.nullish(instant()),
      about(
        'The new due date, ISO 8601 UTC with `Z`; null or omitted leaves it unchanged (`DELETE /cards/{id}/due` clears it).',
        '2026-12-01T17:00:00.000Z',
      ),
    ),
  }),
);

const commentBody = () =>
  v.pipe(v.string(), wellFormed(), characters({ minLength: 1, maxLength: MAX_COMMENT_LENGTH }), notBlank());
export const commentBodyBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    body: v.pipe(
      commentBody(),
      about(`1 to ${MAX_COMMENT_LENGTH} characters, at least one not whitespace; stored as sent.`, 'Blocked on the API review.'),
    ),
  }),
);

export const moveCardBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    target_column_id: v.pipe(
      uuid(),
      about("The column the card goes to: its own column or another of the same board (another board's column: 403)."),
    ),
    before_id: neighbour('card', 'before'),
    after_id: neighbour('card', 'after'),
  }),
);

export const addMemberBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    email: v.pipe(email(), about('The address a registered user signed up with (404 when nobody did).', 'grace@example.com')),
    role: v.optional(role(), 'member'),
  }),
);
export const changeRoleBody = /* @__PURE__ */ onFirstUse(() => v.object({ role: role() }));

/** A socket message about one board (watch, unwatch); `action` routed it here. */
export const boardAction = /* @__PURE__ */ onFirstUse(() => v.object({ action: v.string(), board_id: uuid() }));

const labelName = () => v.pipe(v.string(), wellFormed(), characters({ minLength: 1, maxLength: 50 }), notBlank());
/** `#rrggbb`, stored and returned in lower case. */
const color = () =>
  v.pipe(
    v.string(),
    documented(v.regex(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb hex color'), { minLength: 7, maxLength: 7 }),
    v.transform((value: string) => value.toLowerCase()),
  );
const LABEL_NAME_TEXT = '1 to 50 characters, at least one not whitespace; unique on the board compared case-insensitively (409).';
export const createLabelBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    name: v.pipe(labelName(), about(LABEL_NAME_TEXT, 'urgent')),
    color: v.pipe(color(), about('`#rrggbb` in any case; stored and returned in lower case.', '#d73a4a')),
  }),
);
export const updateLabelBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    name: v.pipe(
      v.nullish(labelName()),
      about(`The new name; null or omitted leaves it unchanged. ${LABEL_NAME_TEXT}`, 'blocked'),
    ),
    color: v.pipe(v.nullish(color()), about('The new `#rrggbb` color; null or omitted leaves it unchanged.', '#0e8a16')),
  }),
);

export const moveColumnBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({ before_id: neighbour('column', 'before'), after_id: neighbour('column', 'after') }),
);

/**
 * A batch (POST /boards/{id}/batch): up to MAX_BATCH_OPERATIONS changes of one board, each the
 * body of its single route with the id it addresses in a field. What an operation creates may be
 * named by a `ref`, which later operations of the same batch use where they would take its id.
 * Every rule about refs (unique, made before use, of the right kind, never beside the id it stands
 * for) is checked here, with the rest of the body's shape, so that a malformed batch is 400 before
 * anything is looked up.
 */
const batchRef = (text: string) =>
  v.pipe(v.string(), wellFormed(), characters({ minLength: 1, maxLength: MAX_BATCH_REF_LENGTH }), about(text, 'todo'));
const madeRef = () =>
  v.optional(
    batchRef(
      `A name (1 to ${MAX_BATCH_REF_LENGTH} characters, unique within the batch) for what this operation creates: later operations may use it instead of its id.`,
    ),
  );
const idOrRef = (field: string, what: 'column' | 'card') => ({
  [`${field}_id`]: v.optional(v.pipe(uuid(), about(`The ${what}'s id (or \`${field}_ref\`, not both).`))),
  [`${field}_ref`]: v.optional(
    batchRef(`The \`ref\` of the ${what} an earlier operation of the batch created (or \`${field}_id\`, not both).`),
  ),
});
/** The fields of an operation that name something by id or by ref, with the kind the ref must name. */
const BATCH_REF_FIELDS = {
  column: 'column',
  card: 'card',
  target_column: 'column',
  before: 'card',
  after: 'card',
} as const;
/** The id-or-ref fields each operation must have (the neighbours of a move are optional). */
const BATCH_REQUIRED: Record<string, (keyof typeof BATCH_REF_FIELDS)[]> = {
  'column.create': [],
  'card.create': ['column'],
  'card.update': ['card'],
  'card.move': ['card', 'target_column'],
  'card.delete': ['card'],
};
const BATCH_MADE: Record<string, 'column' | 'card' | undefined> = { 'column.create': 'column', 'card.create': 'card' };

type BatchIssue = { index: number; field: string; message: string };
/** Every broken ref rule of a batch's operations, in order (see `batchBody`). */
function batchRefIssues(operations: readonly Record<string, unknown>[]): BatchIssue[] {
  const issues: BatchIssue[] = [];
  const made = new Map<string, { kind: 'column' | 'card'; index: number }>();
  operations.forEach((operation, index) => {
    const op = String(operation.op);
    for (const field of Object.keys(BATCH_REF_FIELDS) as (keyof typeof BATCH_REF_FIELDS)[]) {
      const id = operation[`${field}_id`];
      const ref = operation[`${field}_ref`];
      if (id != null && ref !== undefined) {
        issues.push({
          index,
          field: `${field}_ref`,
          message: `must not be given with ${field}_id: one names the ${BATCH_REF_FIELDS[field]}`,
        });
      } else if (ref !== undefined) {
        const target = made.get(String(ref));
        if (!target)
          issues.push({ index, field: `${field}_ref`, message: 'must be the ref of an earlier operation of the batch' });
        else if (target.kind !== BATCH_REF_FIELDS[field]) {
          issues.push({
            index,
            field: `${field}_ref`,
            message: `must name a ${BATCH_REF_FIELDS[field]} (operation ${target.index} made a ${target.kind})`,
          });
        }
      } else if (id == null && BATCH_REQUIRED[op]?.includes(field)) {
        issues.push({ index, field: `${field}_id`, message: `is required (or ${field}_ref)` });
      }
    }
    const kind = BATCH_MADE[op];
    if (kind && operation.ref !== undefined) {
      const ref = String(operation.ref);
      const earlier = made.get(ref);
      if (earlier)
        issues.push({ index, field: 'ref', message: `must be unique in the batch (operation ${earlier.index} has it)` });
      else made.set(ref, { kind, index });
    }
  });
  return issues;
}

export const batchBody = /* @__PURE__ */ onFirstUse(() => {
  const newTitle = () =>
    v.pipe(title(), about('1 to 256 characters, at least one not whitespace; stored as sent.', 'Write the release notes'));
  const operation = v.variant('op', [
    v.pipe(
      v.object({ op: v.literal('column.create'), title: newTitle(), ref: madeRef() }),
      about("`POST /boards/{id}/columns` on the batch's board: appends a column."),
    ),
    v.pipe(
      v.object({
        op: v.literal('card.create'),
        ...idOrRef('column', 'column'),
        title: newTitle(),
        description: v.pipe(v.nullish(description()), about('Up to 16,384 characters; null or omitted: no description.')),
        ref: madeRef(),
      }),
      about('`POST /columns/{id}/cards`: appends a card to the column.'),
    ),
    v.pipe(
      v.object({
        op: v.literal('card.update'),
        ...idOrRef('card', 'card'),
        title: v.pipe(v.nullish(title()), about('The new title; null or omitted leaves it unchanged.')),
        description: v.pipe(v.nullish(description()), about('The new description; null or omitted leaves it unchanged.')),
      }),
      about('`PATCH /cards/{id}`: changes the title or description.'),
    ),
    v.pipe(
      v.object({
        op: v.literal('card.move'),
        ...idOrRef('card', 'card'),
        ...idOrRef('target_column', 'column'),
        before_id: neighbour('card', 'before'),
        before_ref: v.optional(batchRef('The `ref` of a card made earlier in the batch, instead of `before_id`.')),
        after_id: neighbour('card', 'after'),
        after_ref: v.optional(batchRef('The `ref` of a card made earlier in the batch, instead of `after_id`.')),
      }),
      about('`PATCH /cards/{id}/move`: moves the card between two neighbours.'),
    ),
    v.pipe(
      v.object({ op: v.literal('card.delete'), ...idOrRef('card', 'card') }),
      about('`DELETE /cards/{id}`: deletes the card.'),
    ),
  ]);
  const list = v.array(operation);
  return v.object({
    operations: v.pipe(
      list,
      v.minLength(1, `must hold 1 to ${MAX_BATCH_OPERATIONS} operations`),
      v.maxLength(MAX_BATCH_OPERATIONS, `must hold 1 to ${MAX_BATCH_OPERATIONS} operations`),
      documented(
        v.rawCheck<v.InferOutput<typeof list>>(({ dataset, addIssue }) => {
          if (!dataset.typed) return;
          const operations = dataset.value as Record<string, unknown>[];
          for (const { index, field, message } of batchRefIssues(operations)) {
            const item = operations[index]!;
            addIssue({
              message,
              path: [
                { type: 'array', origin: 'value', input: operations, key: index, value: item },
                { type: 'object', origin: 'value', input: item, key: field, value: item[field] },
              ],
            });
          }
        }),
        {},
      ),
      about(
        `1 to ${MAX_BATCH_OPERATIONS} operations, applied in order, all or none. A \`ref\` is unique in the batch; a \`*_ref\` names what an earlier operation made (a column for \`column_ref\` and \`target_column_ref\`, a card for the others) and is never given with the matching \`*_id\`.`,
      ),
    ),
  });
});

/**
 * The longest webhook URL (webhooks.md: 2,048 characters), for the response schemas. The same as
 * lib/domain/webhook-address.ts MAX_WEBHOOK_URL_LENGTH, which a unit test holds it to: that module
 * builds its address blocks at load, so only the webhook bodies (lib/contract/webhook-schemas.ts)
 * import it, and no other function's bundle carries it.
 */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/**
 * The event types a webhook may select: the board's (realtime.md). `access.revoked` is never
 * delivered and `webhook.ping` always is, so selecting either would mean nothing: both are 400.
 */
export const webhookEvents = () =>
  v.pipe(
    v.array(v.picklist(BOARD_EVENT_KINDS)),
    v.maxLength(BOARD_EVENT_KINDS.length),
    documented(
      v.check((types: BoardEventKind[]) => new Set(types).size === types.length, 'must not name an event type twice'),
      { uniqueItems: true },
    ),
  );
export const WEBHOOK_EVENTS_TEXT =
  'The board event types delivered (the kinds of the live events, each at most once); empty: all of them. `access.revoked` is never delivered and `webhook.ping` always is, so neither is accepted here.';
/** A webhook's description: up to 256 characters (webhooks.md). */
const WEBHOOK_DESCRIPTION_LENGTH = 256;
export const webhookDescription = () => v.pipe(v.string(), wellFormed(), characters({ maxLength: WEBHOOK_DESCRIPTION_LENGTH }));

/** The most deliveries one page lists (webhooks.md: `limit` 1-100, default 20). */
export const MAX_DELIVERIES_PAGE = 100;
export const DEFAULT_DELIVERIES_PAGE = 20;

/** The longest lifetime of a Cognito access token (one day), and so of a socket ticket bound to one. */
const DAY_SECONDS = 86_400;
/** A lifetime in whole seconds, at most a day (tokens and tickets). */
const seqNumber = (min: number, description: string, example: number) =>
  v.pipe(
    v.number(),
    v.integer(),
    v.minValue(min),
    v.maxValue(MAX_SEQ),
    v.metadata({ format: 'int64', description, examples: [example] }),
  );

const lifetimeSeconds = (description: string, example: number) =>
  v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1),
    v.maxValue(DAY_SECONDS),
    v.metadata({ format: 'int32', description, examples: [example] }),
  );

// Responses (documentation and contract tests): strict, so an undocumented field fails the contract tests.
const id = (text: string) => v.pipe(v.string(), v.uuid(), v.length(36), about(text, '9b2f6c1e-4d3a-4f5b-8c7d-1e2f3a4b5c6d'));
const timestamp = (text: string) =>
  v.pipe(v.string(), v.isoTimestamp(), v.length(24), about(`${text}: ISO 8601 UTC, milliseconds.`, '2026-11-22T14:03:07.123Z'));
const position = (what: string) =>
  v.pipe(
    v.number(),
    v.metadata({
      format: 'double',
      description: `Where the ${what} sits: ${what}s are ordered by ascending position, ties by created_at then id. Floating point, set by the server (append: highest + 1.0; move: between the neighbours).`,
      examples: [1.5],
    }),
  );
const titleOut = (text: string) => v.pipe(title(), about(text, 'Roadmap'));
const boardEntries = () => ({
  id: id('The board id.'),
  owner_id: id(
    "The creator's user id (Cognito `sub`); it stays the creator's even if ownership is shared or the creator leaves.",
  ),
  title: titleOut('The board title.'),
  created_at: timestamp('When the board was created'),
});
const columnEntries = () => ({
  id: id('The column id.'),
  board_id: id('The board the column belongs to.'),
  title: titleOut('The column title.'),
  position: position('column'),
});

export const board = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(v.strictObject(boardEntries()), about('A board, without its columns.')),
);
const boardList = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(v.array(board()), about("The caller's boards, newest first (created_at descending); not paginated.")),
);
export const column = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(v.strictObject(columnEntries()), about('A column, without its cards.')),
);
export const card = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      id: id('The card id.'),
      column_id: id('The column the card is in.'),
      title: titleOut('The card title.'),
      description: v.pipe(
        v.nullable(description()),
        about('The description; null when the card was created without one (it never goes back to null).'),
      ),
      position: position('card'),
      created_at: timestamp('When the card was created'),
      label_ids: v.pipe(
        v.array(id('A label of the board.')),
        v.maxLength(MAX_LABELS_PER_CARD),
        about(
          `The labels on the card, in the board's label order (name, case-insensitively, then id); at most ${MAX_LABELS_PER_CARD}.`,
        ),
      ),
      due_at: v.pipe(v.nullable(timestamp('When the card is due')), about('When the card is due; null when it has no due date.')),
      assignee_ids: v.pipe(
        v.array(id('A member of the board.')),
        v.maxLength(MAX_ASSIGNEES_PER_CARD),
        about(
          `The members assigned to the card, in the order they were assigned; at most ${MAX_ASSIGNEES_PER_CARD}. A member who leaves the board is gone from every card at once.`,
        ),
      ),
      archived_at: v.pipe(
        v.nullable(timestamp('When the card was archived')),
        about('When the card was archived; null unless it is archived (an archived card is in no column of the tree).'),
      ),
      comment_count: v.pipe(
        v.number(),
        v.integer(),
        v.minValue(0),
        v.maxValue(2_147_483_647),
        v.metadata({ format: 'int32', description: 'How many comments the card has now.', examples: [3] }),
      ),
    }),
    about('A card.'),
  ),
);
const archivedCardList = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(v.array(card()), about("The board's archived cards, most recently archived first (ties: id); not paginated.")),
);
const comment = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      id: id('The comment id (time-ordered: a later comment of the card has a higher id).'),
      card_id: id('The card the comment is on.'),
      author_id: id('The user who wrote it.'),
      body: v.pipe(commentBody(), about('The text, as sent.', 'Blocked on the API review.')),
      created_at: timestamp('When the comment was written'),
      edited_at: v.pipe(
        v.nullable(timestamp('When the comment was last edited')),
        about('When it was last edited; null until then.'),
      ),
    }),
    about('A comment on a card.'),
  ),
);
const commentPage = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      comments: v.pipe(
        v.array(comment()),
        v.maxLength(MAX_COMMENTS_PAGE),
        about('The comments after `after`, oldest first, at most `limit`.'),
      ),
      next: v.pipe(
        v.nullable(id('The last comment of this page.')),
        about("Pass as `after` for the next page; null when this page ends the card's comments."),
      ),
    }),
    about("A page of a card's comments."),
  ),
);
export const label = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      id: id('The label id.'),
      board_id: id('The board the label belongs to.'),
      name: v.pipe(labelName(), about(LABEL_NAME_TEXT, 'urgent')),
      color: v.pipe(v.string(), v.regex(/^#[0-9a-f]{6}$/), v.length(7), about('`#rrggbb`, lower case.', '#d73a4a')),
    }),
    about('A label of a board; cards carry labels by id.'),
  ),
);
const labelList = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.array(label()),
    v.maxLength(MAX_LABELS_PER_BOARD),
    about(`The board's labels by name (case-insensitively), then id; at most ${MAX_LABELS_PER_BOARD}.`),
  ),
);
export const columnWithCards = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      ...columnEntries(),
      cards: v.pipe(v.array(card()), about('The cards of the column, by ascending position (ties: created_at, then id).')),
    }),
    about('A column with its cards.'),
  ),
);
export const boardTree = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      ...boardEntries(),
      seq: seqNumber(
        0,
        'The `seq` of the latest change the tree reflects (later ones may be reflected too; 0 for a board with no change yet): watch the board, then read `GET /boards/{id}/events?after=<seq>` to catch up from it.',
        42,
      ),
      columns: v.pipe(
        v.array(columnWithCards()),
        about('The columns, by ascending position (ties: created_at, then id), each with its cards; empty for a new board.'),
      ),
      labels: v.pipe(
        v.array(label()),
        v.maxLength(MAX_LABELS_PER_BOARD),
        about(`The board's labels, by name (case-insensitively), then id; at most ${MAX_LABELS_PER_BOARD}.`),
      ),
    }),
    about('A board with its columns, their cards and its labels.'),
  ),
);
export const tokenResponse = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      token: v.pipe(
        v.string(),
        v.regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
        v.maxLength(MAX_TOKEN_LENGTH),
        about(
          `The Cognito access token (a signed JWT): send it as \`Authorization: Bearer <token>\`. The service refuses tokens longer than ${MAX_TOKEN_LENGTH} characters.`,
        ),
      ),
      token_type: v.pipe(v.literal('Bearer'), about('Always `Bearer`.')),
      expires_in: lifetimeSeconds('Seconds until the access token expires (3600 by default).', 3600),
      refresh_token: v.optional(
        v.pipe(
          v.string(),
          v.regex(/^\S+$/),
          v.maxLength(MAX_TOKEN_LENGTH),
          about("Cognito's refresh token (opaque); kept for clients that talk to Cognito directly."),
        ),
      ),
    }),
    about('An access token for the bearer scheme.'),
  ),
);
export const ticketResponse = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      ticket: v.pipe(
        v.string(),
        v.regex(/^[A-Za-z0-9_-]{43}$/),
        v.length(43),
        about('Single-use: append as `?ticket=<ticket>` to `url`; 256 random bits, base64url.'),
      ),
      url: v.pipe(
        v.string(),
        v.url(),
        v.maxLength(2048),
        about('The WebSocket endpoint (docs/asyncapi.yaml).', 'wss://abc123.execute-api.eu-west-1.amazonaws.com/live'),
      ),
      expires_in: lifetimeSeconds("Seconds the ticket stays usable (60 by default, never past the token's own expiry).", 60),
    }),
    about('A ticket for one live board events socket.'),
  ),
);
export const health = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(v.strictObject({ status: v.literal('ok') }), about('The service answers requests.')),
);
const kinds = /* @__PURE__ */ Object.keys(KINDS) as (keyof typeof KINDS)[];
export const problem = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.looseObject({
      type: v.pipe(v.literal('about:blank'), about('Always `about:blank`: `code` and `status` say what happened.')),
      title: v.pipe(v.picklist([...new Set(kinds.map((kind) => KINDS[kind].title))]), about('The status text of `status`.')),
      status: v.pipe(
        v.number(),
        v.integer(),
        v.minValue(400),
        v.maxValue(599),
        v.metadata({ format: 'int32', description: 'The HTTP status of the answer.', examples: [404] }),
      ),
      detail: v.pipe(
        v.string(),
        v.maxLength(PROBLEM_DETAIL_MAX_LENGTH),
        v.regex(/\S/),
        about('What was wrong, for a person; never a stack trace, AWS error name, table name or key.', 'Card was not found.'),
      ),
      code: v.pipe(
        v.picklist(kinds),
        about('A stable kind to act on (`not_found`, `conflict`, …); `internal` for an unexpected failure (500).', 'not_found'),
      ),
      instance: v.optional(
        v.pipe(
          v.string(),
          v.regex(/^urn:request:\S+$/),
          v.maxLength(256),
          about('`urn:request:<API Gateway request id>`, also in the access log.', 'urn:request:Jx1mYh3YoAMEb2Q='),
        ),
      ),
      errors: v.optional(
        v.pipe(
          v.array(
            v.strictObject({
              path: v.pipe(
                v.string(),
                v.regex(/\S/),
                v.maxLength(256),
                about('Where: `body.<field>` or `path.<parameter>`.', 'body.title'),
              ),
              message: v.pipe(
                v.string(),
                v.regex(/\S/),
                v.maxLength(1024),
                about('What the field must be.', 'must contain a non-whitespace character'),
              ),
            }),
          ),
          v.maxLength(100),
          about('For 400 on an invalid field: one entry per problem found.'),
        ),
      ),
      board_ids: v.optional(
        v.pipe(
          v.array(id("A board of the caller's, to read with GET /boards/{id}.")),
          // Bounded by the 6 MB answer it travels in (an id is 39 bytes with its quotes and comma).
          v.maxLength(160_000),
          about('For 422 `response_too_large` on GET /boards: the boards, newest first.'),
        ),
      ),
      columns: v.optional(
        v.pipe(
          v.array(
            v.strictObject({
              id: id('A column of the board, to read with GET /columns/{id}.'),
              title: titleOut("The column's title."),
              cards: v.pipe(
                v.number(),
                v.integer(),
                v.minValue(0),
                v.maxValue(2_147_483_647),
                v.metadata({ format: 'int32', description: 'How many cards the column has.', examples: [450] }),
              ),
            }),
          ),
          // Bounded by the 6 MB answer it travels in (an entry is at least 60 bytes).
          v.maxLength(100_000),
          about('For 422 `response_too_large` on GET /boards/{id}: the columns, in board order.'),
        ),
      ),
      operation: v.optional(
        v.pipe(
          v.number(),
          v.integer(),
          v.minValue(0),
          v.maxValue(MAX_BATCH_OPERATIONS - 1),
          v.metadata({
            format: 'int32',
            description:
              'For an error of POST /boards/{id}/batch found in one of its operations: that operation (0-based); nothing of the batch was applied.',
            examples: [2],
          }),
        ),
      ),
      card_ids: v.optional(
        v.pipe(
          v.array(id('A card of the column, to read with GET /cards/{id}.')),
          // Bounded by the 6 MB answer it travels in (an id is 39 bytes with its quotes and comma).
          v.maxLength(160_000),
          about('For 422 `response_too_large` on GET /columns/{id}: the cards, in column order.'),
        ),
      ),
    }),
    about(
      'An RFC 9457 problem (`application/problem+json`), the body of every error the service itself answers. Some kinds add fields (a 422 for a board list too large to send lists its `board_ids`, one for a board its `columns`, one for a column its `card_ids`).',
    ),
  ),
);
export const member = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      user_id: id("The member's user id (Cognito `sub`)."),
      email: v.pipe(email(), about("The member's sign-in address.", 'grace@example.com')),
      display_name: v.pipe(
        v.string(),
        wellFormed(),
        characters({ minLength: 1, maxLength: 100 }),
        notBlank(),
        about('The name the member registered with.', 'Grace'),
      ),
      role: role(),
    }),
    about('A member of a board.'),
  ),
);
const memberList = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(v.array(member()), about("The board's members, in the order they joined; not paginated.")),
);

/** An event of a board's log, as watchers received it (its kinds and fields: /asyncapi.json). */
const boardEvent = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.looseObject({
      type: v.pipe(
        v.picklist(BOARD_EVENT_KINDS),
        about('The kind of change (the AsyncAPI document gives each kind its fields).', 'card.moved'),
      ),
      event_id: id("The change's own id: the same on every delivery of it."),
      board_id: id('The board.'),
      actor_id: id('The user who made the change.'),
      occurred_at: timestamp('When the change was written'),
      seq: seqNumber(1, "The change's number on its board: 1, 2, 3, ... with no gap, in the order the changes took effect.", 42),
    }),
    about('A board event exactly as watchers received it, with the fields of its kind.'),
  ),
);
const eventPage = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      events: v.pipe(
        v.array(boardEvent()),
        v.maxLength(MAX_EVENTS_PAGE),
        about(
          'The events with `seq` above `after`, ascending, at most `limit` (fewer may come when they are large: ask again from the last one).',
        ),
      ),
      latest_seq: seqNumber(
        0,
        "The board's latest `seq` (0 for a board with no change yet): read on while the last event's `seq` is below it.",
        42,
      ),
    }),
    about("A page of a board's event log."),
  ),
);

const webhookEntries = () => ({
  id: id('The webhook id.'),
  board_id: id('The board whose events it receives.'),
  url: v.pipe(
    v.string(),
    documented(v.url(), { format: 'uri', minLength: 1, maxLength: WEBHOOK_URL_MAX_LENGTH }),
    about('Where deliveries are POSTed (as normalised by the WHATWG URL parser).', 'https://example.com/hooks/task-board'),
  ),
  events: v.pipe(
    v.array(v.picklist(BOARD_EVENT_KINDS)),
    v.maxLength(BOARD_EVENT_KINDS.length),
    about('The event types delivered; empty: all of them (never `access.revoked`; `webhook.ping` whatever this says).', [
      'card.moved',
    ]),
  ),
  description: v.pipe(v.nullable(webhookDescription()), about('Up to 256 characters, or null.', 'Mirror to the release tracker')),
  active: v.pipe(v.boolean(), about('Whether events are delivered (pings are, either way).', true)),
  disabled_reason: v.pipe(
    v.nullable(v.picklist(['failing', 'creator_not_owner'])),
    about(
      'Why the service switched the webhook off: `failing` (all deliveries failing for 5 days, or 50 failed in a row), or `creator_not_owner` (the user in `created_by` is no longer an owner of the board); null otherwise. PATCH `active: true` by an owner switches it on again.',
    ),
  ),
  created_by: id(
    'The owner the webhook speaks for: who created it, or who last switched it on (PATCH `active: true`). When they stop being an owner of the board, the webhook is switched off (`creator_not_owner`).',
  ),
  created_at: timestamp('When the webhook was created'),
});
const SECRET_TEXT =
  'The signing secret: `whsec_` and the base64 of 32 random bytes (Standard Webhooks). Shown only in this answer: keep it. After a rotation the previous secret also signs for 24 hours (two signatures in `webhook-signature`).';
const webhook = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject(webhookEntries()),
    about('A webhook of a board (its secret is never shown again after creation or rotation).'),
  ),
);
const webhookWithSecret = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      ...webhookEntries(),
      secret: v.pipe(
        v.string(),
        documented(v.regex(/^whsec_[A-Za-z0-9+/]{43}=$/, 'must be a whsec_ secret'), { minLength: 50, maxLength: 50 }),
        about(SECRET_TEXT, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8N2t8jBtWwE='),
      ),
    }),
    about('A webhook with its signing secret: the answer of creation and of rotation only.'),
  ),
);
const webhookList = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(v.array(webhook()), v.maxLength(10), about("The board's webhooks, oldest first (created_at, then id); at most 10.")),
);
const nullableTimestamp = (text: string) => v.pipe(v.nullable(timestamp(text)), about(`${text}; null when unknown.`));
const delivery = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      id: v.pipe(
        v.string(),
        documented(v.regex(/^msg_[A-Za-z0-9_-]{22}$/, 'must be a delivery id'), { minLength: 26, maxLength: 26 }),
        about('The `webhook-id` header: the same on every attempt of this delivery.', 'msg_2KWPBgLlAfxdpx2AI54pPJ'),
      ),
      event_id: id("The delivered event's `event_id`."),
      type: v.pipe(
        v.picklist([...BOARD_EVENT_KINDS, 'webhook.ping']),
        about('The event type (`webhook.ping` for a ping).', 'card.moved'),
      ),
      seq: v.pipe(
        v.nullable(seqNumber(1, "The event's `seq` on its board.", 42)),
        about("The event's `seq` on its board; null for a ping."),
      ),
      status: v.pipe(
        v.picklist(['pending', 'delivered', 'failed']),
        about('`pending` while attempts remain, `delivered` after a 2xx, `failed` when the retries are spent.', 'delivered'),
      ),
      attempts: v.pipe(
        v.number(),
        v.integer(),
        v.minValue(0),
        v.maxValue(1000),
        v.metadata({ format: 'int32', description: 'Attempts made so far.', examples: [1] }),
      ),
      last_attempt_at: nullableTimestamp('When the latest attempt was made'),
      last_status_code: v.pipe(
        v.nullable(
          v.pipe(
            v.number(),
            v.integer(),
            v.minValue(100),
            v.maxValue(599),
            v.metadata({ format: 'int32', description: 'An HTTP status code.', examples: [200] }),
          ),
        ),
        about("The latest attempt's HTTP status; null when it got none.", 200),
      ),
      last_error: v.pipe(
        v.nullable(v.pipe(v.string(), wellFormed(), characters({ maxLength: 256 }))),
        about(
          'Why the latest attempt failed, such as `http_500`, `timeout`, `connection_error` or `forbidden_address`; null after a success or before any attempt.',
          'timeout',
        ),
      ),
      next_attempt_at: nullableTimestamp('When the next attempt is due (pending deliveries)'),
    }),
    about('A delivery of one event to the webhook.'),
  ),
);
const deliveryList = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.array(delivery()),
    v.maxLength(MAX_DELIVERIES_PAGE),
    about("The webhook's deliveries, newest first (by the event's time), at most `limit`; kept at least 7 days."),
  ),
);

export const account = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      id: id('The user id (Cognito `sub`).'),
      email: v.pipe(email(), about('The sign-in address.', 'ada@example.com')),
      display_name: v.pipe(
        v.string(),
        wellFormed(),
        characters({ minLength: 1, maxLength: 100 }),
        notBlank(),
        about('The name the account registered with.', 'Ada'),
      ),
      email_verified: v.pipe(
        v.boolean(),
        about('Whether the address is proven (a mailed code came back); only such accounts can be added to boards by email.'),
      ),
    }),
    about("The caller's account."),
  ),
);

const batchResult = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      results: v.pipe(
        v.array(v.nullable(v.union([column(), card()]))),
        v.minLength(1),
        v.maxLength(MAX_BATCH_OPERATIONS),
        about(
          'One entry per operation, in order: the body its single route answers (a Column for `column.create`, a Card for the card operations), null for `card.delete`.',
        ),
      ),
    }),
    about('What a batch did: every operation was applied.'),
  ),
);
/** What each scope allows (docs/tokens.md); the OpenAPI document says the same per operation. */
const SCOPES_TEXT =
  '`boards:read`: every GET under /boards, /columns, /cards, /labels and /comments but the webhook routes, and socket tickets; `boards:write`: every other route under those paths (POST /boards only without `board_ids`); `webhooks:admin`: the webhook routes.';
const tokenScopes = (description: string) =>
  v.pipe(
    v.array(v.picklist(PERSONAL_TOKEN_SCOPES)),
    v.minLength(1),
    v.maxLength(PERSONAL_TOKEN_SCOPES.length),
    documented(
      v.check((scopes: PersonalTokenScope[]) => new Set(scopes).size === scopes.length, 'must not name a scope twice'),
      { uniqueItems: true },
    ),
    about(description, ['boards:read', 'boards:write']),
  );
const tokenName = (description: string) =>
  v.pipe(v.string(), wellFormed(), characters({ minLength: 1, maxLength: 100 }), about(description, 'CI: file release cards'));

export const createPersonalTokenBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    name: tokenName('What the token is for: 1 to 100 characters.'),
    scopes: tokenScopes(`What the token may do, at least one of: ${SCOPES_TEXT}`),
    expires_in_days: v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(MAX_PERSONAL_TOKEN_DAYS),
      v.metadata({
        format: 'int32',
        description: `Days until the token expires: 1 to ${MAX_PERSONAL_TOKEN_DAYS}. There is no token without an expiry.`,
        examples: [30],
      }),
    ),
    board_ids: v.pipe(
      v.nullish(
        v.pipe(
          v.array(uuid()),
          v.minLength(1),
          v.maxLength(MAX_PERSONAL_TOKEN_BOARDS),
          documented(
            v.check((ids: string[]) => new Set(ids).size === ids.length, 'must not name a board twice'),
            { uniqueItems: true },
          ),
        ),
      ),
      about(
        `Limits the token to these boards (1 to ${MAX_PERSONAL_TOKEN_BOARDS}), each one the caller is a member of now (400 otherwise); any other board is answered as for a non-member. Null or omitted: every board of the user.`,
      ),
    ),
  }),
);

const personalTokenEntries = () => ({
  id: id('The token id: the only thing about a token that logs and lists name.'),
  name: tokenName('What the token is for.'),
  scopes: tokenScopes(`What the token may do: ${SCOPES_TEXT}`),
  board_ids: v.pipe(
    v.nullable(v.pipe(v.array(id('A board id.')), v.maxLength(MAX_PERSONAL_TOKEN_BOARDS))),
    about('The boards the token is limited to; null: every board of its user.'),
  ),
  created_at: timestamp('When the token was created'),
  expires_at: timestamp('When the token stops being accepted'),
  last_used_at: v.pipe(
    v.nullable(timestamp('The latest use recorded')),
    about('The latest request made with the token, at most 60 s behind; null before the first.'),
  ),
});
const personalToken = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject(personalTokenEntries()),
    about('A personal access token (its text is never shown again after creation).'),
  ),
);
const personalTokenWithText = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.strictObject({
      ...personalTokenEntries(),
      token: v.pipe(
        v.string(),
        documented(v.regex(/^tbp_[0-9A-Za-z]{49}$/, 'must be a personal access token'), {
          minLength: PERSONAL_TOKEN_LENGTH,
          maxLength: PERSONAL_TOKEN_LENGTH,
        }),
        about(
          'The token: `tbp_`, 256 random bits in base62, then a checksum. Shown only in this answer (the service keeps only its hash): send it as `Authorization: Bearer <token>`.',
          'tbp_hetkU3Cw87MjhJMqW8ZGmzHpKY11Uj8HgGWdnihbnnn3QscxF',
        ),
      ),
    }),
    about('A personal access token with its text: the answer of its creation only.'),
  ),
);
const personalTokenList = /* @__PURE__ */ onFirstUse(() =>
  v.pipe(
    v.array(personalToken()),
    v.maxLength(MAX_PERSONAL_TOKENS),
    about(`The caller's personal access tokens, newest first (expired ones too, until deleted); at most ${MAX_PERSONAL_TOKENS}.`),
  ),
);

/**
 * The response schemas a row names as its success body (lib/rows/row.ts `success.schema`): by
 * name, so that only what reads them (the OpenAPI document, the contract tests) bundles them.
 */
export const responseSchemas = {
  health,
  tokenResponse,
  ticketResponse,
  board,
  boardList,
  boardTree,
  column,
  columnWithCards,
  card,
  archivedCardList,
  comment,
  commentPage,
  label,
  labelList,
  member,
  memberList,
  account,
  personalToken,
  personalTokenWithText,
  personalTokenList,
  eventPage,
  batchResult,
  webhook,
  webhookWithSecret,
  webhookList,
  delivery,
  deliveryList,
} satisfies Record<string, Lazy>;
export type ResponseSchemaName = keyof typeof responseSchemas;
