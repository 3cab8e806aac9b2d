import * as z from 'zod';

/**
 * Request and response schemas: the validators of lib/http/parse.ts and (later) the OpenAPI
 * document are both made from these, so the two cannot disagree. Limits are the contract's.
 */

const UUID_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Any 8-4-4-4-12 hex id, compared in lower case (ids are issued in lower case). */
export const uuid = z
  .string()
  .regex(UUID_SHAPE, 'must be a UUID')
  .transform((id) => id.toLowerCase());

const notBlank = (s: string) => s.trim().length > 0;
/** A lone surrogate is not Unicode text; DynamoDB would refuse it (as a 500), so it is a 400 here. */
const text = () => z.string().refine((s) => s.isWellFormed(), 'must be well-formed Unicode text');

export const title = text().max(256).refine(notBlank, 'must contain a non-whitespace character');
export const description = text().max(16_384);

export const idParams = z.object({ id: uuid });
export const memberParams = z.object({ id: uuid, user_id: uuid });

export const registerBody = z.object({
  email: z.email().max(254),
  password: z.string().min(8).max(256),
  display_name: text().min(1).max(100).refine(notBlank, 'must contain a non-whitespace character'),
});

export const loginBody = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(256),
});

export const titleBody = z.object({ title });

export const createCardBody = z.object({
  title,
  description: description.nullish(),
});

export const updateCardBody = z.object({
  title: title.nullish(),
  description: description.nullish(),
});

export const moveCardBody = z.object({
  target_column_id: uuid,
  before_id: uuid.nullish(),
  after_id: uuid.nullish(),
});

export const role = z.enum(['owner', 'member']);
export const addMemberBody = z.object({ email: z.email().max(254), role: role.default('member') });
export const changeRoleBody = z.object({ role });

export const moveColumnBody = z.object({
  before_id: uuid.nullish(),
  after_id: uuid.nullish(),
});

// Responses (documentation and contract tests).
const timestamp = z.iso.datetime();
export const board = z.object({ id: z.uuid(), owner_id: z.string(), title: z.string(), created_at: timestamp });
export const column = z.object({ id: z.uuid(), board_id: z.uuid(), title: z.string(), position: z.number() });
export const card = z.object({
  id: z.uuid(),
  column_id: z.uuid(),
  title: z.string(),
  description: z.string().nullable(),
  position: z.number(),
  created_at: timestamp,
});
export const boardTree = board.extend({ columns: z.array(column.extend({ cards: z.array(card) })) });
export const tokenResponse = z.object({
  token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string().optional(),
});
export const health = z.object({ status: z.literal('ok') });
export const problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().optional(),
    instance: z.string().optional(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .loose();
export const member = z.object({ user_id: z.string(), email: z.string(), display_name: z.string(), role });
export const columnWithCards = column.extend({ cards: z.array(card) });
