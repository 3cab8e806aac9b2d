import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as createBoard } from '../../functions/boards/create';
import { accessTokenVerifier } from '../../lib/auth/verifier';
import { apiEvent } from '../support/events';
import { accessClaims, makeSigner } from '../support/tokens';

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
const isClaim = (input: { Item?: Record<string, unknown> }) => input.Item?.type === 'idempotency';
const throttled = () => new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} });

beforeEach(() => ddb.reset());

describe('Idempotency-Key failure paths', () => {
  it('without the header, the create is its one transaction and nothing else', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const reply = await createBoard(withKey(undefined), context);
    expect(reply.statusCode).toBe(201);
    expect(ddb.calls().map((call) => call.args[0].constructor.name)).toEqual(['TransactWriteCommand']);
  });

  it('with the header: claim, create, keep the answer, in that order', async () => {
    ddb.on(PutCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    const reply = await createBoard(withKey(randomUUID()), context);
    expect(reply.statusCode).toBe(201);
    const calls = ddb.calls().map((call) => call.args[0]);
    expect(calls.map((command) => command.constructor.name)).toEqual(['PutCommand', 'TransactWriteCommand', 'UpdateCommand']);
    expect(isClaim((calls[0] as PutCommand).input)).toBe(true);
    const kept = JSON.parse((calls[2] as UpdateCommand).input.ExpressionAttributeValues![':answer']);
    expect(kept).toEqual({ status: 201, body: JSON.parse(reply.body as string) });
  });

  it('a throttled claim is 503 with Retry-After and does no work', async () => {
    ddb.on(PutCommand).rejects(throttled());
    const reply = await createBoard(withKey(randomUUID()), context);
    expect(reply.statusCode).toBe(503);
    expect(reply.headers).toMatchObject({ 'retry-after': expect.stringMatching(/^\d+$/) });
    expect(ddb.commandCalls(PutCommand).every((call) => isClaim(call.args[0].input))).toBe(true);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('when the answer cannot be kept, the client still gets its 201 (the claim lapses after the timeout)', async () => {
    ddb.on(PutCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(UpdateCommand).rejects(throttled());
    const reply = await createBoard(withKey(randomUUID()), context);
    expect(reply.statusCode).toBe(201);
    expect(JSON.parse(reply.body as string)).toMatchObject({ title: 'Retry me', owner_id: userId });
  });

  it('when the create fails after the claim, the key is released so that a retry runs again', async () => {
    ddb.on(PutCommand).resolves({});
    ddb.on(TransactWriteCommand).rejects(throttled());
    ddb.on(DeleteCommand).resolves({});
    const reply = await createBoard(withKey(randomUUID()), context);
    expect(reply.statusCode).toBe(503);
    const claim = ddb.commandCalls(PutCommand)[0]!.args[0].input.Item!;
    const released = ddb.commandCalls(DeleteCommand).map((call) => call.args[0].input.Key);
    expect(released).toEqual([{ pk: claim.pk, sk: claim.sk }]);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('a failed claim that returns no record (DynamoDB always should) asks for a retry: 409 with Retry-After', async () => {
    ddb.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }));
    const reply = await createBoard(withKey(randomUUID()), context);
    expect(reply.statusCode).toBe(409);
    expect(reply.headers).toMatchObject({ 'retry-after': '1' });
    expect(JSON.parse(reply.body as string)).toMatchObject({ code: 'idempotency_key_in_use' });
  });
});
