import { Aws, type CfnElement, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  type CfnStage,
  CorsHttpMethod,
  DomainName,
  HttpApi,
  HttpMethod,
  type HttpRouteIntegration,
  WebSocketRoute,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { AccountRecovery, UserPool } from 'aws-cdk-lib/aws-cognito';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { appClient as appClientDefinition, passwordPolicy, tokenValidity } from '../lib/auth/pool';
import { tableDefinition } from '../lib/data/table';
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS } from '../lib/http/cors';
import {
  corsMethods,
  type FunctionRow,
  isCatchAll,
  type RouteId,
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
import { Monitoring } from './monitoring';
import { LiveEvents } from './realtime';

export interface TaskBoardStackProps extends StackProps {
  config: StackConfig;
}

/** Why a function has no dead-letter queue of its own, by what invokes it (cdk-nag Serverless-LambdaDLQ). */
function functionDlqReason(row: FunctionRow): string {
  if ('filter' in row)
    return 'Invoked by a table stream event source mapping, whose failed batches go to its own on-failure destination (an SQS queue); a function DLQ applies to asynchronous invocations only.';
  if ('everyMinutes' in row)
    return 'Invoked by a schedule whose events carry nothing but the time: a failed run is redone by the next one, which looks back ten minutes, so a dead-lettered event would hold nothing to replay.';
  return 'Invoked synchronously by API Gateway only (HTTP or WebSocket route): a failure is answered to the client, and Lambda never retries or dead-letters synchronous invocations.';
}

const RETENTION: Record<number, RetentionDays> = { 30: RetentionDays.ONE_MONTH, 365: RetentionDays.ONE_YEAR };

/**
 * The service: one DynamoDB table keyed by board, a Cognito user pool, an HTTP API with one
 * function per row of the route table (lib/routes.ts), the `$default` row included, and the live
 * board events (infra/realtime.ts): one function per WebSocket route, stream consumer and schedule
 * row. Function construct ids come from row ids, which are unique across the tables.
 */
export class TaskBoardStack extends Stack {
  /** Every function, by its row id (`boards.get`, `socket.watch`, `events.broadcast`, ...). */
  readonly functions = new Map<string, ApiFunction>();
  readonly live: LiveEvents;

  constructor(scope: Construct, id: string, props: TaskBoardStackProps) {
    super(scope, id, props);
    const { config } = props;
    const dataRemoval = config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    const table = new Table(this, 'Table', {
      partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: config.deletionProtection,
      removalPolicy: dataRemoval,
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

    const userPool = new UserPool(this, 'Users', {
      selfSignUpEnabled: true, // the SignUp API call of POST /auth/register needs it
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
      removalPolicy: dataRemoval,
    });
    // CDK always allows refresh tokens; the rest comes from the definition the emulator shares.
    const appClient = userPool.addClient('ApiClient', {
      authFlows: { userPassword: appClientDefinition.userPasswordAuth },
      generateSecret: appClientDefinition.generateSecret,
      preventUserExistenceErrors: appClientDefinition.preventUserExistenceErrors,
      accessTokenValidity: Duration.minutes(tokenValidity.accessTokenMinutes),
      refreshTokenValidity: Duration.days(tokenValidity.refreshTokenDays),
    });

    const environment = {
      [ENV.tokenIssuer]: userPool.userPoolProviderUrl,
      [ENV.userPoolId]: userPool.userPoolId,
      [ENV.userPoolClientId]: appClient.userPoolClientId,
    };

    // One function per row of every table, each with exactly its row's table and pool grants.
    const functionOf = (rowId: string, row: FunctionRow) => {
      const fn = new ApiFunction(this, functionIdOf(rowId), {
        row,
        environment,
        logRetention: RETENTION[config.logRetentionDays]!,
        logRemovalPolicy: dataRemoval,
      });
      fn.grantTable(table);
      fn.grantUserPool(userPool);
      if (this.functions.has(rowId)) throw new Error(`row id ${rowId} is in two tables`);
      this.functions.set(rowId, fn);
      return fn;
    };
    const withFunctions = <Row extends FunctionRow>(rows: Record<string, Row>) =>
      Object.entries(rows).map(([rowId, row]): [string, Row, ApiFunction] => [rowId, row, functionOf(rowId, row)]);

    const integrations = new Map<RouteId, HttpRouteIntegration>();
    for (const [routeId, , fn] of withFunctions<RouteRow>(routes)) {
      integrations.set(routeId as RouteId, new HttpLambdaIntegration(`${functionIdOf(routeId)}Integration`, fn.fn));
    }

    this.live = new LiveEvents(this, 'Live', {
      table,
      sockets: withFunctions<SocketRouteRow>(socketRoutes),
      consumers: withFunctions<StreamConsumerRow>(streamConsumers),
      schedules: withFunctions<ScheduleRow>(schedules),
      throttle: config.socketThrottle,
      accountLogRole: config.accountLogRole,
      logRetention: RETENTION[config.logRetentionDays]!,
      logRemovalPolicy: dataRemoval,
    });
    // Socket addresses for the rows that name them, ManageConnections for the rows that send.
    for (const fn of this.functions.values()) fn.useSockets(this.live.stage);

    const fallback = (Object.entries(routes) as [RouteId, RouteRow][]).find(([, row]) => isCatchAll(row))![0];
    const domain = config.domain
      ? new DomainName(this, 'Domain', {
          domainName: config.domain.name,
          certificate: Certificate.fromCertificateArn(this, 'Certificate', config.domain.certificateArn),
        })
      : undefined;
    const api = new HttpApi(this, 'Api', {
      description: 'Task-board REST API',
      defaultIntegration: integrations.get(fallback),
      ...(domain ? { defaultDomainMapping: { domainName: domain } } : {}),
      corsPreflight: {
        allowOrigins: config.corsOrigins,
        allowHeaders: CORS_ALLOW_HEADERS,
        exposeHeaders: CORS_EXPOSE_HEADERS,
        // Every method a route row has, and the preflight's own.
        allowMethods: corsMethods().map((method) => CorsHttpMethod[method]),
        maxAge: Duration.minutes(10),
      },
    });
    for (const [routeId, row] of Object.entries(routes) as [RouteId, RouteRow][]) {
      if (isCatchAll(row)) continue;
      api.addRoutes({ path: row.path, methods: [HttpMethod[row.method as HttpMethod]], integration: integrations.get(routeId)! });
    }

    // Structured access logs: one JSON line per request, with the id problem+json bodies carry.
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RETENTION[config.logRetentionDays]!,
      removalPolicy: dataRemoval,
    });
    const stage = api.defaultStage!.node.defaultChild as CfnStage;
    // Detailed metrics: Count, 4xx, 5xx, Latency, IntegrationLatency and DataProcessed per route
    // (the dashboard's per-route graphs), billed as custom metrics for each hour a route is called.
    stage.defaultRouteSettings = {
      throttlingRateLimit: config.throttle.rateLimit,
      throttlingBurstLimit: config.throttle.burstLimit,
      detailedMetricsEnabled: true,
    };
    // The rows that call Cognito, whose own quotas are low, are throttled harder (`throttle`).
    // RouteSettings is a raw JSON property in CloudFormation: its keys are written as-is.
    stage.routeSettings = Object.fromEntries(
      Object.values(routes as Record<string, RouteRow>)
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
    stage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: JSON.stringify({
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
      }),
    };

    const monitoring = new Monitoring(this, 'Monitoring', {
      api,
      functions: new Map([...this.functions].map(([rowId, fn]) => [rowId, fn.fn])),
      consumers: this.live.consumers.map(({ id, fn, deadLetters }) => ({ id, fn: fn.fn, deadLetters })),
      table,
      userPool,
      appClient,
      alarmEmail: config.alarmEmail,
      runbookUrl: config.runbookUrl,
    });

    const dashboardName = `TaskBoard-${config.stage}`;
    new Dashboard(this, 'Operations', {
      dashboardName,
      api,
      routes,
      functions: this.functions,
      table,
      userPool,
      appClient,
      socketApi: this.live.api,
      socketStage: this.live.stage,
      consumers: this.live.consumers,
      accessLogs,
      alarms: monitoring.alarms,
      runbookUrl: config.runbookUrl,
    });

    this.acknowledgeFindings(api, userPool, monitoring);

    new CfnOutput(this, 'ApiUrl', {
      value: domain ? `https://${config.domain!.name}` : api.apiEndpoint,
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
    new CfnOutput(this, 'UserPoolId', { value: userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: appClient.userPoolClientId });
    new CfnOutput(this, 'TableName', { value: table.tableName });
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
          'filter' in fn.row
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
    for (const route of live.api.node.children.filter((child) => child instanceof WebSocketRoute)) {
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
      for (const method of CONNECTION_METHODS) {
        Validations.of(fn.role).acknowledge({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiLogicalId}>/${live.stage.stageName}/${method}/@connections/*]`,
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
