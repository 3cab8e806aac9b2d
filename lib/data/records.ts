/**
 * Stored records and the public shapes of the spec. Items carry internal attributes (keys, index
 * attributes, versions); the `to*` views pick exactly the spec's fields, so nothing internal leaks.
 */
export type Role = 'owner' | 'member';

export interface BoardRecord {
  id: string;
  owner_id: string;
  title: string;
  created_at: string;
  /** Bumped by every column create; a create commits only if nobody else created one meanwhile. */
  column_version?: number;
  /** Owners on the board; kept in the same transaction as every role change, never below 1. */
  owner_count?: number;
  /** Columns whose deletion has begun: their cards are already gone for every route. */
  deleting_columns?: Set<string>;
}

export interface MemberRecord {
  board_id: string;
  user_id: string;
  role: Role;
  joined_at: string;
}

export interface ColumnRecord {
  id: string;
  board_id: string;
  title: string;
  position: number;
  created_at: string;
}

export interface CardRecord {
  id: string;
  board_id: string;
  column_id: string;
  title: string;
  description: string | null;
  position: number;
  created_at: string;
}

export interface ColumnLookup {
  board_id: string;
  /** Bumped by every card create in the column: see lib/data/cards.ts for why it lives here. */
  card_version: number;
}

export interface CardLookup {
  board_id: string;
}

export interface Member {
  user_id: string;
  email: string;
  display_name: string;
  role: Role;
}

export type Board = Pick<BoardRecord, 'id' | 'owner_id' | 'title' | 'created_at'>;
export type Column = Pick<ColumnRecord, 'id' | 'board_id' | 'title' | 'position'>;
export type Card = Pick<CardRecord, 'id' | 'column_id' | 'title' | 'description' | 'position' | 'created_at'>;
export type ColumnWithCards = Column & { cards: Card[] };
export type BoardTree = Board & { columns: ColumnWithCards[] };

export const toBoard = (r: BoardRecord): Board => ({
  id: r.id,
  owner_id: r.owner_id,
  title: r.title,
  created_at: r.created_at,
});

export const toColumn = (r: ColumnRecord): Column => ({
  id: r.id,
  board_id: r.board_id,
  title: r.title,
  position: r.position,
});

export const toCard = (r: CardRecord): Card => ({
  id: r.id,
  column_id: r.column_id,
  title: r.title,
  description: r.description ?? null,
  position: r.position,
  created_at: r.created_at,
});

/** Millisecond ISO 8601 UTC with `Z`, as the contract fixes. */
export const now = () => new Date().toISOString();
