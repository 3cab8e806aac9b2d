import type { RouteRow } from './row';
import type { RouteText } from './text';

/** Liveness of the service (in the `service` stack group, with the documents and the catch-all). */

export const health = {
  id: 'health',
  method: 'GET',
  path: '/health',
  entry: 'functions/health.ts',
  group: 'service',
  logGroup: 'root',
  summary: 'Liveness of the service',
  access: { scope: 'public' },
  success: { status: 200, schema: 'health' },
  table: [],
  cognito: [],
} satisfies RouteRow;

export const healthText = {
  of: health,
  tag: 'health',
  description:
    'Answers `{"status": "ok"}` while the service runs. No token; touches no storage. `HEAD /health` answers 200 without a body, for uptime checks.',
} satisfies RouteText;
