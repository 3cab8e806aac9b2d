import { MAX_BATCH_OPERATIONS } from '../../lib/domain/limits';
import { dynamoLimits } from '../../lib/runtime/aws-limits';

/**
 * Big boards for the tests (test/integration/big-board.test.ts) and the bench (bench/scale.ts,
 * bench/conditional.ts), made as a client would make them: `card.create` operations sent through
 * `POST /boards/{id}/batch`, so the board holds exactly what the service writes (log items and
 * `seq` included) and no test or bench run depends on how cards are stored.
 */

/** A card to create. */
interface SeedCard {
  title: string;
  description?: string;
}

/** A column and the cards to create in it. */
export interface SeedColumn {
  id: string;
  cards: SeedCard[];
}

/** A card as asked for, with the id it was created with. */
export type SeededCard = SeedCard & { id: string };

interface CardCreate {
  op: 'card.create';
  column_id: string;
  title: string;
  description?: string;
}

/**
 * Sends one batch body to `POST /boards/{id}/batch` of the board being seeded, through the
 * caller's own client (test/support/api.ts `call`, bench/client.ts `Client.send`).
 */
export type SendBatch = (body: { operations: CardCreate[] }) => Promise<{ status: number; body: unknown }>;

/** Every route's request body limit (docs/reference.md; larger is 413). */
const MAX_BODY_BYTES = 64 * 1024;

/** `{"operations":[]}`: the body around the operations, which are joined by one comma each. */
const ENVELOPE_BYTES = Buffer.byteLength(JSON.stringify({ operations: [] }));

/**
 * Writes of a batch of `creates` card creates into `columns` existing columns, at most: each
 * create is its card, its log item and, on a board made before card-id prefixes, its own id
 * lookup; each column's lookup takes one update, and the board item one more (lib/data/batch.ts
 * `itemCount`). Over DynamoDB's transaction limit the batch is 409.
 */
const transactionItems = (creates: number, columns: number) => 3 * creates + columns + 1;

/**
 * The creates in order, cut into batches of at most MAX_BATCH_OPERATIONS operations whose JSON
 * body is at most MAX_BODY_BYTES in UTF-8 and whose writes fit in one transaction.
 */
function packCreates(creates: CardCreate[]): CardCreate[][] {
  const batches: CardCreate[][] = [];
  let batch: CardCreate[] = [];
  let bytes = ENVELOPE_BYTES;
  let columns = new Set<string>();
  for (const create of creates) {
    const own = Buffer.byteLength(JSON.stringify(create));
    if (ENVELOPE_BYTES + own > MAX_BODY_BYTES) {
      throw new Error(
        `card "${create.title.slice(0, 40)}" of column ${create.column_id} alone makes a batch body of ${ENVELOPE_BYTES + own} bytes, over the ${MAX_BODY_BYTES} a request may have: a shorter description (in UTF-8 bytes) is needed`,
      );
    }
    const fits =
      batch.length < MAX_BATCH_OPERATIONS &&
      bytes + (batch.length > 0 ? 1 : 0) + own <= MAX_BODY_BYTES &&
      transactionItems(batch.length + 1, columns.size + (columns.has(create.column_id) ? 0 : 1)) <= dynamoLimits.transactItems;
    if (!fits) {
      batches.push(batch);
      batch = [];
      bytes = ENVELOPE_BYTES;
      columns = new Set();
    }
    bytes += (batch.length > 0 ? 1 : 0) + own;
    batch.push(create);
    columns.add(create.column_id);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** Sends of one batch before giving up on 503s. */
const ATTEMPTS = 5;

/**
 * Creates the cards of each column through the batch route, column after column, `inFlight`
 * batches at a time. One at a time by default: batches of one board take turns
 * (lib/data/board-turns.ts), and one sent while another is in progress waits its turn and then
 * reads everything again. On the local stack (one warm run each) 1,032 cards of 1 KB (42 batches)
 * took 8.8 s with one batch in flight, 7.7 s with two and 9.5 s with four, and 169 of 49 KB (169
 * batches) 6.1, 8.1 and 7.8 s, while the service made 9 or 10 DynamoDB calls a batch instead of 4.
 *
 * A 503 (storage busy after the SDK's retries: the batch's one transaction wrote nothing) is sent
 * again, as bench/client.ts `expect` does. No Idempotency-Key: it would add a write of the whole
 * answer to every batch, and only a retry after a lost answer needs one, which this never makes
 * (a failed fetch fails the seeding). Batches sent together land in any order, so a
 * column's cards need not be in the order given: each column's cards are returned with their ids
 * in position order, as the answers place them.
 */
export async function seedViaBatch(send: SendBatch, columns: SeedColumn[], { inFlight = 1 } = {}): Promise<SeededCard[][]> {
  const asked = new Map<CardCreate, SeedCard>();
  const batches = packCreates(
    columns.flatMap((column) =>
      column.cards.map((card) => {
        const create: CardCreate = {
          op: 'card.create',
          column_id: column.id,
          title: card.title,
          ...(card.description === undefined ? {} : { description: card.description }),
        };
        asked.set(create, card);
        return create;
      }),
    ),
  );
  const placed = new Map(columns.map((column) => [column.id, [] as (SeededCard & { position: number })[]]));
  let next = 0;
  // After one lane's error the others stop taking batches: the seeding has failed.
  let failed = false;
  const lane = async () => {
    while (next < batches.length && !failed) {
      const operations = batches[next++]!;
      try {
        const results = await sendBatch(send, operations);
        results.forEach((card, i) => {
          if (card.column_id !== operations[i]!.column_id)
            throw new Error(`batch result ${i} is a card of column ${card.column_id}, not ${operations[i]!.column_id}`);
          placed.get(card.column_id)!.push({ ...asked.get(operations[i]!)!, id: card.id, position: card.position });
        });
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, batches.length) }, lane));
  return columns.map((column) => {
    const cards = placed.get(column.id)!.sort((a, b) => a.position - b.position);
    if (cards.some((card, i) => i > 0 && card.position === cards[i - 1]!.position))
      throw new Error(`two cards of column ${column.id} were answered at one position`);
    return cards.map(({ position: _, ...card }) => card);
  });
}

async function sendBatch(
  send: SendBatch,
  operations: CardCreate[],
): Promise<{ id: string; column_id: string; position: number }[]> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send({ operations });
    const body = answer.body as { results?: { id: string; column_id: string; position: number }[] } | undefined;
    if (answer.status === 200 && body?.results?.length === operations.length) return body.results;
    if (answer.status !== 503 || attempt === ATTEMPTS) {
      throw new Error(
        `POST /boards/{id}/batch of ${operations.length} card creates: ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 500)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
  }
}
