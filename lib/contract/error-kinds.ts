import type { ErrorKind } from '../domain/errors';

/**
 * Each error kind's HTTP status and title: the status table of the API contract. lib/http/problem.ts
 * answers by it, and the Problem schema (lib/contract/schemas.ts) and the OpenAPI document state it.
 */
export const KINDS: Record<ErrorKind | 'internal', { status: number; title: string }> = {
  bad_request: { status: 400, title: 'Bad Request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  insufficient_scope: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  conflict: { status: 409, title: 'Conflict' },
  limit_reached: { status: 409, title: 'Conflict' },
  not_a_member: { status: 409, title: 'Conflict' },
  archived: { status: 409, title: 'Conflict' },
  precondition_failed: { status: 412, title: 'Precondition Failed' },
  payload_too_large: { status: 413, title: 'Content Too Large' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type' },
  response_too_large: { status: 422, title: 'Unprocessable Content' },
  idempotency_key_reused: { status: 422, title: 'Unprocessable Content' },
  idempotency_key_in_use: { status: 409, title: 'Conflict' },
  invalid_code: { status: 400, title: 'Bad Request' },
  wrong_password: { status: 403, title: 'Forbidden' },
  resync_required: { status: 410, title: 'Gone' },
  unavailable: { status: 503, title: 'Service Unavailable' },
  internal: { status: 500, title: 'Internal Server Error' },
};
