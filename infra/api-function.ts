import { createRequire } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import type { RemovalPolicy } from 'aws-cdk-lib';
import { ArnFormat, Aws, Duration, Stack } from 'aws-cdk-lib';
import { CfnIntegration, type IHttpApi, type IWebSocketApi, type IWebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Metric, type MetricProps } from 'aws-cdk-lib/aws-cloudwatch';
import type { IUserPool } from 'aws-cdk-lib/aws-cognito';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { type ILogGroup, LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DOCS_BUNDLED_FILES, DOCS_PACKAGE } from '../lib/contract/docs-assets';
import { COLUMN_POSITION_INDEX } from '../lib/data/table';
import {
  type FunctionRow,
  functionTimeoutSeconds,
  isCatchAll,
  type PoolTriggerRow,
  type QueueConsumerRow,
  type RouteRow,
  routeKeyOf,
  type ScheduleRow,
  type SocketRouteRow,
  type StreamConsumerRow,
} from '../lib/routes';
import { rateLimitOf, tableActionsOf } from '../lib/rows/row';
import { ENV, type EnvName } from '../lib/runtime/config';
import { aliasArgs, BUNDLE_BANNER } from './bundling';
import type { RateLimits } from './config';
import { WEBHOOK_ENV } from './webhooks';

/** Any row of lib/routes.ts: HTTP route, WebSocket route, stream consumer, queue consumer, schedule or pool trigger. */
export type AnyRow = RouteRow | SocketRouteRow | StreamConsumerRow | QueueConsumerRow | ScheduleRow | PoolTriggerRow;

/** What invokes a row's function, in words: `GET /boards`, `WebSocket watch`, `DynamoDB stream`, `every 1 minute`. */
function triggerOf(row: FunctionRow): string {
  if ('method' in row) return routeKeyOf(row as RouteRow);
  if ('routeKey' in row) return `WebSocket ${(row as SocketRouteRow).routeKey}`;
  if ('filters' in row) return 'DynamoDB stream';
  if ('maxReceiveCount' in row) return 'SQS webhook deliveries';
  if ('trigger' in row) return `Cognito ${(row as PoolTriggerRow).trigger}`;
  if ('everyMinutes' in row) {
    const minutes = (row as ScheduleRow).everyMinutes;
    return `every ${minutes} minute${minutes === 1 ? '' : 's'}`;
  }
  throw new Error(`row ${row.entry} has no trigger`);
}

/** Construct id of a row's function: `boards.get` -> `BoardsGet`. */
export const functionIdOf = (rowId: string) =>
  rowId
    .split(/[.-]/)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

/**
 * Configuration a row may name in `env` and leave unset: the code has a default (lib/runtime/config.ts):
 * a socket ticket's 60 s, the event log's 7 days, the webhook retry schedule of about a day, no
 * webhook host let through the address check (WEBHOOK_ALLOW_HOSTS is for the local stack only), and
 * a personal token's day of 86400 s.
 */
const OPTIONAL_ENV: EnvName[] = [
  ENV.ticketSeconds,
  ENV.eventRetentionSeconds,
  ENV.webhookRetrySchedule,
  ENV.webhookAllowHosts,
  ENV.personalTokenDaySeconds,
];

/**
 * Files a function reads at run time, by its entry: copied after bundling from the repository's
 * node_modules into node_modules/<package>/ beside index.mjs, where the handler resolves the
 * package (lib/http/docs.ts) exactly as it does in the repository. Plain copies: synth stays offline.
 */
const PACKAGE_FILES: Record<string, { name: string; files: string[] }> = {
  'functions/docs/file.ts': { name: DOCS_PACKAGE, files: DOCS_BUNDLED_FILES },
};

/** The shell commands that copy a package's files into the bundle (CDK runs them with bash, from the project root). */
function copyPackageFiles(inputDir: string, outputDir: string, pkg: { name: string; files: string[] }): string[] {
  const from = relative(process.cwd(), dirname(createRequire(import.meta.url).resolve(`${pkg.name}/package.json`)));
  const to = `${outputDir}/node_modules/${pkg.name}`;
  return [`mkdir -p "${to}"`, ...pkg.files.map((file) => `cp "${inputDir}/${from}/${file}" "${to}/${file}"`)];
}

/** Only these connection management calls are made (PostToConnection, DeleteConnection). */
export const CONNECTION_METHODS = ['POST', 'DELETE'] as const;

export interface ApiFunctionProps {
  row: FunctionRow;
  /** Values every function reads at cold start: the token issuer, the pool and its app client. */
  environment: Record<string, string>;
  /**
   * Its log group, where it is made elsewhere: a row that predates the nested stacks keeps the one
   * in the root stack (infra/layout.ts). Without it, the function makes its own (`Logs`).
   */
  logGroup?: ILogGroup;
  /** Its name; by default CloudFormation makes one. */
  functionName?: string;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
}

/**
 * Function defaults, fixed once: Node.js 24 on arm64, ESM bundle with the AWS SDK inside
 * (minified, no source maps: see docs/performance.md), active tracing, its own log group with
 * retention, and a role that holds nothing until a grant below adds exactly what the row uses.
 * Every row of every table in lib/routes.ts gets one; what invokes it is wired by the stack.
 */
export class ApiFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;
  readonly row: FunctionRow;
  /**
   * The function's name: the literal one it was given, else CloudFormation's (a token). Another
   * stack that uses the literal needs no output and parameter for it (the dashboard: Dashboard).
   */
  readonly functionName: string;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: ApiFunctionProps,
  ) {
    super(scope, id);
    this.row = props.row;
    const packageFiles = PACKAGE_FILES[props.row.entry];
    const logGroup =
      props.logGroup ?? new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.logRemovalPolicy });
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: triggerOf(props.row),
    });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn], // this attribute already covers the group's streams
      }),
    );
    if (props.functionName !== undefined && props.functionName.length > 64)
      throw new Error(`function name ${props.functionName} is over Lambda's 64 characters`);
    this.fn = new NodejsFunction(this, 'Function', {
      functionName: props.functionName,
      entry: resolve(props.row.entry),
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 1024,
      timeout: Duration.seconds(functionTimeoutSeconds(props.row)),
      tracing: Tracing.ACTIVE,
      logGroup,
      role: this.role,
      description: `${triggerOf(props.row)}: ${props.row.summary}`,
      environment: props.environment,
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        minify: true,
        sourceMap: false,
        mainFields: ['module', 'main'],
        externalModules: [],
        banner: BUNDLE_BANNER,
        // The SDK's default credential chain replaced by the environment's credentials (infra/bundling.ts).
        esbuildArgs: { '--alias': aliasArgs() },
        forceDockerBundling: false,
        ...(packageFiles
          ? {
              commandHooks: {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (inputDir: string, outputDir: string) => copyPackageFiles(inputDir, outputDir, packageFiles),
              },
            }
          : {}),
      },
    });
    this.functionName = props.functionName ?? this.fn.functionName;
  }

  /** A metric of AWS/Lambda for this function, by its name (`functionName`), as `fn.metric…()` make it. */
  metric(metricName: string, props: Omit<MetricProps, 'namespace' | 'metricName' | 'dimensionsMap'>): Metric {
    return new Metric({ namespace: 'AWS/Lambda', metricName, dimensionsMap: { FunctionName: this.functionName }, ...props });
  }

  /**
   * The HTTP API's integration of this function and API Gateway's permission to invoke it for the
   * row's route only (for the catch-all, any route), both beside the function: its stack, which
   * may be a nested one while the route stays with the API (a route key is unique per API, so a
   * route cannot move stacks: docs/infrastructure.md). Returns the integration id for the route.
   */
  integrateHttp(api: IHttpApi, row: RouteRow): string {
    const integration = new CfnIntegration(this, 'Integration', {
      apiId: api.apiId,
      integrationType: 'AWS_PROXY',
      integrationUri: this.fn.functionArn,
      payloadFormatVersion: '2.0',
    });
    this.fn.addPermission('ApiInvoke', {
      principal: new ServicePrincipal('apigateway.amazonaws.com'),
      // Any stage, any method, the row's path: what CDK's HttpLambdaIntegration allowed.
      sourceArn: Stack.of(this).formatArn({
        service: 'execute-api',
        resource: api.apiId,
        resourceName: isCatchAll(row) ? '*/*' : `*/*${row.path}`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      }),
    });
    return integration.ref;
  }

  /** The WebSocket API's integration of this function for one route key, and the permission to invoke it for that route. */
  integrateSocket(api: IWebSocketApi, routeKey: string): string {
    const integration = new CfnIntegration(this, 'Integration', {
      apiId: api.apiId,
      integrationType: 'AWS_PROXY',
      integrationUri: `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}:lambda:path/2015-03-31/functions/${this.fn.functionArn}/invocations`,
    });
    this.fn.addPermission('ApiInvoke', {
      principal: new ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: Stack.of(this).formatArn({
        service: 'execute-api',
        resource: `${api.apiId}/*${routeKey}`,
        arnFormat: ArnFormat.NO_RESOURCE_NAME,
      }),
    });
    return integration.ref;
  }

  /**
   * The row's table actions on the table and its index actions on the index, exactly; plus
   * TABLE_NAME. A rate-limited route (lib/rows/row.ts `rateLimitOf`) also gets the limiter's
   * UpdateItem (`tableActionsOf`) and its quotas (RATE_LIMIT_*, from the stage's `rateLimits`).
   */
  grantTable(table: ITable, rateLimits: RateLimits): void {
    const { index = [] } = this.props.row;
    const actions = tableActionsOf(this.props.row);
    if ('method' in this.props.row && rateLimitOf(this.props.row as RouteRow)) {
      this.fn.addEnvironment(ENV.rateLimitRequests, String(rateLimits.requests));
      this.fn.addEnvironment(ENV.authRateLimitRequests, String(rateLimits.authRequests));
      this.fn.addEnvironment(ENV.rateLimitWindowSeconds, String(rateLimits.windowSeconds));
    }
    if (actions.length === 0 && index.length === 0) return;
    if (actions.length > 0) {
      this.role.addToPolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: [...actions], resources: [table.tableArn] }));
    }
    if (index.length > 0) {
      this.role.addToPolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: [...index],
          resources: [`${table.tableArn}/index/${COLUMN_POSITION_INDEX}`],
        }),
      );
    }
    this.fn.addEnvironment(ENV.tableName, table.tableName);
  }

  /** The row's Cognito admin actions on the pool (the pool's id is in every function's environment). */
  grantUserPool(pool: IUserPool): void {
    const actions = this.props.row.cognito;
    if (actions.length === 0) return;
    this.role.addToPolicy(new PolicyStatement({ actions: [...actions], resources: [pool.userPoolArn] }));
  }

  /**
   * The WebSocket stage, for rows that use it: its addresses for the `env` names the row lists
   * (SOCKET_URL, SOCKET_CALLBACK_URL; TICKET_SECONDS stays unset, so the code's default holds),
   * and, for `manageConnections` rows, `execute-api:ManageConnections` on the stage's
   * `@connections` for exactly the two calls the code makes (PostToConnection, DeleteConnection).
   */
  useSockets(stage: IWebSocketStage, apiId: string = stage.api.apiId): void {
    const { env = [], manageConnections } = this.props.row;
    const values: Partial<Record<EnvName, string>> = {
      [ENV.socketUrl]: stage.url,
      [ENV.socketCallbackUrl]: stage.callbackUrl,
    };
    for (const name of env) {
      const value = values[name];
      if (value !== undefined) this.fn.addEnvironment(name, value);
      else if (!OPTIONAL_ENV.includes(name) && !WEBHOOK_ENV.includes(name))
        // set by infra/webhooks.ts
        throw new Error(`${this.props.row.entry}: no value for ${name}`);
    }
    if (!manageConnections) return;
    const stack = Stack.of(this);
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['execute-api:ManageConnections'],
        resources: CONNECTION_METHODS.map((method) =>
          stack.formatArn({
            service: 'execute-api',
            resource: apiId,
            resourceName: `${stage.stageName}/${method}/@connections/*`,
          }),
        ),
      }),
    );
  }
}
