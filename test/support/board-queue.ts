import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../lib/data/table';

/**
 * A board's queue of writers read and staged behind the API (lib/data/board-turns.ts): what the
 * busy-board tests check after the fact, and the dead writers they stage.
 */
export function boardQueue(db: DynamoDBDocumentClient, table: () => string) {
  /** The board item as stored. */
  const boardItemOf = async (boardId: string): Promise<Record<string, unknown>> => {
    const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.board(boardId), ConsistentRead: true }));
    return Item!;
  };

  return {
    boardItemOf,

    /**
     * A writer took the next ticket and never wrote (its function died): its turn, when it comes,
     * stalls the board until a waiter skips it. With `post`, it died after posting that change.
     * Answers the ticket.
     */
    async stalledTicket(boardId: string, post?: Record<string, unknown>): Promise<number> {
      const board = await boardItemOf(boardId);
      const ticket = (board.turn_next as number | undefined) ?? 0;
      await db.send(
        new UpdateCommand({
          TableName: table(),
          Key: keys.board(boardId),
          UpdateExpression: `SET turn_next = :next, turn_head = if_not_exists(turn_head, :zero)${post ? ', turn_posts = :posts' : ''}`,
          ConditionExpression: 'attribute_not_exists(turn_next) OR turn_next = :ticket',
          ExpressionAttributeValues: {
            ':zero': 0,
            ':ticket': ticket,
            ':next': ticket + 1,
            ...(post ? { ':posts': { ...((board.turn_posts as object | undefined) ?? {}), [String(ticket)]: post } } : {}),
          },
        }),
      );
      return ticket;
    },

    /** The board's log items as stored: one per change, or one per run of changes committed together. */
    async logItemsOf(boardId: string): Promise<{ seq: number; events?: { seq: number }[] }[]> {
      const { Items } = await db.send(
        new QueryCommand({
          TableName: table(),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :log)',
          ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId), ':log': keys.logPrefix },
          ConsistentRead: true,
        }),
      );
      return (Items ?? []) as { seq: number; events?: { seq: number }[] }[];
    },
  };
}
