import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveOutbox } from '../../infra/local/outbox';

/**
 * The local outbox is read as the emulator appends to it: a message appended after a read is in
 * the next one, a line still being written is not shown half, and a file made anew is read from
 * its start.
 */

const dir = mkdtempSync(join(tmpdir(), 'task-board-outbox-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (to: string, code: string) =>
  `${JSON.stringify({ to, subject: 'Your verification code', code, sent_at: '2026-11-30T12:00:00.000Z' })}\n`;
const codesFor = (file: string, email: string) => {
  const answer = serveOutbox(file, new URL(`http://localhost/local/outbox?email=${encodeURIComponent(email)}`), 'GET');
  return (answer.body as { code: string }[]).map((mail) => mail.code);
};

it('shows each address its own messages, newest first, including those appended after a read', () => {
  const file = join(dir, 'appended.jsonl');
  writeFileSync(file, line('ana@example.test', '111111') + line('bo@example.test', '222222'));
  expect(codesFor(file, 'Ana@Example.test')).toEqual(['111111']);
  appendFileSync(file, line('ana@example.test', '333333'));
  expect(codesFor(file, 'ana@example.test')).toEqual(['333333', '111111']);
  expect(codesFor(file, 'bo@example.test')).toEqual(['222222']);
  expect(codesFor(file, 'cy@example.test')).toEqual([]);
});

it('shows a line only once it is whole', () => {
  const file = join(dir, 'partial.jsonl');
  const whole = line('dee@example.test', '444444');
  writeFileSync(file, whole.slice(0, 30));
  expect(codesFor(file, 'dee@example.test')).toEqual([]);
  appendFileSync(file, whole.slice(30));
  expect(codesFor(file, 'dee@example.test')).toEqual(['444444']);
});

it('reads a file made anew from its start, whether shorter or longer than the last', () => {
  const file = join(dir, 'renewed.jsonl');
  writeFileSync(file, line('eve@example.test', '555555') + line('eve@example.test', '666666'));
  expect(codesFor(file, 'eve@example.test')).toEqual(['666666', '555555']);
  writeFileSync(file, line('eve@example.test', '777777'));
  expect(codesFor(file, 'eve@example.test')).toEqual(['777777']);
  rmSync(file);
  expect(codesFor(file, 'eve@example.test')).toEqual([]);
  writeFileSync(file, line('eve@example.test', '888888') + line('eve@example.test', '999999'));
  expect(codesFor(file, 'eve@example.test')).toEqual(['999999', '888888']);
  // Replaced by a longer file while unread: another inode, not a continuation.
  const longer = `${file}.new`;
  writeFileSync(
    longer,
    line('eve@example.test', '121212') + line('eve@example.test', '131313') + line('eve@example.test', '141414'),
  );
  renameSync(longer, file);
  expect(codesFor(file, 'eve@example.test')).toEqual(['141414', '131313', '121212']);
});
