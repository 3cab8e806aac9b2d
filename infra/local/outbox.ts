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
 * How far each outbox file has been read (which file: its device and inode), and its messages by
 * address, oldest first. The emulator only appends to it, a line a message, and the suite's
 * shared stack sends one for nearly every account it makes: each request reads only what was
 * appended since the last.
 */
const readSoFar = new Map<string, { file: string; bytes: number; byAddress: Map<string, OutboxMessage[]> }>();

/** The messages sent to `email` (compared case-insensitively), newest first. */
function readOutbox(path: string, email: string): OutboxMessage[] {
  if (!existsSync(path)) {
    readSoFar.delete(path);
    return [];
  }
  const { dev, ino, size } = statSync(path);
  const file = `${dev}:${ino}`;
  let read = readSoFar.get(path);
  // Another file (its data directory made again) or a shorter one: read from its start.
  if (!read || read.file !== file || size < read.bytes) {
    read = { file, bytes: 0, byAddress: new Map() };
    readSoFar.set(path, read);
  }
  if (size > read.bytes) {
    let added = Buffer.alloc(size - read.bytes);
    const fd = openSync(path, 'r');
    try {
      added = added.subarray(0, readSync(fd, added, 0, added.length, read.bytes));
    } finally {
      closeSync(fd);
    }
    // Whole lines only: one still being appended is read with the next request. All of them
    // parsed before any is kept, so a line that fails to parse fails every read the same way.
    const whole = added.lastIndexOf(0x0a) + 1;
    const messages = added
      .subarray(0, whole)
      .toString('utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as OutboxMessage);
    for (const { to, subject, code, sent_at } of messages) {
      const kept = read.byAddress.get(to) ?? [];
      kept.push({ to, subject, code, sent_at });
      read.byAddress.set(to, kept);
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
