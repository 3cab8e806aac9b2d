import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { KINDS } from '../contract/error-kinds';
import { asDomainError } from '../data/sdk-errors';
import { InsufficientScope, MethodNotAllowed, PreconditionFailed, Unauthorized } from '../domain/errors';

/** The one place where an error becomes an HTTP answer (RFC 9457 problem+json), by lib/contract/error-kinds.ts. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function problemResponse(error: unknown, requestId?: string): APIGatewayProxyStructuredResultV2 {
  const known = asDomainError(error);
  const kind = known?.kind ?? 'internal';
  const { status, title } = KINDS[kind];
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE };
  if (known instanceof Unauthorized) {
    headers['www-authenticate'] = known.tokenPresented ? 'Bearer error="invalid_token"' : 'Bearer';
  }
  // RFC 6750 section 3: the scope that would allow the request, where one would.
  if (known instanceof InsufficientScope) {
    headers['www-authenticate'] = `Bearer error="insufficient_scope"${known.scope ? `, scope="${known.scope}"` : ''}`;
  }
  if (known instanceof MethodNotAllowed) headers.allow = known.allow.join(', ');
  // A refused If-Match names the state to re-read: the card's current entity tag.
  if (known instanceof PreconditionFailed) headers.etag = known.etag;
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
