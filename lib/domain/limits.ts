/**
 * The service's caps, in one place: the data layer and the verifier enforce them, the schemas
 * (and so the OpenAPI and AsyncAPI documents) state them. Pure constants, so that a bundle
 * importing one loads no client.
 */

/** Labels one board may have (each costs a read in every card answer's label lookup). */
export const MAX_LABELS_PER_BOARD = 100;
/** Labels one card may carry. */
export const MAX_LABELS_PER_CARD = 20;
/** The longest access token accepted (a Cognito access token is about 1 KB; this bounds the work a forged one can cause). */
export const MAX_TOKEN_LENGTH = 8192;
/** Boards one socket may watch at once (realtime contract). */
export const MAX_WATCHES_PER_SOCKET = 20;
/** The longest card description, in characters. */
export const MAX_DESCRIPTION_LENGTH = 16_384;
/** Digits of a log item's `seq` in its sort key (zero-padded, so that keys sort as numbers). */
export const SEQ_DIGITS = 15;
/** The highest `seq` a board's log holds: the largest number of SEQ_DIGITS digits. */
export const MAX_SEQ = 10 ** SEQ_DIGITS - 1;
/** Tries of one mailed code (address verification, or one address's password reset) before it is void. */
export const MAX_CODE_TRIES = 5;
/** Members one card may have as assignees. */
export const MAX_ASSIGNEES_PER_CARD = 10;
/** The longest comment body, in characters. */
export const MAX_COMMENT_LENGTH = 4096;
/** The most comments one page of a card's comments holds, and how many when the client does not say. */
export const MAX_COMMENTS_PAGE = 100;
export const DEFAULT_COMMENTS_PAGE = 50;
/** The longest text filter (`q`) of a board's tree, in characters. */
export const MAX_TREE_QUERY_LENGTH = 256;
/** Operations one batch (POST /boards/{id}/batch) may hold. */
export const MAX_BATCH_OPERATIONS = 25;
/** The longest `ref` a batch's operation may name what it creates by, in characters. */
export const MAX_BATCH_REF_LENGTH = 64;
