import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Lazy } from '../contract/schemas';
import { checkValue } from '../contract/validation';
import { BadRequest, PayloadTooLarge, UnsupportedMediaType } from '../domain/errors';
import { isCatchAll, type RouteRow } from '../rows/row';
import { conditionsOf } from './conditional';
import type { RouteMiddleware } from './types';

const MAX_BODY_BYTES = 64 * 1024;
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;
const CHARSET_PARAMETER = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;
// Fatal: a byte that is not UTF-8 is a malformed body (400), never a silent U+FFFD in a title or
// a password. The BOM is kept, so that a body starting with one stays invalid JSON, as before.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Path parameters, the Idempotency-Key header, If-Match and If-None-Match (on rows that honour
 * them) and the body, checked against the row's schemas before anything is looked up: size
 * (413), media type (415), JSON object (400), then the schema (400 with every issue); a malformed
 * header is 400 too (lib/http/conditional.ts). The contract's body rules hold for any body sent, so a route that
 * takes none still refuses one that is too large, not JSON or not an object (and ignores the
 * fields of one that is, as every route ignores fields it does not name). The fallback is exempt:
 * an unknown path is 404 and a wrong method 405 whatever the body.
 */
export function parseRequest(row: RouteRow): RouteMiddleware {
  return {
    before: ({ event, context }) => {
      const path = row.params ? (validate(row.params, event.pathParameters ?? {}, 'path') as Record<string, unknown>) : {};
      const query = row.query ? (validate(row.query, event.queryStringParameters ?? {}, 'query') as Record<string, unknown>) : {};
      context.route.params = { ...query, ...path };
      if (row.idempotent) context.route.idempotencyKey = idempotencyKeyOf(event);
      if (row.conditional) context.route.conditions = conditionsOf(event);
      if (isCatchAll(row)) return;
      const raw = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
      if (bytes.length > MAX_BODY_BYTES) throw new PayloadTooLarge(MAX_BODY_BYTES);
      const header = event.headers?.['content-type'] ?? '';
      const contentType = header.split(';')[0]!.trim();
      if (bytes.length > 0 && !JSON_MEDIA_TYPE.test(contentType)) throw new UnsupportedMediaType(contentType);
      if (bytes.length === 0) {
        if (row.body) throw new BadRequest('A JSON object body is required.');
        return;
      }
      // JSON between systems is UTF-8 (RFC 8259 §8.1): a body declared in another charset is not read.
      const charset = CHARSET_PARAMETER.exec(header)?.[1];
      if (charset !== undefined && !/^(?:utf-?8|us-ascii)$/i.test(charset)) {
        throw new UnsupportedMediaType(header.trim(), 'send the JSON in UTF-8 (charset=utf-8, or no charset)');
      }
      let text: string;
      try {
        text = UTF8.decode(bytes);
      } catch {
        throw new BadRequest('The request body is not valid UTF-8.');
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new BadRequest('The request body is not valid JSON.');
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new BadRequest('The request body must be a JSON object.');
      }
      if (row.body) context.route.body = validate(row.body, parsed, 'body');
    },
  };
}

const IDEMPOTENCY_HEADER = 'idempotency-key';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

// Printable ASCII, space included: what a Structured Field string may hold (RFC 8941 §3.3.3).
const KEY_CHARACTERS = /^[\x20-\x7e]+$/;

/**
 * The key of a request, or undefined without the header. The draft sends it as a Structured Field
 * string (`"8e03978e-..."`); many clients send the bare token (as Stripe's API takes it), so
 * both are accepted and mean the same key. Checked with the rest of the request's shape, before
 * any lookup: a malformed key is 400.
 */
function idempotencyKeyOf(event: APIGatewayProxyEventV2): string | undefined {
  const raw = event.headers?.[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  const quoted = /^"((?:[^"\\]|\\["\\])*)"$/.exec(trimmed);
  const key = quoted ? quoted[1]!.replace(/\\(["\\])/g, '$1') : trimmed;
  // A bare key cannot hold what only a quoted one may: a quote, a backslash, or a comma (two
  // Idempotency-Key headers arrive joined by one, and must not pass as a single key).
  const bareButQuoting = !quoted && /["\\,]/.test(key);
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY_CHARACTERS.test(key) || bareButQuoting) {
    throw new BadRequest(
      `Invalid Idempotency-Key header: send one key of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (space included), quoted if it holds a quote, backslash or comma (a UUID is a good key).`,
      [
        {
          path: 'header.Idempotency-Key',
          message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (space included)`,
        },
      ],
    );
  }
  return key;
}

function validate(schema: Lazy, value: unknown, where: 'path' | 'query' | 'body'): unknown {
  const checked = checkValue(schema(), value);
  if ('output' in checked) return checked.output;
  const errors = checked.issues.map(({ path, message }) => ({ path: path ? `${where}.${path}` : where, message }));
  throw new BadRequest(`Invalid request ${where}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
}
