import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { EventSourceMapping } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueConsumerRow } from '../lib/routes';
import { ENV, type EnvName } from '../lib/runtime/config';
import type { ApiFunction } from './api-function';
import { type DeliveriesQueueSettings, deliveriesQueueSettings } from './webhook-queue';

/** The encryption context every use of the secrets' key must carry (lib/data/webhook-secrets.ts). */
export const KEY_PURPOSE = 'webhook-secret';

/** The configuration this construct provides to the rows that name it in `env`. */
export const WEBHOOK_ENV: readonly EnvName[] = [ENV.webhookQueueUrl, ENV.webhookKeyId];

export interface WebhooksProps {
  /** Every function of every row table: each gets the queue and key grants its row asks for. */
  functions: Iterable<ApiFunction>;
  /** The queueConsumers rows with their functions: each gets an SQS event source on the deliveries queue. */
  consumers: [string, QueueConsumerRow, ApiFunction][];
}

/**
 * Webhook deliveries on AWS (docs/webhooks.md, docs/infrastructure.md): the deliveries queue
 * (SQS, encrypted with SQS's own key, TLS only) with its dead-letter queue after the consumer row's
 * `maxReceiveCount` receives, and the KMS key that seals webhook secrets (rotation on, kept when
 * the stack goes: without it no stored secret opens). Each function's role gets exactly what its
 * row names: `queue` -> sqs:SendMessage on the deliveries queue alone; `key` -> kms:Encrypt and/or
 * kms:Decrypt on the key alone, and only with the encryption context purpose=webhook-secret. Rows
 * that list WEBHOOK_QUEUE_URL or WEBHOOK_KEY_ID in `env` get them. Each queueConsumers row gets an
 * SQS event source (its batch size and maximum concurrency, partial batch responses).
 * Everything here lives in the root stack, with the other stateful resources.
 */
export class Webhooks extends Construct {
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly key: Key;
  readonly settings: DeliveriesQueueSettings;

  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    const settings = deliveriesQueueSettings(Object.fromEntries(props.consumers.map(([rowId, row]) => [rowId, row])));
    this.settings = settings;

    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.seconds(settings.deadLetterRetentionSeconds),
    });
    this.queue = new Queue(this, 'Deliveries', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.seconds(settings.retentionSeconds),
      visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
      maxMessageSizeBytes: settings.maxMessageBytes,
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: settings.maxReceiveCount },
    });
    this.key = new Key(this, 'SecretsKey', {
      description: 'Seals webhook signing secrets (encryption context: purpose=webhook-secret, webhook_id, board_id)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    for (const fn of props.functions) this.grant(fn);
    for (const [, row, fn] of props.consumers) {
      const source = new SqsEventSource(this.queue, {
        batchSize: row.batchSize,
        maxConcurrency: row.maxConcurrency,
        reportBatchItemFailures: true,
      });
      fn.fn.addEventSource(source);
      const mapping = fn.fn.node.children.find((child) => child instanceof EventSourceMapping);
      if (!mapping) throw new Error(`${row.id}: no event source mapping made`);
      Validations.of(mapping).acknowledge({
        id: 'Serverless-LambdaEventSourceMappingDestination',
        reason:
          "An SQS event source has no on-failure destination of its own: a message that keeps failing moves to the queue's dead-letter queue by the queue's redrive policy (maxReceiveCount), which an alarm watches.",
      });
    }

    Validations.of(this.deadLetters).acknowledge(
      {
        id: 'AwsSolutions-SQS3',
        reason:
          'This queue is the dead-letter queue of the webhook deliveries queue; a dead-letter queue of its own would hold nothing.',
      },
      {
        id: 'Serverless-SQSRedrivePolicy',
        reason:
          'Nothing consumes this dead-letter queue, so nothing fails to process its messages: an operator redrives it after a fix (docs/runbook.md). An alarm watches its depth.',
      },
    );
  }

  /** The row's queue and key actions on this queue and key alone, and the values its `env` names. */
  private grant(fn: ApiFunction) {
    const { queue = [], key = [], env = [] } = fn.row;
    if (queue.length > 0) {
      fn.role.addToPolicy(new PolicyStatement({ actions: [...queue], resources: [this.queue.queueArn] }));
    }
    if (key.length > 0) {
      fn.role.addToPolicy(
        new PolicyStatement({
          actions: [...key],
          resources: [this.key.keyArn],
          conditions: { StringEquals: { 'kms:EncryptionContext:purpose': KEY_PURPOSE } },
        }),
      );
    }
    if (env.includes(ENV.webhookQueueUrl)) fn.fn.addEnvironment(ENV.webhookQueueUrl, this.queue.queueUrl);
    if (env.includes(ENV.webhookKeyId)) fn.fn.addEnvironment(ENV.webhookKeyId, this.key.keyArn);
  }
}
