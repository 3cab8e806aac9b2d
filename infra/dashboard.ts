import { Duration } from 'aws-cdk-lib';
import type { HttpApi, WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AlarmStatusWidget,
  AlarmStatusWidgetSortBy,
  Dashboard as CloudWatchDashboard,
  GraphWidget,
  type IAlarm,
  type IMetric,
  type IWidget,
  LegendPosition,
  LogQueryVisualizationType,
  LogQueryWidget,
  MathExpression,
  Metric,
  PeriodOverride,
  TextWidget,
  TextWidgetBackground,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { UserPool, UserPoolClient } from 'aws-cdk-lib/aws-cognito';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { isCatchAll, type RouteRow, routeKeyOf } from '../lib/routes';
import { METRICS_NAMESPACE, SERVICE } from '../lib/runtime/metrics';
import type { ApiFunction } from './api-function';
import { WEBHOOK_METRICS, WEBHOOK_OLDEST_MESSAGE_ALARM_SECONDS, webhookMetric } from './monitoring';

/** CloudWatch's own limits on a dashboard (service quotas): checked at synth. */
export const DASHBOARD_LIMITS = { widgets: 500, metricsPerWidget: 500 } as const;

/** An alarm status widget shows at most 100 alarms. */
const ALARMS_PER_WIDGET = 100;

/** Logs Insights reads at most this many log groups in one query. */
const LOG_GROUPS_PER_QUERY = 50;

export interface DashboardProps {
  /** `TaskBoard-<stage>`. */
  dashboardName: string;
  api: HttpApi;
  /** The HTTP route table (lib/routes.ts): one line per row in every per-route graph. */
  routes: Record<string, RouteRow>;
  /** Every function of every row table, by row id. */
  functions: Map<string, ApiFunction>;
  table: ITable;
  userPool: UserPool;
  appClient: UserPoolClient;
  socketApi: WebSocketApi;
  socketStage: WebSocketStage;
  /** Table stream consumers with their dead-letter queues. */
  consumers: { id: string; fn: ApiFunction; deadLetters: IQueue }[];
  /** The webhook deliveries queue and its dead-letter queue (infra/webhooks.ts). */
  webhooks?: { queue: IQueue; deadLetters: IQueue };
  /** The HTTP API's access log group (JSON lines: routeKey, status, latencyMs, integrationError, ...). */
  accessLogs: ILogGroup;
  /** Every alarm of the stack: their states head the dashboard. */
  alarms: IAlarm[];
  /** The runbook's https URL (the stage's `runbookUrl`), linked from the dashboard's header. */
  runbookUrl: string;
}

/**
 * The runbook section the dashboard's header links to: its heading "How to use this runbook",
 * which explains the alarms' evaluation and this dashboard (test/infra/operations.test.ts checks
 * that docs/runbook.md has it).
 */
export const DASHBOARD_RUNBOOK_ANCHOR = 'how-to-use-this-runbook';

const period = Duration.minutes(1);

/**
 * The stack's CloudWatch dashboard, `TaskBoard-<stage>`: alarm states; the HTTP API overall and
 * per route (requests, 4xx, 5xx, latency p50 and p99, one line per route-table row: the stage's
 * detailed metrics); every function's errors, throttles, duration and cold starts (the service's
 * own ColdStart metric); the table's capacity, throttles and latency; Cognito; the live events
 * (WebSocket connects, messages and errors, each stream consumer's iterator age and dead-letter
 * depth, events sent); the business counts; and recent errors from the logs. Every line comes
 * from a row table or a construct, so a new row appears here by itself.
 */
export class Dashboard extends Construct {
  readonly dashboard: CloudWatchDashboard;
  /** Every widget, in order (the synth-time limit checks read them). */
  readonly widgets: IWidget[] = [];

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    this.dashboard = new CloudWatchDashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
      periodOverride: PeriodOverride.AUTO,
    });

    this.row(
      new TextWidget({
        markdown: [
          `# ${props.dashboardName}`,
          `Alarms, the HTTP API per route, functions, DynamoDB, Cognito and live events. What each alarm means and what to check first: [runbook](${props.runbookUrl}#${DASHBOARD_RUNBOOK_ANCHOR}).`,
        ].join('\n\n'),
        width: 24,
        height: 2,
        background: TextWidgetBackground.TRANSPARENT,
      }),
    );
    for (let start = 0; start < props.alarms.length; start += ALARMS_PER_WIDGET) {
      const alarms = props.alarms.slice(start, start + ALARMS_PER_WIDGET);
      this.row(
        new AlarmStatusWidget({
          title: start === 0 ? 'Alarms (firing first, then most recently changed)' : 'Alarms (continued)',
          alarms,
          sortBy: AlarmStatusWidgetSortBy.STATE_UPDATED_TIMESTAMP,
          width: 24,
          height: 6,
        }),
      );
    }

    // CloudWatch refuses a dashboard over its limits only at deploy time: fail the synth instead.
    this.node.addValidation({
      validate: () => {
        const errors: string[] = [];
        if (this.widgets.length > DASHBOARD_LIMITS.widgets)
          errors.push(`${this.widgets.length} widgets; CloudWatch allows ${DASHBOARD_LIMITS.widgets}`);
        for (const json of this.widgets.flatMap((widget) => widget.toJson())) {
          const metrics = (json.properties?.metrics ?? []).length;
          if (metrics > DASHBOARD_LIMITS.metricsPerWidget)
            errors.push(
              `"${json.properties.title}" has ${metrics} metrics; CloudWatch allows ${DASHBOARD_LIMITS.metricsPerWidget}`,
            );
        }
        return errors;
      },
    });

    this.apiWidgets(props);
    this.routeWidgets(props);
    this.functionWidgets(props);
    this.tableWidgets(props);
    this.cognitoWidgets(props);
    this.liveWidgets(props);
    this.webhookWidgets(props);
    this.businessWidgets(props);
    this.logWidgets(props);
  }

  /** A row of widgets (CloudWatch wraps a row wider than 24 units onto the next line). */
  private row(...widgets: IWidget[]) {
    this.widgets.push(...widgets);
    this.dashboard.addWidgets(...widgets);
  }

  private section(title: string, note?: string) {
    this.row(
      new TextWidget({
        markdown: note ? `## ${title}\n${note}` : `## ${title}`,
        width: 24,
        height: note ? 2 : 1,
        background: TextWidgetBackground.TRANSPARENT,
      }),
    );
  }

  private apiWidgets({ api }: DashboardProps) {
    const stage = api.defaultStage!;
    const requests = stage.metricCount({ period, statistic: 'Sum', label: 'requests' });
    const clientErrors = stage.metricClientError({ period, statistic: 'Sum', label: '4xx' });
    const serverErrors = stage.metricServerError({ period, statistic: 'Sum', label: '5xx' });
    this.section('HTTP API');
    this.row(
      new GraphWidget({ title: 'Requests, 4xx, 5xx (per minute)', left: [requests, clientErrors, serverErrors], width: 8 }),
      new GraphWidget({
        title: 'Error rates (%)',
        left: [
          new MathExpression({
            expression: 'IF(requests > 0, 100 * serverErrors / requests, 0)',
            usingMetrics: { serverErrors, requests },
            period,
            label: '5xx %',
          }),
          new MathExpression({
            expression: 'IF(requests > 0, 100 * clientErrors / requests, 0)',
            usingMetrics: { clientErrors, requests },
            period,
            label: '4xx %',
          }),
        ],
        leftAnnotations: [{ value: 1, label: '5xx alarm (1%, 20+ requests a minute)' }],
        width: 8,
      }),
      new GraphWidget({
        title: 'Latency (ms)',
        left: [
          stage.metricLatency({ period, statistic: 'p50', label: 'p50' }),
          stage.metricLatency({ period, statistic: 'p99', label: 'p99' }),
          stage.metricIntegrationLatency({ period, statistic: 'p99', label: 'integration p99' }),
        ],
        width: 8,
      }),
    );
  }

  /**
   * One line per route-table row in each graph, from the stage's detailed metrics (dimensions
   * ApiId, Stage, Method, Resource). The `$default` row has no method or path of its own: its
   * line is the stage's total less the routes', so it also holds CORS preflights, which API
   * Gateway answers without a route.
   */
  private routeWidgets({ api, routes }: DashboardProps) {
    const stage = api.defaultStage!;
    const rows = Object.values(routes);
    const named = rows.filter((row) => !isCatchAll(row));
    const fallback = rows.find(isCatchAll);
    const routeMetric = (row: RouteRow, metricName: string, statistic: string) =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiId: api.apiId, Stage: stage.stageName, Method: row.method, Resource: row.path },
        statistic,
        period,
        label: routeKeyOf(row),
      });
    const counts = (metricName: string, total: Metric): IMetric[] => {
      const perRoute = named.map((row) => routeMetric(row, metricName, 'Sum'));
      if (!fallback) return perRoute;
      const ids = perRoute.map((_, i) => `r${i}`);
      const rest = new MathExpression({
        expression: `FILL(total, 0) - (${ids.map((id) => `FILL(${id}, 0)`).join(' + ')})`,
        usingMetrics: { total, ...Object.fromEntries(perRoute.map((metric, i) => [ids[i], metric])) },
        period,
        label: `${routeKeyOf(fallback)} (no route matched) and CORS preflights`,
      });
      return [...perRoute, rest];
    };
    const graph = (title: string, left: IMetric[]) =>
      new GraphWidget({ title, left, width: 24, height: 8, legendPosition: LegendPosition.RIGHT });
    this.section(
      'HTTP routes',
      "One line per row of the route table (`lib/routes.ts`), from the stage's detailed metrics; the `$default` line is the stage total less every route.",
    );
    this.row(graph('Requests by route (per minute)', counts('Count', stage.metricCount({ period, statistic: 'Sum' }))));
    this.row(graph('4xx by route (per minute)', counts('4xx', stage.metricClientError({ period, statistic: 'Sum' }))));
    this.row(graph('5xx by route (per minute)', counts('5xx', stage.metricServerError({ period, statistic: 'Sum' }))));
    this.row(
      graph(
        'Latency p50 by route (ms)',
        named.map((row) => routeMetric(row, 'Latency', 'p50')),
      ),
    );
    this.row(
      graph(
        'Latency p99 by route (ms)',
        named.map((row) => routeMetric(row, 'Latency', 'p99')),
      ),
    );
  }

  /**
   * Each function's errors, throttles, duration p50 and p99, invocations and cold starts; HTTP
   * route functions on the left, the live events' (socket routes, stream consumers, schedules) on
   * the right, since their durations differ by orders of magnitude.
   */
  private functionWidgets({ functions }: DashboardProps) {
    const all = [...functions];
    const groups: [string, [string, ApiFunction][]][] = [
      ['HTTP route functions', all.filter(([, fn]) => 'method' in fn.row)],
      ['Live event functions', all.filter(([, fn]) => !('method' in fn.row))],
    ];
    // By name (ApiFunction.functionName): a grouped function's is a literal, which this template,
    // the root's, writes in a few bytes instead of reading a nested stack's output.
    const coldStarts = (rowId: string, fn: ApiFunction) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: 'ColdStart',
        dimensionsMap: { service: SERVICE, function_name: fn.functionName },
        statistic: 'Sum',
        period,
        label: rowId,
      });
    const kinds: [string, (rowId: string, fn: ApiFunction) => IMetric][] = [
      ['errors', (rowId, fn) => fn.metric('Errors', { period, statistic: 'Sum', label: rowId })],
      ['throttles', (rowId, fn) => fn.metric('Throttles', { period, statistic: 'Sum', label: rowId })],
      ['duration p50 (ms)', (rowId, fn) => fn.metric('Duration', { period, statistic: 'p50', label: rowId })],
      ['duration p99 (ms)', (rowId, fn) => fn.metric('Duration', { period, statistic: 'p99', label: rowId })],
      ['invocations', (rowId, fn) => fn.metric('Invocations', { period, statistic: 'Sum', label: rowId })],
      ['cold starts (ColdStart, TaskBoard)', coldStarts],
    ];
    this.section('Functions', 'One line per function, labelled with its row id.');
    for (const [kind, metricOf] of kinds) {
      this.row(
        ...groups.map(
          ([group, rows]) =>
            new GraphWidget({
              title: `${group}: ${kind}`,
              left: rows.map(([rowId, fn]) => metricOf(rowId, fn)),
              width: 12,
              height: 7,
              legendPosition: LegendPosition.RIGHT,
            }),
        ),
      );
    }
    this.row(
      new GraphWidget({
        title: 'Lambda concurrency (account, this region)',
        left: [
          new Metric({
            namespace: 'AWS/Lambda',
            metricName: 'ConcurrentExecutions',
            statistic: 'Maximum',
            period,
            label: 'concurrent executions',
          }),
          new Metric({
            namespace: 'AWS/Lambda',
            metricName: 'UnreservedConcurrentExecutions',
            statistic: 'Maximum',
            period,
            label: 'unreserved',
          }),
        ],
        width: 12,
        height: 6,
      }),
    );
  }

  private tableWidgets({ table }: DashboardProps) {
    const tableMetric = (metricName: string, label: string, statistic = 'Sum') =>
      new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: table.tableName },
        statistic,
        period,
        label,
      });
    // Per-operation series (ThrottledRequests, latency, system errors) exist only with the
    // Operation dimension: a search finds every operation the service calls.
    const byOperation = (metricName: string, statistic: string, label: string) =>
      new MathExpression({
        expression: `SEARCH('{AWS/DynamoDB,Operation,TableName} MetricName="${metricName}" TableName="${table.tableName}"', '${statistic}', 60)`,
        usingMetrics: {},
        period,
        label,
      });
    this.section('DynamoDB', "The table, on demand; its local index shares the table's capacity and throttles.");
    this.row(
      new GraphWidget({
        title: 'Consumed capacity (units per minute)',
        left: [tableMetric('ConsumedReadCapacityUnits', 'read units'), tableMetric('ConsumedWriteCapacityUnits', 'write units')],
        width: 8,
      }),
      new GraphWidget({
        title: 'Throttles',
        left: [
          tableMetric('ReadThrottleEvents', 'read throttle events'),
          tableMetric('WriteThrottleEvents', 'write throttle events'),
          byOperation('ThrottledRequests', 'Sum', 'throttled requests'),
        ],
        width: 8,
      }),
      new GraphWidget({
        title: 'Successful request latency by operation (ms, average)',
        left: [byOperation('SuccessfulRequestLatency', 'Average', 'latency')],
        width: 8,
      }),
    );
    this.row(
      new GraphWidget({
        title: 'Conflicts and errors',
        left: [
          tableMetric('ConditionalCheckFailedRequests', 'conditional check failed (409s, races)'),
          tableMetric('TransactionConflict', 'transaction conflicts'),
          byOperation('SystemErrors', 'Sum', 'system errors'),
        ],
        width: 12,
      }),
    );
  }

  private cognitoWidgets({ userPool, appClient }: DashboardProps) {
    const cognitoPeriod = Duration.minutes(5);
    const clientMetric = (metricName: string) =>
      new Metric({
        namespace: 'AWS/Cognito',
        metricName,
        dimensionsMap: { UserPool: userPool.userPoolId, UserPoolClient: appClient.userPoolClientId },
        statistic: 'Sum',
        period: cognitoPeriod,
        label: metricName,
      });
    this.section('Cognito', 'The API app client; Cognito publishes every five minutes.');
    this.row(
      new GraphWidget({
        title: 'Sign-ups, sign-ins, token refreshes',
        left: ['SignUpSuccesses', 'SignInSuccesses', 'TokenRefreshSuccesses'].map(clientMetric),
        width: 12,
      }),
      new GraphWidget({
        title: "Throttles (app client; and the account's Cognito quota throttles)",
        left: [
          ...['SignUpThrottles', 'SignInThrottles', 'TokenRefreshThrottles'].map(clientMetric),
          new MathExpression({
            expression: `SEARCH('{AWS/Usage,Class,Resource,Service,Type} Cognito MetricName="ThrottleCount"', 'Sum', 300)`,
            usingMetrics: {},
            period: cognitoPeriod,
            label: 'account quota throttles',
          }),
        ],
        width: 12,
      }),
    );
  }

  private liveWidgets({ socketApi, socketStage, consumers }: DashboardProps) {
    const socketMetric = (metricName: string, statistic = 'Sum') =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiId: socketApi.apiId, Stage: socketStage.stageName },
        statistic,
        period,
        label: statistic === 'Sum' ? metricName : `${metricName} ${statistic}`,
      });
    this.section('Live events', "The WebSocket stage, the table stream's consumers and their dead-letter queues.");
    this.row(
      new GraphWidget({
        title: 'WebSocket connects and messages (per minute)',
        left: [socketMetric('ConnectCount'), socketMetric('MessageCount')],
        width: 8,
      }),
      new GraphWidget({
        title: 'WebSocket errors (per minute)',
        left: [socketMetric('ClientError'), socketMetric('IntegrationError'), socketMetric('ExecutionError')],
        width: 8,
      }),
      new GraphWidget({
        title: 'WebSocket integration latency (ms)',
        left: [socketMetric('IntegrationLatency', 'p50'), socketMetric('IntegrationLatency', 'p99')],
        width: 8,
      }),
    );
    this.row(
      new GraphWidget({
        title: 'Stream iterator age (ms, maximum)',
        left: consumers.map(({ id, fn }) => fn.fn.metric('IteratorAge', { period, statistic: 'Maximum', label: id })),
        leftAnnotations: [{ value: 60_000, label: 'alarm (60 s)' }],
        width: 8,
      }),
      new GraphWidget({
        title: 'Dead-letter queues: batches given up on',
        left: consumers.map(({ id, deadLetters }) =>
          deadLetters.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum', label: `${id} messages` }),
        ),
        right: consumers.map(({ id, deadLetters }) =>
          deadLetters.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum', label: `${id} oldest (s)` }),
        ),
        width: 8,
      }),
      new GraphWidget({
        title: 'Events sent to sockets (EventsSent, per minute)',
        left: [serviceMetric('EventsSent')],
        width: 8,
      }),
    );
  }

  /**
   * Webhook deliveries: outcomes per attempt (the worker's own counts, namespace TaskBoard with the
   * `service` dimension), attempts deferred because their webhook was at its cap of attempts in
   * flight, the deliveries queue (waiting, in flight, oldest) and its dead letters.
   */
  private webhookWidgets({ webhooks }: DashboardProps) {
    if (!webhooks) return;
    const count = (metricName: string, label: string) => webhookMetric(metricName, period, label);
    this.section('Webhooks', "Deliveries to owners' endpoints: attempts, the deliveries queue and its dead letters.");
    this.row(
      new GraphWidget({
        title: 'Delivery attempts (per minute)',
        left: [
          count(WEBHOOK_METRICS.delivered, 'delivered (WebhookDelivered)'),
          count(WEBHOOK_METRICS.attemptFailed, 'attempt failed (WebhookAttemptFailed)'),
          count(WEBHOOK_METRICS.deliveryFailed, 'delivery failed for good (WebhookDeliveryFailed)'),
          count(WEBHOOK_METRICS.disabled, 'webhooks switched off (WebhookDisabled)'),
        ],
        right: [count(WEBHOOK_METRICS.deferred, 'deferred: webhook at its cap (WebhookAttemptDeferred)')],
        width: 8,
      }),
      new GraphWidget({
        title: 'Deliveries queue: messages',
        left: [
          webhooks.queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum', label: 'ready' }),
          webhooks.queue.metricApproximateNumberOfMessagesNotVisible({ period, statistic: 'Maximum', label: 'in flight' }),
          webhooks.queue.metricApproximateNumberOfMessagesDelayed({ period, statistic: 'Maximum', label: 'waiting for a retry' }),
        ],
        width: 8,
      }),
      new GraphWidget({
        title: 'Oldest message (s) and dead letters',
        left: [webhooks.queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum', label: 'oldest message (s)' })],
        leftAnnotations: [{ value: WEBHOOK_OLDEST_MESSAGE_ALARM_SECONDS, label: 'alarm (30 min)' }],
        right: [
          webhooks.deadLetters.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum', label: 'dead letters' }),
        ],
        width: 8,
      }),
    );
  }

  /** The business counts the route rows name (`metric`), each counted on the row's success. */
  private businessWidgets({ routes }: DashboardProps) {
    const names = [...new Set(Object.values(routes).flatMap((row) => (row.metric ? [row.metric] : [])))];
    if (names.length === 0) return;
    this.section('Business');
    this.row(
      new GraphWidget({
        title: `Business counts (${METRICS_NAMESPACE}, per 5 minutes)`,
        left: names.map((name) => serviceMetric(name, Duration.minutes(5))),
        width: 24,
        height: 6,
        legendPosition: LegendPosition.RIGHT,
      }),
    );
  }

  /** Recent failures from the logs: the runbook's first queries, ready to run. */
  private logWidgets({ accessLogs, functions }: DashboardProps) {
    this.section('Logs', 'The last failures; widen the time range or open them in Logs Insights.');
    const widgets: IWidget[] = [
      new LogQueryWidget({
        title: 'HTTP 5xx by route (access log)',
        logGroupNames: [accessLogs.logGroupName],
        queryLines: [
          'fields routeKey, status, integrationError',
          'filter status >= 500',
          'stats count(*) as answers by routeKey, status, integrationError',
          'sort answers desc',
          'limit 50',
        ],
        view: LogQueryVisualizationType.TABLE,
        width: 12,
        height: 6,
      }),
    ];
    const groups = [...functions.values()].map(({ fn }) => fn.logGroup.logGroupName);
    for (let start = 0; start < groups.length; start += LOG_GROUPS_PER_QUERY) {
      widgets.push(
        new LogQueryWidget({
          title:
            groups.length > LOG_GROUPS_PER_QUERY ? `Function errors (${start / LOG_GROUPS_PER_QUERY + 1})` : 'Function errors',
          logGroupNames: groups.slice(start, start + LOG_GROUPS_PER_QUERY),
          queryLines: [
            'fields @timestamp, route, consumer, status, message, error.name, error.message, requestId',
            'filter level = "ERROR" or @message like /Task timed out|Runtime\\.|Error: /',
            'sort @timestamp desc',
            'limit 50',
          ],
          view: LogQueryVisualizationType.TABLE,
          width: 12,
          height: 6,
        }),
      );
    }
    this.row(...widgets);
  }
}

/** A count of the service's own (lib/runtime/metrics.ts: namespace TaskBoard, dimension `service`). */
function serviceMetric(name: string, metricPeriod = period) {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service: SERVICE },
    statistic: 'Sum',
    period: metricPeriod,
    label: name,
  });
}
