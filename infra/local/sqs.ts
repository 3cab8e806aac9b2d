import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import * as sqsSdk from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { functionTimeoutSeconds, type QueueConsumerRow } from '../../lib/rows/row';
import { AwsJsonError, type AwsJsonOperation, members, startAwsJsonServer } from './aws-json-server';
import { REPO_ROOT } from './http-adapter';
import { asFunction } from './iam';

/**
 * The local stack's stand-in for Amazon SQS, in this process, its messages in memory and, given a
 * file (the local stack's DATA_DIR/sqs.json), written there within 50 ms of each change and at
 * close, so that a restart keeps them as SQS would (a crash may lose the last 50 ms). It answers the SQS JSON
 * protocol that @aws-sdk/client-sqs speaks (`x-amz-target: AmazonSQS.<Op>`,
 * `application/x-amz-json-1.0`, errors as `__type` plus the `x-amzn-query-error` header the
 * client's query-compatible mode reads; the HTTP side in infra/local/aws-json-server.ts, with the
 * KMS stand-in's), for the operations the service and Lambda's event source
 * use: SendMessage(Batch), ReceiveMessage (long polling), DeleteMessage(Batch),
 * ChangeMessageVisibility, GetQueueAttributes and GetQueueUrl. The semantics that decide whether
 * a delivery happens are SQS's: DelaySeconds 0-900 (more is refused), the visibility timeout,
 * the receive count and the redrive to the dead-letter queue after `maxReceiveCount` receives, the
 * message size limit (262,144 bytes, CDK sets the same on AWS), retention, and receipt handles
 * that change on every receive (a stale one deletes nothing). Not modelled: FIFO queues, message
 * attributes (refused), SQS's own at-least-once duplicates and its sampling of servers on a
 * short poll (here every receive sees every visible message).
 */

const SQS_ACCOUNT = '000000000000';
const MAX_DELAY_SECONDS = 900;
const MAX_VISIBILITY_SECONDS = 43_200;
const DEFAULT_MAX_MESSAGE_BYTES = 262_144;
const MAX_WAIT_SECONDS = 20;
const MAX_RECEIVE = 10;
const MAX_BATCH = 10;

export interface LocalQueueSettings {
  name: string;
  visibilityTimeoutSeconds?: number;
  delaySeconds?: number;
  retentionSeconds?: number;
  maxMessageBytes?: number;
  /** Moves a message received this many times (and received again) to `deadLetterQueue`. */
  redrive?: { deadLetterQueue: string; maxReceiveCount: number };
}

interface StoredMessage {
  id: string;
  body: string;
  md5: string;
  sentAt: number;
  /** Not receivable before this time (delay, then each visibility timeout). */
  visibleAt: number;
  receiveCount: number;
  firstReceiveAt?: number;
  /** The handle of the latest receive: only it deletes or changes the message. */
  receipt?: string;
}

class SqsError extends AwsJsonError {
  constructor(
    /** The `__type` of SQS's JSON answer. */
    type: string,
    /** The query-compatible code (`x-amzn-query-error`), which the SDK names the error after. */
    readonly code: string,
    message: string,
    status = 400,
  ) {
    super(type, message, status, code);
  }
}

const sqsError = (shape: string, code: string, message: string, status = 400) =>
  new SqsError(`com.amazonaws.sqs#${shape}`, code, message, status);
const invalidParameter = (message: string) =>
  new SqsError('com.amazon.coral.service#InvalidParameterValueException', 'InvalidParameterValue', message);
const noQueue = () =>
  sqsError('QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue', 'The specified queue does not exist.');

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

class LocalQueue {
  readonly messages = new Map<string, StoredMessage>();
  readonly createdAt = Date.now();
  private waiters = new Set<() => void>();
  constructor(readonly settings: Required<Omit<LocalQueueSettings, 'redrive'>> & Pick<LocalQueueSettings, 'redrive'>) {}

  /** Wakes long polls; a timer wakes them again when a delayed or invisible message becomes ready. */
  notify() {
    for (const wake of this.waiters) wake();
  }
  /** Resolves when something may have become receivable, or after `ms`. */
  waitForChange(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const next = this.nextVisibleAt();
      const wait = Math.max(0, Math.min(ms, next === undefined ? ms : next - Date.now()));
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.waiters.add(done);
      signal?.addEventListener('abort', done);
    });
  }
  private nextVisibleAt(): number | undefined {
    let next: number | undefined;
    for (const message of this.messages.values()) if (next === undefined || message.visibleAt < next) next = message.visibleAt;
    return next;
  }
  /** Drops messages past the retention period; whether any was dropped. */
  expire(now: number): boolean {
    let dropped = false;
    for (const [id, message] of this.messages) {
      if (message.sentAt + this.settings.retentionSeconds * 1000 <= now) dropped = this.messages.delete(id);
    }
    return dropped;
  }
}

export interface ReceivedMessage {
  MessageId: string;
  ReceiptHandle: string;
  MD5OfBody: string;
  Body: string;
  Attributes: Record<string, string>;
}

/** The queues and their operations, callable in process (the event source) and over HTTP (the SDK). */
export class LocalSqs {
  private readonly queues = new Map<string, LocalQueue>();
  endpoint = '';
  /** What the file held at start, by queue name, until each queue is created. */
  private readonly saved: Record<string, StoredMessage[]>;
  private saveTimer: NodeJS.Timeout | undefined;

  /** `file`: where the messages are kept across restarts (none: memory only). */
  constructor(private readonly file?: string) {
    this.saved = file && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, StoredMessage[]>) : {};
  }

  createQueue(settings: LocalQueueSettings): string {
    if (!this.queues.has(settings.name)) {
      const queue = new LocalQueue({
        name: settings.name,
        visibilityTimeoutSeconds: settings.visibilityTimeoutSeconds ?? 30,
        delaySeconds: settings.delaySeconds ?? 0,
        retentionSeconds: settings.retentionSeconds ?? 345_600,
        maxMessageBytes: settings.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
        redrive: settings.redrive,
      });
      for (const message of this.saved[settings.name] ?? []) queue.messages.set(message.id, message);
      this.queues.set(settings.name, queue);
    }
    return this.queueUrl(settings.name);
  }

  /** Schedules a write of every queue's messages (at most one per 50 ms). */
  private changed() {
    if (!this.file || this.saveTimer) return;
    this.saveTimer = setTimeout(() => this.flush(), 50);
    this.saveTimer.unref();
  }

  /** Writes every queue's messages to the file now (atomically: a crash leaves the old or the new). */
  flush() {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    if (!this.file) return;
    const state: Record<string, StoredMessage[]> = { ...this.saved };
    for (const [name, queue] of this.queues) state[name] = [...queue.messages.values()];
    writeFileSync(`${this.file}.tmp`, JSON.stringify(state));
    renameSync(`${this.file}.tmp`, this.file);
  }

  queueUrl(name: string): string {
    return `${this.endpoint}/${SQS_ACCOUNT}/${name}`;
  }

  private queue(url: unknown): LocalQueue {
    if (typeof url !== 'string' || url === '') throw invalidParameter('Value for parameter QueueUrl is invalid.');
    const queue = this.queues.get(url.split('/').at(-1) ?? '');
    if (!queue) throw noQueue();
    return queue;
  }

  getQueueUrl(input: { QueueName?: string }) {
    if (!input.QueueName || !this.queues.has(input.QueueName)) throw noQueue();
    return { QueueUrl: this.queueUrl(input.QueueName) };
  }

  sendMessage(input: { QueueUrl?: string; MessageBody?: string; DelaySeconds?: number; MessageAttributes?: unknown }) {
    const queue = this.queue(input.QueueUrl);
    members.string(input.MessageBody, 'MessageBody');
    const stored = this.prepare(queue, input);
    this.store(queue, stored);
    return { MessageId: stored.id, MD5OfMessageBody: stored.md5 };
  }

  sendMessageBatch(input: {
    QueueUrl?: string;
    Entries?: { Id?: string; MessageBody?: string; DelaySeconds?: number; MessageAttributes?: unknown }[];
  }) {
    const queue = this.queue(input.QueueUrl);
    const entries = checkBatch(input.Entries);
    // A body that is not a string is the request's shape, refused whole before anything is sent.
    const total = entries.reduce(
      (sum, entry, i) => sum + Buffer.byteLength(members.string(entry.MessageBody, `Entries.${i + 1}.MessageBody`) ?? '', 'utf8'),
      0,
    );
    if (total > queue.settings.maxMessageBytes) {
      throw sqsError(
        'BatchRequestTooLong',
        'AWS.SimpleQueueService.BatchRequestTooLong',
        `Batch requests cannot be longer than ${queue.settings.maxMessageBytes} bytes. You have sent ${total} bytes.`,
      );
    }
    return this.eachEntry(entries, (entry) => {
      const stored = this.prepare(queue, entry);
      this.store(queue, stored);
      return { MessageId: stored.id, MD5OfMessageBody: stored.md5 };
    });
  }

  private prepare(
    queue: LocalQueue,
    input: { MessageBody?: string; DelaySeconds?: number; MessageAttributes?: unknown },
  ): StoredMessage {
    const body = input.MessageBody;
    if (typeof body !== 'string' || body.length === 0) {
      throw invalidParameter('The request must contain the parameter MessageBody.');
    }
    const bytes = Buffer.byteLength(body, 'utf8');
    if (bytes > queue.settings.maxMessageBytes) {
      throw invalidParameter(
        `One or more parameters are invalid. Reason: Message must be shorter than ${queue.settings.maxMessageBytes} bytes.`,
      );
    }
    // SQS refuses characters outside XML's (#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF).
    // biome-ignore lint/suspicious/noControlCharactersInRegex: those are the characters refused
    if (/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u.test(body)) {
      throw sqsError('InvalidMessageContents', 'InvalidMessageContents', 'Invalid binary character in the message body.');
    }
    const attributes = members.object(input.MessageAttributes, 'MessageAttributes');
    if (attributes && Object.keys(attributes).length > 0) {
      throw invalidParameter('Message attributes are not supported by the local SQS stand-in (the service sends none).');
    }
    const delay = input.DelaySeconds ?? queue.settings.delaySeconds;
    if (!Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS) {
      throw invalidParameter(
        `Value ${delay} for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= ${MAX_DELAY_SECONDS}.`,
      );
    }
    const now = Date.now();
    return { id: randomUUID(), body, md5: md5(body), sentAt: now, visibleAt: now + delay * 1000, receiveCount: 0 };
  }

  private store(queue: LocalQueue, message: StoredMessage) {
    queue.messages.set(message.id, message);
    this.changed();
    queue.notify();
  }

  /**
   * ReceiveMessage: up to `MaxNumberOfMessages` visible messages, oldest first, each made
   * invisible for the visibility timeout with a new receipt handle; a message already received
   * `maxReceiveCount` times moves to the dead-letter queue instead. With `WaitTimeSeconds` it
   * waits for a message (woken at once by a send, or when a delay or visibility timeout ends).
   */
  async receiveMessage(
    input: {
      QueueUrl?: string;
      MaxNumberOfMessages?: number;
      VisibilityTimeout?: number;
      WaitTimeSeconds?: number;
      MessageSystemAttributeNames?: string[];
      AttributeNames?: string[];
    },
    signal?: AbortSignal,
  ): Promise<{ Messages?: ReceivedMessage[] }> {
    const queue = this.queue(input.QueueUrl);
    const max = input.MaxNumberOfMessages ?? 1;
    if (!Number.isInteger(max) || max < 1 || max > MAX_RECEIVE) {
      throw invalidParameter(
        `Value ${max} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and ${MAX_RECEIVE}, if provided.`,
      );
    }
    const visibility = input.VisibilityTimeout ?? queue.settings.visibilityTimeoutSeconds;
    checkVisibility(visibility);
    const wait = input.WaitTimeSeconds ?? 0;
    if (!Number.isInteger(wait) || wait < 0 || wait > MAX_WAIT_SECONDS) {
      throw invalidParameter(
        `Value ${wait} for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= ${MAX_WAIT_SECONDS}, if provided.`,
      );
    }
    // Checked before any message is taken: a refused receive hides nothing and counts no receive.
    const asked = new Set([
      ...(members.strings(input.MessageSystemAttributeNames, 'MessageSystemAttributeNames') ?? []),
      ...(members.strings(input.AttributeNames, 'AttributeNames') ?? []),
    ]);
    const messages = await this.receive(queue, max, visibility, wait * 1000, signal);
    // Only the system attributes asked for are returned; SQS leaves `Messages` out when none was received.
    for (const message of messages) {
      message.Attributes = asked.has('All')
        ? message.Attributes
        : Object.fromEntries(Object.entries(message.Attributes).filter(([name]) => asked.has(name)));
    }
    return messages.length > 0 ? { Messages: messages } : {};
  }

  /** The event source's receive: any batch size (Lambda batches past 10 itself), no parameter checks. */
  async receive(
    queue: LocalQueue | string,
    max: number,
    visibilitySeconds: number,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<ReceivedMessage[]> {
    const target = typeof queue === 'string' ? this.queue(this.queueUrl(queue)) : queue;
    const until = Date.now() + waitMs;
    for (;;) {
      const taken = this.take(target, max, visibilitySeconds);
      if (taken.length > 0 || Date.now() >= until || signal?.aborted) return taken;
      await target.waitForChange(until - Date.now(), signal);
    }
  }

  private take(queue: LocalQueue, max: number, visibilitySeconds: number): ReceivedMessage[] {
    const now = Date.now();
    if (queue.expire(now)) this.changed();
    const ready = [...queue.messages.values()].filter((m) => m.visibleAt <= now).sort((a, b) => a.sentAt - b.sentAt);
    const out: ReceivedMessage[] = [];
    for (const message of ready) {
      if (out.length >= max) break;
      const redrive = queue.settings.redrive;
      if (redrive && message.receiveCount >= redrive.maxReceiveCount) {
        // SQS moves it on the receive after the last allowed one, keeping its id, body and sent time.
        queue.messages.delete(message.id);
        this.changed();
        const dead = this.queues.get(redrive.deadLetterQueue);
        if (dead) {
          dead.messages.set(message.id, {
            ...message,
            visibleAt: now,
            receipt: undefined,
            receiveCount: 0,
            firstReceiveAt: undefined,
          });
          dead.notify();
        }
        continue;
      }
      message.receiveCount += 1;
      this.changed();
      message.firstReceiveAt ??= now;
      message.visibleAt = now + visibilitySeconds * 1000;
      message.receipt = Buffer.from(`${queue.settings.name}\n${message.id}\n${randomUUID()}`).toString('base64');
      out.push({
        MessageId: message.id,
        ReceiptHandle: message.receipt,
        MD5OfBody: message.md5,
        Body: message.body,
        Attributes: {
          ApproximateReceiveCount: String(message.receiveCount),
          SentTimestamp: String(message.sentAt),
          ApproximateFirstReceiveTimestamp: String(message.firstReceiveAt),
          SenderId: SQS_ACCOUNT,
        },
      });
    }
    return out;
  }

  /** The message a receipt handle names, if the handle is its latest; `undefined` for a stale one. */
  private byReceipt(queue: LocalQueue, handle: unknown): StoredMessage | undefined {
    const parts = typeof handle === 'string' ? Buffer.from(handle, 'base64').toString('utf8').split('\n') : [];
    if (parts.length !== 3 || parts[0] !== queue.settings.name) {
      throw sqsError(
        'ReceiptHandleIsInvalid',
        'ReceiptHandleIsInvalid',
        `The input receipt handle "${handle}" is not a valid receipt handle.`,
        404,
      );
    }
    const message = queue.messages.get(parts[1]!);
    return message?.receipt === handle ? message : undefined;
  }

  deleteMessage(input: { QueueUrl?: string; ReceiptHandle?: string }) {
    const queue = this.queue(input.QueueUrl);
    const message = this.byReceipt(queue, input.ReceiptHandle);
    // A stale handle (the message was received again since) succeeds and deletes nothing, as on SQS.
    if (message) {
      queue.messages.delete(message.id);
      this.changed();
    }
    return {};
  }

  deleteMessageBatch(input: { QueueUrl?: string; Entries?: { Id?: string; ReceiptHandle?: string }[] }) {
    const queue = this.queue(input.QueueUrl);
    return this.eachEntry(checkBatch(input.Entries), (entry) =>
      this.deleteMessage({ QueueUrl: this.queueUrl(queue.settings.name), ...entry }),
    );
  }

  changeMessageVisibility(input: { QueueUrl?: string; ReceiptHandle?: string; VisibilityTimeout?: number }) {
    const queue = this.queue(input.QueueUrl);
    const visibility = input.VisibilityTimeout;
    checkVisibility(visibility);
    const message = this.byReceipt(queue, input.ReceiptHandle);
    if (!message || message.visibleAt <= Date.now()) {
      throw sqsError(
        'MessageNotInflight',
        'AWS.SimpleQueueService.MessageNotInflight',
        'Message does not exist or is not available for visibility timeout change.',
      );
    }
    message.visibleAt = Date.now() + visibility! * 1000;
    this.changed();
    queue.notify();
    return {};
  }

  /** A batch's answer: each entry's own result (with its Id) in Successful, or its SQS error in Failed. */
  private eachEntry<E extends { Id?: string }, R extends object>(entries: E[], run: (entry: E) => R) {
    const Successful: (R & { Id: string })[] = [];
    const Failed: { Id: string; SenderFault: boolean; Code: string; Message: string }[] = [];
    for (const entry of entries) {
      try {
        Successful.push({ Id: entry.Id!, ...run(entry) });
      } catch (error) {
        if (!(error instanceof SqsError)) throw error;
        Failed.push({ Id: entry.Id!, SenderFault: true, Code: error.code, Message: error.message });
      }
    }
    return { Successful, Failed };
  }

  getQueueAttributes(input: { QueueUrl?: string; AttributeNames?: string[] }) {
    const queue = this.queue(input.QueueUrl);
    const now = Date.now();
    queue.expire(now);
    const messages = [...queue.messages.values()];
    const { settings } = queue;
    const all: Record<string, string> = {
      QueueArn: `arn:aws:sqs:${process.env.AWS_REGION ?? 'us-east-1'}:${SQS_ACCOUNT}:${settings.name}`,
      ApproximateNumberOfMessages: String(messages.filter((m) => m.visibleAt <= now).length),
      ApproximateNumberOfMessagesNotVisible: String(messages.filter((m) => m.visibleAt > now && m.receiveCount > 0).length),
      ApproximateNumberOfMessagesDelayed: String(messages.filter((m) => m.visibleAt > now && m.receiveCount === 0).length),
      VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
      DelaySeconds: String(settings.delaySeconds),
      MessageRetentionPeriod: String(settings.retentionSeconds),
      MaximumMessageSize: String(settings.maxMessageBytes),
      ReceiveMessageWaitTimeSeconds: '0',
      CreatedTimestamp: String(Math.floor(queue.createdAt / 1000)),
      LastModifiedTimestamp: String(Math.floor(queue.createdAt / 1000)),
      SqsManagedSseEnabled: 'true',
    };
    if (settings.redrive) {
      all.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: `arn:aws:sqs:${process.env.AWS_REGION ?? 'us-east-1'}:${SQS_ACCOUNT}:${settings.redrive.deadLetterQueue}`,
        maxReceiveCount: settings.redrive.maxReceiveCount,
      });
    }
    const names = members.strings(input.AttributeNames, 'AttributeNames') ?? [];
    const unknown = names.find((name) => name !== 'All' && !(name in all) && name !== 'RedrivePolicy');
    if (unknown) throw sqsError('InvalidAttributeName', 'InvalidAttributeName', `Unknown Attribute ${unknown}.`);
    const Attributes = names.includes('All') ? all : Object.fromEntries(names.filter((n) => n in all).map((n) => [n, all[n]!]));
    return Object.keys(Attributes).length > 0 ? { Attributes } : {};
  }

  /** Every message of a queue, visible or not (tests and the docs' examples look at the dead letters). */
  count(name: string): number {
    const queue = this.queues.get(name);
    if (!queue) throw noQueue();
    queue.expire(Date.now());
    return queue.messages.size;
  }

  /** The operations served over HTTP (startLocalSqs), by name; their inputs are checked in each. */
  readonly operations: Readonly<Record<string, AwsJsonOperation>> = {
    SendMessage: (input) => this.sendMessage(input),
    SendMessageBatch: (input) => this.sendMessageBatch(input as Parameters<LocalSqs['sendMessageBatch']>[0]),
    ReceiveMessage: (input, signal) => this.receiveMessage(input, signal),
    DeleteMessage: (input) => this.deleteMessage(input),
    DeleteMessageBatch: (input) => this.deleteMessageBatch(input as Parameters<LocalSqs['deleteMessageBatch']>[0]),
    ChangeMessageVisibility: (input) => this.changeMessageVisibility(input),
    GetQueueAttributes: (input) => this.getQueueAttributes(input),
    GetQueueUrl: (input) => this.getQueueUrl(input),
  };
}

/** The largest request read: twice SQS's largest message (1 MiB), room for any batch JSON-escaped; see startLocalSqs. */
export const MAX_REQUEST_BYTES = 2 * 1_048_576;

function checkVisibility(seconds: unknown) {
  if (!Number.isInteger(seconds) || (seconds as number) < 0 || (seconds as number) > MAX_VISIBILITY_SECONDS) {
    throw invalidParameter(
      `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= ${MAX_VISIBILITY_SECONDS}.`,
    );
  }
}

function checkBatch<E extends { Id?: string }>(value: E[] | undefined): E[] {
  const entries = members.objects<E>(value, 'Entries');
  if (!entries || entries.length === 0) {
    throw sqsError(
      'EmptyBatchRequest',
      'AWS.SimpleQueueService.EmptyBatchRequest',
      'There should be at least one entry in the request.',
    );
  }
  if (entries.length > MAX_BATCH) {
    throw sqsError(
      'TooManyEntriesInBatchRequest',
      'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
      `Maximum number of entries per request are ${MAX_BATCH}. You have sent ${entries.length}.`,
    );
  }
  const ids = new Set<string>();
  for (const entry of entries) {
    if (typeof entry.Id !== 'string' || !/^[A-Za-z0-9_-]{1,80}$/.test(entry.Id)) {
      throw sqsError(
        'InvalidBatchEntryId',
        'AWS.SimpleQueueService.InvalidBatchEntryId',
        'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
      );
    }
    if (ids.has(entry.Id)) {
      throw sqsError('BatchEntryIdsNotDistinct', 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct', `Id ${entry.Id} repeated.`);
    }
    ids.add(entry.Id);
  }
  return entries;
}

export interface LocalSqsServer {
  sqs: LocalSqs;
  endpoint: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * Serves `sqs` over HTTP on `port` (0: a free one) at `host`; closing it ends the open long polls
 * and writes the messages to the file. A request body over MAX_REQUEST_BYTES is refused unread
 * (413); every smaller one reaches the queue's own limits and their SQS errors (a message over
 * the queue's maximum: InvalidParameterValue; a batch over it: BatchRequestTooLong).
 */
export async function startLocalSqs(sqs: LocalSqs, port: number, host = '127.0.0.1'): Promise<LocalSqsServer> {
  const served = await startAwsJsonServer(
    {
      name: 'local SQS',
      jsonVersion: '1.0',
      targetPrefix: 'AmazonSQS',
      operations: sqs.operations,
      maxBodyBytes: MAX_REQUEST_BYTES,
      queryCompatible: true,
      sdk: sqsSdk,
      unimplemented: (message) => sqsError('UnsupportedOperation', 'AWS.SimpleQueueService.UnsupportedOperation', message),
      internalErrorType: 'com.amazon.coral.service#InternalFailure',
      onClose: () => sqs.flush(),
    },
    port,
    host,
  );
  sqs.endpoint = served.endpoint;
  return { sqs, ...served };
}

type QueueHandler = (
  event: SQSEvent,
  context: { awsRequestId: string; functionName: string; getRemainingTimeInMillis: () => number },
) => Promise<{ batchItemFailures?: { itemIdentifier?: string }[] } | undefined>;

export interface QueueEventSource {
  stop(): Promise<void>;
}

/**
 * Lambda's SQS event source, for one queueConsumers row: it long-polls the queue (woken by a send,
 * so a ready message is picked in milliseconds), invokes the row's handler in this process as the
 * row's function (infra/local/iam.ts) with a Lambda-shaped SQSEvent of up to `batchSize`
 * messages, at most `maxConcurrency` invocations at once, and deletes what succeeded. With
 * ReportBatchItemFailures, the messages a result names in `batchItemFailures` stay and come back
 * after the visibility timeout; a handler that throws, or names an id the batch does not hold,
 * fails the whole batch, as on AWS. The queue's redrive then sends a message that keeps failing to
 * the dead-letter queue.
 */
export async function startQueueEventSource(sqs: LocalSqs, queueName: string, row: QueueConsumerRow): Promise<QueueEventSource> {
  const { handler } = (await import(join(REPO_ROOT, row.entry))) as { handler: QueueHandler };
  const abort = new AbortController();
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const arn = `arn:aws:sqs:${region}:${SQS_ACCOUNT}:${queueName}`;
  const queueUrl = sqs.queueUrl(queueName);
  const timeoutMs = functionTimeoutSeconds(row) * 1000;
  const visibility = Number(
    sqs.getQueueAttributes({ QueueUrl: queueUrl, AttributeNames: ['VisibilityTimeout'] }).Attributes?.VisibilityTimeout,
  );

  const invoke = async (messages: ReceivedMessage[]) => {
    const Records: SQSRecord[] = messages.map((message) => ({
      messageId: message.MessageId,
      receiptHandle: message.ReceiptHandle,
      body: message.Body,
      attributes: message.Attributes as unknown as SQSRecord['attributes'],
      messageAttributes: {},
      md5OfBody: message.MD5OfBody,
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: region,
    }));
    const started = Date.now();
    const context = {
      awsRequestId: randomUUID(),
      functionName: `local-${row.id}`,
      getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
    };
    let failed: Set<string>;
    try {
      const result = await asFunction(row, () => handler({ Records }, context));
      const ids = new Set(messages.map((m) => m.MessageId));
      const reported = result?.batchItemFailures ?? [];
      // An empty, missing or unknown identifier fails the whole batch (Lambda's rule).
      failed = reported.some((f) => !f.itemIdentifier || !ids.has(f.itemIdentifier))
        ? ids
        : new Set(reported.map((f) => f.itemIdentifier!));
    } catch (error) {
      console.error(`local queue consumer ${row.id} threw; the batch comes back after the visibility timeout`, error);
      failed = new Set(messages.map((m) => m.MessageId));
    }
    for (const message of messages) {
      if (!failed.has(message.MessageId)) sqs.deleteMessage({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle });
    }
  };

  const pollers = Array.from({ length: row.maxConcurrency }, async () => {
    while (!abort.signal.aborted) {
      try {
        const messages = await sqs.receive(queueName, row.batchSize, visibility, MAX_WAIT_SECONDS * 1000, abort.signal);
        if (messages.length > 0) await invoke(messages);
      } catch (error) {
        if (!abort.signal.aborted) console.error(`local queue event source ${row.id} failed`, error);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });

  return {
    stop: async () => {
      abort.abort();
      await Promise.all(pollers);
    },
  };
}
