import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';

/**
 * What the local stack of this test run wrote to `<DATA_DIR>/local-env.json`: its endpoints,
 * table name and pool ids, for tests that look behind the API (raw items, the pool itself).
 */
export const localEnv = (dataDir = process.env.TASK_BOARD_DATA_DIR!) =>
  JSON.parse(readFileSync(join(dataDir, 'local-env.json'), 'utf8')) as Record<string, string>;

/** The region and credentials an SDK client on the local stack takes (any client: DynamoDB, SQS, ...). */
export const localClientConfig = (env: Record<string, string>) => ({
  region: env.AWS_REGION ?? 'us-east-1',
  credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID ?? 'local', secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? 'local' },
});

/** A DocumentClient on the local stack's DynamoDB; the caller destroys it. */
export function localDocumentClient(env = localEnv()) {
  return DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, ...localClientConfig(env) }));
}

/**
 * Points the service's own storage code, imported and run in this test process (a worker's write
 * raced by hand), at the local stack's table, as the stack configures its functions.
 */
export function runStorageCodeOn(env: Record<string, string>): void {
  const { region, credentials } = localClientConfig(env);
  Object.assign(process.env, {
    TABLE_NAME: env.TABLE_NAME,
    AWS_ENDPOINT_URL_DYNAMODB: env.AWS_ENDPOINT_URL_DYNAMODB,
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  });
}

/** Every item of one partition, strongly consistent, all pages. */
export async function readPartition(
  client: DynamoDBDocumentClient,
  table: string,
  pk: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ConsistentRead: true,
        ExclusiveStartKey,
      }),
    );
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

/**
 * The local table for a test file: a client made before its tests and destroyed after them, and
 * the table's name. Read `client` and `name` inside tests (they are set in beforeAll).
 */
export function useLocalTable(): { client: DynamoDBDocumentClient; name: string } {
  const table = {} as { client: DynamoDBDocumentClient; name: string };
  beforeAll(() => {
    const env = localEnv();
    table.name = env.TABLE_NAME!;
    table.client = localDocumentClient(env);
  });
  afterAll(() => table.client?.destroy());
  return table;
}
