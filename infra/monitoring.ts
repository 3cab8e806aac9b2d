import { Duration, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { UserPool, UserPoolClient } from 'aws-cdk-lib/aws-cognito';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { RATE_LIMIT_FAIL_OPEN_METRIC } from '../lib/http/rate-limit-fields';
import { METRICS_NAMESPACE, SERVICE } from '../lib/runtime/metrics';
import { FUNCTIONS_PER_ALARM } from './layout';

/** A group's functions (infra/layout.ts), alarmed together in the group's own stack. */
interface AlarmedGroup {
  /** Where the group's alarms are made: its nested stack. */
  scope: Construct;
  group: string;
  functions: [string, IFunction][];
}

export interface MonitoringProps {
  api: HttpApi;
  /** Functions alarmed one by one, in this construct's stack (the root's: the stream consumers). */
  functions: Map<string, IFunction>;
  /** Function groups, whose errors and throttles are alarmed per group of up to ten functions. */
  groups: AlarmedGroup[];
  /** Table stream consumers: their iterator age and dead-letter depth are watched too. */
  consumers: { id: string; fn: IFunction; deadLetters: IQueue }[];
  /** The webhook deliveries queue and its dead-letter queue (infra/webhooks.ts). */
  webhooks?: { queue: IQueue; deadLetters: IQueue };
  table: Table;
  userPool: UserPool;
  appClient: UserPoolClient;
  alarmEmail?: string;
  /** The runbook's absolute https URL (the stage's `runbookUrl`): each alarm's description links to its section. */
  runbookUrl: string;
}

/**
 * The runbook's section for each kind of alarm: GitHub's anchors of headings of docs/runbook.md
 * (test/infra/operations.test.ts checks that each exists).
 */
export const RUNBOOK_ANCHORS = {
  api5xxRate: 'api-5xx-rate',
  functionErrors: 'function-errors',
  functionThrottles: 'function-throttles',
  iteratorAge: 'stream-iterator-age',
  deadLetters: 'stream-dead-letters',
  dynamoDbThrottles: 'dynamodb-throttles',
  cognitoThrottles: 'cognito-throttles',
  rateLimitFailOpen: 'rate-limiter-failing-open',
  webhookDeadLetters: 'webhook-dead-letters',
  webhookBacklog: 'webhook-deliveries-waiting',
  webhookAttemptsFailing: 'webhook-attempts-failing',
  webhooksDisabled: 'webhooks-switched-off',
} as const;

/** The webhook pipeline's own metrics (lib/queue/deliver.ts: namespace TaskBoard, dimension `service`, like every other). */
export const WEBHOOK_METRICS = {
  delivered: 'WebhookDelivered',
  attemptFailed: 'WebhookAttemptFailed',
  deliveryFailed: 'WebhookDeliveryFailed',
  disabled: 'WebhookDisabled',
  /** A message sent again because its webhook had all its attempt slots held (no attempt made). */
  deferred: 'WebhookAttemptDeferred',
} as const;

/** A sum of one of the worker's counts, as it writes them (lib/queue/deliver.ts `count`). */
export const webhookMetric = (metricName: string, period: Duration, label?: string) =>
  new Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service: SERVICE }, statistic: 'Sum', period, label });

/**
 * The oldest message of the deliveries queue may be this old when all is well: a delivery that
 * waits for its next attempt hops through the queue in delays of at most 900 s (SQS's longest),
 * and is picked up within seconds of each hop's end. Twice that (30 min) means the worker is not
 * taking messages: failing, throttled, or its event source disabled.
 */
export const WEBHOOK_OLDEST_MESSAGE_ALARM_SECONDS = 1800;
export type RunbookAnchor = (typeof RUNBOOK_ANCHORS)[keyof typeof RUNBOOK_ANCHORS];

/** A metric math id for a row id: `cards.labels.attach` → `cardsLabelsAttach`. */
const metricIdOf = (rowId: string) => rowId.replace(/[.-](\w)/g, (_, c: string) => c.toUpperCase());

/**
 * Alarms on what a user would feel: the API's 5xx rate, function errors and throttles, DynamoDB
 * and Cognito throttling, the rate limiter failing open, and live events falling behind (a stream consumer's iterator age) or
 * given up on (its dead-letter queue). All notify one SNS topic (a stack output) that operators
 * subscribe to.
 */
export class Monitoring extends Construct {
  readonly topic: Topic;
  /** Every alarm made here (the dashboard shows their states). */
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.topic = new Topic(this, 'AlarmTopic', { displayName: 'task-board alarms', enforceSSL: true });
    if (props.alarmEmail) {
      const subscription = this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
      Validations.of(subscription).acknowledge({
        id: 'Serverless-SNSRedrivePolicy',
        reason:
          'An undeliverable alarm email has nothing to replay: the alarm state stays in CloudWatch, and SNS counts failed deliveries in its own metrics.',
      });
    }
    const notify = new SnsAction(this.topic);
    const alarm = (
      alarmId: string,
      description: string,
      anchor: RunbookAnchor,
      metric: Metric | MathExpression,
      threshold: number,
      scope: Construct = this,
      evaluation: { evaluationPeriods: number; datapointsToAlarm: number } = { evaluationPeriods: 3, datapointsToAlarm: 2 },
    ) => {
      const created = new Alarm(scope, alarmId, {
        alarmDescription: `${description}. Runbook: ${props.runbookUrl}#${anchor}`,
        metric,
        threshold,
        ...evaluation,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(notify);
      created.addOkAction(notify);
      this.alarms.push(created);
      return created;
    };
    const period = Duration.minutes(1);

    alarm(
      'Api5xxRate',
      'More than 1% of API requests answered 5xx',
      RUNBOOK_ANCHORS.api5xxRate,
      new MathExpression({
        expression: 'IF(requests > 20, 100 * errors / requests, 0)',
        usingMetrics: { errors: props.api.metricServerError({ period }), requests: props.api.metricCount({ period }) },
        period,
        label: '5xx %',
      }),
      1,
    );
    for (const [routeId, fn] of props.functions) {
      const name = routeId.replace(/[^A-Za-z0-9]/g, '');
      alarm(
        `${name}Errors`,
        `Function errors on ${routeId}`,
        RUNBOOK_ANCHORS.functionErrors,
        fn.metricErrors({ period, statistic: 'Sum' }),
        1,
      );
      alarm(
        `${name}Throttles`,
        `Function throttles on ${routeId}`,
        RUNBOOK_ANCHORS.functionThrottles,
        fn.metricThrottles({ period, statistic: 'Sum' }),
        1,
      );
    }
    // A group's functions, ten to an alarm (metric math reads at most ten metrics): the sum of
    // their errors (or throttles) per minute, so any one function's alarms the group's, with the
    // same threshold and periods as one function's. One line per function in the alarm's graph.
    for (const { scope, group, functions } of props.groups) {
      const sorted = [...functions].sort(([a], [b]) => a.localeCompare(b));
      for (let start = 0; start < sorted.length; start += FUNCTIONS_PER_ALARM) {
        const chunk = sorted.slice(start, start + FUNCTIONS_PER_ALARM);
        const suffix = start === 0 ? '' : String(start / FUNCTIONS_PER_ALARM + 1);
        const rowIds = chunk.map(([rowId]) => rowId).join(', ');
        const sum = (metricOf: (fn: IFunction, rowId: string) => Metric, label: string) =>
          new MathExpression({
            expression: 'SUM(METRICS())',
            usingMetrics: Object.fromEntries(chunk.map(([rowId, fn]) => [metricIdOf(rowId), metricOf(fn, rowId)])),
            period,
            label,
          });
        // Named after the group too: logical ids stay unique across the stacks (one template for SAM).
        const prefix = group[0]!.toUpperCase() + metricIdOf(group).slice(1);
        alarm(
          `${prefix}FunctionErrors${suffix}`,
          `Function errors in ${group}: ${rowIds}`,
          RUNBOOK_ANCHORS.functionErrors,
          sum((fn, rowId) => fn.metricErrors({ period, statistic: 'Sum', label: rowId }), 'errors'),
          1,
          scope,
        );
        alarm(
          `${prefix}FunctionThrottles${suffix}`,
          `Function throttles in ${group}: ${rowIds}`,
          RUNBOOK_ANCHORS.functionThrottles,
          sum((fn, rowId) => fn.metricThrottles({ period, statistic: 'Sum', label: rowId }), 'throttles'),
          1,
          scope,
        );
      }
    }
    for (const { id, fn, deadLetters } of props.consumers) {
      const name = id.replace(/[^A-Za-z0-9]/g, '');
      // Watchers see events late once the oldest record waits a minute (normally well under a second).
      alarm(
        `${name}IteratorAge`,
        `Stream records wait 60 s or more for ${id}`,
        RUNBOOK_ANCHORS.iteratorAge,
        fn.metric('IteratorAge', { period, statistic: 'Maximum' }),
        60_000,
      );
      // Any batch given up on is events some watchers never got.
      alarm(
        `${name}DeadLetters`,
        `Stream batches dead-lettered by ${id}`,
        RUNBOOK_ANCHORS.deadLetters,
        deadLetters.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        1,
      );
    }
    if (props.webhooks) this.webhookAlarms(props.webhooks, alarm);
    // ThrottledRequests exists only per Operation (no series has TableName alone); the throttle
    // events of the table (its local index included) do, reads and writes, batch items too.
    const tableThrottles = (metricName: string) =>
      new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: props.table.tableName },
        statistic: 'Sum',
        period,
      });
    alarm(
      'DynamoDbThrottles',
      'DynamoDB throttled reads or writes on the table',
      RUNBOOK_ANCHORS.dynamoDbThrottles,
      new MathExpression({
        expression: 'FILL(reads, 0) + FILL(writes, 0)',
        usingMetrics: { reads: tableThrottles('ReadThrottleEvents'), writes: tableThrottles('WriteThrottleEvents') },
        period,
        label: 'throttle events',
      }),
      1,
    );
    // The rate limiter's store (the table) failed to count requests, which were then served
    // uncounted (fail open): one such request in two of three minutes is worth a look, since for
    // that time nobody's quota holds (lib/http/rate-limit.ts).
    alarm(
      'RateLimitFailOpen',
      'Requests served without a rate limit: the limiter could not count them',
      RUNBOOK_ANCHORS.rateLimitFailOpen,
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: RATE_LIMIT_FAIL_OPEN_METRIC,
        dimensionsMap: { service: SERVICE },
        statistic: 'Sum',
        period,
      }),
      1,
    );
    // Per app client, AWS/Cognito has throttles per use (ThrottleCount is AWS/Usage's, per account
    // and quota category). Cognito publishes them every five minutes.
    const cognitoPeriod = Duration.minutes(5);
    const cognitoThrottles = (metricName: string) =>
      new Metric({
        namespace: 'AWS/Cognito',
        metricName,
        dimensionsMap: { UserPool: props.userPool.userPoolId, UserPoolClient: props.appClient.userPoolClientId },
        statistic: 'Sum',
        period: cognitoPeriod,
      });
    alarm(
      'CognitoThrottles',
      'Cognito throttled sign-ups, sign-ins or token refreshes of the API app client',
      RUNBOOK_ANCHORS.cognitoThrottles,
      new MathExpression({
        expression: 'FILL(signUp, 0) + FILL(signIn, 0) + FILL(refresh, 0)',
        usingMetrics: {
          signUp: cognitoThrottles('SignUpThrottles'),
          signIn: cognitoThrottles('SignInThrottles'),
          refresh: cognitoThrottles('TokenRefreshThrottles'),
        },
        period: cognitoPeriod,
        label: 'throttled calls',
      }),
      1,
    );
  }

  /**
   * Webhook deliveries: dead letters (a message the worker failed on every receive: a delivery
   * that will never be attempted again), the oldest message waiting (the worker not taking
   * messages), most attempts failing across all webhooks (the sending side broken, not one
   * endpoint: egress, DNS, signing), and many webhooks switched off at once. One failed
   * delivery or one webhook switched off is an owner's endpoint and alarms nobody: the owner sees
   * it in GET /webhooks/{id}/deliveries and in `disabled_reason`. Deferred attempts
   * (WebhookAttemptDeferred: a webhook at its cap of attempts in flight) alarm nobody either: they
   * are one endpoint being slow, which the cap contains (other webhooks go on), and a failing
   * endpoint is switched off by its own failures. The dashboard shows them beside the queue's
   * depth. (Each deferral is a new message, so they never raise the oldest message's age.)
   */
  private webhookAlarms(
    webhooks: { queue: IQueue; deadLetters: IQueue },
    alarm: (
      alarmId: string,
      description: string,
      anchor: RunbookAnchor,
      metric: Metric | MathExpression,
      threshold: number,
      scope?: Construct,
      evaluation?: { evaluationPeriods: number; datapointsToAlarm: number },
    ) => Alarm,
  ) {
    const period = Duration.minutes(1);
    alarm(
      'WebhookDeadLetters',
      'Webhook delivery messages dead-lettered: the worker failed on each of their receives',
      RUNBOOK_ANCHORS.webhookDeadLetters,
      webhooks.deadLetters.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
      1,
    );
    alarm(
      'WebhookDeliveriesWaiting',
      `The oldest webhook delivery message has waited ${WEBHOOK_OLDEST_MESSAGE_ALARM_SECONDS / 60} min or more (hops are at most 15 min)`,
      RUNBOOK_ANCHORS.webhookBacklog,
      webhooks.queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' }),
      WEBHOOK_OLDEST_MESSAGE_ALARM_SECONDS,
    );
    const fiveMinutes = Duration.minutes(5);
    const count = (metricName: string, metricPeriod: Duration) => webhookMetric(metricName, metricPeriod);
    // Half of all attempts failing, over at least 20 attempts in 5 minutes, for 15 minutes: endpoints
    // fail one by one; all of them at once is this side.
    alarm(
      'WebhookAttemptsFailing',
      'Half or more of all webhook delivery attempts failed (20+ attempts in 5 minutes, three times running)',
      RUNBOOK_ANCHORS.webhookAttemptsFailing,
      new MathExpression({
        expression:
          'IF(FILL(failed, 0) + FILL(delivered, 0) >= 20, 100 * FILL(failed, 0) / (FILL(failed, 0) + FILL(delivered, 0)), 0)',
        usingMetrics: {
          failed: count(WEBHOOK_METRICS.attemptFailed, fiveMinutes),
          delivered: count(WEBHOOK_METRICS.delivered, fiveMinutes),
        },
        period: fiveMinutes,
        label: 'failed attempts %',
      }),
      50,
      this,
      { evaluationPeriods: 3, datapointsToAlarm: 3 },
    );
    // One webhook switched off is its owner's business; ten in an hour is likely ours.
    alarm(
      'WebhooksSwitchedOff',
      'Ten or more webhooks were switched off as failing within an hour',
      RUNBOOK_ANCHORS.webhooksDisabled,
      count(WEBHOOK_METRICS.disabled, Duration.hours(1)),
      10,
      this,
      { evaluationPeriods: 1, datapointsToAlarm: 1 },
    );
  }
}
