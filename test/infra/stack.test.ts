import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { AnyRow } from '../../infra/api-function';
import { functionIdOf } from '../../infra/api-function';
import { type BuildOptions, buildApp } from '../../infra/build-app';
import { appClient as appClientDefinition } from '../../lib/auth/pool';
import { COLUMN_POSITION_INDEX, tableDefinition } from '../../lib/data/table';
import { RATE_LIMIT_FAIL_OPEN_METRIC } from '../../lib/http/rate-limit-fields';
import {
  type FunctionRow,
  poolTriggers,
  queueConsumers,
  type RouteRow,
  routes,
  SOCKET_STAGE,
  schedules,
  socketRoutes,
  streamConsumers,
} from '../../lib/routes';
import { rateLimitOf, tableActionsOf } from '../../lib/rows/row';
import { eventFileOf } from '../../scripts/make-events';
import { appProps, unbundledAppProps } from './app-props';
import { synthDeployment } from './deployment';

/** HTTP route rows; and every function row of every table (HTTP, WebSocket, stream, queue, schedule, pool trigger). */
const rows = Object.entries(routes) as [string, RouteRow][];
const functionRows = [routes, socketRoutes, streamConsumers, queueConsumers, schedules, poolTriggers].flatMap(
  (table) => Object.entries(table) as [string, AnyRow][],
);
type Resource = { Type: string; Properties: any; Metadata?: Record<string, string>; DependsOn?: string[] };

// One synth with real bundling (local esbuild) and cdk-nag, shared by the file, seen as one
// template: the root and its nested stacks flattened (test/infra/deployment.ts).
// The CDK CLI turns asset metadata on by default; an in-process App must ask for it.
const {
  assembly,
  flat,
  config,
  stack: devStack,
} = synthDeployment({
  stage: 'dev',
  'aws:cdk:enable-asset-metadata': true,
  'aws:cdk:bundling-stacks': ['**'],
});
const template = Template.fromJSON(flat);
const resources = template.toJSON().Resources as Record<string, Resource>;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

const functionOf = (routeId: string) => {
  const found = ofType('AWS::Lambda::Function').filter(([logicalId]) => logicalId.startsWith(`${functionIdOf(routeId)}Function`));
  expect(found).toHaveLength(1);
  return found[0]!;
};

const refName = (value: any): string | undefined => value?.['Fn::GetAtt']?.[0] ?? value?.Ref;

// The HTTP API and the WebSocket API (infra/realtime.ts) are the two APIs of the stack.
const apiOf = (protocol: 'HTTP' | 'WEBSOCKET') => {
  const found = ofType('AWS::ApiGatewayV2::Api').filter(([, r]) => r.Properties.ProtocolType === protocol);
  expect(found).toHaveLength(1);
  return found[0]![0];
};
const httpRoutes = () => ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => r.Properties.ApiId.Ref === apiOf('HTTP'));
const tableId = ofType('AWS::DynamoDB::Table')[0]![0];
const deliveriesQueueId = ofType('AWS::SQS::Queue').find(([id]) => id.startsWith('WebhooksDeliveries'))![0];

describe('route tables -> APIs and functions', () => {
  it('makes exactly one function per row of every table (HTTP, WebSocket, stream, queue, schedule, pool trigger), and nothing else is a function', () => {
    expect(functionRows.length).toBe(
      [routes, socketRoutes, streamConsumers, queueConsumers, schedules, poolTriggers].reduce(
        (sum, table) => sum + Object.keys(table).length,
        0,
      ),
    );
    expect(new Set(functionRows.map(([id]) => functionIdOf(id))).size).toBe(functionRows.length);
    expect(ofType('AWS::Lambda::Function')).toHaveLength(functionRows.length);
    for (const [rowId] of functionRows) functionOf(rowId);
  });

  it.each(rows)('%s has exactly one HTTP API route, integrated with its own function', (routeId, row) => {
    const routeKey = row.path === '$default' ? '$default' : `${row.method} ${row.path}`;
    const matching = httpRoutes().filter(([, r]) => r.Properties.RouteKey === routeKey);
    expect(matching).toHaveLength(1);
    const integrationId = JSON.stringify(matching[0]![1].Properties.Target).match(/"Ref":"([^"]+)"/)![1]!;
    const uri = resources[integrationId]!.Properties.IntegrationUri;
    expect(refName(uri)).toBe(functionOf(routeId)[0]);
  });

  it('has no HTTP API route that is not a row', () => {
    expect(httpRoutes()).toHaveLength(rows.length);
  });

  it("allows every row's method in CORS preflights, and OPTIONS", () => {
    const methods = new Set(rows.map(([, row]) => row.method).filter((method) => method !== 'ANY'));
    const { AllowMethods } = resources[apiOf('HTTP')]!.Properties.CorsConfiguration;
    expect([...AllowMethods].sort()).toEqual([...methods, 'OPTIONS'].sort());
  });

  it('lets browsers send an Idempotency-Key and read the headers that say what to do next', () => {
    const { AllowHeaders, ExposeHeaders } = resources[apiOf('HTTP')]!.Properties.CorsConfiguration;
    expect(AllowHeaders).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']));
    expect(ExposeHeaders).toEqual(expect.arrayContaining(['idempotent-replayed', 'retry-after', 'www-authenticate']));
  });
});

describe('functions', () => {
  it.each(functionRows)('%s runs Node.js 24 on arm64 with tracing, its own log group with retention', (routeId, row) => {
    const [, fn] = functionOf(routeId);
    expect(fn.Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      TracingConfig: { Mode: 'Active' },
      Timeout: row.timeoutSeconds ?? 10,
    });
    const logGroup = resources[refName(fn.Properties.LoggingConfig.LogGroup)!]!;
    expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
    expect(logGroup.Properties.RetentionInDays).toBeGreaterThan(0);
  });

  /**
   * Every statement of a role, as [sorted actions, what each resource is]: the function's own log
   * group, `*`, the table, its index, its stream, the pool, a dead-letter queue, the WebSocket
   * stage's @connections for one method.
   */
  const statementsOf = (routeId: string) => {
    const [, fn] = functionOf(routeId);
    const roleId = refName(fn.Properties.Role)!;
    const ownLogs = refName(fn.Properties.LoggingConfig.LogGroup);
    const resourceOf = (resource: any): string => {
      if (resource === '*') return '*';
      const json = JSON.stringify(resource);
      const connections = json.match(/"\/([^/"]+)\/([A-Z]+)\/@connections\/\*"/);
      if (connections && json.includes(`{"Ref":"${apiOf('WEBSOCKET')}"}`))
        return `connections ${connections[1]} ${connections[2]}`;
      if (json.includes(`/index/${COLUMN_POSITION_INDEX}`) && refName(resource['Fn::Join'][1][0]) === tableId) return 'index';
      const [id, attribute] = resource['Fn::GetAtt'] ?? [];
      if (id === tableId) return attribute === 'StreamArn' ? 'stream' : 'table';
      if (id === ownLogs) return 'own logs';
      const type = resources[id]?.Type;
      if (type === 'AWS::Cognito::UserPool') return 'pool';
      if (type === 'AWS::SQS::Queue') return `queue ${id}`;
      if (type === 'AWS::KMS::Key') return 'key';
      return json;
    };
    return ofType('AWS::IAM::Policy')
      .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[])
      .map((statement) => {
        expect(statement.Effect).toBe('Allow');
        const resources = [statement.Resource].flat().map(resourceOf).sort();
        // The secrets' key only with its encryption context (infra/webhooks.ts); nothing else has a condition.
        expect(statement.Condition).toEqual(
          resources.includes('key') ? { StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-secret' } } : undefined,
        );
        return [[statement.Action].flat().sort(), resources];
      });
  };

  /** The dead-letter queue of a stream consumer's event source mapping. */
  const deadLettersOf = (rowId: string) => {
    const mapping = ofType('AWS::Lambda::EventSourceMapping').find(
      ([, m]) => m.Properties.FunctionName.Ref === functionOf(rowId)[0],
    )!;
    return refName(mapping[1].Properties.DestinationConfig.OnFailure.Destination)!;
  };

  it.each(functionRows)("%s role allows exactly its row's actions, each on its own resource, and nothing else", (rowId, row) => {
    const r: FunctionRow = row;
    const index = r.index ?? [];
    const expected: [string[], string[]][] = [
      [['logs:CreateLogStream', 'logs:PutLogEvents'], ['own logs']],
      [['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], ['*']],
    ];
    // Table actions name only the table; index actions only the index; Cognito only the pool.
    // A rate-limited route's table actions include the limiter's UpdateItem (lib/rows/row.ts).
    const table = tableActionsOf(r);
    if (table.length > 0) expected.push([[...table].sort(), ['table']]);
    if (index.length > 0) expected.push([[...index].sort(), ['index']]);
    if (r.cognito.length > 0) expected.push([[...r.cognito].sort(), ['pool']]);
    // Sending and closing sockets (PostToConnection, DeleteConnection) on this stage only.
    if (r.manageConnections) {
      expected.push([
        ['execute-api:ManageConnections'],
        [`connections ${SOCKET_STAGE} DELETE`, `connections ${SOCKET_STAGE} POST`],
      ]);
    }
    // A stream consumer: what its event source mapping needs, the stream reads on the stream alone
    // (ListStreams takes no resource) and sending to its own dead-letter queue.
    if ('filters' in r) {
      expected.push(
        [['dynamodb:ListStreams'], ['*']],
        [['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'], ['stream']],
        [['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'], [`queue ${deadLettersOf(rowId)}`]],
      );
    }
    // Webhooks (infra/webhooks.ts): `queue` on the deliveries queue alone, `key` on the key alone;
    // a queue consumer, what its SQS event source needs, on the same queue.
    const deliveries = `queue ${deliveriesQueueId}`;
    if ((r.queue ?? []).length > 0) expected.push([[...r.queue!].sort(), [deliveries]]);
    if ('maxReceiveCount' in r) {
      expected.push([
        ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
        [deliveries],
      ]);
    }
    if ((r.key ?? []).length > 0) expected.push([[...r.key!].sort(), ['key']]);
    const order = (list: [string[], string[]][]) => [...list].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(order(statementsOf(rowId) as [string[], string[]][])).toEqual(order(expected));
  });

  it.each(functionRows)('%s is told exactly the configuration its row uses', (rowId, row) => {
    const r: FunctionRow = row;
    const variables = functionOf(rowId)[1].Properties.Environment?.Variables ?? {};
    // The table name exactly when it may use the table; the socket addresses its row names.
    expect('TABLE_NAME' in variables).toBe(tableActionsOf(r).length + (r.index ?? []).length > 0);
    // What a row may name and leave unset, the code's default holding (infra/api-function.ts).
    const optional = [
      'TICKET_SECONDS',
      'EVENT_RETENTION_SECONDS',
      'WEBHOOK_RETRY_SCHEDULE',
      'WEBHOOK_ALLOW_HOSTS',
      'PERSONAL_TOKEN_DAY_SECONDS',
    ];
    const named = Object.keys(variables).filter(
      (name) => name.startsWith('SOCKET_') || name.startsWith('WEBHOOK_') || optional.includes(name),
    );
    expect(named.sort()).toEqual((r.env ?? []).filter((name) => !optional.includes(name)).sort());
    // A rate-limited route gets the stage file's quotas; no other function any.
    const limits = Object.fromEntries(Object.entries(variables).filter(([name]) => /RATE_LIMIT_/.test(name)));
    const counted = 'method' in r && rateLimitOf(r as RouteRow) !== undefined;
    expect(limits).toEqual(
      counted
        ? {
            RATE_LIMIT_REQUESTS: String(config.rateLimits.requests),
            AUTH_RATE_LIMIT_REQUESTS: String(config.rateLimits.authRequests),
            RATE_LIMIT_WINDOW_SECONDS: String(config.rateLimits.windowSeconds),
          }
        : {},
    );
  });

  it.each(functionRows)('%s is bundled as one ESM file carrying the asset metadata SAM reads', (routeId) => {
    const [, fn] = functionOf(routeId);
    expect(fn.Metadata?.['aws:asset:property']).toBe('Code');
    const assetDir = join(assembly.directory, fn.Metadata!['aws:asset:path']!);
    expect(existsSync(join(assetDir, 'index.mjs'))).toBe(true);
    const code = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
    expect(code).toMatch(/export\s*\{[^}]*handler/);
    // The SDK is bundled, not taken from the runtime.
    expect(code).not.toMatch(/from\s*["']@aws-sdk\//);
  });
});

describe('data', () => {
  it('has one on-demand table keyed by pk/sk with PITR and the column-position LSI', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      LocalSecondaryIndexes: tableDefinition.localSecondaryIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: index.projection },
      })),
    });
  });

  it('has a user pool with email sign-in, the contract password length and no sign-up of its own', () => {
    template.hasResourceProperties('AWS::Cognito::UserPool', {
      UsernameAttributes: ['email'],
      Policies: { PasswordPolicy: { MinimumLength: 8 } },
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      UserPoolTier: 'LITE',
    });
  });

  it('has an app client no bare client id can use: a secret, admin password sign-in, only `name` writable', () => {
    template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      ExplicitAuthFlows: ['ALLOW_ADMIN_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
      GenerateSecret: true,
      PreventUserExistenceErrors: 'ENABLED',
      WriteAttributes: [...appClientDefinition.writeAttributes],
    });
  });

  it('has the CustomMessage trigger: its function, invocable by this pool alone, granted nothing on the table or the pool', () => {
    const [poolId, pool] = ofType('AWS::Cognito::UserPool')[0]!;
    const [fnId, fn] = functionOf('auth.message');
    expect(pool.Properties.LambdaConfig).toEqual({ CustomMessage: { 'Fn::GetAtt': [fnId, 'Arn'] } });
    const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => refName(p.Properties.FunctionName) === fnId);
    expect(permissions.map(([, p]) => [p.Properties.Principal, refName(p.Properties.SourceArn)])).toEqual([
      ['cognito-idp.amazonaws.com', poolId],
    ]);
    const actions = ofType('AWS::IAM::Policy')
      .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === refName(fn.Properties.Role)))
      .flatMap(([, p]) => (p.Properties.PolicyDocument.Statement as any[]).flatMap((st) => [st.Action].flat() as string[]));
    expect(actions.filter((action) => /^(dynamodb|cognito-idp):/.test(action))).toEqual([]);
    // The pool names the function, so the function must not name the pool (a dependency cycle).
    expect(JSON.stringify(fn.Properties.Environment ?? {})).not.toContain(poolId);
  });

  it("sends dev's codes through Cognito's own sender, with a synth warning that names the setting", () => {
    template.hasResourceProperties('AWS::Cognito::UserPool', { EmailConfiguration: { EmailSendingAccount: 'COGNITO_DEFAULT' } });
    const warnings = Annotations.fromStack(devStack).findWarning('*', Match.stringLikeRegexp('"mailSender" is null'));
    expect(warnings).toHaveLength(1);
  });
});

describe('stages', () => {
  const tableOf = (context: Record<string, string>, settings: BuildOptions['settings'] = {}) => {
    const built = buildApp(unbundledAppProps(context), { settings });
    return Object.values(Template.fromStack(built.stack).toJSON().Resources as Record<string, any>).find(
      (r) => r.Type === 'AWS::DynamoDB::Table',
    );
  };

  it('dev deletes its data with the stack; prod protects and retains it', () => {
    // dev's table as this file's own synth (top) has it: the same stage, with the same settings.
    expect(resources[tableId]).toMatchObject({
      DeletionPolicy: 'Delete',
      Properties: { DeletionProtectionEnabled: false },
    });
    expect(tableOf({ stage: 'prod' })).toMatchObject({
      DeletionPolicy: 'Retain',
      Properties: { DeletionProtectionEnabled: true },
    });
  });

  it("takes the stage file's settings (here replaced as a test can, and the command line cannot)", () => {
    expect(tableOf({ stage: 'prod' }, { retainData: false })).toMatchObject({ DeletionPolicy: 'Delete' });
  });

  it('rejects an unknown stage and malformed settings', () => {
    expect(() => buildApp(appProps({ context: { stage: 'qa' } }))).toThrow(/stage/);
    expect(() => buildApp(appProps(), { settings: { deletionProtection: 'yes' as never } })).toThrow(
      /"deletionProtection" must be/,
    );
    expect(() => buildApp(appProps(), { settings: { corsOrigins: ['not a url'] } })).toThrow(/"corsOrigins\.0" must be/);
  });
});

describe('cdk-nag', () => {
  // The stack as built passes both packs: this file's own synth (top) runs them and would throw.
  it('fails synth on an AwsSolutions finding nobody acknowledged', () => {
    const built = buildApp(unbundledAppProps());
    built.stack.functions.get('health')!.role.addToPolicy(new PolicyStatement({ actions: ['dynamodb:*'], resources: ['*'] }));
    expect(() => built.app.synth()).toThrow(/AwsSolutions-IAM5/);
  });

  it('fails synth on a Serverless finding nobody acknowledged (the second pack runs too)', () => {
    const built = buildApp(unbundledAppProps());
    (built.stack.functions.get('health')!.fn.node.defaultChild as CfnFunction).tracingConfig = { mode: 'PassThrough' };
    expect(() => built.app.synth()).toThrow(/Serverless-LambdaTracing/);
  });

  it('gives every acknowledgement a written reason, visible in the template', () => {
    const acknowledgements = Object.values(resources).flatMap(
      (r) => ((r.Metadata as any)?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string }[],
    );
    expect(acknowledgements.map((a) => a.id)).toEqual(
      expect.arrayContaining([
        'AwsSolutions-COG1',
        'AwsSolutions-APIG4',
        'AwsSolutions-IAM5[Resource::*]',
        'AwsSolutions-SQS3',
        'Serverless-SQSRedrivePolicy',
        'Serverless-EventBusDLQ',
        'Serverless-LambdaDLQ',
      ]),
    );
    for (const { reason } of acknowledgements) expect(reason.length).toBeGreaterThan(40);
  });
});

describe('production hardening', () => {
  const prod = synthDeployment(
    { stage: 'prod' },
    {
      settings: {
        domain: { name: 'api.example.com', certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc-123' },
        alarmEmail: 'ops@example.com',
      },
    },
  );
  const prodTemplate = Template.fromJSON(prod.flat);
  const prodResources = prodTemplate.toJSON().Resources as Record<string, any>;

  const httpStage = () => {
    const httpApi = Object.entries(prodResources).find(
      ([, r]) => r.Type === 'AWS::ApiGatewayV2::Api' && r.Properties.ProtocolType === 'HTTP',
    )![0];
    return Object.values(prodResources).find((r) => r.Type === 'AWS::ApiGatewayV2::Stage' && r.Properties.ApiId.Ref === httpApi)!;
  };

  // Room to grow (every template under half of CloudFormation's limits): test/infra/headroom.test.ts.

  it('throttles every route by default and /auth/* harder', () => {
    const stage = httpStage();
    const { DefaultRouteSettings, RouteSettings } = stage.Properties;
    expect(DefaultRouteSettings.ThrottlingRateLimit).toBeGreaterThan(0);
    expect(Object.keys(RouteSettings).sort()).toEqual([
      'DELETE /auth/account',
      'POST /auth/login',
      'POST /auth/logout',
      'POST /auth/password',
      'POST /auth/password/forgot',
      'POST /auth/password/reset',
      'POST /auth/refresh',
      'POST /auth/register',
      'POST /auth/verify-email',
      'POST /auth/verify-email/request',
    ]);
    for (const settings of Object.values(RouteSettings) as any[]) {
      expect(settings.ThrottlingRateLimit).toBeLessThan(DefaultRouteSettings.ThrottlingRateLimit);
    }
  });

  it('writes structured JSON access logs to a log group with retention', () => {
    const stage = httpStage();
    const format = JSON.parse(stage.Properties.AccessLogSettings.Format);
    expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status', routeKey: '$context.routeKey' });
    for (const group of Object.values(prodResources).filter((r) => r.Type === 'AWS::Logs::LogGroup')) {
      expect(group.Properties.RetentionInDays).toBe(365);
      expect(group.DeletionPolicy).toBe('Retain');
    }
  });

  it("alarms on 5xx rate, every function's errors and throttles, DynamoDB and Cognito throttles, live events and webhook deliveries falling behind or dead-lettered, into the output topic", () => {
    const alarms = Object.values(prodResources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
    const consumers = Object.keys(streamConsumers).length;
    const triggers = Object.keys(poolTriggers).length;
    // A stream consumer's and a pool trigger's (both in the root stack) errors and throttles are
    // alarmed on their own; every other function's in its group's alarms, ten functions to an
    // alarm (infra/layout.ts).
    const groupAlarms = [...prod.stack.groups.values()].reduce(
      (sum, group) => sum + 2 * Math.ceil([...prod.stack.functions.values()].filter((fn) => Stack.of(fn) === group).length / 10),
      0,
    );
    // 5xx rate, DynamoDB, Cognito, the rate limiter failing open; four a stream consumer; two a
    // pool trigger; the webhooks' four (infra/monitoring.ts webhookAlarms); the groups' (queue
    // consumers' included).
    expect(alarms).toHaveLength(4 + 4 * consumers + 2 * triggers + 4 + groupAlarms);
    const metricNames = alarms.flatMap((a) =>
      a.Properties.MetricName
        ? [a.Properties.MetricName]
        : a.Properties.Metrics.flatMap((m: any) => m.MetricStat?.Metric.MetricName ?? []),
    );
    expect(new Set(metricNames)).toEqual(
      new Set([
        '5xx',
        'Count',
        'Errors',
        'Throttles',
        'ReadThrottleEvents',
        'WriteThrottleEvents',
        'SignUpThrottles',
        'SignInThrottles',
        'TokenRefreshThrottles',
        'IteratorAge',
        'ApproximateNumberOfMessagesVisible',
        'ApproximateAgeOfOldestMessage',
        'WebhookAttemptFailed',
        'WebhookDelivered',
        'WebhookDisabled',
        RATE_LIMIT_FAIL_OPEN_METRIC,
      ]),
    );
    // Every function's Errors and Throttles are read by exactly one alarm each.
    for (const metricName of ['Errors', 'Throttles']) {
      const watched = alarms.flatMap((a) =>
        a.Properties.MetricName === metricName
          ? [a.Properties.Dimensions[0].Value]
          : (a.Properties.Metrics ?? []).flatMap((m: any) =>
              m.MetricStat?.Metric.MetricName === metricName ? [m.MetricStat.Metric.Dimensions[0].Value] : [],
            ),
      );
      const functionIds = Object.entries(prodResources)
        .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
        .map(([id]) => ({ Ref: id }));
      expect(watched).toHaveLength(functionIds.length);
      expect(watched).toEqual(expect.arrayContaining(functionIds));
    }
    const topicId = Object.entries(prodResources).find(([, r]) => r.Type === 'AWS::SNS::Topic')![0];
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
    expect(prodTemplate.toJSON().Outputs.AlarmTopicArn.Value).toEqual({ Ref: topicId });
    prodTemplate.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });

  it('retains the user pool in prod and maps the custom domain', () => {
    const pool = Object.values(prodResources).find((r) => r.Type === 'AWS::Cognito::UserPool')!;
    expect(pool.DeletionPolicy).toBe('Retain');
    prodTemplate.hasResourceProperties('AWS::ApiGatewayV2::DomainName', { DomainName: 'api.example.com' });
    prodTemplate.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 1);
  });

  it('passes AwsSolutions and Serverless cdk-nag packs in prod too', () => {
    expect(() => prod.app.synth()).not.toThrow();
  });

  it("sends prod's codes through the SES sender its stage file names", () => {
    prodTemplate.hasResourceProperties('AWS::Cognito::UserPool', {
      EmailConfiguration: Match.objectLike({
        EmailSendingAccount: 'DEVELOPER',
        From: Match.stringLikeRegexp('no-reply@example.com'),
      }),
    });
  });

  it('refuses to synthesize prod without an SES sender, naming the key', () => {
    expect(() => buildApp(appProps({ context: { stage: 'prod' } }), { settings: { mailSender: null } })).toThrow(
      /infra\/stages\/prod\.ts.*"mailSender" is null/,
    );
  });

  it('rejects a domain without a certificate', () => {
    expect(() => buildApp(appProps(), { settings: { domain: { name: 'api.example.com' } as never } })).toThrow(
      /"domain\.certificateArn" is missing/,
    );
  });
});

describe('bundles start with exactly the environment CDK gives them', () => {
  // CloudFormation fills these in at deploy time; any plausible value will do for a cold start.
  const deployTimeValue = (name: string) =>
    ({
      TOKEN_ISSUER: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example',
      SOCKET_URL: 'wss://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/live',
      SOCKET_CALLBACK_URL: 'https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/live',
    })[name] ?? `deploy-time-${name.toLowerCase()}`;
  const eventsDir = join(__dirname, '../../events');
  const eventFile = (routeId: string) => join(eventsDir, eventFileOf(routeId));
  // What each bundle answers to its sample event without reaching any AWS service (a socket
  // row: the status and the type of the frame it answers with).
  const offline: Record<string, string> = {
    health: '200',
    openapi: '200',
    asyncapi: '200',
    fallback: '404',
    'socket.ping': '200 pong',
    'socket.default': '200 error',
  };

  it.each(functionRows)('%s loads, and answers its sample event without AWS where it can', (routeId, row) => {
    const [, fn] = functionOf(routeId);
    const variables = Object.fromEntries(
      Object.entries((fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>).map(([name, value]) => [
        name,
        typeof value === 'string' ? value : deployTimeValue(name),
      ]),
    );
    const bundle = join(assembly.directory, fn.Metadata!['aws:asset:path']!, 'index.mjs');
    // Protected routes answer the placeholder token with 401 before any storage call; the other
    // rows (sockets on storage, the stream consumer, the schedule) only load.
    const expected = offline[routeId] ?? ('access' in row && row.access.scope !== 'public' ? '401' : undefined);
    const frameType = routeId in socketRoutes ? `' ' + JSON.parse(reply.body).type` : `''`;
    const script = [
      `const { handler } = await import(${JSON.stringify(bundle)});`,
      expected === undefined
        ? `process.stdout.write(typeof handler);`
        : `const event = JSON.parse(require('node:fs').readFileSync(${JSON.stringify(eventFile(routeId))}, 'utf8'));
           const reply = await handler(event, { getRemainingTimeInMillis: () => 10000 });
           process.stdout.write(String(reply.statusCode) + ${frameType});`,
    ].join('\n');
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);\n${script}`,
      ],
      {
        env: {
          PATH: process.env.PATH,
          AWS_REGION: 'us-east-1',
          METRICS_DISABLED: 'true',
          LOG_LEVEL: 'SILENT',
          ...variables,
        },
        encoding: 'utf8',
      },
    );
    expect(out).toBe(expected ?? 'function');
  });
});
