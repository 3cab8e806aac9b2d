import type { FunctionRow } from '../lib/routes';

/**
 * Where each row's resources live (docs/infrastructure.md). The root stack holds what must never
 * move: the data, both APIs with their stages and every route, the log groups that already hold
 * logs, the stream consumers, the dashboard and the alarm topic. Every other function, with its
 * role, invoke permission, API integration and its group's alarms, lives in a nested stack of its
 * group, so that the root grows by one route a row and each group's stack by five resources a row.
 * Each row says where it goes (its `group` and `logGroup`, lib/rows/row.ts); this module reads them.
 */

/**
 * A row's group: its own `group` (lib/rows/row.ts: the service's rows and the live events' rows
 * share one stack each), else the first segment of its id (`cards.labels.attach` → `cards`). A
 * new first segment (`accounts`, `webhooks`) gets a stack of its own; a row never changes group
 * unless its id or its `group` does, so adding rows never moves an existing function.
 */
export const groupOf = (row: Pick<FunctionRow, 'id' | 'group'>): string => row.group ?? row.id.split('.')[0]!;

/** Construct id of a group's nested stack: `cards` → `CardsFunctions`. */
export const groupStackIdOf = (group: string) => `${group[0]!.toUpperCase()}${group.slice(1)}Functions`;

/**
 * An alarm on metric math reads at most 10 metrics (CloudWatch's hard limit), so a group's
 * errors (or throttles) alarm covers at most this many functions; a larger group has several.
 */
export const FUNCTIONS_PER_ALARM = 10;
