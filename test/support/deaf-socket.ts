import { DeleteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { localEnv, readPartition } from './local-table';

/**
 * The one socket watching a board, made to miss what happens next: its watch item is taken out of
 * the table, so the broadcaster no longer sends it the board's events (as if they were lost on the
 * way), while its client believes it still watches. `drop()` then closes the socket from the
 * server's side (the local connections API, as API Gateway's DeleteConnection does), and the
 * client reconnects; or `restore()` puts the watch back, and the socket hears the next events
 * with a gap in their `seq` before them.
 */
export async function deafen(table: { client: DynamoDBDocumentClient; name: string }, boardId: string) {
  const watches = (await readPartition(table.client, table.name, `BOARD#${boardId}`)).filter((item) =>
    String(item.sk).startsWith('#WATCH#'),
  );
  if (watches.length !== 1) throw new Error(`expected one watch of board ${boardId}, found ${watches.length}`);
  const watch = watches[0]!;
  const { pk, sk, connection_id: connectionId } = watch as { pk: string; sk: string; connection_id: string };
  await table.client.send(new DeleteCommand({ TableName: table.name, Key: { pk, sk } }));
  return {
    restore: async () => {
      await table.client.send(new PutCommand({ TableName: table.name, Item: watch }));
    },
    drop: async () => {
      const url = `${localEnv().SOCKET_CALLBACK_URL}/@connections/${encodeURIComponent(connectionId)}`;
      const answer = await fetch(url, { method: 'DELETE' });
      if (answer.status >= 300) throw new Error(`DELETE ${url} answered ${answer.status}`);
    },
  };
}
