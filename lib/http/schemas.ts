import { en } from 'zod/locales';
import * as z from 'zod/mini';

/**
 * Request and response schemas: the validators of lib/http/parse.ts and the OpenAPI document are
 * both made from these, so the two cannot disagree. Limits are the contract's.
 *
 * zod/mini rather than classic zod, and each schema built on its first use: every function
 * bundles the whole route table, but builds only its own schemas. Classic zod with every schema
 * built at import added 12 ms to each cold start; this adds under 2 ms (docs/performance.md).
 */

// zod/mini ships without messages; English ones make the 400 answers readable.
z.config(en());

/** A schema built when first asked for, then reused for the life of the container. */
export type Lazy<T extends z.ZodMiniType = z.ZodMiniType> = () => T;
function onFirstUse<T extends z.ZodMiniType>(build: () => T): Lazy<T> {
  let built: T | undefined;
  return () => {
    built ??= build();
    return built;
  };
}

const UUID_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Any 8-4-4-4-12 hex id, compared in lower case (ids are issued in lower case). */
const uuid = onFirstUse(() =>
  z.pipe(
    z.string().check(z.regex(UUID_SHAPE, 'must be a UUID')),
    z.transform((id: string) => id.toLowerCase()),
  ),
);

const notBlank = z.refine<string>((s) => s.trim().length > 0, 'must contain a non-whitespace character');
/** A lone surrogate is not Unicode text; DynamoDB would refuse it (as a 500), so it is a 400 here. */
const wellFormed = z.refine<string>((s) => s.isWellFormed(), 'must be well-formed Unicode text');

const title = onFirstUse(() => z.string().check(wellFormed, z.maxLength(256), notBlank));
const description = onFirstUse(() => z.string().check(wellFormed, z.maxLength(16_384)));
const role = onFirstUse(() => z.enum(['owner', 'member']));

export const idParams = onFirstUse(() => z.object({ id: uuid() }));
export const memberParams = onFirstUse(() => z.object({ id: uuid(), user_id: uuid() }));

export const registerBody = onFirstUse(() =>
  z.object({
    email: z.email().check(z.maxLength(254)),
    password: z.string().check(z.minLength(8), z.maxLength(256)),
    display_name: z.string().check(wellFormed, z.minLength(1), z.maxLength(100), notBlank),
  }),
);

export const loginBody = onFirstUse(() =>
  z.object({
    email: z.string().check(z.minLength(1), z.maxLength(254)),
    password: z.string().check(z.minLength(1), z.maxLength(256)),
  }),
);

export const titleBody = onFirstUse(() => z.object({ title: title() }));

export const createCardBody = onFirstUse(() => z.object({ title: title(), description: z.nullish(description()) }));

export const updateCardBody = onFirstUse(() => z.object({ title: z.nullish(title()), description: z.nullish(description()) }));

export const moveCardBody = onFirstUse(() =>
  z.object({ target_column_id: uuid(), before_id: z.nullish(uuid()), after_id: z.nullish(uuid()) }),
);

export const addMemberBody = onFirstUse(() =>
  z.object({ email: z.email().check(z.maxLength(254)), role: z._default(role(), 'member') }),
);
export const changeRoleBody = onFirstUse(() => z.object({ role: role() }));

export const moveColumnBody = onFirstUse(() => z.object({ before_id: z.nullish(uuid()), after_id: z.nullish(uuid()) }));

// Responses (documentation and contract tests).
export const board = onFirstUse(() =>
  z.object({ id: z.uuid(), owner_id: z.string(), title: z.string(), created_at: z.iso.datetime() }),
);
export const boardList = onFirstUse(() => z.array(board()));
export const column = onFirstUse(() => z.object({ id: z.uuid(), board_id: z.uuid(), title: z.string(), position: z.number() }));
export const card = onFirstUse(() =>
  z.object({
    id: z.uuid(),
    column_id: z.uuid(),
    title: z.string(),
    description: z.nullable(z.string()),
    position: z.number(),
    created_at: z.iso.datetime(),
  }),
);
export const columnWithCards = onFirstUse(() => z.extend(column(), { cards: z.array(card()) }));
export const boardTree = onFirstUse(() => z.extend(board(), { columns: z.array(columnWithCards()) }));
export const tokenResponse = onFirstUse(() =>
  z.object({
    token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.int(),
    refresh_token: z.optional(z.string()),
  }),
);
export const health = onFirstUse(() => z.object({ status: z.literal('ok') }));
export const problem = onFirstUse(() =>
  z.looseObject({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    code: z.optional(z.string()),
    instance: z.optional(z.string()),
    errors: z.optional(z.array(z.object({ path: z.string(), message: z.string() }))),
  }),
);
export const member = onFirstUse(() =>
  z.object({ user_id: z.string(), email: z.string(), display_name: z.string(), role: role() }),
);
export const memberList = onFirstUse(() => z.array(member()));
