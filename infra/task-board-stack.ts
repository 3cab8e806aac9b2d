import {
  Annotations,
  Aws,
  type CfnElement,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import { CfnRoute, type CfnStage, CorsHttpMethod, DomainName, HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AccountRecovery,
  ClientAttributes,
  FeaturePlan,
  UserPool,
  type UserPoolClient,
  UserPoolEmail,
  UserPoolOperation,
} from 'aws-cdk-lib/aws-cognito';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { appClient as appClientDefinition, passwordPolicy, selfSignUp, tokenValidity } from '../lib/auth/pool';
import { tableDefinition } from '../lib/data/table';
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS } from '../lib/http/cors';
import {
  corsMethods,
  type FunctionRow,
  isCatchAll,
  type PoolTriggerRow,
  poolTriggers,
  type QueueConsumerRow,
  queueConsumers,
  type RouteRow,
  routeKeyOf,
  routes,
  type ScheduleRow,
  type SocketRouteRow,
  type StreamConsumerRow,
  schedules,
  socketRoutes,
  streamConsumers,
} from '../lib/routes';
import { ENV } from '../lib/runtime/config';
import { ApiFunction, CONNECTION_METHODS, functionIdOf } from './api-function';
import type { StackConfig } from './config';
import { Dashboard } from './dashboard';
import { FunctionGroup } from './function-group';
import { groupOf, groupStackIdOf } from './layout';
import { Monitoring } from './monitoring';
import { LiveEvents } from './realtime';
import { Webhooks } from './webhooks';

/** The row tables of lib/routes.ts, which the stack is made from. */
export interface RowTables {
  routes: Record<string, RouteRow>;
  socketRoutes: Record<string, SocketRouteRow>;
  streamConsumers: Record<string, StreamConsumerRow>;
  schedules: Record<string, ScheduleRow>;
  /** The webhook deliveries queue's consumers; none when a test's tables leave it out. */
  queueConsumers?: Record<string, QueueConsumerRow>;
  /** The user pool's triggers; none when a test's tables leave them out. */
  poolTriggers?: Record<string, PoolTriggerRow>;
}

export interface TaskBoardStackProps extends StackProps {
  config: StackConfig;
  /**
   * The row tables; by default lib/routes.ts's. The headroom test passes tables with extra rows
   * to show what the stack would be with the routes still to come.
   */
  tables?: RowTables;
}

/** The nested stack parameter that carries the WebSocket API id (ApiFunction.useSockets, cdk-nag). */
const SOCKET_API_PARAMETER = 'SocketApiId';

/** CDK's operation for each pool trigger a row may name (PoolTriggerRow `trigger`). */
const POOL_OPERATIONS: Record<PoolTriggerRow['trigger'], UserPoolOperation> = {
  CustomMessage: UserPoolOperation.CUSTOM_MESSAGE,
};

/** Why a function has no dead-letter queue of its own, by what invokes it (cdk-nag Serverless-LambdaDLQ). */
function functionDlqReason(row: FunctionRow): string {
  if ('filters' in row)
    return 'Invoked by a table stream event source mapping, whose failed batches go to its own on-failure destination (an SQS queue); a function DLQ applies to asynchronous invocations only.';
  if ('maxReceiveCount' in row)
    return "Invoked by the webhook deliveries queue's SQS event source mapping: a message that keeps failing moves to the queue's own dead-letter queue (redrive policy, maxReceiveCount); a function DLQ applies to asynchronous invocations only.";
  if ('trigger' in row)
    return 'Invoked synchronously by the user pool (a Cognito trigger): a failure fails the Cognito call that made the message, and Lambda never retries or dead-letters synchronous invocations.';
  if ('everyMinutes' in row)
    return 'Invoked by a schedule whose events carry nothing but the time: a failed run is redone by the next one, which looks back ten minutes, so a dead-lettered event would hold nothing to replay.';
  return 'Invoked synchronously by API Gateway only (HTTP or WebSocket route): a failure is answered to the client, and Lambda never retries or dead-letters synchronous invocations.';
}

/** Every function's environment but the pool triggers': the user pool and app client it verifies tokens against and calls. */
function functionEnvironment(userPool: UserPool, appClient: UserPoolClient): Record<string, string> {
  return {
    [ENV.tokenIssuer]: userPool.userPoolProviderUrl,
    [ENV.userPoolId]: userPool.userPoolId,
    [ENV.userPoolClientId]: appClient.userPoolClientId,
  };
}

/**
 * The rows that call Cognito, whose own quotas are low, are throttled harder (`throttle`).
 * RouteSettings is a raw JSON property in CloudFormation: its keys are written as-is.
 */
function identityRouteSettings(config: StackConfig, routeRows: Record<string, RouteRow>) {
  return Object.fromEntries(
    Object.values(routeRows)
      .filter((row) => row.throttle === 'identity')
      .map((row) => [
        routeKeyOf(row),
        {
          ThrottlingRateLimit: config.authThrottle.rateLimit,
          ThrottlingBurstLimit: config.authThrottle.burstLimit,
          DetailedMetricsEnabled: true,
        },
      ]),
  );
}

/** What the stack's parts are made with: the stage's settings, the table and the user pool. */
interface StackBase {
  config: StackConfig;
  table: Table;
  userPool: UserPool;
  appClient: UserPoolClient;
  /** Every function's environment but the pool triggers' (functionEnvironment). */
  environment: Record<string, string>;
  /** The stack's description, which each function group's nested stack repeats. */
  description: string | undefined;
}

/** What happens to the data (table, pool, logs) when the stack is deleted. */
const dataRemovalOf = (config: StackConfig) => (config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);

/** One of CloudWatch Logs' periods: the stage file's schema admits only those (infra/settings.ts). */
const retentionOf = (config: StackConfig) => config.logRetentionDays as RetentionDays;

const dashboardNameOf = (config: StackConfig) => `TaskBoard-${config.stage}`;

/** The HTTP API's access log line: one JSON object per request, with the id problem+json bodies carry. */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  method: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
});

/**
 * The service: one DynamoDB table keyed by board, a Cognito user pool, an HTTP API with one
 * function per row of the route table (lib/routes.ts), the `$default` row included, and the live
 * board events (infra/realtime.ts): one function per WebSocket route, stream consumer and schedule
 * row. Function construct ids come from row ids, which are unique across the tables.
 */
export class TaskBoardStack extends Stack {
  /** Every function, by its row id (`boards.get`, `socket.watch`, `events.broadcast`, ...). */
  readonly functions = new Map<string, ApiFunction>();
  /** The nested stacks of function groups, by group (infra/layout.ts). */
  readonly groups = new Map<string, FunctionGroup>();
  readonly live: LiveEvents;
  readonly webhooks: Webhooks;

  // The parts in the order they are made: each uses those before it, and the templates list
  // their resources in this order.
  constructor(scope: Construct, id: string, props: TaskBoardStackProps) {
    super(scope, id, props);
    const { config } = props;
    const tables = props.tables ?? { routes, socketRoutes, streamConsumers, schedules, queueConsumers, poolTriggers };
    const table = this.boardTable(config);
    const userPool = this.userPool(config);
    const appClient = this.appClient(userPool);
    const environment = functionEnvironment(userPool, appClient);
    const base: StackBase = { config, table, userPool, appClient, environment, description: props.description };

    const httpFunctions = this.withFunctions<RouteRow>(base, tables.routes, 'group');
    this.addPoolTriggers(base, tables.poolTriggers ?? {});
    this.live = this.liveEvents(base, tables);
    this.webhooks = this.webhookDeliveries(base, tables.queueConsumers ?? {});
    this.connectSockets();

    const domain = this.customDomain(config);
    const api = this.httpApi(config, domain);
    this.addRoutes(api, httpFunctions);
    const accessLogs = this.configureStage(api, config, tables.routes);

    const monitoring = this.monitoring(base, api);
    this.dashboard(base, api, tables.routes, accessLogs, monitoring);
    this.acknowledgeFindings(api, userPool, monitoring);
    this.outputs(base, api, domain, monitoring);
  }

  /** The one table, its stream and its local secondary indexes, as lib/data/table.ts defines them. */
  private boardTable(config: StackConfig): Table {
    const table = new Table(this, 'Table', {
      partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: config.deletionProtection,
      removalPolicy: dataRemovalOf(config),
      // Both images: a stream record alone makes a board event (lib/data/change-events.ts).
      stream: StreamViewType[tableDefinition.streamView],
      timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
    });
    for (const index of tableDefinition.localSecondaryIndexes) {
      table.addLocalSecondaryIndex({
        indexName: index.indexName,
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType[index.projection],
      });
    }
    return table;
  }

  /** The user pool, with a warning when the stage sends its codes through Cognito's own sender. */
  private userPool(config: StackConfig): UserPool {
    const userPool = new UserPool(this, 'Users', {
      // The service creates every user (AdminCreateUser); Cognito's SignUp is refused (lib/auth/pool.ts).
      selfSignUpEnabled: selfSignUp,
      signInAliases: { email: true },
      signInCaseSensitive: false,
      passwordPolicy: {
        minLength: passwordPolicy.minLength,
        requireLowercase: passwordPolicy.requireLowercase,
        requireUppercase: passwordPolicy.requireUppercase,
        requireDigits: passwordPolicy.requireDigits,
        requireSymbols: passwordPolicy.requireSymbols,
      },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      // Nothing here needs more than Lite (app client secret, admin sign-in, write attributes,
      // Lambda triggers); CDK's default for a new pool is Essentials, at about three times the price per user.
      featurePlan: FeaturePlan.LITE,
      email: config.mailSender
        ? UserPoolEmail.withSES({
            fromEmail: config.mailSender.from,
            fromName: config.mailSender.name,
            sesRegion: config.mailSender.sesRegion,
          })
        : UserPoolEmail.withCognito(),
      removalPolicy: dataRemovalOf(config),
    });
    if (!config.mailSender) {
      Annotations.of(userPool).addWarningV2(
        'task-board:cognito-default-sender',
        `stage ${config.base}: "mailSender" is null, so codes go out through Cognito's own sender, a few dozen messages a day per account, which anyone can use up with reset requests; name an SES sender in infra/stages/${config.base}.ts (prod requires one).`,
      );
    }
    return userPool;
  }

  /** The API's app client: CDK always allows refresh tokens; the rest comes from the definition the emulator shares. */
  private appClient(userPool: UserPool): UserPoolClient {
    return userPool.addClient('ApiClient', {
      authFlows: { adminUserPassword: appClientDefinition.adminUserPasswordAuth },
      generateSecret: appClientDefinition.generateSecret,
      preventUserExistenceErrors: appClientDefinition.preventUserExistenceErrors,
      // CDK's name for `name` (appClientDefinition.writeAttributes; the infra test compares them).
      writeAttributes: new ClientAttributes().withStandardAttributes({ fullname: true }),
      accessTokenValidity: Duration.minutes(tokenValidity.accessTokenMinutes),
      refreshTokenValidity: Duration.days(tokenValidity.refreshTokenDays),
    });
  }

  /**
   * A row's function, with exactly its row's table and pool grants, in its group's nested stack
   * (infra/layout.ts) or, as `where` says, here: the stream consumers stay here, as a moved
   * consumer would be a second reader of each stream shard until the old one is deleted (DynamoDB
   * Streams allows two) and would deliver every event of that window twice; so do the pool
   * triggers (addPoolTriggers).
   */
  private functionOf(
    base: StackBase,
    rowId: string,
    row: FunctionRow,
    where: 'root' | 'group',
    environment = base.environment,
  ): ApiFunction {
    if (this.functions.has(rowId)) throw new Error(`row id ${rowId} is in two tables`);
    const { config } = base;
    const id = functionIdOf(rowId);
    const scope = where === 'root' ? this : this.groupOf(row, base.description ?? id);
    // A log group that holds logs stays at its path here (and so at its logical id).
    const logGroup =
      where === 'group' && row.logGroup === 'root'
        ? new LogGroup(new Construct(this, id), 'Logs', { retention: retentionOf(config), removalPolicy: dataRemovalOf(config) })
        : undefined;
    const fn = new ApiFunction(scope, id, {
      row,
      environment,
      logGroup,
      // A grouped function is named by its stack, group and row (`TaskBoard-prod-boards-BoardsList`),
      // so that the dashboard, whose body is in this template and carries every name several
      // times, names it in a few bytes rather than by a nested stack output (about 170 each);
      // operators read it too. The group is in the name so that a function moved to another
      // group gets a new name: its new copy is made before the old one is deleted.
      functionName: where === 'group' ? `${this.stackName}-${groupOf(row)}-${id}` : undefined,
      logRetention: retentionOf(config),
      logRemovalPolicy: dataRemovalOf(config),
    });
    fn.grantTable(base.table, config.rateLimits);
    fn.grantUserPool(base.userPool);
    this.functions.set(rowId, fn);
    return fn;
  }

  /** A function per row of a table, each beside its row and id. */
  private withFunctions<Row extends FunctionRow>(base: StackBase, rows: Record<string, Row>, where: 'root' | 'group') {
    return Object.entries(rows).map(([rowId, row]): [string, Row, ApiFunction] => [
      rowId,
      row,
      this.functionOf(base, rowId, row, where),
    ]);
  }

  /**
   * The pool's triggers stay here with the pool and get none of its settings: the pool names each
   * trigger's function and each function's invoke permission names the pool, so a trigger in a
   * nested stack, or one whose environment names the pool, would make a dependency cycle.
   */
  private addPoolTriggers(base: StackBase, triggers: Record<string, PoolTriggerRow>) {
    for (const [rowId, row] of Object.entries<PoolTriggerRow>(triggers)) {
      base.userPool.addTrigger(POOL_OPERATIONS[row.trigger], this.functionOf(base, rowId, row, 'root', {}).fn);
    }
  }

  /** The live board events (infra/realtime.ts), with the functions of their three tables. */
  private liveEvents(base: StackBase, tables: RowTables): LiveEvents {
    const { config } = base;
    return new LiveEvents(this, 'Live', {
      table: base.table,
      sockets: this.withFunctions<SocketRouteRow>(base, tables.socketRoutes, 'group'),
      consumers: this.withFunctions<StreamConsumerRow>(base, tables.streamConsumers, 'root'),
      schedules: this.withFunctions<ScheduleRow>(base, tables.schedules, 'group'),
      throttle: config.socketThrottle,
      accountLogRole: config.accountLogRole,
      logRetention: retentionOf(config),
      logRemovalPolicy: dataRemovalOf(config),
    });
  }

  /**
   * The webhook deliveries (infra/webhooks.ts). The queue and the key live here; the deliveries
   * queue's consumers in their group's stack, unlike the stream consumers: an SQS event source
   * mapping has no position to keep, and a moved one only polls the same queue beside the old one
   * until cleanup (each message is still received by one of them at a time).
   */
  private webhookDeliveries(base: StackBase, consumers: Record<string, QueueConsumerRow>): Webhooks {
    return new Webhooks(this, 'Webhooks', {
      consumers: this.withFunctions<QueueConsumerRow>(base, consumers, 'group'),
      functions: this.functions.values(),
    });
  }

  /**
   * Socket addresses for the rows that name them, ManageConnections for the rows that send; a
   * nested function gets the API id under a fixed parameter name (FunctionGroup.parameter).
   */
  private connectSockets() {
    for (const fn of this.functions.values()) {
      const scope = Stack.of(fn);
      fn.useSockets(
        this.live.stage,
        scope instanceof FunctionGroup && fn.row.manageConnections
          ? scope.parameter(SOCKET_API_PARAMETER, this.live.api.apiId)
          : undefined,
      );
    }
  }

  /** The stage's custom domain, when it names one. */
  private customDomain(config: StackConfig): DomainName | undefined {
    if (!config.domain) return undefined;
    return new DomainName(this, 'Domain', {
      domainName: config.domain.name,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', config.domain.certificateArn),
    });
  }

  /** The HTTP API, on the custom domain when there is one, answering CORS preflights itself. */
  private httpApi(config: StackConfig, domain: DomainName | undefined): HttpApi {
    return new HttpApi(this, 'Api', {
      description: 'Task-board REST API',
      ...(domain ? { defaultDomainMapping: { domainName: domain } } : {}),
      corsPreflight: {
        allowOrigins: config.corsOrigins,
        allowHeaders: CORS_ALLOW_HEADERS,
        exposeHeaders: CORS_EXPOSE_HEADERS,
        // Every method a row has, and the preflight's own.
        allowMethods: corsMethods().map((method) => CorsHttpMethod[method]),
        maxAge: Duration.minutes(10),
      },
    });
  }

  /**
   * Every route stays here with the API, at the construct path (and so the logical id) CDK's
   * HttpRoute gave it (`Api/GET--boards`, the catch-all's `Api/DefaultRoute`): a route key is
   * unique per API, and CloudFormation makes a moved route before it deletes the old one. The
   * integration and invoke permission are beside the function (ApiFunction.integrateHttp).
   */
  private addRoutes(api: HttpApi, httpFunctions: [string, RouteRow, ApiFunction][]) {
    for (const [, row, fn] of httpFunctions) {
      const route = new Construct(api, isCatchAll(row) ? 'DefaultRoute' : `${row.method}${row.path}`);
      new CfnRoute(route, 'Resource', {
        apiId: api.apiId,
        routeKey: isCatchAll(row) ? '$default' : routeKeyOf(row),
        target: `integrations/${fn.integrateHttp(api, row)}`,
        authorizationType: 'NONE',
      });
    }
  }

  /** The default stage's throttling, detailed metrics and structured access logs; returns the access logs' group. */
  private configureStage(api: HttpApi, config: StackConfig, routeRows: Record<string, RouteRow>): LogGroup {
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: retentionOf(config),
      removalPolicy: dataRemovalOf(config),
    });
    const stage = api.defaultStage!.node.defaultChild as CfnStage;
    // Detailed metrics: Count, 4xx, 5xx, Latency, IntegrationLatency and DataProcessed per route
    // (the dashboard's per-route graphs), billed as custom metrics for each hour a route is called.
    stage.defaultRouteSettings = {
      throttlingRateLimit: config.throttle.rateLimit,
      throttlingBurstLimit: config.throttle.burstLimit,
      detailedMetricsEnabled: true,
    };
    stage.routeSettings = identityRouteSettings(config, routeRows);
    stage.accessLogSettings = { destinationArn: accessLogs.logGroupArn, format: ACCESS_LOG_FORMAT };
    return accessLogs;
  }

  /** The alarms: this stack's functions here, each group's in its own stack. */
  private monitoring(base: StackBase, api: HttpApi): Monitoring {
    const functionsIn = (scope: Stack) =>
      [...this.functions]
        .filter(([, fn]) => Stack.of(fn) === scope)
        .map(([rowId, fn]): [string, ApiFunction['fn']] => [rowId, fn.fn]);
    return new Monitoring(this, 'Monitoring', {
      api,
      functions: new Map(functionsIn(this)),
      groups: [...this.groups.values()].map((group) => ({ scope: group, group: group.group, functions: functionsIn(group) })),
      consumers: this.live.consumers.map(({ id, fn, deadLetters }) => ({ id, fn: fn.fn, deadLetters })),
      webhooks: this.webhooks,
      table: base.table,
      userPool: base.userPool,
      appClient: base.appClient,
      alarmEmail: base.config.alarmEmail,
      runbookUrl: base.config.runbookUrl,
    });
  }

  /** The operations dashboard (infra/dashboard.ts). */
  private dashboard(
    base: StackBase,
    api: HttpApi,
    routeRows: Record<string, RouteRow>,
    accessLogs: LogGroup,
    monitoring: Monitoring,
  ) {
    new Dashboard(this, 'Operations', {
      dashboardName: dashboardNameOf(base.config),
      api,
      routes: routeRows,
      functions: this.functions,
      table: base.table,
      userPool: base.userPool,
      appClient: base.appClient,
      socketApi: this.live.api,
      socketStage: this.live.stage,
      consumers: this.live.consumers,
      webhooks: this.webhooks,
      accessLogs,
      alarms: monitoring.alarms,
      runbookUrl: base.config.runbookUrl,
    });
  }

  /** The stack outputs: the addresses a client, an operator and `npm run sam:env` need. */
  private outputs(base: StackBase, api: HttpApi, domain: DomainName | undefined, monitoring: Monitoring) {
    const dashboardName = dashboardNameOf(base.config);
    new CfnOutput(this, 'ApiUrl', {
      value: domain ? `https://${base.config.domain!.name}` : api.apiEndpoint,
      description: 'Base URL of the REST API',
    });
    if (domain) {
      new CfnOutput(this, 'DomainTarget', {
        value: domain.regionalDomainName,
        description: 'Point a CNAME/alias record of the custom domain here',
      });
    }
    new CfnOutput(this, 'WebSocketUrl', {
      value: this.live.stage.url,
      description: 'Live board events socket address (clients get it with a ticket from POST /realtime/tickets)',
    });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${dashboardName}`,
      description: `CloudWatch dashboard ${dashboardName}: alarms, routes, functions, table, live events`,
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: monitoring.topic.topicArn, description: 'Subscribe to receive alarms' });
    new CfnOutput(this, 'UserPoolId', { value: base.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: base.appClient.userPoolClientId });
    new CfnOutput(this, 'TableName', { value: base.table.tableName });
    new CfnOutput(this, 'WebhookQueueUrl', {
      value: this.webhooks.queue.queueUrl,
      description: 'The webhook deliveries queue (npm run sam:env; its dead letters: docs/runbook.md)',
    });
    new CfnOutput(this, 'WebhookKeyArn', {
      value: this.webhooks.key.keyArn,
      description: "The webhook secrets' KMS key (kept when the stack is deleted)",
    });
  }

  /** The nested stack of a row's group, made with the group's first row. */
  private groupOf(row: FunctionRow, description: string): FunctionGroup {
    const group = groupOf(row);
    let stack = this.groups.get(group);
    if (!stack) {
      stack = new FunctionGroup(this, groupStackIdOf(group), { group, description });
      this.groups.set(group, stack);
    }
    return stack;
  }

  /** Every cdk-nag finding this design accepts, each with the reason (README "cdk-nag"). */
  private acknowledgeFindings(api: HttpApi, userPool: UserPool, monitoring: Monitoring) {
    Validations.of(monitoring.topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'Alarm notifications carry no customer data, and CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key; a customer key would cost more than it protects.',
    });
    Validations.of(userPool).acknowledge({
      id: 'AwsSolutions-COG1',
      reason:
        'The API contract fixes passwords at 8 to 256 characters without composition rules (NIST SP 800-63B favours length over character classes).',
    });
    Validations.of(userPool).acknowledge({
      id: 'AwsSolutions-COG2',
      reason: 'MFA is not part of the specified register/login flow; it can be enabled per deployment without code changes.',
    });
    Validations.of(userPool).acknowledge({
      id: 'AwsSolutions-COG8',
      reason: 'The Plus feature plan (threat protection) is a paid choice made per deployment, not by the service.',
    });
    Validations.of(api).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        "Every route verifies the Cognito access token inside its function (aws-jwt-verify), so that a missing or bad token gets the contract's problem+json 401 with WWW-Authenticate; a gateway authorizer would answer with its own body. Public routes need no token by design: health, the API and events documents and the browser reference (/docs), register, login, refresh and logout (whose credential is in the body), and the catch-all.",
    });
    for (const fn of this.functions.values()) {
      Validations.of(fn.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'filters' in fn.row
            ? 'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) and dynamodb:ListStreams (which the stream event source needs; its other stream actions name the stream) support only Resource "*".'
            : 'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) support only Resource "*".',
      });
      Validations.of(fn.fn).acknowledge({ id: 'Serverless-LambdaDLQ', reason: functionDlqReason(fn.row) });
    }
    this.acknowledgeLiveFindings();
  }

  /** The live events' findings (infra/realtime.ts): README "cdk-nag acknowledgements". */
  private acknowledgeLiveFindings() {
    const { live } = this;
    for (const route of live.routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'API Gateway authorizes a WebSocket API on $connect only, and there the function checks the single-use ticket from POST /realtime/tickets (itself issued against a verified Cognito token) so that a bad ticket is refused with 401 and no token travels in a URL; later messages ride on that connection, and watch checks board membership itself.',
      });
    }
    // The connection id is known only at run time: the resource names the stage and the two calls.
    const apiLogicalId = this.resolve(this.getLogicalId(live.api.node.defaultChild as CfnElement));
    for (const fn of this.functions.values()) {
      if (!fn.row.manageConnections) continue;
      const apiRef = Stack.of(fn) === this ? apiLogicalId : SOCKET_API_PARAMETER;
      for (const method of CONNECTION_METHODS) {
        Validations.of(fn.role).acknowledge({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiRef}>/${live.stage.stageName}/${method}/@connections/*]`,
          reason: `execute-api:ManageConnections for ${method === 'POST' ? 'PostToConnection' : 'DeleteConnection'} on this stage's @connections only: the connection id in the resource is known only when a socket opens.`,
        });
      }
    }
    for (const { deadLetters } of live.consumers) {
      Validations.of(deadLetters).acknowledge(
        {
          id: 'AwsSolutions-SQS3',
          reason:
            "This queue is the dead-letter destination (OnFailure) of the table stream's event source mapping, which cdk-nag does not see as a DLQ; a dead-letter queue of its own would have nothing further to hold.",
        },
        {
          id: 'Serverless-SQSRedrivePolicy',
          reason:
            'Nothing consumes this dead-letter queue, so nothing fails to process its messages: a redrive policy would never act. An alarm watches its depth instead (infra/monitoring.ts).',
        },
      );
    }
    for (const rule of live.rules) {
      Validations.of(rule).acknowledge({
        id: 'Serverless-EventBusDLQ',
        reason:
          'A schedule event carries nothing but its time: a sweep that is not delivered is made by the next one a minute later, which looks back ten minutes, so there is nothing to replay.',
      });
    }
    if (live.accountLogRole) {
      Validations.of(live.accountLogRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "The region's API Gateway account role (required for WebSocket access logs) writes the logs of every REST and WebSocket API of the account in the region; AWS's managed policy is the one documented for it, and narrowing it to this stack's log groups would cut off the other APIs' logs.",
      });
    }
  }
}
