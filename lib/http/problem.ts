import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { asDomainError } from '../data/sdk-errors';
import { type ErrorKind, MethodNotAllowed, Unauthorized } from '../domain/errors';

/** The one place where an error becomes an HTTP answer (RFC 9457 problem+json). */
export const KINDS: Record<ErrorKind | 'internal', { status: number; title: string }> = {
  bad_request: { status: 400, title: 'Bad Request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  conflict: { status: 409, title: 'Conflict' },
  limit_reached: { status: 409, title: 'Conflict' },
  payload_too_large: { status: 413, title: 'Content Too Large' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type' },
  response_too_large: { status: 422, title: 'Unprocessable Content' },
  idempotency_key_reused: { status: 422, title: 'Unprocessable Content' },
  idempotency_key_in_use: { status: 409, title: 'Conflict' },
  unavailable: { status: 503, title: 'Service Unavailable' },
  internal: { status: 500, title: 'Internal Server Error' },
};

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function problemResponse(error: unknown, requestId?: string): APIGatewayProxyStructuredResultV2 {
  const known = asDomainError(error);
  const kind = known?.kind ?? 'internal';
  const { status, title } = KINDS[kind];
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE };
  if (known instanceof Unauthorized) {
    headers['www-authenticate'] = known.tokenPresented ? 'Bearer error="invalid_token"' : 'Bearer';
  }
  if (known instanceof MethodNotAllowed) headers.allow = known.allow.join(', ');
  // Errors that say when to come back (storage busy, an Idempotency-Key in use) carry the seconds.
  const retryAfter = (known as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  if (typeof retryAfter === 'number') headers['retry-after'] = String(retryAfter);
  const body = {
    type: 'about:blank',
    title,
    status,
    detail: known?.detail ?? 'Something went wrong on our side. It has been logged; retry later.',
    code: kind,
    ...(known?.extra ?? {}),
    ...(requestId ? { instance: `urn:request:${requestId}` } : {}),
  };
  return { statusCode: status, headers, body: JSON.stringify(body) };
}
