import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** An HTTP API payload-v2 event as API Gateway hands it to a function, for in-process handler tests. */
export function apiEvent(
  token: string,
  method: string,
  path: string,
  body?: unknown,
  pathParameters?: Record<string, string>,
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    pathParameters,
    requestContext: { requestId: randomUUID(), http: { method, path } } as APIGatewayProxyEventV2['requestContext'],
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
  };
}
