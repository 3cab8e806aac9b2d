/**
 * AWS service limits the service and the local stack both respect, written once with their
 * sources. The local stack enforces them so that a test fails here first, not on AWS.
 */
export const socketLimits = {
  /** API Gateway WebSocket message payload: 128 KB (sent in frames of at most 32 KB). */
  messageBytes: 128 * 1024,
  /** API Gateway closes a WebSocket connection after 10 idle minutes… */
  idleMs: 10 * 60 * 1000,
  /** …and after 2 hours in any case. */
  connectionMs: 2 * 60 * 60 * 1000,
} as const;
// Source: Amazon API Gateway quotas for configuring and running a WebSocket API (developer guide).
