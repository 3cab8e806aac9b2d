import type { KINDS } from '../contract/error-kinds';
import type { RouteRow } from './row';

/**
 * The OpenAPI tags, each with its description, in the order the document lists them. A route's
 * text names its tag by one of these keys, so a misspelt or unlisted tag does not compile.
 */
export const TAGS = {
  health: 'Liveness',
  openapi: 'This API description',
  asyncapi: 'The live events protocol description',
  docs: 'This API as an interactive reference page in the browser',
  auth: 'Registration and login (Cognito access tokens)',
  boards: 'Boards, the unit of access: every other resource belongs to one',
  columns: 'Ordered columns of a board',
  cards: 'Ordered cards of a column, and their labels',
  comments: 'Comments on a card, in the order written',
  members: "A board's members and their roles",
  labels: "A board's labels",
  realtime: 'Tickets for the live board events socket',
  webhooks: "A board's events delivered to other systems over signed HTTP",
} as const;
type Tag = keyof typeof TAGS;

/** The example of one of a route's own error answers, where the status's generic one would mislead. */
export interface ProblemExample {
  code: keyof typeof KINDS;
  detail: string;
  /** Fields the kind adds (a 422's `board_ids`, `columns` or `card_ids`). */
  extra?: Record<string, unknown>;
}

/** How the document describes one query parameter: its bounds are those its query schema checks. */
interface QueryParameterText {
  description: string;
  schema: Record<string, unknown>;
  /** A number, or a string for a parameter that is one (a comment id to start after). */
  example: number | string;
}

/**
 * What the OpenAPI document says of a route beyond what its row states: declared beside the row,
 * in the row's own module, as an export of its own that points at the row (`of`). Nothing points
 * back from the row, so a function's bundle, which imports only its row, leaves every text out
 * (test/infra/bundle-growth.test.ts); lib/routes.ts collects them for the document. Every served
 * row must have one: lib/routes.ts does not compile without, and test/unit/route-table.test.ts
 * checks that none is empty.
 */
export interface RouteText<Row extends RouteRow = RouteRow> {
  of: Row;
  tag: Tag;
  /** What the operation does beyond its summary: ordering, side effects, rules a client must know. */
  description: string;
  /**
   * Examples of the route's own error answers, by status (each one of its documented statuses),
   * made when the document is: some name other rows, whose modules may still be loading when
   * this one is, and a text that computes nothing leaves every bundle (esbuild keeps what may
   * have side effects, a template literal's substitutions included).
   */
  problems?: () => Partial<Record<number, ProblemExample>>;
  /**
   * Each query parameter of the row's `query` schema, by name, made when the document is: its
   * bounds are the schema's constants, and a text that computes nothing leaves every bundle.
   */
  query?: () => Record<string, QueryParameterText>;
}
