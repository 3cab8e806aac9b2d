import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogFormat, CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { CfnRoute, CfnRouteResponse, LogGroupLogDestination, WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  type ScheduleRow,
  SOCKET_STAGE,
  type SocketRouteRow,
  STREAM_FILTERS_MAX,
  STREAM_READERS_MAX,
  type StreamConsumerRow,
} from '../lib/routes';
import { type ApiFunction, functionIdOf } from './api-function';

/** Messages an action route answers on the socket itself (a route response); lifecycle routes answer nothing. */
export const answersClient = (routeKey: string) => routeKey === '$default' || !routeKey.startsWith('$');

export interface LiveEventsProps {
  table: ITable;
  /**
   * One function per row of each table (lib/routes.ts), made by the stack like the HTTP ones: the
   * socket routes' and the schedules' in their group's nested stack, the consumers' in this one.
   */
  sockets: [string, SocketRouteRow, ApiFunction][];
  consumers: [string, StreamConsumerRow, ApiFunction][];
  schedules: [string, ScheduleRow, ApiFunction][];
  throttle: { rateLimit: number; burstLimit: number };
  /** Set the region's API Gateway CloudWatch Logs role (WebSocket access logs need one). */
  accountLogRole: boolean;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
}

/** A stream consumer's dead-letter queue: where the batches it gave up on are described. */
export interface ConsumerWiring {
  id: string;
  fn: ApiFunction;
  deadLetters: Queue;
}

/**
 * Live board events (docs/asyncapi.yaml): a WebSocket API with one route per `socketRoutes` row,
 * its `live` stage (throttled, JSON access logs), the table stream feeding each `streamConsumers`
 * row (two at most) through an event source with the row's filters and a dead-letter queue, and
 * an EventBridge schedule per `schedules` row. The functions' table, pool and socket grants are the stack's (ApiFunction).
 */
export class LiveEvents extends Construct {
  readonly api: WebSocketApi;
  readonly stage: WebSocketStage;
  /** Each route's construct (`$connect-Route`, ...): its route and route response, here beside the API. */
  readonly routes: Construct[] = [];
  readonly consumers: ConsumerWiring[] = [];
  readonly rules: Rule[] = [];
  /** The account-settings role, when this stack sets it. */
  readonly accountLogRole?: Role;

  constructor(scope: Construct, id: string, props: LiveEventsProps) {
    super(scope, id);
    this.api = new WebSocketApi(this, 'Api', {
      apiName: `${Stack.of(this).stackName}-live`,
      description: 'Task-board live board events',
      routeSelectionExpression: '$request.body.action',
    });
    for (const [, row, fn] of props.sockets) this.routes.push(this.route(row, fn));
    this.stage = this.liveStage(props);
    if (props.accountLogRole) this.accountLogRole = this.apiGatewayAccountLogRole(this.stage);
    assertStreamReaders(props.consumers);
    for (const [rowId, row, fn] of props.consumers) this.consumers.push(this.consumer(props.table, rowId, row, fn));
    for (const [rowId, row, fn] of props.schedules) this.rules.push(scheduleRule(rowId, row, fn));
  }

  /**
   * A socket route. It stays here with the API, at the construct path (and so the logical id)
   * CDK's WebSocketRoute gave it, because a route key is unique per API and CloudFormation makes a
   * moved route before it deletes the old one; its integration and invoke permission are made
   * beside the function, in the function's stack (ApiFunction.integrateSocket).
   */
  private route(row: SocketRouteRow, fn: ApiFunction): Construct {
    const route = new Construct(this.api, `${row.routeKey}-Route`);
    const returnResponse = answersClient(row.routeKey);
    const resource = new CfnRoute(route, 'Resource', {
      apiId: this.api.apiId,
      routeKey: row.routeKey,
      target: `integrations/${fn.integrateSocket(this.api, row.routeKey)}`,
      authorizationType: 'NONE',
      routeResponseSelectionExpression: returnResponse ? '$default' : undefined,
    });
    if (returnResponse) {
      new CfnRouteResponse(route, 'Response', { apiId: this.api.apiId, routeId: resource.ref, routeResponseKey: '$default' });
    }
    return route;
  }

  /** The `live` stage: deployed on each change, throttled, its access logs as JSON lines. */
  private liveStage(props: LiveEventsProps): WebSocketStage {
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    return new WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: SOCKET_STAGE,
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
  }

  /**
   * Unlike HTTP APIs, a WebSocket stage logs through the region's API Gateway account role. It
   * serves every REST and WebSocket API of the account in the region, hence AWS's own policy for
   * it; it is kept when the stack goes, since other APIs may log through it by then.
   */
  private apiGatewayAccountLogRole(stage: WebSocketStage): Role {
    const role = new Role(this, 'ApiGatewayLogRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      description: 'API Gateway account setting: writes REST and WebSocket API logs to CloudWatch Logs',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
    });
    role.applyRemovalPolicy(RemovalPolicy.RETAIN);
    const account = new CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: role.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);
    stage.node.addDependency(account);
    return role;
  }

  /** A stream consumer: the table stream feeds its function through the row's filters, with a dead-letter queue. */
  private consumer(table: ITable, rowId: string, row: StreamConsumerRow, fn: ApiFunction): ConsumerWiring {
    if (row.filters.length < 1 || row.filters.length > STREAM_FILTERS_MAX) {
      throw new Error(`${rowId}: ${row.filters.length} filters; an event source mapping takes 1 to ${STREAM_FILTERS_MAX}`);
    }
    // What Lambda gave up on (retries spent or records too old): a description of the batch
    // (shard, sequence range), from which the records can still be read while the stream has them.
    const deadLetters = new Queue(this, `${functionIdOf(rowId)}DeadLetters`, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    fn.fn.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.LATEST,
        batchSize: row.batchSize,
        bisectBatchOnError: true,
        retryAttempts: row.retryAttempts,
        maxRecordAge: Duration.seconds(row.maxRecordAgeSeconds),
        reportBatchItemFailures: true,
        // Several filters: a record matching any of them is delivered (Lambda ORs them).
        filters: row.filters.map((filter) => FilterCriteria.filter(filter as Record<string, unknown>)),
        onFailure: new SqsDlq(deadLetters),
      }),
    );
    return { id: rowId, fn, deadLetters };
  }
}

/** What each line of the WebSocket stage's access log holds. */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  eventType: '$context.eventType',
  routeKey: '$context.routeKey',
  connectionId: '$context.connectionId',
  messageId: '$context.messageId',
  status: '$context.status',
  integrationStatus: '$context.integrationStatus',
  integrationLatencyMs: '$context.integrationLatency',
  integrationError: '$context.integration.error',
  error: '$context.error.message',
};

/**
 * Each event source mapping is one more process reading every shard of the stream: DynamoDB
 * Streams throttles a shard read by more than two (docs/realtime.md "The readers").
 */
function assertStreamReaders(consumers: LiveEventsProps['consumers']) {
  if (consumers.length > STREAM_READERS_MAX) {
    throw new Error(
      `${consumers.length} stream consumers (${consumers.map(([id]) => id).join(', ')}): at most ${STREAM_READERS_MAX} may read the table's stream`,
    );
  }
}

/** A schedule's rule is stateless and named by CloudFormation: it lives beside its function. */
function scheduleRule(rowId: string, row: ScheduleRow, fn: ApiFunction): Rule {
  const rule = new Rule(fn.node.scope!, `${functionIdOf(rowId)}Schedule`, {
    description: `${rowId}: ${row.summary}`,
    schedule: Schedule.rate(Duration.minutes(row.everyMinutes)),
  });
  rule.addTarget(new LambdaFunction(fn.fn));
  return rule;
}
