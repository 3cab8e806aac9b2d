import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { EntityTags } from '../data/etags';
import { BadRequest } from '../domain/errors';

/**
 * `If-Match` and `If-None-Match` (RFC 9110 §13.1): `*`, or the entity tags listed, each as sent
 * (`"…"` or `W/"…"`). Parsed with the rest of the request's shape, before anything is looked up.
 */

export interface Conditions {
  ifMatch?: EntityTags;
  ifNoneMatch?: EntityTags;
}

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; etagc = %x21 / %x23-7E / obs-text (RFC 9110 §8.8.3).
const ENTITY_TAG = /^(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

/**
 * One header's value: `*` alone, or a comma-separated list of entity tags (empty elements are
 * skipped, as RFC 9110 §5.6.1 asks of a recipient); anything else is 400, naming the header.
 * Two headers of one name arrive joined by a comma, which is still a list.
 */
export function parseEntityTags(name: 'If-Match' | 'If-None-Match', value: string): EntityTags {
  const trimmed = value.trim();
  if (trimmed === '*') return '*';
  // A comma inside a tag is not an etagc, so splitting on commas never cuts a valid tag.
  const tags = trimmed
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  if (tags.length === 0 || !tags.every((tag) => ENTITY_TAG.test(tag))) {
    throw new BadRequest(
      `Invalid ${name} header: send * or a comma-separated list of entity tags, each in double quotes as an ETag header gave it (e.g. "abc", or W/"abc").`,
      [{ path: `header.${name}`, message: 'must be * or a comma-separated list of entity tags' }],
    );
  }
  return tags;
}

/** The conditions a request carries; a row that takes none never reads these headers. */
export function conditionsOf(event: APIGatewayProxyEventV2): Conditions {
  const ifMatch = event.headers?.['if-match'];
  const ifNoneMatch = event.headers?.['if-none-match'];
  return {
    ...(ifMatch !== undefined ? { ifMatch: parseEntityTags('If-Match', ifMatch) } : {}),
    ...(ifNoneMatch !== undefined ? { ifNoneMatch: parseEntityTags('If-None-Match', ifNoneMatch) } : {}),
  };
}

/**
 * `If-Match`: strong comparison. `*` matches any current state; a weak tag never matches, since a
 * write may go ahead only on exactly the state the client read.
 */
export const matchesStrongly = (tags: EntityTags, current: string) => tags === '*' || tags.includes(current);

/**
 * `If-None-Match`: weak comparison (RFC 9110 §13.1.2): `W/"x"` names the same state as `"x"` for a
 * re-read, which only decides whether the body is sent again.
 */
export const matchesWeakly = (tags: EntityTags, current: string) =>
  tags === '*' || tags.some((tag) => (tag.startsWith('W/') ? tag.slice(2) : tag) === current);
