/**
 * AWS service limits the service and the local stack both respect, written once with their
 * sources: CDK derives function timeouts from them, and the local stack enforces them, so that a
 * test fails on this machine first instead of a request failing on AWS.
 */

/** Amazon API Gateway quotas for HTTP APIs (developer guide, "Quotas for configuring and running an HTTP API"). */
export const httpApiLimits = {
  /** Payload size of a request: 10 MB; above it the gateway answers 413 itself. */
  requestBytes: 10 * 1024 * 1024,
  /** Integration timeout: 30 s; then the gateway answers 503 itself, whatever the function does. */
  integrationTimeoutMs: 30_000,
} as const;

/** AWS Lambda quotas (developer guide, "Lambda quotas"). */
export const lambdaLimits = {
  /**
   * A synchronous invocation's response payload: 6 MB, counted on the JSON the function returns
   * (status, headers and body; a binary body counts as its base64 text). Above it the invocation
   * fails and the HTTP API answers 500 Internal Server Error.
   */
  responseBytes: 6 * 1024 * 1024,
} as const;

/**
 * Whether a function's answer is over Lambda's response limit. Measuring serialises the whole
 * answer once more (0.09 ms for a 100-card board, measured), so a body under an eighth of the
 * limit is not measured: JSON escaping at most sextuples a character, and headers are small.
 */
export function overLambdaResponseLimit(answer: { body?: string }): boolean {
  return (
    (answer.body?.length ?? 0) > lambdaLimits.responseBytes / 8 &&
    Buffer.byteLength(JSON.stringify(answer)) > lambdaLimits.responseBytes
  );
}

/** The longest a route's function may run: the gateway gives up at 30 s, so past 29 s nobody hears it. */
export const LONGEST_ROUTE_SECONDS = httpApiLimits.integrationTimeoutMs / 1000 - 1;

/** Amazon API Gateway quotas for WebSocket APIs (developer guide, "Quotas for configuring and running a WebSocket API"). */
export const socketLimits = {
  /** Message payload: 128 KB (sent in frames of at most 32 KB); a bigger one closes the socket (1009). */
  messageBytes: 128 * 1024,
  /** API Gateway closes a WebSocket connection after 10 idle minutes… */
  idleMs: 10 * 60 * 1000,
  /** …and after 2 hours in any case. */
  connectionMs: 2 * 60 * 60 * 1000,
} as const;

/** Amazon DynamoDB quotas (developer guide, "Quotas in Amazon DynamoDB"). */
export const dynamoLimits = {
  /** Actions in one TransactWriteItems: 100, each on a different item. */
  transactItems: 100,
} as const;
