import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
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

/**
 * How far each outbox file has been read, and its messages by address, oldest first. The file
 * only grows (the emulator appends a line a message), and a test run's shared stack sends
 * thousands: parsing it whole at every request made each read slower than the one before.
 */
const readSoFar = new Map<string, { bytes: number; byAddress: Map<string, OutboxMessage[]> }>();

/** The messages sent to `email` (compared case-insensitively), newest first. */
function readOutbox(file: string, email: string): OutboxMessage[] {
  if (!existsSync(file)) return [];
  const size = statSync(file).size;
  let read = readSoFar.get(file);
  // A smaller file is a new one (its data directory was made again): read from its start.
  if (!read || size < read.bytes) {
    read = { bytes: 0, byAddress: new Map() };
    readSoFar.set(file, read);
  }
  if (size > read.bytes) {
    let added = Buffer.alloc(size - read.bytes);
    const fd = openSync(file, 'r');
    try {
      added = added.subarray(0, readSync(fd, added, 0, added.length, read.bytes));
    } finally {
      closeSync(fd);
    }
    // Whole lines only: one still being appended is read with the next request.
    const whole = added.lastIndexOf(0x0a) + 1;
    for (const line of added.subarray(0, whole).toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      const { to, subject, code, sent_at } = JSON.parse(line) as OutboxMessage;
      const messages = read.byAddress.get(to) ?? [];
      messages.push({ to, subject, code, sent_at });
      read.byAddress.set(to, messages);
    }
    read.bytes += whole;
  }
  return [...(read.byAddress.get(email.toLowerCase()) ?? [])].reverse();
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
