import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Conflict, Forbidden, LimitReached, NotFound } from '../domain/errors';
import { MAX_LABELS_PER_BOARD, MAX_LABELS_PER_CARD } from '../domain/limits';
import { byLabelName } from '../domain/ordering';
import { actorOf, type BoardScope, type ScopeVia } from './access';
import { WRITE_ONLY } from './board-turns';
import { commitCardUpdate, type TaggedCard } from './cards';
import {
  documentClient,
  isConditionFailure,
  type NamedItems,
  queryAll,
  queryPages,
  type Refusal,
  removeFromSet,
  type TransactItem,
  tableName,
} from './db';
import { type EntityTags, requireCardMatch, shownCard } from './etags';
import { ChangeRaceLost, changeRefusal, commitChange, retryChange } from './event-log';
import { isLiveLabel, type Label, type LabelRecord, liveLabelIds, now, toLabel } from './records';
import { type ItemKey, keys, labelNameKey } from './table';

/**
 * A board's labels. The board item keeps the live ones (`labels`: id -> name), in the same
 * transaction as every label write: every route reads the board item anyway, so a card's
 * label_ids are shown without deleted labels and in label order at no extra round trip. Names are
 * unique per board, case-insensitively, through a name item (`#LABELNAME#<lower-case name>`)
 * written and removed with the label. Deleting a label takes it off the board's map first (from
 * then on no read shows it), then off every card that carries it; an interrupted clean-up leaves
 * only ids that no read shows and that the card's next label change drops.
 */

/** A second label of that name on the board (names compared case-insensitively). */
const nameTaken = () => new Conflict('The board already has a label with this name (names are compared case-insensitively).');

/** The write that gives `name` to the label on its board: cancelled when another label has it. */
const takeName = (boardId: string, labelId: string, name: string): TransactItem => ({
  Put: {
    Item: { ...keys.labelName(boardId, name), type: 'label_name', label_id: labelId },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/** The write that frees `name` on the label's board, only while this label has it. */
const freeName = (boardId: string, labelId: string, name: string): TransactItem => ({
  Delete: {
    Key: keys.labelName(boardId, name),
    ConditionExpression: 'label_id = :id',
    ExpressionAttributeValues: { ':id': labelId },
  },
});

/** Boards made before labels existed have no map yet: it is added once, on their first label. */
async function ensureLabelMap(scope: BoardScope): Promise<void> {
  if (scope.board.labels) return;
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.board(scope.boardId),
        UpdateExpression: 'SET labels = if_not_exists(labels, :empty)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':empty': {} },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new NotFound('Board');
    throw error;
  }
}

export async function createLabel(scope: BoardScope, input: { name: string; color: string }): Promise<Label> {
  await ensureLabelMap(scope);
  const { boardId } = scope;
  const label: LabelRecord = { id: randomUUID(), board_id: boardId, name: input.name, color: input.color, created_at: now() };
  const writes = {
    label: {
      Put: {
        Item: { ...keys.label(boardId, label.id), type: 'label', ...label },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    lookup: { Put: { Item: { ...keys.labelLookup(label.id), type: 'label_lookup', board_id: boardId } } },
    takeName: takeName(boardId, label.id, label.name),
  } satisfies NamedItems;
  await retryChange({ board: scope.board, item: undefined, callsAfterTurn: WRITE_ONLY }, async ({ board }) => {
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'label.created',
        actor: actorOf(scope),
        fields: { label: toLabel(label) },
        writes,
        board: {
          set: ['labels.#id = :name'],
          condition: 'size(labels) < :max',
          names: { '#id': label.id },
          values: { ':name': label.name, ':max': MAX_LABELS_PER_BOARD },
        },
        boardRefused: () => new LimitReached(`A board can have at most ${MAX_LABELS_PER_BOARD} labels; delete one first.`),
      });
    } catch (error) {
      if (changeRefusal(error, writes)?.failed.has('takeName')) throw nameTaken();
      throw error;
    }
  });
  return toLabel(label);
}

/** The board's labels by name (case-insensitively), then id: one strongly consistent query. */
export async function listLabels(scope: BoardScope): Promise<Label[]> {
  const items = (await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.boardPartition(scope.boardId), ':prefix': keys.labelPrefix },
  })) as unknown as LabelRecord[];
  return items
    .filter((label) => isLiveLabel(scope.board.labels, label.id))
    .sort(byLabelName)
    .map(toLabel);
}

/**
 * Renames and recolours a label, null-safe like card updates. The write requires the label to be
 * as read (an edit in between makes it start again on the label as it now is), moves the name
 * item when the name changes other than in case, and renames it in the board's map.
 */
export async function updateLabel(
  scope: ScopeVia<'label'>,
  changes: { name?: string | null; color?: string | null },
): Promise<Label> {
  const { boardId } = scope;
  return retryChange({ board: scope.board, item: scope.label, callsAfterTurn: WRITE_ONLY }, async ({ board, item: label }) => {
    const next: LabelRecord = { ...label, name: changes.name ?? label.name, color: changes.color ?? label.color };
    if (next.name === label.name && next.color === label.color) return toLabel(label);
    const nameMoves = labelNameKey(next.name) !== labelNameKey(label.name);
    const writes = {
      label: {
        Update: {
          Key: keys.label(boardId, label.id),
          UpdateExpression: 'SET #name = :name, color = :color',
          ConditionExpression: 'attribute_exists(pk) AND #name = :was AND color = :wasColor',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: {
            ':name': next.name,
            ':color': next.color,
            ':was': label.name,
            ':wasColor': label.color,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      freeName: nameMoves ? freeName(boardId, label.id, label.name) : undefined,
      takeName: nameMoves ? takeName(boardId, label.id, next.name) : undefined,
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'label.updated',
        actor: actorOf(scope),
        fields: { label: toLabel(next) },
        writes,
        board: {
          set: ['labels.#id = :newName'],
          condition: 'attribute_exists(labels.#id)',
          names: { '#id': label.id },
          values: { ':newName': next.name },
        },
        boardRefused: () => new NotFound('Label'),
        gone: () => new NotFound('Label'),
      });
      return toLabel(next);
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (refusal?.failed.has('label')) throw new ChangeRaceLost(refusal.board ?? board, labelAsItIsNow(refusal));
      if (refusal?.failed.has('takeName')) throw nameTaken();
      // Only the board's seq moved on: the label is as read (its condition held), so the attempt
      // goes again with the seq the failed condition returned.
      throw error;
    }
  });
}

/**
 * Deletes a label: one transaction takes it off the board's map (from then on no read shows it,
 * on any card) with its item, lookup and name, and writes the `label.deleted` event; then it is
 * taken off the cards that carry it, page by page, 16 updates at a time.
 */
export async function deleteLabel(scope: ScopeVia<'label'>): Promise<void> {
  const { boardId } = scope;
  // The name item to free is the label's name at the moment of the delete: a rename in between
  // moved it, so the delete requires the name as read and starts again on the label as it is.
  const first = { board: scope.board, item: scope.label, callsAfterTurn: WRITE_ONLY };
  const deleted = await retryChange(first, async ({ board, item: label }) => {
    const writes = {
      label: {
        Delete: {
          Key: keys.label(boardId, label.id),
          ConditionExpression: 'attribute_exists(pk) AND #name = :was',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':was': label.name },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      lookup: { Delete: { Key: keys.labelLookup(label.id) } },
      freeName: freeName(boardId, label.id, label.name),
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'label.deleted',
        actor: actorOf(scope),
        // Clients drop the label from every card: no card.updated per card (realtime contract).
        fields: { label_id: label.id },
        writes,
        board: { remove: ['labels.#id'], condition: 'attribute_exists(labels.#id)', names: { '#id': label.id } },
        boardRefused: () => new NotFound('Label'),
        gone: () => new NotFound('Label'),
      });
      return label;
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (refusal?.failed.has('label')) throw new ChangeRaceLost(refusal.board ?? board, labelAsItIsNow(refusal));
      if (refusal?.failed.has('freeName')) throw new ChangeRaceLost(refusal.board ?? board);
      throw error;
    }
  });
  await removeLabelFromCards(boardId, deleted.id);
}

/** The label as it is now, from the label write's ALL_OLD in a cancelled transaction; gone is 404. */
function labelAsItIsNow<N extends string>(refusal: Refusal<N | 'label'>): LabelRecord {
  const current = refusal.itemAt<LabelRecord>('label');
  if (!current) throw new NotFound('Label');
  return current;
}

const CLEANUP_PARALLELISM = 16;

async function removeLabelFromCards(boardId: string, labelId: string): Promise<void> {
  const pending: Promise<unknown>[] = [];
  // No event: clients already dropped the label on label.deleted. A card deleted meanwhile is skipped.
  const untag = (key: ItemKey) => removeFromSet(key, 'label_ids', labelId);
  await queryPages(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: 'contains(label_ids, :label)',
      ProjectionExpression: 'pk, sk',
      ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId), ':prefix': keys.cardPrefix, ':label': labelId },
    },
    (items) => {
      for (const item of items) pending.push(untag({ pk: item.pk, sk: item.sk }));
      return undefined;
    },
  );
  for (let i = 0; i < pending.length; i += CLEANUP_PARALLELISM) await Promise.all(pending.slice(i, i + CLEANUP_PARALLELISM));
}

/**
 * The label named in the path of a card's label route, in the contract's order: it exists (else
 * 404) and is on the card's board (else 403).
 */
function labelForCard(scope: BoardScope, labelId: string): string {
  const found = scope.relatedLabels.get(labelId);
  if (!found) throw new NotFound('Label');
  if (found.boardId !== scope.boardId) throw new Forbidden('The label belongs to another board.');
  if (!found.item || !isLiveLabel(scope.board.labels, labelId)) throw new NotFound('Label');
  return labelId;
}

/** Puts a label on a card; a label already on it changes nothing (no write, no event). */
export function attachLabel(scope: ScopeVia<'card'>, labelId: string, ifMatch?: EntityTags): Promise<TaggedCard> {
  const id = labelForCard(scope, labelId);
  return changeCardLabels(scope, ifMatch, (live) => {
    if (live.includes(id)) return undefined;
    if (live.length >= MAX_LABELS_PER_CARD) throw new LimitReached(`A card can carry at most ${MAX_LABELS_PER_CARD} labels.`);
    return [...live, id];
  });
}

/** Takes a label off a card; a label not on it changes nothing. */
export function detachLabel(scope: ScopeVia<'card'>, labelId: string, ifMatch?: EntityTags): Promise<TaggedCard> {
  const id = labelForCard(scope, labelId);
  return changeCardLabels(scope, ifMatch, (live) => (live.includes(id) ? live.filter((other) => other !== id) : undefined));
}

/**
 * Writes a card's new label set (ids of deleted labels dropped on the way) with `card.updated`,
 * requiring the set to be as read: a label change in between makes it start again on the card as
 * it now is. One UpdateItem, answered with the card as written. An If-Match is checked after the
 * route's own refusals (a card full of labels is 409 whatever the tag), before the answer that
 * nothing needed writing.
 */
function changeCardLabels(
  scope: ScopeVia<'card'>,
  ifMatch: EntityTags | undefined,
  change: (live: string[]) => string[] | undefined,
): Promise<TaggedCard> {
  return retryChange({ board: scope.board, item: scope.card, callsAfterTurn: WRITE_ONLY }, async ({ board, item: card }) => {
    const next = change(liveLabelIds(card.label_ids, board.labels));
    requireCardMatch(ifMatch, card, board);
    if (!next) return shownCard(card, board);
    return commitCardUpdate(
      scope,
      { board, item: card },
      { ...card, label_ids: new Set(next) },
      next.length > 0
        ? { expression: 'SET label_ids = :next', values: { ':next': new Set(next) } }
        : { expression: 'REMOVE label_ids' },
    );
  });
}
