import type { ScheduleRow } from './row';

/** The scheduled sweeper of the live events' sockets (in the `live` stack group with them). */

export const socketsSweep = {
  id: 'sockets.sweep',
  entry: 'functions/sockets/sweep.ts',
  group: 'live',
  logGroup: 'root',
  summary: 'Closes sockets whose token has expired (token.expired), within a minute of the expiry',
  everyMinutes: 1,
  table: ['dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  cognito: [],
  manageConnections: true,
  env: ['SOCKET_CALLBACK_URL'],
  timeoutSeconds: 50,
} satisfies ScheduleRow;
