import type { DynamoDbCompiler } from './dynamodb';
import { stopWhenOrphaned } from './orphan';

// No static import of './stack': it brings in the functions and their logger, which reads
// LOG_LEVEL once, at import. main sets the local defaults first, then loads it (loadLocalStack).

/**
 * `npm start`: the service on the embedded local stack. Data, users and tokens survive a restart
 * on the same DATA_DIR (default .data/). Prints one JSON line with the URLs and the pids once
 * /health answers; SIGINT/SIGTERM, or the end of the process that started it (npm's shell), stop
 * every child.
 *
 * Ports are fixed by default, so that what `npm run sam:env -- local` wrote stays right across
 * restarts: PORT (3000), SOCKET_PORT (PORT + 1), DYNAMODB_PORT (PORT + 2) and COGNITO_PORT
 * (PORT + 3); each can be set on its own, and PORT=0 picks free ones for all four (the tests).
 * The webhook stand-ins take SQS_PORT (PORT + 4) and KMS_PORT (PORT + 5), the same way.
 * A taken port stops the start with the variable that moves it. HOST (127.0.0.1) is where the
 * server, the sockets and the Cognito emulator listen (DynamoDB Local listens on every address);
 * HOST=0.0.0.0 opens them to other machines and to containers on a Docker bridge (docs/sam.md).
 */
export const DEFAULT_PORT = 3000;

export function portsFrom(env: NodeJS.ProcessEnv): { port: number; socketPort: number; dynamoPort: number; cognitoPort: number } {
  const read = (name: string, fallback: number) => {
    const given = env[name];
    const value = given === undefined || given === '' ? fallback : Number(given);
    if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be a port number, got ${given}`);
    return value;
  };
  const port = read('PORT', DEFAULT_PORT);
  const next = (offset: number) => (port === 0 ? 0 : port + offset);
  return {
    port,
    socketPort: read('SOCKET_PORT', next(1)),
    dynamoPort: read('DYNAMODB_PORT', next(2)),
    cognitoPort: read('COGNITO_PORT', next(3)),
  };
}

/** The webhook stand-ins' ports: SQS_PORT (PORT + 4) and KMS_PORT (PORT + 5); PORT=0 picks free ones. */
export function webhookPortsFrom(env: NodeJS.ProcessEnv): { sqsPort: number; kmsPort: number } {
  const { port } = portsFrom(env);
  const read = (name: string, offset: number) => {
    const given = env[name];
    const value = given === undefined || given === '' ? (port === 0 ? 0 : port + offset) : Number(given);
    if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be a port number, got ${given}`);
    return value;
  };
  return { sqsPort: read('SQS_PORT', 4), kmsPort: read('KMS_PORT', 5) };
}

/** DYNAMODB_COMPILER: `tiered` (unset: the JVM's default) or `client` (infra/local/dynamodb.ts says which pays when). */
export function dynamoCompilerFrom(env: NodeJS.ProcessEnv): DynamoDbCompiler {
  const given = env.DYNAMODB_COMPILER || 'tiered';
  if (given !== 'tiered' && given !== 'client') throw new Error(`DYNAMODB_COMPILER must be tiered or client, got ${given}`);
  return given;
}

/**
 * The local stack's own defaults: LOG_LEVEL DEBUG, so that every request gets its log line (on AWS
 * successes are DEBUG: the access log has them).
 */
export function applyLocalDefaults(env: NodeJS.ProcessEnv): void {
  env.LOG_LEVEL ??= 'DEBUG';
}

/**
 * The local stack's module, loaded only after the defaults are in `env`: the functions' logger
 * (lib/runtime/logger.ts) reads LOG_LEVEL when it is imported, which importing the stack does.
 */
export async function loadLocalStack(env: NodeJS.ProcessEnv): Promise<typeof import('./stack')> {
  applyLocalDefaults(env);
  return import('./stack');
}

const USAGE = `usage: npm start   (node --import tsx infra/local/start.ts)

Runs the service on the embedded local stack (DynamoDB Local, cognito-local and in-process
stand-ins for the WebSocket API, the stream, SQS and KMS) and prints one JSON line with the URLs
and pids once GET /health answers. Ctrl-C or SIGTERM stops it. Settings are environment variables
(docs/local-stack.md): PORT (3000; 0 picks free ports), SOCKET_PORT, DYNAMODB_PORT, COGNITO_PORT,
SQS_PORT, KMS_PORT, HOST (127.0.0.1), DATA_DIR (.data), LOG_LEVEL (DEBUG), DYNAMODB_COMPILER
(tiered; client for short-lived stacks), and the others listed
there.

  -h, --help   this text`;

async function main() {
  const { port, socketPort, dynamoPort, cognitoPort } = portsFrom(process.env);
  const { sqsPort, kmsPort } = webhookPortsFrom(process.env);
  const dataDir = process.env.DATA_DIR ?? '.data';
  const { startLocalStack } = await loadLocalStack(process.env);
  const sweepMs = Number(process.env.LOCAL_SWEEP_MS ?? 1000);
  const tokenSeconds = process.env.LOCAL_ACCESS_TOKEN_SECONDS ? Number(process.env.LOCAL_ACCESS_TOKEN_SECONDS) : undefined;
  if (tokenSeconds !== undefined && !(Number.isInteger(tokenSeconds) && tokenSeconds > 0)) {
    throw new Error(`LOCAL_ACCESS_TOKEN_SECONDS must be a positive whole number, got ${process.env.LOCAL_ACCESS_TOKEN_SECONDS}`);
  }
  const dynamoCompiler = dynamoCompilerFrom(process.env);
  const stack = await startLocalStack({
    port,
    dataDir,
    host: process.env.HOST,
    socketPort,
    dynamoPort,
    cognitoPort,
    sqsPort,
    kmsPort,
    sweepMs,
    accessTokenSeconds: tokenSeconds,
    dynamoCompiler,
  });
  console.log(
    JSON.stringify({
      message: 'task-board is running',
      url: stack.url,
      socketUrl: stack.socketUrl,
      // What `npm run sam:env -- local` hands the functions; fixed unless PORT=0.
      dynamodb: stack.env.AWS_ENDPOINT_URL_DYNAMODB,
      cognito: stack.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER,
      sqs: stack.env.AWS_ENDPOINT_URL_SQS,
      kms: stack.env.AWS_ENDPOINT_URL_KMS,
      dataDir,
      pids: { server: process.pid, ...stack.pids },
    }),
  );
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(JSON.stringify({ message: `stopping (${signal})` }));
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  stopWhenOrphaned((reason) => void shutdown(reason));
}

if (process.argv[1]?.endsWith('start.ts')) {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    process.exit(0);
  } else if (args.length > 0) {
    console.error(
      `task-board: npm start takes no arguments (settings are environment variables), got ${args.join(' ')}\n${USAGE}`,
    );
    process.exit(64);
  } else {
    main().catch(fail);
  }
}

function fail(error: NodeJS.ErrnoException & { address?: string; port?: number; variable?: string }) {
  // A port taken is the usual reason; say which and how to choose another, not a stack trace.
  if (error.code === 'EADDRINUSE') {
    const variable = error.variable ?? 'PORT';
    console.error(
      `task-board: ${error.address}:${error.port} (${variable}) is in use, perhaps by another npm start: stop it, or start with ${variable}=<port>. ` +
        `Defaults: PORT=${DEFAULT_PORT}, SOCKET_PORT=PORT+1, DYNAMODB_PORT=PORT+2, COGNITO_PORT=PORT+3; PORT=0 picks free ones for all ` +
        '(then run npm run sam:env -- local again after each start).',
    );
  } else {
    console.error(error);
  }
  process.exit(1);
}
