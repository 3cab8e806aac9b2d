import { Duration, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  Metric,
  type MetricOptions,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
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
type RunbookAnchor = (typeof RUNBOOK_ANCHORS)[keyof typeof RUNBOOK_ANCHORS];

/** A metric math id for a row id: `cards.labels.attach` → `cardsLabelsAttach`. */
const metricIdOf = (rowId: string) => rowId.replace(/[.-](\w)/g, (_, c: string) => c.toUpperCase());

/**
 * Alarms on what a user would feel: the API's 5xx rate, function errors and throttles, DynamoDB
 * and Cognito throttling, the rate limiter failing open, and live events falling behind (a stream consumer's iterator age) or
 * given up on (its dead-letter queue). All notify one SNS topic (a stack output) that operators
 * subscribe to.
 */
/** How many of its last periods an alarm looks at, and how many of those must breach. */
interface Evaluation {
  evaluationPeriods: number;
  datapointsToAlarm: number;
}

/** One alarm: its id, what it means (with its runbook section), what it watches and when it fires. */
interface AlarmSpec {
  id: string;
  description: string;
  anchor: RunbookAnchor;
  metric: Metric | MathExpression;
  threshold: number;
  /** Where the alarm is made: this construct unless a group's alarm goes in the group's stack. */
  scope?: Construct;
  evaluation?: Evaluation;
}

/** Most alarms: two breaching minutes of three. */
const TWO_OF_THREE: Evaluation = { evaluationPeriods: 3, datapointsToAlarm: 2 };
const MINUTE = Duration.minutes(1);

/** What a function is alarmed on, alone or in its group: its errors, then its throttles. */
const FUNCTION_FAILURES = [
  {
    idPart: 'Errors',
    label: 'errors',
    anchor: RUNBOOK_ANCHORS.functionErrors,
    metric: (fn: IFunction, options: MetricOptions) => fn.metricErrors(options),
  },
  {
    idPart: 'Throttles',
    label: 'throttles',
    anchor: RUNBOOK_ANCHORS.functionThrottles,
    metric: (fn: IFunction, options: MetricOptions) => fn.metricThrottles(options),
  },
] as const;

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
  private readonly notify: SnsAction;
  private readonly runbookUrl: string;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.topic = this.alarmTopic(props.alarmEmail);
    this.notify = new SnsAction(this.topic);
    this.runbookUrl = props.runbookUrl;
    this.api5xxAlarm(props.api);
    for (const [routeId, fn] of props.functions) this.functionAlarms(routeId, fn);
    for (const group of props.groups) this.groupAlarms(group);
    for (const consumer of props.consumers) this.consumerAlarms(consumer);
    if (props.webhooks) this.webhookAlarms(props.webhooks);
    this.tableThrottlesAlarm(props.table);
    this.rateLimitFailOpenAlarm();
    this.cognitoThrottlesAlarm(props.userPool, props.appClient);
  }

  /** The topic every alarm notifies, with the stage's alarm email subscribed when it has one. */
  private alarmTopic(alarmEmail: string | undefined): Topic {
    const topic = new Topic(this, 'AlarmTopic', { displayName: 'task-board alarms', enforceSSL: true });
    if (alarmEmail) {
      const subscription = topic.addSubscription(new EmailSubscription(alarmEmail));
      Validations.of(subscription).acknowledge({
        id: 'Serverless-SNSRedrivePolicy',
        reason:
          'An undeliverable alarm email has nothing to replay: the alarm state stays in CloudWatch, and SNS counts failed deliveries in its own metrics.',
      });
    }
    return topic;
  }

  /** An alarm that notifies the topic when it fires and when it clears, its description linking to its runbook section. */
  private alarm({ id, description, anchor, metric, threshold, scope = this, evaluation = TWO_OF_THREE }: AlarmSpec): Alarm {
    const created = new Alarm(scope, id, {
      alarmDescription: `${description}. Runbook: ${this.runbookUrl}#${anchor}`,
      metric,
      threshold,
      ...evaluation,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    created.addAlarmAction(this.notify);
    created.addOkAction(this.notify);
    this.alarms.push(created);
    return created;
  }

  private api5xxAlarm(api: HttpApi) {
    this.alarm({
      id: 'Api5xxRate',
      description: 'More than 1% of API requests answered 5xx',
      anchor: RUNBOOK_ANCHORS.api5xxRate,
      metric: new MathExpression({
        expression: 'IF(requests > 20, 100 * errors / requests, 0)',
        usingMetrics: { errors: api.metricServerError({ period: MINUTE }), requests: api.metricCount({ period: MINUTE }) },
        period: MINUTE,
        label: '5xx %',
      }),
      threshold: 1,
    });
  }

  /** One function alarmed on its own: its errors and its throttles. */
  private functionAlarms(routeId: string, fn: IFunction) {
    const name = routeId.replace(/[^A-Za-z0-9]/g, '');
    for (const failure of FUNCTION_FAILURES) {
      this.alarm({
        id: `${name}${failure.idPart}`,
        description: `Function ${failure.label} on ${routeId}`,
        anchor: failure.anchor,
        metric: failure.metric(fn, { period: MINUTE, statistic: 'Sum' }),
        threshold: 1,
      });
    }
  }

  /**
   * A group's functions, ten to an alarm (metric math reads at most ten metrics): the sum of
   * their errors (or throttles) per minute, so any one function's alarms the group's, with the
   * same threshold and periods as one function's. One line per function in the alarm's graph.
   */
  private groupAlarms({ scope, group, functions }: AlarmedGroup) {
    const sorted = [...functions].sort(([a], [b]) => a.localeCompare(b));
    // Named after the group too: logical ids stay unique across the stacks (one template for SAM).
    const prefix = group[0]!.toUpperCase() + metricIdOf(group).slice(1);
    for (let start = 0; start < sorted.length; start += FUNCTIONS_PER_ALARM) {
      const chunk = sorted.slice(start, start + FUNCTIONS_PER_ALARM);
      const suffix = start === 0 ? '' : String(start / FUNCTIONS_PER_ALARM + 1);
      const rowIds = chunk.map(([rowId]) => rowId).join(', ');
      for (const failure of FUNCTION_FAILURES) {
        this.alarm({
          id: `${prefix}Function${failure.idPart}${suffix}`,
          description: `Function ${failure.label} in ${group}: ${rowIds}`,
          anchor: failure.anchor,
          metric: new MathExpression({
            expression: 'SUM(METRICS())',
            usingMetrics: Object.fromEntries(
              chunk.map(([rowId, fn]) => [
                metricIdOf(rowId),
                failure.metric(fn, { period: MINUTE, statistic: 'Sum', label: rowId }),
              ]),
            ),
            period: MINUTE,
            label: failure.label,
          }),
          threshold: 1,
          scope,
        });
      }
    }
  }

  /** A table stream consumer: how far behind it reads, and the batches it gave up on. */
  private consumerAlarms({ id, fn, deadLetters }: MonitoringProps['consumers'][number]) {
    const name = id.replace(/[^A-Za-z0-9]/g, '');
    // Watchers see events late once the oldest record waits a minute (normally well under a second).
    this.alarm({
      id: `${name}IteratorAge`,
      description: `Stream records wait 60 s or more for ${id}`,
      anchor: RUNBOOK_ANCHORS.iteratorAge,
      metric: fn.metric('IteratorAge', { period: MINUTE, statistic: 'Maximum' }),
      threshold: 60_000,
    });
    // Any batch given up on is events some watchers never got.
    this.alarm({
      id: `${name}DeadLetters`,
      description: `Stream batches dead-lettered by ${id}`,
      anchor: RUNBOOK_ANCHORS.deadLetters,
      metric: deadLetters.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
      threshold: 1,
    });
  }

  /**
   * ThrottledRequests exists only per Operation (no series has TableName alone); the throttle
   * events of the table (its local index included) do, reads and writes, batch items too.
   */
  private tableThrottlesAlarm(table: Table) {
    const tableThrottles = (metricName: string) =>
      new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: table.tableName },
        statistic: 'Sum',
        period: MINUTE,
      });
    this.alarm({
      id: 'DynamoDbThrottles',
      description: 'DynamoDB throttled reads or writes on the table',
      anchor: RUNBOOK_ANCHORS.dynamoDbThrottles,
      metric: new MathExpression({
        expression: 'FILL(reads, 0) + FILL(writes, 0)',
        usingMetrics: { reads: tableThrottles('ReadThrottleEvents'), writes: tableThrottles('WriteThrottleEvents') },
        period: MINUTE,
        label: 'throttle events',
      }),
      threshold: 1,
    });
  }

  /**
   * The rate limiter's store (the table) failed to count requests, which were then served
   * uncounted (fail open): one such request in two of three minutes is worth a look, since for
   * that time nobody's quota holds (lib/http/rate-limit.ts).
   */
  private rateLimitFailOpenAlarm() {
    this.alarm({
      id: 'RateLimitFailOpen',
      description: 'Requests served without a rate limit: the limiter could not count them',
      anchor: RUNBOOK_ANCHORS.rateLimitFailOpen,
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: RATE_LIMIT_FAIL_OPEN_METRIC,
        dimensionsMap: { service: SERVICE },
        statistic: 'Sum',
        period: MINUTE,
      }),
      threshold: 1,
    });
  }

  /**
   * Per app client, AWS/Cognito has throttles per use (ThrottleCount is AWS/Usage's, per account
   * and quota category). Cognito publishes them every five minutes.
   */
  private cognitoThrottlesAlarm(userPool: UserPool, appClient: UserPoolClient) {
    const cognitoPeriod = Duration.minutes(5);
    const cognitoThrottles = (metricName: string) =>
      new Metric({
        namespace: 'AWS/Cognito',
        metricName,
        dimensionsMap: { UserPool: userPool.userPoolId, UserPoolClient: appClient.userPoolClientId },
        statistic: 'Sum',
        period: cognitoPeriod,
      });
    this.alarm({
      id: 'CognitoThrottles',
      description: 'Cognito throttled sign-ups, sign-ins or token refreshes of the API app client',
      anchor: RUNBOOK_ANCHORS.cognitoThrottles,
      metric: new MathExpression({
        expression: 'FILL(signUp, 0) + FILL(signIn, 0) + FILL(refresh, 0)',
        usingMetrics: {
          signUp: cognitoThrottles('SignUpThrottles'),
          signIn: cognitoThrottles('SignInThrottles'),
          refresh: cognitoThrottles('TokenRefreshThrottles'),
        },
        period: cognitoPeriod,
        label: 'throttled calls',
      }),
      threshold: 1,
    });
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
  private webhookAlarms(webhooks: { queue: IQueue; deadLetters: IQueue }) {
    this.alarm({
      id: 'WebhookDeadLetters',
      description: 'Webhook delivery messages dead-lettered: the worker failed on each of their receives',
      anchor: RUNBOOK_ANCHORS.webhookDeadLetters,
      metric: webhooks.deadLetters.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
      threshold: 1,
    });
    this.alarm({
      id: 'WebhookDeliveriesWaiting',
      description: `The oldest webhook delivery message has waited ${WEBHOOK_OLDEST_MESSAGE_ALARM_SECONDS / 60} min or more (hops are at most 15 min)`,
      anchor: RUNBOOK_ANCHORS.webhookBacklog,
      metric: webhooks.queue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' }),
      threshold: WEBHOOK_OLDEST_MESSAGE_ALARM_SECONDS,
    });
    const fiveMinutes = Duration.minutes(5);
    // Half of all attempts failing, over at least 20 attempts in 5 minutes, for 15 minutes: endpoints
    // fail one by one; all of them at once is this side.
    this.alarm({
      id: 'WebhookAttemptsFailing',
      description: 'Half or more of all webhook delivery attempts failed (20+ attempts in 5 minutes, three times running)',
      anchor: RUNBOOK_ANCHORS.webhookAttemptsFailing,
      metric: new MathExpression({
        expression:
          'IF(FILL(failed, 0) + FILL(delivered, 0) >= 20, 100 * FILL(failed, 0) / (FILL(failed, 0) + FILL(delivered, 0)), 0)',
        usingMetrics: {
          failed: webhookMetric(WEBHOOK_METRICS.attemptFailed, fiveMinutes),
          delivered: webhookMetric(WEBHOOK_METRICS.delivered, fiveMinutes),
        },
        period: fiveMinutes,
        label: 'failed attempts %',
      }),
      threshold: 50,
      evaluation: { evaluationPeriods: 3, datapointsToAlarm: 3 },
    });
    // One webhook switched off is its owner's business; ten in an hour is likely ours.
    this.alarm({
      id: 'WebhooksSwitchedOff',
      description: 'Ten or more webhooks were switched off as failing within an hour',
      anchor: RUNBOOK_ANCHORS.webhooksDisabled,
      metric: webhookMetric(WEBHOOK_METRICS.disabled, Duration.hours(1)),
      threshold: 10,
      evaluation: { evaluationPeriods: 1, datapointsToAlarm: 1 },
    });
  }
}
