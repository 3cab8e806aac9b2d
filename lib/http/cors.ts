/**
 * What a browser on another origin may send and read (CORS), for the stage's preflight answers
 * (infra/task-board-stack.ts) and the local server alike. Without `idempotency-key` here a web
 * client could not make a POST safe to retry; without the exposed headers its script could not
 * see a replay, a wait, a token refusal or its rate-limit quota (`ratelimit-policy`, `ratelimit`).
 * Conditional requests need both directions: `etag` read from an answer, sent back in `if-match`
 * (an edit that must not overwrite another) or `if-none-match` (a re-read that may be a 304).
 */
export const CORS_ALLOW_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'if-match', 'if-none-match'];
export const CORS_EXPOSE_HEADERS = [
  'idempotent-replayed',
  'retry-after',
  'www-authenticate',
  'allow',
  'ratelimit-policy',
  'ratelimit',
  'etag',
];
