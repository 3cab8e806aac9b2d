import type { RouteRow } from './row';

/** The catch-all: API Gateway's `$default` route (unknown paths and wrong methods). */

export const fallback = {
  id: 'fallback',
  method: 'ANY',
  path: '$default',
  entry: 'functions/fallback.ts',
  group: 'service',
  logGroup: 'root',
  summary: 'Unknown path (404) or known path with another method (405)',
  access: { scope: 'public' },
  success: { status: 404 },
  table: [],
  cognito: [],
} satisfies RouteRow;
