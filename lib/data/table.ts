/**
 * The single table: its shape, its index and every key builder. CDK (infra/task-board-stack.ts)
 * and the local stack (infra/local) both create the table from `tableDefinition`, so the two can
 * never drift. Nothing here imports the AWS SDK: the CDK app reads it too.
 *
 * Layout (see docs/data-model.md for the access patterns and their costs):
 *   BOARD#<boardId>   #BOARD               the board itself
 *   BOARD#<boardId>   #MEMBER#<userId>     a membership (role); sorts before columns and cards
 *   BOARD#<boardId>   COLUMN#<columnId>    a column
 *   BOARD#<boardId>   CARD#<cardId>        a card; its column and position live in `colpos` (LSI)
 *   USER#<userId>     #PROFILE             email and display name
 *   USER#<userId>     BOARD#<boardId>      the user's side of a membership (lists their boards)
 *   EMAIL#<email>     #EMAIL               email -> user id, makes emails unique
 *   COLUMN#<columnId> #LOOKUP              column id -> board id, and the column's card-create version
 *   CARD#<cardId>     #LOOKUP              card id -> board id (immutable: a card never changes board)
 */

export const PARTITION_KEY = 'pk';
export const SORT_KEY = 'sk';

/** LSI over a board's partition: cards ordered by position inside their column. */
export const COLUMN_POSITION_INDEX = 'byColumnPosition';
export const COLUMN_POSITION_ATTRIBUTE = 'colpos';

/** Plain description of the table, shared by CDK and by the local table creation. */
export const tableDefinition = {
  partitionKey: PARTITION_KEY,
  sortKey: SORT_KEY,
  localSecondaryIndexes: [
    { indexName: COLUMN_POSITION_INDEX, sortKey: COLUMN_POSITION_ATTRIBUTE, projection: 'KEYS_ONLY' as const },
  ],
} as const;

export type ItemKey = { pk: string; sk: string };

const BOARD_SK = '#BOARD';
const MEMBER_PREFIX = '#MEMBER#';
const LOOKUP_SK = '#LOOKUP';

export const keys = {
  boardPartition: (boardId: string) => `BOARD#${boardId}`,
  board: (boardId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: BOARD_SK }),
  member: (boardId: string, userId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `${MEMBER_PREFIX}${userId}` }),
  memberPrefix: MEMBER_PREFIX,
  column: (boardId: string, columnId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `COLUMN#${columnId}` }),
  columnPrefix: 'COLUMN#',
  card: (boardId: string, cardId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `CARD#${cardId}` }),
  cardPrefix: 'CARD#',
  userPartition: (userId: string) => `USER#${userId}`,
  userProfile: (userId: string): ItemKey => ({ pk: `USER#${userId}`, sk: '#PROFILE' }),
  userBoard: (userId: string, boardId: string): ItemKey => ({ pk: `USER#${userId}`, sk: `BOARD#${boardId}` }),
  userBoardPrefix: 'BOARD#',
  email: (email: string): ItemKey => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: '#EMAIL' }),
  columnLookup: (columnId: string): ItemKey => ({ pk: `COLUMN#${columnId}`, sk: LOOKUP_SK }),
  cardLookup: (cardId: string): ItemKey => ({ pk: `CARD#${cardId}`, sk: LOOKUP_SK }),
};

/**
 * Order-preserving string form of a float, so that the LSI sorts cards by numeric position:
 * IEEE 754 bits, sign bit flipped for non-negative numbers and every bit inverted for negative
 * ones, written as 16 hex digits.
 */
export function encodePosition(position: number): string {
  if (!Number.isFinite(position)) throw new RangeError(`position must be finite, got ${position}`);
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleBE(position === 0 ? 0 : position);
  if (bytes[0]! & 0x80) {
    for (let i = 0; i < 8; i++) bytes[i] = ~bytes[i]! & 0xff;
  } else {
    bytes[0] = bytes[0]! | 0x80;
  }
  return bytes.toString('hex');
}

export function decodePosition(encoded: string): number {
  const bytes = Buffer.from(encoded, 'hex');
  if (bytes.length !== 8) throw new RangeError(`not an encoded position: ${encoded}`);
  if (bytes[0]! & 0x80) {
    bytes[0] = bytes[0]! & 0x7f;
  } else {
    for (let i = 0; i < 8; i++) bytes[i] = ~bytes[i]! & 0xff;
  }
  return bytes.readDoubleBE();
}

export const columnPositionKey = (columnId: string, position: number) => `${columnId}#${encodePosition(position)}`;
export const columnPositionPrefix = (columnId: string) => `${columnId}#`;
