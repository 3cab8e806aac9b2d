import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { documentClient } from '../../lib/data/db';
import { issueTicket } from '../../lib/data/sockets';
import { Unauthorized } from '../../lib/domain/errors';

/**
 * A ticket never outlives its token (realtime contract), and its `expires_in` says what it really
 * has. The second in which a token expires can turn between its verification and the ticket's
 * write, which DynamoDB Local shows only by chance: the clock is pinned and the put stubbed to see
 * what is written at a chosen second; the ticket is written in one transaction. (The full 60 s on DynamoDB Local: test/integration/realtime.test.ts.)
 */
const ddb = mockClient(documentClient);
const NOW_MS = Date.UTC(2026, 10, 25, 12, 0, 0, 400);
const NOW = Math.floor(NOW_MS / 1000);
afterAll(() => ddb.restore());
beforeEach(() => {
  ddb.reset();
  ddb.on(TransactWriteCommand).resolves({});
  jest.spyOn(Date, 'now').mockReturnValue(NOW_MS);
});
afterEach(() => jest.restoreAllMocks());

/** The ticket item of the one transaction (with its entry under the user and the account check). */
const stored = () =>
  ddb.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems![0]!.Put!.Item as {
    expires_at: number;
    token_expires_at: number;
  };

it('a token with 5 s left: the ticket ends with it, not 60 s later, and expires_in says 5', async () => {
  const issued = await issueTicket(randomUUID(), NOW + 5, 60);
  expect(stored()).toMatchObject({ expires_at: NOW + 5, token_expires_at: NOW + 5 });
  expect(issued.expiresIn).toBe(5);
});

it('a token with 61 s left: the full configured lifetime, 60 s', async () => {
  const issued = await issueTicket(randomUUID(), NOW + 61, 60);
  expect(stored()).toMatchObject({ expires_at: NOW + 60, token_expires_at: NOW + 61 });
  expect(issued.expiresIn).toBe(60);
});

it('a token that expired since it was verified gets no ticket (401), and nothing is written', async () => {
  await expect(issueTicket(randomUUID(), NOW, 60)).rejects.toBeInstanceOf(Unauthorized);
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
});
