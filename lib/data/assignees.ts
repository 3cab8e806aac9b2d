import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LimitReached, NotAMember, NotFound } from '../domain/errors';
import { MAX_ASSIGNEES_PER_CARD } from '../domain/limits';
import type { ScopeVia } from './access';
import { commitCardUpdate, type TaggedCard } from './cards';
import { documentClient, getItems, isConditionFailure, queryAll, tableName } from './db';
import { type EntityTags, requireCardMatch, shownCard } from './etags';
import { ChangeRaceLost, retryChange, seqOf } from './event-log';
import { type BoardRecord, type CardRecord, isLiveAssignee } from './records';
import { keys } from './table';

/**
 * A card's assignees. The board item keeps its members (`members`: user id -> the `seq` of the
 * change that made them one), in the same transaction as every membership change; a card keeps
 * its assignees (`assignees`: user id -> the `seq` of the change that assigned them). A card shows
 * an assignee only while the board says that user is a member who joined before the assignment
 * (lib/data/records.ts liveAssigneeIds), so:
 * - a member who leaves is gone from every card at once, with no write to any card: every route
 *   reads the board item anyway, so this costs no round trip and no write unit;
 * - a member who leaves and is added back does not get their old assignments back: they were made
 *   before the new `seq` of joining;
 * - an assignment racing the member's removal cannot leave a dangling id: both are changes of the
 *   board's log, so one commits first and the other runs again on the board as it then is (the
 *   assignment then finds no member: 409), and its own board condition says so too.
 * Ids that no read shows stay on the card until its next assignee change drops them.
 */

/**
 * Boards made before assignees have no `members` map: it is built once, on their first assignment,
 * from the member items, with every member at 0 (joined before any assignment). It is written only
 * if no membership change committed since the board was read (its `seq` as read), so the map is
 * the members as they are; a change meanwhile makes the assignment read the board again.
 */
async function ensureMemberMap(board: BoardRecord): Promise<BoardRecord> {
  if (board.members) return board;
  const members = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.boardPartition(board.id), ':prefix': keys.memberPrefix },
    ProjectionExpression: 'user_id',
  });
  const map = Object.fromEntries(members.map((member) => [member.user_id as string, 0]));
  const seen = seqOf(board);
  try {
    const { Attributes } = await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.board(board.id),
        UpdateExpression: 'SET members = :members',
        ConditionExpression: `attribute_exists(pk) AND attribute_not_exists(members) AND ${seen === 0 ? 'attribute_not_exists(seq)' : 'seq = :seen'}`,
        ExpressionAttributeValues: { ':members': map, ...(seen === 0 ? {} : { ':seen': seen }) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes as BoardRecord;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // Built by another assignment, or the board changed: the next attempt reads it as it now is.
    const current = (await getItems([keys.board(board.id)])).get<BoardRecord>(keys.board(board.id));
    if (!current) throw new NotFound('Card');
    throw new ChangeRaceLost(current);
  }
}

/** The user named in an assignee route must be a member of the card's board (409 `not_a_member`). */
function requireMember(board: BoardRecord, userId: string): void {
  if (!board.members || !Object.hasOwn(board.members, userId)) throw new NotAMember();
}

/** A card's assignees to write: user id -> the `seq` each was assigned at. */
type Assignees = Record<string, number>;

/** Assigns a member to a card; one already shown as assigned changes nothing (no write, no event). */
export function assignMember(scope: ScopeVia<'card'>, userId: string, ifMatch?: EntityTags): Promise<TaggedCard> {
  return changeAssignees(scope, userId, ifMatch, (live, board) => {
    if (userId in live) return undefined;
    if (Object.keys(live).length >= MAX_ASSIGNEES_PER_CARD) {
      throw new LimitReached(`A card can have at most ${MAX_ASSIGNEES_PER_CARD} assignees.`);
    }
    // Assigned with this change's own seq: the order shown, and later than the member's joining.
    return { ...live, [userId]: seqOf(board) + 1 };
  });
}

/** Takes a member off a card; one not shown as assigned changes nothing. */
export function unassignMember(scope: ScopeVia<'card'>, userId: string, ifMatch?: EntityTags): Promise<TaggedCard> {
  return changeAssignees(scope, userId, ifMatch, (live) => {
    if (!(userId in live)) return undefined;
    const { [userId]: _removed, ...rest } = live;
    return rest;
  });
}

/**
 * Writes a card's new assignees (ids no read shows dropped on the way) with `card.updated`, through
 * the card's one update (commitCardUpdate: the card as read, the board's `seq`), with the board
 * condition that the user is still a member: a removal committed meanwhile moved the `seq` anyway,
 * and the attempt runs again on the board as it now is. An If-Match is checked after the route's
 * own refusals (not a member, the limit), before the answer that nothing needed writing.
 */
function changeAssignees(
  scope: ScopeVia<'card'>,
  userId: string,
  ifMatch: EntityTags | undefined,
  change: (live: Assignees, board: BoardRecord) => Assignees | undefined,
): Promise<TaggedCard> {
  return retryChange({ board: scope.board, item: scope.card }, async ({ board: read, item: card }) => {
    const board = await ensureMemberMap(read);
    requireMember(board, userId);
    const next = change(liveAssignees(card, board), board);
    requireCardMatch(ifMatch, card, board);
    if (!next) return shownCard(card, board);
    return commitCardUpdate(
      scope,
      { board, item: card },
      { ...card, assignees: next },
      Object.keys(next).length > 0
        ? { expression: 'SET assignees = :assignees', values: { ':assignees': next } }
        : { expression: 'REMOVE assignees' },
      {
        board: { condition: 'attribute_exists(members.#assignee)', names: { '#assignee': userId } },
        refused: () => new NotAMember(),
      },
    );
  });
}

/** The card's assignees the board still shows, with the seqs they were assigned at. */
function liveAssignees(card: CardRecord, board: BoardRecord): Assignees {
  return Object.fromEntries(Object.entries(card.assignees ?? {}).filter(([id, at]) => isLiveAssignee(board.members, id, at)));
}
