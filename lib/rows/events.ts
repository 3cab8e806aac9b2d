import { changeRecordFilter, deletionRecordFilter } from '../data/changes';
import type { ScheduleRow, StreamConsumerRow } from './row';

/** The functions no request invokes: the table stream's consumers and the scheduled sweeper. */

export const eventsBroadcast = {
  id: 'events.broadcast',
  entry: 'functions/events/broadcast.ts',
  summary: "Sends each committed board change to the board's watchers",
  filter: changeRecordFilter,
  batchSize: 100,
  retryAttempts: 8,
  maxRecordAgeSeconds: 3600,
  table: ['dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
  cognito: [],
  manageConnections: true,
  env: ['SOCKET_CALLBACK_URL'],
  timeoutSeconds: 60,
} satisfies StreamConsumerRow;

export const childrenCollect = {
  id: 'children.collect',
  entry: 'functions/events/collect.ts',
  summary: "Removes a deleted board's items, or a deleted column's cards, after the request answered",
  filter: deletionRecordFilter,
  batchSize: 10,
  // Every attempt makes progress and is safe to repeat; a day of retries before the DLQ.
  retryAttempts: 100,
  maxRecordAgeSeconds: 24 * 3600,
  table: ['dynamodb:Query', 'dynamodb:BatchWriteItem', 'dynamodb:UpdateItem'],
  index: ['dynamodb:Query'],
  cognito: [],
  timeoutSeconds: 900,
} satisfies StreamConsumerRow;

export const socketsSweep = {
  id: 'sockets.sweep',
  entry: 'functions/events/sweep.ts',
  summary: 'Closes sockets whose token has expired (token.expired), within a minute of the expiry',
  everyMinutes: 1,
  table: ['dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  cognito: [],
  manageConnections: true,
  env: ['SOCKET_CALLBACK_URL'],
  timeoutSeconds: 50,
} satisfies ScheduleRow;
