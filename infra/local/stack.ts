import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { poolTriggers, SOCKET_STAGE, schedules, streamConsumers } from '../../lib/routes';
import { LONGEST_ROUTE_SECONDS } from '../../lib/runtime/aws-limits';
import { ENV } from '../../lib/runtime/config';
import { type DeliveriesQueueSettings, deliveriesQueueSettings } from '../webhook-queue';
import { ensurePool, fetchJwks, type LocalPool, startCognitoLocal } from './cognito';
import { type DynamoDbCompiler, ensureTable, startDynamoDbLocal } from './dynamodb';
import { createLocalHttpServer, REPO_ROOT } from './http-adapter';
import { asFunction, enforceRowActions, enforceServiceActions } from './iam';
import { LocalKms, type LocalKmsServer, startLocalKms } from './kms';
import { type LocalLambdaServer, localFunctionName, startLocalLambda } from './lambda';
import { outboxFile } from './outbox';
import { assertPortFree, freePort, listen, stopChild } from './processes';
import { createLocalSocketServer, type LocalSocketServer } from './socket-server';
import { LocalSqs, type LocalSqsServer, type QueueEventSource, startLocalSqs, startQueueEventSource } from './sqs';
import { checkpointFile, MOVED_READERS, migrateCheckpoints } from './stream-checkpoints';
import { type StreamPoller, startStreamPoller } from './stream-poller';
import { signalTableWrites } from './table-writes';
import { type TraceMode, traceModeFrom } from './trace';

export const LOCAL_TABLE_NAME = 'task-board-local';
/** The webhook deliveries queue and its dead-letter queue on the local SQS stand-in. */
export const LOCAL_DELIVERIES_QUEUE = 'task-board-webhook-deliveries';
export const LOCAL_DEAD_LETTER_QUEUE = 'task-board-webhook-deliveries-dlq';

export interface LocalStack {
  url: string;
  /** The WebSocket address tickets name (`ws://…/live`). */
  socketUrl: string;
  env: Record<string, string | undefined>;
  pids: { dynamodb: number; cognito: number };
  /** The SQS stand-in (in this process; messages kept in DATA_DIR/sqs.json): tests look at its queues. */
  sqs: LocalSqs;
  stop(): Promise<void>;
}

interface LocalStackOptions {
  port: number;
  dataDir: string;
  host?: string;
  /** WebSocket port; 0 picks a free one. */
  socketPort?: number;
  /** DynamoDB Local's port; 0 or unset picks a free one. */
  dynamoPort?: number;
  /** The Cognito emulator's port; 0 or unset picks a free one. */
  cognitoPort?: number;
  /** The SQS stand-in's port; 0 or unset picks a free one. */
  sqsPort?: number;
  /** The KMS stand-in's port; 0 or unset picks a free one. */
  kmsPort?: number;
  /** How often expired sockets are swept (AWS: every minute). */
  sweepMs?: number;
  /** Access token lifetime of a new local pool, in seconds (default: Cognito's hour). */
  accessTokenSeconds?: number;
  /** DynamoDB Local's JIT compilers (default `tiered`: infra/local/dynamodb.ts says when `client` pays). */
  dynamoCompiler?: DynamoDbCompiler;
}

/**
 * The whole service on this machine: DynamoDB Local and cognito-local (on the given ports, or
 * free ones), the table and the user pool created (or reused) in `dataDir`, and the route table
 * served over HTTP on `port`. The HTTP port opens only once everything behind it is ready, so a 200 from /health
 * means the stack is usable.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  // Both checked before anything starts.
  const leastTimeoutSeconds = leastFunctionTimeoutSeconds();
  const traceMode = traceModeFrom(process.env.TASK_BOARD_TRACE);
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  // The queues' messages survive a restart on the same DATA_DIR, as SQS keeps them.
  const sqs = new LocalSqs(join(dataDir, 'sqs.json'));
  const parts = new StartedParts();
  const stop = () => parts.stop();
  setSdkDefaults();
  try {
    const host = options.host ?? '127.0.0.1';
    await assertFixedPortsFree(options, host);
    const emulators = await startEmulators(parts, options, host, dataDir);
    const queue = deliveriesQueueSettings();
    const webhooks = await startWebhookServices(parts, sqs, queue, options, host, dataDir);
    const env = serviceEnv(emulators, webhooks);
    Object.assign(process.env, env);
    await ensureTable(emulators.dynamoEndpoint, LOCAL_TABLE_NAME);
    const pool = await ensurePool(emulators.cognitoEndpoint, dataDir, options.accessTokenSeconds);
    const socketPort = options.socketPort || (await freePort());
    const socketUrl = `ws://${host}:${socketPort}/${SOCKET_STAGE}`;
    Object.assign(env, await poolAndSocketEnv(pool, emulators.cognitoPort, socketPort, socketUrl));
    Object.assign(process.env, env);
    // For tools that invoke handlers in their own process against this stack (tests, scripts).
    writeFileSync(join(dataDir, 'local-env.json'), `${JSON.stringify(env, null, 2)}\n`);
    await enforceRoles();
    await startLiveEvents(parts, socketPort, host, dataDir);
    // The deliveries queue's event source (Lambda's SQS trigger), one per queueConsumers row.
    if (queue.consumer) parts.queueSources.push(await startQueueEventSource(sqs, LOCAL_DELIVERIES_QUEUE, queue.consumer));
    await startSchedules(parts, options.sweepMs ?? 1000);
    const port = await startHttpApi(parts, options.port, host, dataDir, leastTimeoutSeconds, traceMode);
    return { url: `http://${host}:${port}`, socketUrl, env, pids: emulators.pids, sqs, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What the stack has started so far, all of it stopped by stop(): also when a start fails half-way. */
class StartedParts {
  readonly children: ChildProcess[] = [];
  readonly pollers: StreamPoller[] = [];
  readonly sweepers: NodeJS.Timeout[] = [];
  readonly queueSources: QueueEventSource[] = [];
  server?: Server;
  sockets?: LocalSocketServer;
  sqsServer?: LocalSqsServer;
  kmsServer?: LocalKmsServer;
  lambdaServer?: LocalLambdaServer;

  async stop() {
    for (const timer of this.sweepers) clearInterval(timer);
    await Promise.all(this.pollers.map((poller) => poller.stop()));
    await Promise.all(this.queueSources.map((source) => source.stop()));
    await this.sqsServer?.close();
    await this.kmsServer?.close();
    await this.sockets?.close();
    const server = this.server;
    if (server) await new Promise<void>((done) => server.close(() => done()));
    server?.closeAllConnections();
    await Promise.all(this.children.map((child) => stopChild(child)));
    // After the emulator, the only caller of the pool's triggers.
    await this.lambdaServer?.close();
  }
}

/** The emulators accept any credentials, but the SDK insists on having some and a region. */
function setSdkDefaults() {
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  // CloudWatch metric lines (EMF) mean nothing locally; set it to false to see them.
  process.env.METRICS_DISABLED ??= 'true';
}

/**
 * Fixed ports (npm start's defaults) are checked first, so that a taken one names its variable.
 * DynamoDB Local has no address option: it listens on every interface.
 */
async function assertFixedPortsFree(options: LocalStackOptions, host: string) {
  if (options.port) await assertPortFree(options.port, host, 'PORT');
  if (options.dynamoPort) await assertPortFree(options.dynamoPort, '0.0.0.0', 'DYNAMODB_PORT');
  if (options.cognitoPort) await assertPortFree(options.cognitoPort, host, 'COGNITO_PORT');
  if (options.socketPort) await assertPortFree(options.socketPort, host, 'SOCKET_PORT');
  if (options.sqsPort) await assertPortFree(options.sqsPort, host, 'SQS_PORT');
  if (options.kmsPort) await assertPortFree(options.kmsPort, host, 'KMS_PORT');
}

type Emulators = Awaited<ReturnType<typeof startEmulators>>;

/** DynamoDB Local and the Cognito emulator, with the Lambda stand-in that serves the pool's triggers. */
async function startEmulators(parts: StartedParts, options: LocalStackOptions, host: string, dataDir: string) {
  const dynamoPort = options.dynamoPort || (await freePort());
  const cognitoPort = options.cognitoPort || (await freePort());
  // The pool's triggers (Lambda's Invoke API, for the emulator alone), before the emulator that
  // is told its address; on the loopback address whatever `host` is.
  const triggers = Object.values(poolTriggers);
  parts.lambdaServer = await startLocalLambda(triggers);
  const poolTriggerConfig = {
    functions: Object.fromEntries(triggers.map((row) => [row.trigger, localFunctionName(row)])),
    lambdaEndpoint: parts.lambdaServer.endpoint,
  };
  const started = (child: ChildProcess) => (parts.children.push(child), child);
  const [dynamodb, cognito] = await Promise.all([
    startDynamoDbLocal(dynamoPort, join(dataDir, 'dynamodb'), options.dynamoCompiler ?? 'tiered').then(started),
    startCognitoLocal(cognitoPort, join(dataDir, 'cognito'), host, poolTriggerConfig).then(started),
  ]);
  return {
    dynamoEndpoint: `http://127.0.0.1:${dynamoPort}`,
    cognitoEndpoint: `http://127.0.0.1:${cognitoPort}`,
    cognitoPort,
    pids: { dynamodb: dynamodb.pid!, cognito: cognito.pid! },
  };
}

type WebhookServices = Awaited<ReturnType<typeof startWebhookServices>>;

/** Webhooks: the deliveries queue (SQS, with its dead-letter queue) and the secrets' key (KMS). */
async function startWebhookServices(
  parts: StartedParts,
  sqs: LocalSqs,
  queue: DeliveriesQueueSettings,
  options: LocalStackOptions,
  host: string,
  dataDir: string,
) {
  const sqsServer = await startLocalSqs(sqs, options.sqsPort ?? 0, host);
  parts.sqsServer = sqsServer;
  sqs.createQueue({ name: LOCAL_DEAD_LETTER_QUEUE, retentionSeconds: queue.deadLetterRetentionSeconds });
  const queueUrl = sqs.createQueue({
    name: LOCAL_DELIVERIES_QUEUE,
    visibilityTimeoutSeconds: queue.visibilityTimeoutSeconds,
    retentionSeconds: queue.retentionSeconds,
    maxMessageBytes: queue.maxMessageBytes,
    redrive: { deadLetterQueue: LOCAL_DEAD_LETTER_QUEUE, maxReceiveCount: queue.maxReceiveCount },
  });
  const kmsServer = await startLocalKms(new LocalKms(dataDir), options.kmsPort ?? 0, host);
  parts.kmsServer = kmsServer;
  return { sqsEndpoint: sqsServer.endpoint, kmsEndpoint: kmsServer.endpoint, keyArn: kmsServer.kms.keyArn, queueUrl };
}

/** The handlers' environment. Only the SDK's endpoint variables differ from AWS: handler code has no local branch. */
function serviceEnv(emulators: Emulators, webhooks: WebhookServices): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    AWS_REGION: process.env.AWS_REGION,
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamoEndpoint,
    AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: emulators.cognitoEndpoint,
    AWS_ENDPOINT_URL_SQS: webhooks.sqsEndpoint,
    AWS_ENDPOINT_URL_KMS: webhooks.kmsEndpoint,
    [ENV.tableName]: LOCAL_TABLE_NAME,
    [ENV.webhookQueueUrl]: webhooks.queueUrl,
    [ENV.webhookKeyId]: webhooks.keyArn,
    // webhooks.md: the local stack lets its own machine through the address check unless told otherwise.
    [ENV.webhookAllowHosts]: process.env[ENV.webhookAllowHosts] ?? '127.0.0.1,localhost',
  };
  // Shorter retries for tests and demos (webhooks.md); unset, the default schedule of about a day.
  if (process.env[ENV.webhookRetrySchedule] !== undefined) {
    env[ENV.webhookRetrySchedule] = process.env[ENV.webhookRetrySchedule];
  }
  return env;
}

/** The pool's and the WebSocket API's part of the handlers' environment. */
async function poolAndSocketEnv(
  pool: LocalPool,
  cognitoPort: number,
  socketPort: number,
  socketUrl: string,
): Promise<Record<string, string>> {
  return {
    [ENV.userPoolId]: pool.userPoolId,
    [ENV.userPoolClientId]: pool.userPoolClientId,
    [ENV.tokenIssuer]: pool.issuer,
    [ENV.socketUrl]: socketUrl,
    [ENV.socketCallbackUrl]: `http://127.0.0.1:${socketPort}/${SOCKET_STAGE}`,
    // aws-jwt-verify fetches only https JWKS: the emulator's keys are handed over instead, the
    // same way to this process, to tools that run handlers beside it and to SAM's containers.
    [ENV.tokenJwks]: JSON.stringify(await fetchJwks(cognitoPort, pool.userPoolId)),
  };
}

/** The functions' IAM roles, as far as this process can hold each function to its own. */
async function enforceRoles() {
  // Each function's DynamoDB commands are held to its row's actions, as its IAM role would.
  enforceRowActions((await import('../../lib/data/db')).documentClient);
  // …and their SQS and KMS commands to its `queue` and `key` actions.
  enforceServiceActions();
}

/** Live board events: the WebSocket API and the table stream's triggers. */
async function startLiveEvents(parts: StartedParts, socketPort: number, host: string, dataDir: string) {
  // The functions' writes wake the stream triggers, which otherwise read at Lambda's idle pace.
  signalTableWrites((await import('../../lib/data/db')).documentClient);
  parts.sockets = await createLocalSocketServer(SOCKET_STAGE);
  await listen(parts.sockets.server, socketPort, host);
  // A DATA_DIR from before two readers were merged: the merged reader starts from the older place.
  for (const oldId of migrateCheckpoints(dataDir, Object.keys(streamConsumers))) {
    console.log(`local stack: stream reader ${oldId} merged into ${MOVED_READERS[oldId]}; its checkpoint moved there`);
  }
  for (const [id, row] of Object.entries(streamConsumers)) {
    parts.pollers.push(await startStreamPoller(LOCAL_TABLE_NAME, row, checkpointFile(dataDir, id)));
  }
}

/** Scheduled rows (the expiry sweeper among them) run every `everyMs` here (every minute on AWS), so that tests can use seconds. */
async function startSchedules(parts: StartedParts, everyMs: number) {
  for (const row of Object.values(schedules)) {
    const { handler } = (await import(join(REPO_ROOT, row.entry))) as {
      handler: (event: unknown, context: { awsRequestId: string; functionName: string }) => Promise<unknown>;
    };
    parts.sweepers.push(
      setInterval(() => {
        const context = { awsRequestId: randomUUID(), functionName: `local-${row.id}` };
        asFunction(row, () => handler({}, context)).catch((error: unknown) =>
          console.error(`local schedule ${row.entry} failed`, error),
        );
      }, everyMs),
    );
  }
}

/** The HTTP API, last: once it listens, everything behind it is ready. The port it got. */
async function startHttpApi(
  parts: StartedParts,
  port: number,
  host: string,
  dataDir: string,
  leastTimeoutSeconds: number,
  traceMode: TraceMode,
): Promise<number> {
  const server = await createLocalHttpServer(
    process.env.CORS_ORIGIN ?? '*',
    traceMode,
    outboxFile(join(dataDir, 'cognito')),
    leastTimeoutSeconds,
  );
  parts.server = server;
  // Keep idle connections longer than clients do (undici: 4 s), so that a client never sends a
  // request on a connection the server is closing ("other side closed" under load).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return listen(server, port, host);
}

/**
 * LOCAL_FUNCTION_TIMEOUT_SECONDS: the least timeout the local HTTP server gives a function (its
 * row's own when longer), at most the 29 s an HTTP API integration allows. Unset: each row's own,
 * as on AWS. The tests set it, since on a shared machine a request can wait its turn for the CPU
 * longer than a Lambda function, which has one of its own, ever would.
 */
function leastFunctionTimeoutSeconds(): number {
  const value = process.env.LOCAL_FUNCTION_TIMEOUT_SECONDS;
  if (value === undefined || value === '') return 0;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > LONGEST_ROUTE_SECONDS) {
    throw new Error(
      `LOCAL_FUNCTION_TIMEOUT_SECONDS must be a whole number of seconds from 1 to ${LONGEST_ROUTE_SECONDS}, got ${value}`,
    );
  }
  return seconds;
}
