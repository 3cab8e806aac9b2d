import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { nowSeconds } from '../../lib/data/changes';
import { documentClient } from '../../lib/data/db';
import { issueTicket } from '../../lib/data/sockets';
import { Unauthorized } from '../../lib/domain/errors';

/**
 * A ticket never outlives its token (realtime contract), and its `expires_in` says what it really
 * has. The second in which a token expires can turn between its verification and the ticket's
 * write, which DynamoDB Local shows only by chance: the put is stubbed to catch what is written.
 */
const ddb = mockClient(documentClient);
afterAll(() => ddb.restore());
beforeEach(() => {
  ddb.reset();
  ddb.on(PutCommand).resolves({});
});

const stored = () => ddb.commandCalls(PutCommand)[0]!.args[0].input.Item as { expires_at: number; token_expires_at: number };

it('a token with an hour left: the configured 60 s, and expires_in says 60', async () => {
  const issued = await issueTicket(randomUUID(), nowSeconds() + 3600, 60);
  expect(issued.expiresIn).toBe(60);
  expect(stored().expires_at - nowSeconds()).toBeLessThanOrEqual(60);
});

it('a token with 5 s left: the ticket ends with it, and expires_in says so', async () => {
  const tokenExpiresAt = nowSeconds() + 5;
  const issued = await issueTicket(randomUUID(), tokenExpiresAt, 60);
  expect(stored().expires_at).toBe(tokenExpiresAt);
  expect(issued.expiresIn).toBeGreaterThanOrEqual(4);
  expect(issued.expiresIn).toBeLessThanOrEqual(5);
});

it('a token that expired since it was verified gets no ticket (401), and nothing is written', async () => {
  await expect(issueTicket(randomUUID(), nowSeconds(), 60)).rejects.toBeInstanceOf(Unauthorized);
  expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
});
