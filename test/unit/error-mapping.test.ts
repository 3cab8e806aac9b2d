import { randomUUID } from 'node:crypto';
import { BatchGetCommand, DynamoDBDocumentClient, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as createBoard } from '../../functions/boards/create';
import { handler as listBoards } from '../../functions/boards/list';
import { handler as renameBoard } from '../../functions/boards/rename';
import { accessTokenVerifier } from '../../lib/auth/verifier';
import { apiEvent } from '../support/events';
import { cancelled, throttled } from '../support/sdk-failures';
import { accessClaims, makeSigner } from '../support/tokens';

/**
 * Failure paths DynamoDB Local cannot produce on demand: throttling that outlasted the SDK's
 * retries, cancelled transactions, unexpected errors. The handlers are the real ones.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const signer = makeSigner();
accessTokenVerifier.cacheJwks(signer.jwks as any);
const userId = randomUUID();
const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
const event = (method: string, path: string, body?: unknown, pathParameters?: Record<string, string>) =>
  apiEvent(token, method, path, body, pathParameters);

const context = {} as Context;
const parse = (body: string | undefined) => JSON.parse(body ?? '{}');

beforeEach(() => ddb.reset());

describe('storage failures become problem+json answers', () => {
  it('throttling that outlasted the SDK retries is 503 with Retry-After', async () => {
    ddb.on(QueryCommand).rejects(throttled());
    const reply = await listBoards(event('GET', '/boards'), context);
    expect(reply.statusCode).toBe(503);
    expect(reply.headers).toMatchObject({
      'content-type': 'application/problem+json',
      'retry-after': expect.stringMatching(/^\d+$/),
    });
    expect(parse(reply.body)).toMatchObject({ status: 503, title: 'Service Unavailable' });
  });

  it('a transaction cancelled by throttling is 503', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled('ThrottlingError', 'None', 'None'));
    const reply = await createBoard(event('POST', '/boards', { title: 'x' }), context);
    expect(reply.statusCode).toBe(503);
  });

  it('a transaction that keeps conflicting with others is retried, then 503 with Retry-After (contention, not a client conflict)', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled('TransactionConflict', 'None', 'None'));
    const reply = await createBoard(event('POST', '/boards', { title: 'x' }), context);
    expect(reply.statusCode).toBe(503);
    expect(reply.headers).toMatchObject({ 'retry-after': expect.stringMatching(/^\d+$/) });
    expect(ddb.commandCalls(TransactWriteCommand).length).toBeGreaterThan(1);
  });

  it('a transaction conflict that clears on retry succeeds', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled('TransactionConflict', 'None', 'None'))
      .resolves({});
    const reply = await createBoard(event('POST', '/boards', { title: 'x' }), context);
    expect(reply.statusCode).toBe(201);
    expect(parse(reply.body)).toMatchObject({ title: 'x', owner_id: userId });
  });

  it('a conditional write that finds the board gone is 404', async () => {
    const boardId = randomUUID();
    ddb.on(BatchGetCommand).resolves({
      Responses: {
        [process.env.TABLE_NAME!]: [
          {
            pk: `BOARD#${boardId}`,
            sk: '#BOARD',
            id: boardId,
            owner_id: userId,
            title: 't',
            created_at: new Date().toISOString(),
          },
          { pk: `BOARD#${boardId}`, sk: `#MEMBER#${userId}`, board_id: boardId, user_id: userId, role: 'owner' },
          { pk: `USER#${userId}`, sk: '#PROFILE', user_id: userId },
        ],
      },
    });
    // A rename is one transaction: the board item (its title and its seq), then the change's log
    // item. A board deleted since the read fails the first's condition with no item to return.
    ddb.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    const reply = await renameBoard(event('PATCH', `/boards/${boardId}`, { title: 'new' }, { id: boardId }), context);
    expect(reply.statusCode).toBe(404);
  });

  it('an unexpected error is 500 with no internals in the body', async () => {
    ddb
      .on(QueryCommand)
      .rejects(Object.assign(new Error('ValidationException: table task-board pk is broken'), { name: 'ValidationException' }));
    const reply = await listBoards(event('GET', '/boards'), context);
    expect(reply.statusCode).toBe(500);
    expect(reply.body).not.toMatch(/ValidationException|task-board|pk|stack|Error:/);
    expect(parse(reply.body)).toMatchObject({ status: 500, title: 'Internal Server Error', type: 'about:blank' });
  });

  it('a network failure reaching DynamoDB is 503', async () => {
    ddb.on(QueryCommand).rejects(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' }));
    const reply = await listBoards(event('GET', '/boards'), context);
    expect(reply.statusCode).toBe(503);
  });
});
