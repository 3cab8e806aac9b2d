import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  type CfnStage,
  CorsHttpMethod,
  DomainName,
  HttpApi,
  HttpMethod,
  type HttpRouteIntegration,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { AccountRecovery, UserPool } from 'aws-cdk-lib/aws-cognito';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { appClient as appClientDefinition, passwordPolicy, tokenValidity } from '../lib/auth/pool';
import { tableDefinition } from '../lib/data/table';
import { type RouteId, type RouteRow, routes } from '../lib/routes';
import { ENV } from '../lib/runtime/config';
import { ApiFunction } from './api-function';
import type { StackConfig } from './config';
import { Monitoring } from './monitoring';

export interface TaskBoardStackProps extends StackProps {
  config: StackConfig;
}

const RETENTION: Record<number, RetentionDays> = { 30: RetentionDays.ONE_MONTH, 365: RetentionDays.ONE_YEAR };

/** Construct id of a route's function: `boards.get` -> `BoardsGet`. */
export const functionIdOf = (routeId: string) =>
  routeId
    .split(/[.-]/)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

/**
 * The service: one DynamoDB table keyed by board, a Cognito user pool, and an HTTP API with one
 * function per row of the route table (lib/routes.ts), the `$default` row included.
 */
export class TaskBoardStack extends Stack {
  readonly functions = new Map<RouteId, ApiFunction>();

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

    const integrations = new Map<RouteId, HttpRouteIntegration>();
    for (const [routeId, row] of Object.entries(routes) as [RouteId, RouteRow][]) {
      const fn = new ApiFunction(this, functionIdOf(routeId), {
        row,
        environment,
        logRetention: RETENTION[config.logRetentionDays]!,
        logRemovalPolicy: dataRemoval,
      });
      fn.grantTable(table);
      fn.grantUserPool(userPool);
      this.functions.set(routeId, fn);
      integrations.set(routeId, new HttpLambdaIntegration(`${functionIdOf(routeId)}Integration`, fn.fn));
    }

    const fallback = (Object.entries(routes) as [RouteId, RouteRow][]).find(([, row]) => row.path === '$default')![0];
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
        allowHeaders: ['authorization', 'content-type'],
        allowMethods: [
          CorsHttpMethod.GET,
          CorsHttpMethod.POST,
          CorsHttpMethod.PATCH,
          CorsHttpMethod.DELETE,
          CorsHttpMethod.OPTIONS,
        ],
        maxAge: Duration.minutes(10),
      },
    });
    for (const [routeId, row] of Object.entries(routes) as [RouteId, RouteRow][]) {
      if (row.path === '$default') continue;
      api.addRoutes({ path: row.path, methods: [HttpMethod[row.method as HttpMethod]], integration: integrations.get(routeId)! });
    }

    // Structured access logs: one JSON line per request, with the id problem+json bodies carry.
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RETENTION[config.logRetentionDays]!,
      removalPolicy: dataRemoval,
    });
    const stage = api.defaultStage!.node.defaultChild as CfnStage;
    stage.defaultRouteSettings = {
      throttlingRateLimit: config.throttle.rateLimit,
      throttlingBurstLimit: config.throttle.burstLimit,
    };
    // Registration and login call Cognito, whose own quotas are low: throttle them harder.
    // RouteSettings is a raw JSON property in CloudFormation: its keys are written as-is.
    stage.routeSettings = Object.fromEntries(
      Object.values(routes)
        .filter((row) => row.path.startsWith('/auth/'))
        .map((row) => [
          `${row.method} ${row.path}`,
          { ThrottlingRateLimit: config.authThrottle.rateLimit, ThrottlingBurstLimit: config.authThrottle.burstLimit },
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
      functions: new Map([...this.functions].map(([routeId, fn]) => [routeId, fn.fn])),
      table,
      userPool,
      appClient,
      alarmEmail: config.alarmEmail,
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
        "Every route verifies the Cognito access token inside its function (aws-jwt-verify), so that a missing or bad token gets the contract's problem+json 401 with WWW-Authenticate; a gateway authorizer would answer with its own body. Public routes (health, register, login, fallback) need no token by design.",
    });
    for (const fn of this.functions.values()) {
      Validations.of(fn.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) support only Resource "*".',
      });
      Validations.of(fn.fn).acknowledge({
        id: 'Serverless-LambdaDLQ',
        reason:
          'Invoked synchronously by API Gateway only: a failure is answered to the client, and Lambda never retries or dead-letters synchronous invocations.',
      });
    }
  }
}
