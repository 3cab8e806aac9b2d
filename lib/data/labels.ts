import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Conflict, Forbidden, LimitReached, NotFound } from '../domain/errors';
import { MAX_LABELS_PER_BOARD, MAX_LABELS_PER_CARD } from '../domain/limits';
import { byLabelName } from '../domain/ordering';
import { actorOf, type BoardScope } from './access';
import { eventItemPut, STAMP_ATTRIBUTE, stamp } from './changes';
import {
  documentClient,
  isConditionFailure,
  itemAtCancellation,
  itemAtConditionFailure,
  LostRace,
  queryAll,
  queryPages,
  retryLostRaces,
  tableName,
  transactWrite,
} from './db';
import {
  type Card,
  type CardRecord,
  isLiveLabel,
  type Label,
  type LabelRecord,
  liveLabelIds,
  now,
  toCard,
  toLabel,
} from './records';
import { cancellationCodes } from './sdk-errors';
import { keys, labelNameKey } from './table';

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
  try {
    await transactWrite([
      {
        Put: {
          Item: {
            ...keys.label(boardId, label.id),
            type: 'label',
            ...label,
            [STAMP_ATTRIBUTE]: stamp('label.created', actorOf(scope)),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      { Put: { Item: { ...keys.labelLookup(label.id), type: 'label_lookup', board_id: boardId } } },
      {
        Put: {
          Item: { ...keys.labelName(boardId, label.name), type: 'label_name', label_id: label.id },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          Key: keys.board(boardId),
          // The label's own item carries this change's event; the board's map is not one.
          UpdateExpression: 'SET labels.#id = :name REMOVE ev',
          ConditionExpression: 'attribute_exists(pk) AND size(labels) < :max',
          ExpressionAttributeNames: { '#id': label.id },
          ExpressionAttributeValues: { ':name': label.name, ':max': MAX_LABELS_PER_BOARD },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ]);
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes?.[3] === 'ConditionalCheckFailed') {
      if (!itemAtCancellation(error, 3)) throw new NotFound('Board');
      throw new LimitReached(`A board can have at most ${MAX_LABELS_PER_BOARD} labels; delete one first.`);
    }
    if (codes?.[2] === 'ConditionalCheckFailed') throw nameTaken();
    throw error;
  }
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
export async function updateLabel(scope: BoardScope, changes: { name?: string | null; color?: string | null }): Promise<Label> {
  let label = scope.label!;
  const { boardId } = scope;
  return retryLostRaces(async () => {
    const next: LabelRecord = { ...label, name: changes.name ?? label.name, color: changes.color ?? label.color };
    if (next.name === label.name && next.color === label.color) return toLabel(label);
    const nameMoves = labelNameKey(next.name) !== labelNameKey(label.name);
    try {
      await transactWrite([
        {
          Update: {
            Key: keys.label(boardId, label.id),
            UpdateExpression: 'SET #name = :name, color = :color, ev = :ev',
            ConditionExpression: 'attribute_exists(pk) AND #name = :was AND color = :wasColor',
            ExpressionAttributeNames: { '#name': 'name' },
            ExpressionAttributeValues: {
              ':name': next.name,
              ':color': next.color,
              ':was': label.name,
              ':wasColor': label.color,
              ':ev': stamp('label.updated', actorOf(scope)),
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        {
          Update: {
            Key: keys.board(boardId),
            UpdateExpression: 'SET labels.#id = :name REMOVE ev',
            ConditionExpression: 'attribute_exists(labels.#id)',
            ExpressionAttributeNames: { '#id': label.id },
            ExpressionAttributeValues: { ':name': next.name },
          },
        },
        ...(nameMoves
          ? [
              {
                Delete: {
                  Key: keys.labelName(boardId, label.name),
                  ConditionExpression: 'label_id = :id',
                  ExpressionAttributeValues: { ':id': label.id },
                },
              },
              {
                Put: {
                  Item: { ...keys.labelName(boardId, next.name), type: 'label_name', label_id: label.id },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            ]
          : []),
      ]);
      return toLabel(next);
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[0] === 'ConditionalCheckFailed') {
        label = labelAsItIsNow(error);
        throw new LostRace();
      }
      if (codes?.[1] === 'ConditionalCheckFailed') throw new NotFound('Label');
      if (codes?.[3] === 'ConditionalCheckFailed') throw nameTaken();
      throw error;
    }
  });
}

/**
 * Deletes a label: one transaction takes it off the board's map (from then on no read shows it,
 * on any card) with its item, lookup and name, and writes the `label.deleted` event; then it is
 * taken off the cards that carry it, page by page, 16 updates at a time.
 */
export async function deleteLabel(scope: BoardScope): Promise<void> {
  let label = scope.label!;
  const { boardId } = scope;
  // The name item to free is the label's name at the moment of the delete: a rename in between
  // moved it, so the delete requires the name as read and starts again on the label as it is.
  await retryLostRaces(async () => {
    try {
      await transactWrite([
        {
          Delete: {
            Key: keys.label(boardId, label.id),
            ConditionExpression: 'attribute_exists(pk) AND #name = :was',
            ExpressionAttributeNames: { '#name': 'name' },
            ExpressionAttributeValues: { ':was': label.name },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        { Delete: { Key: keys.labelLookup(label.id) } },
        {
          Delete: {
            Key: keys.labelName(boardId, label.name),
            ConditionExpression: 'label_id = :id',
            ExpressionAttributeValues: { ':id': label.id },
          },
        },
        {
          Update: {
            Key: keys.board(boardId),
            UpdateExpression: 'REMOVE labels.#id, ev',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#id': label.id },
          },
        },
        // Clients drop the label from every card: no card.updated per card (realtime contract).
        eventItemPut(boardId, stamp('label.deleted', actorOf(scope), { label_id: label.id })),
      ]);
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[0] === 'ConditionalCheckFailed') {
        label = labelAsItIsNow(error);
        throw new LostRace();
      }
      if (codes?.[2] === 'ConditionalCheckFailed') throw new LostRace();
      if (codes?.[3] === 'ConditionalCheckFailed') throw new NotFound('Label');
      throw error;
    }
  });
  await removeLabelFromCards(boardId, label.id);
}

/** The label as it is now, from the label write's ALL_OLD in a cancelled transaction; gone is 404. */
function labelAsItIsNow(error: unknown): LabelRecord {
  const current = itemAtCancellation<LabelRecord>(error, 0);
  if (!current) throw new NotFound('Label');
  return current;
}

const CLEANUP_PARALLELISM = 16;

async function removeLabelFromCards(boardId: string, labelId: string): Promise<void> {
  const pending: Promise<unknown>[] = [];
  const untag = async (key: { pk: string; sk: string }) => {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          // No event: clients already dropped the label on label.deleted.
          UpdateExpression: 'DELETE label_ids :label REMOVE ev',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':label': new Set([labelId]) },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error; // the card was deleted meanwhile
    }
  };
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
export function attachLabel(scope: BoardScope, labelId: string): Promise<Card> {
  const id = labelForCard(scope, labelId);
  return changeCardLabels(scope, (live) => {
    if (live.includes(id)) return undefined;
    if (live.length >= MAX_LABELS_PER_CARD) throw new LimitReached(`A card can carry at most ${MAX_LABELS_PER_CARD} labels.`);
    return [...live, id];
  });
}

/** Takes a label off a card; a label not on it changes nothing. */
export function detachLabel(scope: BoardScope, labelId: string): Promise<Card> {
  const id = labelForCard(scope, labelId);
  return changeCardLabels(scope, (live) => (live.includes(id) ? live.filter((other) => other !== id) : undefined));
}

/**
 * Writes a card's new label set (ids of deleted labels dropped on the way) with `card.updated`,
 * requiring the set to be as read: a label change in between makes it start again on the card as
 * it now is. One UpdateItem, answered with the card as written.
 */
function changeCardLabels(scope: BoardScope, change: (live: string[]) => string[] | undefined): Promise<Card> {
  let card = scope.card!;
  const labels = scope.board.labels;
  return retryLostRaces(async () => {
    const next = change(liveLabelIds(card.label_ids, labels));
    if (!next) return toCard(card, labels);
    const seen = card.label_ids && card.label_ids.size > 0 ? card.label_ids : undefined;
    try {
      const out = await documentClient.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.card(scope.boardId, card.id),
          UpdateExpression: next.length > 0 ? 'SET label_ids = :next, ev = :ev' : 'SET ev = :ev REMOVE label_ids',
          ConditionExpression: seen
            ? 'attribute_exists(pk) AND label_ids = :seen'
            : 'attribute_exists(pk) AND attribute_not_exists(label_ids)',
          ExpressionAttributeValues: {
            ':ev': stamp('card.updated', actorOf(scope)),
            ...(next.length > 0 ? { ':next': new Set(next) } : {}),
            ...(seen ? { ':seen': seen } : {}),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return toCard(out.Attributes as CardRecord, labels);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const current = itemAtConditionFailure<CardRecord>(error);
      if (!current) throw new NotFound('Card');
      card = current;
      throw new LostRace();
    }
  });
}
