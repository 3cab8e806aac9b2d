import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The local stack's outbox: every email the Cognito emulator would have sent (verification and
 * password reset codes), kept by infra/local/cognito-emulator.cjs as JSON lines in its data
 * directory and served here, by the local HTTP server only, at `GET /local/outbox?email=`. It is
 * not a row of the route table: CDK never deploys it (test/infra/local-outbox.test.ts).
 */
export const OUTBOX_PATH = '/local/outbox';

interface OutboxMessage {
  to: string;
  subject: string;
  code: string;
  sent_at: string;
}

export const outboxFile = (cognitoDataDir: string) => join(cognitoDataDir, 'outbox.jsonl');

/** The messages sent to `email` (compared case-insensitively), newest first. */
function readOutbox(file: string, email: string): OutboxMessage[] {
  if (!existsSync(file)) return [];
  const to = email.toLowerCase();
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as OutboxMessage)
    .filter((message) => message.to === to)
    .map(({ to, subject, code, sent_at }) => ({ to, subject, code, sent_at }))
    .reverse();
}

/** The local server's answer to a request for the outbox path: a plain status and JSON body. */
export function serveOutbox(file: string, url: URL, method: string): { status: number; body: unknown; problem: boolean } {
  const problem = (status: number, title: string, detail: string) => ({
    status,
    problem: true,
    body: { type: 'about:blank', title, status, detail, code: status === 405 ? 'method_not_allowed' : 'bad_request' },
  });
  if (method !== 'GET') return problem(405, 'Method Not Allowed', 'This path accepts only GET.');
  const email = url.searchParams.get('email');
  if (!email || email.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(email)) {
    return problem(400, 'Bad Request', 'email: a query parameter with the address whose messages to show is required.');
  }
  return { status: 200, body: readOutbox(file, email), problem: false };
}
