import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { columnPositionKey, keys } from '../../lib/data/table';

export interface SeedColumn {
  id: string;
  /** One title and description per card, in position order (positions 1.0, 2.0, …). */
  cards: { title: string; description: string }[];
}

/**
 * Cards written straight into the local table as the service writes them (lib/data/cards.ts
 * createCard: the card with its `colpos` index key, and its id lookup; no log item, so no event
 * and no `seq`), and each column's `card_version` set as that many creates would have left it; the same
 * shape as bench/scale.ts seeds. For tests whose point is reading a big board, not creating one:
 * BatchWriteItem (25 items a request, 4 in flight) takes a few seconds where a thousand POSTs take
 * minutes on a busy machine. Returns each column's card ids in position order.
 */
export async function seedCards(
  client: DynamoDBDocumentClient,
  table: string,
  board: { id: string; actor: string },
  columns: SeedColumn[],
): Promise<string[][]> {
  const writes: Record<string, unknown>[] = [];
  const ids = columns.map((column) =>
    column.cards.map(({ title, description }, n) => {
      const id = randomUUID();
      const position = n + 1;
      writes.push({
        ...keys.card(board.id, id),
        type: 'card',
        id,
        board_id: board.id,
        column_id: column.id,
        title,
        description,
        position,
        created_at: new Date().toISOString(),
        colpos: columnPositionKey(column.id, position),
      });
      writes.push({ ...keys.cardLookup(id), type: 'card_lookup', board_id: board.id });
      return id;
    }),
  );
  const chunks = Array.from({ length: Math.ceil(writes.length / 25) }, (_, i) => writes.slice(i * 25, i * 25 + 25));
  const next = () => chunks.shift();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let chunk = next(); chunk; chunk = next()) {
        let pending = chunk.map((Item) => ({ PutRequest: { Item } }));
        // DynamoDB Local hands back what it did not write; it is sent again until none is left.
        while (pending.length > 0) {
          const out = await client.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
          pending = (out.UnprocessedItems?.[table] ?? []) as typeof pending;
        }
      }
    }),
  );
  for (const column of columns) {
    await client.send(
      new UpdateCommand({
        TableName: table,
        Key: keys.columnLookup(column.id),
        UpdateExpression: 'SET card_version = :v',
        ExpressionAttributeValues: { ':v': column.cards.length },
      }),
    );
  }
  return ids;
}
