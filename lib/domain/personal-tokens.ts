import { createHash, randomBytes } from 'node:crypto';

/**
 * Personal access tokens (docs/tokens.md): what a token looks like and what it may be given. Pure
 * rules: the data layer stores the tokens, lib/http/personal-token.ts checks them on a request.
 *
 * A token is `tbp_`, then 43 base62 characters carrying 32 random bytes (256 bits), then 6 base62
 * characters of a checksum of everything before them (the first 4 bytes of its SHA-256). The prefix
 * tells a personal token from a Cognito access token before anything is verified, and lets secret
 * scanners find leaked ones; the checksum lets a mistyped or made-up token be refused without a
 * table read.
 */
const PERSONAL_TOKEN_PREFIX = 'tbp_';
export const PERSONAL_TOKEN_SCOPES = ['boards:read', 'boards:write', 'webhooks:admin'] as const;
export type PersonalTokenScope = (typeof PERSONAL_TOKEN_SCOPES)[number];

/** Tokens one user may hold at once. */
export const MAX_PERSONAL_TOKENS = 20;
/** Boards one token may be limited to. */
export const MAX_PERSONAL_TOKEN_BOARDS = 50;
/** A token lives 1 to 365 days: there is none without an expiry. */
export const MAX_PERSONAL_TOKEN_DAYS = 365;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_BYTES = 32;
/** 62^43 > 2^256: 43 characters hold any 32 bytes. */
const SECRET_CHARACTERS = 43;
const CHECKSUM_BYTES = 4;
/** 62^6 > 2^32. */
const CHECKSUM_CHARACTERS = 6;
export const PERSONAL_TOKEN_LENGTH = PERSONAL_TOKEN_PREFIX.length + SECRET_CHARACTERS + CHECKSUM_CHARACTERS;
/** The prefix, then SECRET_CHARACTERS + CHECKSUM_CHARACTERS base62 characters (a literal: nothing built at load). */
const SHAPE = /^tbp_[0-9A-Za-z]{49}$/;

/** Bytes as a fixed number of base62 characters (most significant first, zero-padded). */
function base62(bytes: Buffer, characters: number): string {
  let value = BigInt(`0x${bytes.toString('hex') || '0'}`);
  let text = '';
  for (let i = 0; i < characters; i++) {
    text = ALPHABET[Number(value % 62n)]! + text;
    value /= 62n;
  }
  return text;
}

const checksumOf = (body: string) =>
  base62(createHash('sha256').update(body).digest().subarray(0, CHECKSUM_BYTES), CHECKSUM_CHARACTERS);

/** A new token's text: shown to its owner once, never stored. */
export function newPersonalTokenText(): string {
  const body = PERSONAL_TOKEN_PREFIX + base62(randomBytes(SECRET_BYTES), SECRET_CHARACTERS);
  return body + checksumOf(body);
}

/** A bearer credential that claims to be a personal token (the rest of it is not looked at). */
export const isPersonalTokenText = (token: string) => token.startsWith(PERSONAL_TOKEN_PREFIX);

/** Shape and checksum: false for a token that cannot have been issued, known without any read. */
export function isWellFormedPersonalToken(token: string): boolean {
  if (token.length !== PERSONAL_TOKEN_LENGTH || !SHAPE.test(token)) return false;
  const body = token.slice(0, -CHECKSUM_CHARACTERS);
  return checksumOf(body) === token.slice(-CHECKSUM_CHARACTERS);
}

/**
 * What a personal token's caller may do besides acting as its user: its id (the only thing about it
 * a log may name), scopes and, when set, the boards it is limited to.
 */
export interface PersonalTokenGrant {
  tokenId: string;
  scopes: readonly PersonalTokenScope[];
  /** The boards the token reaches; null: every board of its user. */
  boardIds: readonly string[] | null;
}

/** Whether a board is within a token's boards (always, for a session token or an unlimited one). */
export const reachesBoard = (grant: PersonalTokenGrant | undefined, boardId: string) =>
  !grant?.boardIds || grant.boardIds.includes(boardId);
