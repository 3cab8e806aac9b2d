import { call, type TestUser } from './api';
import { eventually } from './wait';

/**
 * Reading mail the way a user does: the local stack keeps every message the Cognito emulator
 * would send and serves them at GET /local/outbox?email= (newest first). A test asks for a code,
 * then waits for a message it had not seen before.
 */
export interface Mail {
  to: string;
  subject: string;
  code: string;
  sent_at: string;
}

export async function outbox(email: string, url?: string): Promise<Mail[]> {
  const reply = await call<Mail[]>('GET', `/local/outbox?email=${encodeURIComponent(email)}`, { url });
  if (reply.status !== 200) throw new Error(`outbox: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** Runs `send` (a request that mails a code), then answers the code of the message it sent. */
export async function codeSentBy(email: string, send: () => Promise<unknown>, url?: string): Promise<string> {
  const before = (await outbox(email, url)).length;
  await send();
  let code: string | undefined;
  await eventually(async () => {
    const messages = await outbox(email, url);
    expect(messages.length).toBeGreaterThan(before);
    code = messages[0]!.code;
  });
  return code!;
}

/** Proves the user's address through the API: a code requested, read from the outbox, sent back. */
export async function verifyAddress(user: Pick<TestUser, 'email' | 'token'>, url?: string): Promise<void> {
  const code = await codeSentBy(
    user.email,
    async () => {
      const reply = await call('POST', '/auth/verify-email/request', { token: user.token, url });
      if (reply.status !== 202) throw new Error(`verify-email/request: ${reply.status} ${JSON.stringify(reply.body)}`);
    },
    url,
  );
  const reply = await call('POST', '/auth/verify-email', { token: user.token, body: { code }, url });
  if (reply.status !== 204) throw new Error(`verify-email: ${reply.status} ${JSON.stringify(reply.body)}`);
}
