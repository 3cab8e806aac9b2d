import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { ENV, requireEnv } from '../runtime/config';
import { stopAtDeadline } from '../runtime/deadline';
import { sdkLogger } from '../runtime/logger';

/**
 * The WebSocket stage's connections API (PostToConnection, DeleteConnection). Its endpoint is the
 * stage's callback URL from the environment: on AWS `https://<api>.execute-api.<region>…/<stage>`,
 * locally the emulator's (infra/local/socket-server.ts), so this code has no local branch.
 */
const client = new ApiGatewayManagementApiClient({ endpoint: requireEnv(ENV.socketCallbackUrl), logger: sdkLogger });
stopAtDeadline(client);

const encoder = new TextEncoder();

/** Sends one frame; false when the socket is gone (410), which the caller cleans up after. */
export async function sendFrame(connectionId: string, frame: unknown): Promise<boolean> {
  try {
    await client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: encoder.encode(JSON.stringify(frame)) }));
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    throw error;
  }
}

/** Closes a socket (API Gateway then runs `$disconnect`); a socket already gone is fine. */
export async function closeSocket(connectionId: string): Promise<void> {
  try {
    await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}

const isGone = (error: unknown) => error instanceof Error && error.name === 'GoneException';
