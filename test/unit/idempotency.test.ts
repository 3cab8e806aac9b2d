import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as createBoard } from '../../functions/boards/create';
import { accessTokenVerifier } from '../../lib/auth/verifier';
import { functionTimeoutSeconds, type RouteRow, routes } from '../../lib/routes';
import { deadlinePassed } from '../../lib/runtime/deadline';
import { apiEvent } from '../support/events';
import { throttled } from '../support/sdk-failures';
import { accessClaims, makeSigner } from '../support/tokens';
import { pause, settle } from '../support/wait';

/**
 * Idempotency-Key failure paths DynamoDB Local cannot produce on demand (the behaviour itself is
 * tested over HTTP in test/integration/idempotency.test.ts): throttled claims, a record that
 * cannot be written after the work is done, a board write that fails after the key was claimed.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const signer = makeSigner();
accessTokenVerifier.cacheJwks(signer.jwks as any);
const userId = randomUUID();
const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
const context = {} as Context;
const withKey = (key: string | undefined) => {
  const event = apiEvent(token, 'POST', '/boards', { title: 'Retry me' });
  if (key !== undefined) event.headers['idempotency-key'] = key;
  return event;
};
const isClaim = (item: Record<string, unknown>) => item.status === 'in_progress' && (item.locked_until as number) > 0;

beforeEach(() => ddb.reset());

const puts = () => ddb.commandCalls(PutCommand).map((call) => call.args[0].input.Item!);
describe('Idempotency-Key failure paths', () => {
  it('without the header, the create is its one transaction: no claim, no kept answer', async () => {
    // Round trips are invisible over HTTP; the stub counts them (the bench shows the same: 1).
    ddb.on(TransactWriteCommand).resolves({});
    const reply = await createBoard(withKey(undefined), context);
    expect(reply.statusCode).toBe(201);
    expect(ddb.calls().map((call) => call.args[0].constructor.name)).toEqual(['TransactWriteCommand']);
  });

  it('a throttled claim is 503 with Retry-After and does no work', async () => {
    ddb.on(PutCommand).rejects(throttled());
    const reply = await createBoard(withKey(randomUUID()), context);
    expect(reply.statusCode).toBe(503);
    expect(reply.headers).toMatchObject({ 'retry-after': expect.stringMatching(/^\d+$/) });
    expect(puts().length).toBeGreaterThan(0);
    expect(puts().every(isClaim)).toBe(true);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('when the answer cannot be kept, the client still gets its 201 and the key is not released (the claim lapses)', async () => {
    ddb.on(PutCommand).callsFake((input) => {
      if (input.Item.status === 'in_progress' && input.Item.locked_until > 0) return {};
      throw throttled();
    });
    ddb.on(TransactWriteCommand).resolves({});
    const before = Math.floor(Date.now() / 1000);
    const reply = await createBoard(withKey(randomUUID()), context);
    expect(reply.statusCode).toBe(201);
    expect(JSON.parse(reply.body as string)).toMatchObject({ title: 'Retry me', owner_id: userId });
    expect(puts().map((item) => item.status)).toEqual(['in_progress', 'completed']);
    // The claim that stays is held past the function's timeout (10 s), so it lapses only once no
    // run of the first request can still be writing.
    expect(puts()[0]!.locked_until).toBeGreaterThanOrEqual(
      before + functionTimeoutSeconds(routes['boards.create'] as RouteRow) + 1,
    );
  });

  it('when the create fails after the claim, the key is released (its claim lapsed at once) so that a retry runs again', async () => {
    ddb.on(PutCommand).resolves({});
    ddb.on(TransactWriteCommand).rejects(throttled());
    const reply = await createBoard(withKey(randomUUID()), context);
    expect(reply.statusCode).toBe(503);
    const [claim, released, ...rest] = puts();
    expect(rest).toEqual([]);
    expect(released).toMatchObject({ pk: claim!.pk, owner: claim!.owner, status: 'in_progress', locked_until: 0 });
    const condition = ddb.commandCalls(PutCommand)[1]!.args[0].input;
    expect(condition.ExpressionAttributeValues).toMatchObject({ ':owner': claim!.owner });
  });

  it('a create that lands after the deadline answered 503 still has its answer kept, so the retry replays it', async () => {
    // The mock replaces the client's send, so its deadline middleware (stopAtDeadline) does not
    // run: each put notes whether that middleware would have refused it.
    const refusedAtDeadline: boolean[] = [];
    ddb.on(PutCommand).callsFake(() => {
      refusedAtDeadline.push(deadlinePassed());
      return {};
    });
    ddb.on(TransactWriteCommand).callsFake(async () => {
      await pause(300);
      return {};
    });
    const nearTheEnd = { getRemainingTimeInMillis: () => 600 } as unknown as Context;
    const reply = await createBoard(withKey(randomUUID()), nearTheEnd);
    expect(reply.statusCode).toBe(503);
    // The create lands ~200 ms after the 503; wait for its answer to be kept (or give up after 10 s).
    await settle(() => puts().length >= 2, Date.now() + 10_000);
    expect(puts().map((item) => item.status)).toEqual(['in_progress', 'completed']);
    expect(refusedAtDeadline).toEqual([false, false]);
  });

  it('a failed claim that returns no record (DynamoDB always should) asks for a retry: 409 with Retry-After', async () => {
    ddb.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }));
    const reply = await createBoard(withKey(randomUUID()), context);
    expect(reply.statusCode).toBe(409);
    expect(reply.headers).toMatchObject({ 'retry-after': '1' });
    expect(JSON.parse(reply.body as string)).toMatchObject({ code: 'idempotency_key_in_use' });
  });
});
