/**
 * Typed domain errors. lib/http/problem.ts maps each kind (lib/socket/chain.ts to an `error` frame) to one problem+json answer; nothing
 * else decides a status code, and a raw error is never serialised.
 */
export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'insufficient_scope'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'limit_reached'
  | 'not_a_member'
  | 'archived'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'response_too_large'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_use'
  | 'invalid_code'
  | 'wrong_password'
  | 'resync_required'
  | 'precondition_failed'
  | 'unavailable';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = 'DomainError';
  }
}

export class BadRequest extends DomainError {
  constructor(
    detail: string,
    readonly errors?: { path: string; message: string }[],
  ) {
    super('bad_request', detail, errors ? { errors } : {});
  }
}

export class Unauthorized extends DomainError {
  /** `tokenPresented` decides whether WWW-Authenticate carries error="invalid_token" (RFC 6750). */
  constructor(
    detail: string,
    readonly tokenPresented: boolean,
  ) {
    super('unauthorized', detail);
  }
}

export class Forbidden extends DomainError {
  constructor(detail = 'You are not allowed to do this on this board.') {
    super('forbidden', detail);
  }
}

/**
 * A personal access token presented where its scopes do not reach (RFC 6750 `insufficient_scope`):
 * `scope` is the one scope that would allow the route, absent where no personal token may be used.
 */
export class InsufficientScope extends DomainError {
  constructor(readonly scope: string | undefined) {
    super(
      'insufficient_scope',
      scope
        ? `This personal access token lacks the scope this route needs: ${scope}.`
        : 'A personal access token cannot be used here; use a session access token.',
    );
  }
}

export class NotFound extends DomainError {
  constructor(what: string) {
    super('not_found', `${what} was not found.`);
  }
}

export class MethodNotAllowed extends DomainError {
  constructor(readonly allow: string[]) {
    super('method_not_allowed', `This path accepts only ${allow.join(', ')}.`);
  }
}

export class Conflict extends DomainError {
  constructor(detail: string) {
    super('conflict', detail);
  }
}

/** A user named in the request is not a member of the board (an assignee must be one). */
export class NotAMember extends DomainError {
  constructor(detail = 'This user is not a member of the board: only members can be assigned.') {
    super('not_a_member', detail);
  }
}

/** A change an archived card cannot take (a move): 409 until it is restored. */
export class Archived extends DomainError {
  constructor(detail: string) {
    super('archived', detail);
  }
}

/** A cap of the service (lib/domain/limits.ts) reached: 409 over HTTP, `limit` on a socket. */
export class LimitReached extends DomainError {
  constructor(detail: string) {
    super('limit_reached', detail);
  }
}

export class PayloadTooLarge extends DomainError {
  constructor(limitBytes: number) {
    super('payload_too_large', `The request body is larger than ${limitBytes} bytes.`);
  }
}

export class UnsupportedMediaType extends DomainError {
  constructor(contentType: string, remedy = 'send application/json') {
    super('unsupported_media_type', `Content-Type ${JSON.stringify(contentType)} is not supported; ${remedy}.`);
  }
}

/**
 * An `If-Match` that names none of the card's current entity tags: nothing was written. `etag`
 * is the current one, sent back as the answer's `ETag` so that the client can re-read and retry.
 */
export class PreconditionFailed extends DomainError {
  constructor(readonly etag: string) {
    super(
      'precondition_failed',
      'The card changed since the If-Match entity tag was read: nothing was written. Read it again (its current ETag is in this answer) and retry on that.',
    );
  }
}

/** Storage or identity provider throttled or unreachable after the SDK's own retries. */
export class Unavailable extends DomainError {
  constructor(
    detail: string,
    readonly retryAfterSeconds = 1,
  ) {
    super('unavailable', detail);
  }
}

/**
 * What was asked for exists but is too large to send in one answer (AWS Lambda answers at most
 * 6 MB); `extra` says how to read it in parts.
 */
export class ResponseTooLarge extends DomainError {
  constructor(detail: string, extra: Record<string, unknown> = {}) {
    super('response_too_large', detail, extra);
  }
}

/** An Idempotency-Key sent again with a different request (another body, path or operation). */
export class IdempotencyKeyReused extends DomainError {
  constructor() {
    super(
      'idempotency_key_reused',
      'This Idempotency-Key was already used for a different request (another body, path or operation). Use a new key for a new request.',
    );
  }
}

/** The first request with this Idempotency-Key has not answered yet. */
export class IdempotencyKeyInUse extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still in progress; retry after it has answered to get its answer.',
    );
  }
}

/** A verification or reset code that is wrong, expired or already used (lib/auth/cognito.ts). */
export class InvalidCode extends DomainError {
  constructor() {
    super('invalid_code', 'The code is wrong, expired or already used; request a new one.');
  }
}

/** The password that must confirm a change or a deletion is not the account's. */
export class WrongPassword extends DomainError {
  constructor(detail = 'The password is wrong.') {
    super('wrong_password', detail);
  }
}

/**
 * The first event after the client's `seq` is no longer kept (realtime.md): it must read the
 * board's tree again and go on from the tree's `seq`.
 */
export class ResyncRequired extends DomainError {
  constructor(detail: string) {
    super('resync_required', detail);
  }
}
