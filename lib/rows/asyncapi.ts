import type { RouteRow } from './row';
import type { RouteText } from './text';

/** The live events protocol's AsyncAPI document, served by the service itself. */

export const asyncapi = {
  id: 'asyncapi',
  method: 'GET',
  path: '/asyncapi.json',
  entry: 'functions/asyncapi.ts',
  group: 'service',
  logGroup: 'root',
  summary: 'The live board events protocol (WebSocket) described as AsyncAPI 3',
  access: { scope: 'public' },
  success: { status: 200 },
  table: [],
  cognito: [],
  // Its servers name this deployment's socket address.
  env: ['SOCKET_URL'],
} satisfies RouteRow;

export const asyncapiText = {
  of: asyncapi,
  tag: 'asyncapi',
  description:
    'The WebSocket protocol of live board events (AsyncAPI 3): how to connect with a ticket from `POST /realtime/tickets`, the messages to send and the events received. No token.',
} satisfies RouteText;
