import { Template } from 'aws-cdk-lib/assertions';
import { functionIdOf } from '../../infra/api-function';
import { type BuildOptions, buildApp } from '../../infra/build-app';
import { answersClient } from '../../infra/realtime';
import { tableDefinition } from '../../lib/data/table';
import {
  queueConsumers,
  routes,
  type ScheduleRow,
  SOCKET_STAGE,
  type SocketRouteRow,
  STREAM_FILTERS_MAX,
  STREAM_READERS_MAX,
  type StreamConsumerRow,
  schedules,
  socketRoutes,
  streamConsumers,
} from '../../lib/routes';
import { appProps } from './app-props';
import { synthDeployment } from './deployment';

/**
 * Live board events on AWS (infra/realtime.ts): the WebSocket API and its stage, the table's
 * stream and the broadcaster's event source with its dead-letter queue, the sweeper's schedule,
 * their alarms and grants. Synthesized without bundling (the bundles are stack.test.ts's), with
 * cdk-nag, so an unacknowledged finding fails here too.
 */
type Resource = { Type: string; Properties: any; DependsOn?: string[]; DeletionPolicy?: string };

// The whole deployment as one template (root and nested stacks: test/infra/deployment.ts).
const synthOnce = (context: Record<string, unknown>, settings: BuildOptions['settings']) => {
  const built = synthDeployment(context, { settings });
  const template = Template.fromJSON(built.flat);
  return { ...built, template, resources: template.toJSON().Resources as Record<string, Resource> };
};
// Tests that ask for the same deployment (prod; accountLogRole: false) share one synth of it. Only a
// synth that succeeded is kept, so a synth that throws still throws in each test asking for it.
const synthesized = new Map<string, ReturnType<typeof synthOnce>>();
const synth = (context: Record<string, unknown> = {}, settings: BuildOptions['settings'] = {}) => {
  const key = JSON.stringify([context, settings]);
  const built = synthesized.get(key) ?? synthOnce(context, settings);
  synthesized.set(key, built);
  return built;
};
const dev = synth({ stage: 'dev' });
const { template, resources, config } = dev;
const ofType = (type: string, from = resources) => Object.entries(from).filter(([, r]) => r.Type === type);
const refName = (value: any): string | undefined => value?.['Fn::GetAtt']?.[0] ?? value?.Ref;
const functionOf = (rowId: string) => {
  const found = ofType('AWS::Lambda::Function').filter(([id]) => id.startsWith(`${functionIdOf(rowId)}Function`));
  expect(found).toHaveLength(1);
  return found[0]![0];
};
const socketRows = Object.entries(socketRoutes) as [string, SocketRouteRow][];
const consumerRows = Object.entries(streamConsumers) as [string, StreamConsumerRow][];
const scheduleRows = Object.entries(schedules) as [string, ScheduleRow][];

const socketApi = () => {
  const found = ofType('AWS::ApiGatewayV2::Api').filter(([, r]) => r.Properties.ProtocolType === 'WEBSOCKET');
  expect(found).toHaveLength(1);
  return found[0]!;
};
const socketStage = (from = resources) => {
  const found = ofType('AWS::ApiGatewayV2::Stage', from).filter(([, r]) => r.Properties.StageName === SOCKET_STAGE);
  expect(found).toHaveLength(1);
  return found[0]!;
};
const tableId = ofType('AWS::DynamoDB::Table')[0]![0];
/** `wss://` or `https://` address of the stage, as CloudFormation joins it. */
const stageUrl = (scheme: 'wss' | 'https') => ({
  'Fn::Join': [
    '',
    [
      `${scheme}://`,
      { Ref: socketApi()[0] },
      '.execute-api.',
      { Ref: 'AWS::Region' },
      '.',
      { Ref: 'AWS::URLSuffix' },
      `/${SOCKET_STAGE}`,
    ],
  ],
});

describe('WebSocket API', () => {
  it('routes messages by their action', () => {
    expect(socketApi()[1].Properties.RouteSelectionExpression).toBe('$request.body.action');
  });

  it('has exactly one route per socketRoutes row', () => {
    const routes = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => r.Properties.ApiId.Ref === socketApi()[0]);
    expect(routes.map(([, r]) => r.Properties.RouteKey).sort()).toEqual(socketRows.map(([, row]) => row.routeKey).sort());
  });

  it.each(socketRows)(
    "%s's route is a Lambda proxy integration of its own function, answering the client when it is an action",
    (rowId, row) => {
      const [routeId, route] = ofType('AWS::ApiGatewayV2::Route').find(
        ([, r]) => r.Properties.ApiId.Ref === socketApi()[0] && r.Properties.RouteKey === row.routeKey,
      )!;
      const integration = resources[JSON.stringify(route.Properties.Target).match(/"Ref":"([^"]+)"/)![1]!]!;
      expect(integration.Properties.IntegrationType).toBe('AWS_PROXY');
      const invoked = (integration.Properties.IntegrationUri['Fn::Join'][1] as any[]).filter((part) => part?.['Fn::GetAtt']);
      expect(invoked).toEqual([{ 'Fn::GetAtt': [functionOf(rowId), 'Arn'] }]);
      // API Gateway may invoke that function.
      expect(
        ofType('AWS::Lambda::Permission').some(
          ([, p]) =>
            refName(p.Properties.FunctionName) === functionOf(rowId) && p.Properties.Principal === 'apigateway.amazonaws.com',
        ),
      ).toBe(true);
      // watch, unwatch, ping and $default answer on the socket: a route response carries the answer.
      const responses = ofType('AWS::ApiGatewayV2::RouteResponse').filter(([, r]) => r.Properties.RouteId.Ref === routeId);
      if (answersClient(row.routeKey)) {
        expect(route.Properties.RouteResponseSelectionExpression).toBe('$default');
        expect(responses.map(([, r]) => r.Properties.RouteResponseKey)).toEqual(['$default']);
      } else {
        expect(route.Properties.RouteResponseSelectionExpression).toBeUndefined();
        expect(responses).toEqual([]);
      }
    },
  );

  it('answers on the socket for the action rows and $default only', () => {
    expect(
      socketRows
        .filter(([, row]) => answersClient(row.routeKey))
        .map(([, row]) => row.routeKey)
        .sort(),
    ).toEqual(
      socketRows
        .map(([, row]) => row.routeKey)
        .filter((key) => key === '$default' || !key.startsWith('$'))
        .sort(),
    );
    expect(answersClient('$connect')).toBe(false);
    expect(answersClient('$disconnect')).toBe(false);
  });
});

describe('WebSocket stage', () => {
  it(`is "${SOCKET_STAGE}" and deploys itself`, () => {
    expect(socketStage()[1].Properties).toMatchObject({ ApiId: { Ref: socketApi()[0] }, AutoDeploy: true });
  });

  it('throttles every route by default, with the configured rate and burst', () => {
    expect(socketStage()[1].Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: config.socketThrottle.rateLimit,
      ThrottlingBurstLimit: config.socketThrottle.burstLimit,
    });
    const custom = synth({}, { socketThrottle: { rateLimit: 7, burstLimit: 9 } });
    expect(socketStage(custom.resources)[1].Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: 7,
      ThrottlingBurstLimit: 9,
    });
  });

  it('writes JSON access logs (connection, event type, route, status, integration error) to its own log group with retention', () => {
    const { AccessLogSettings } = socketStage()[1].Properties;
    const format = JSON.parse(AccessLogSettings.Format);
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      connectionId: '$context.connectionId',
      eventType: '$context.eventType',
      routeKey: '$context.routeKey',
      status: '$context.status',
      integrationError: '$context.integration.error',
    });
    const group = resources[refName(AccessLogSettings.DestinationArn)!]!;
    expect(group.Type).toBe('AWS::Logs::LogGroup');
    expect(group.Properties.RetentionInDays).toBe(30);
    // Not shared with the HTTP API's access logs or any function's.
    const destinations = ofType('AWS::ApiGatewayV2::Stage').map(([, s]) =>
      refName(s.Properties.AccessLogSettings.DestinationArn),
    );
    expect(new Set(destinations).size).toBe(destinations.length);
    const functionGroups = ofType('AWS::Lambda::Function').map(([, f]) => refName(f.Properties.LoggingConfig.LogGroup));
    expect(functionGroups).not.toContain(refName(AccessLogSettings.DestinationArn));
  });

  it("sets the region's API Gateway logging role, kept with the stack gone, before the stage; or leaves it to the account", () => {
    const [accountId, account] = ofType('AWS::ApiGateway::Account')[0]!;
    const role = resources[refName(account.Properties.CloudWatchRoleArn)!]!;
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' } },
    ]);
    expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain('service-role/AmazonAPIGatewayPushToCloudWatchLogs');
    expect([account.DeletionPolicy, role.DeletionPolicy]).toEqual(['Retain', 'Retain']);
    expect(socketStage()[1].DependsOn).toContain(accountId);

    const without = synth({}, { accountLogRole: false });
    expect(ofType('AWS::ApiGateway::Account', without.resources)).toEqual([]);
    expect(socketStage(without.resources)[1].DependsOn ?? []).toEqual([]);
    expect(() => buildApp(appProps(), { settings: { accountLogRole: 'maybe' as never } })).toThrow(/"accountLogRole" must be/);
  });

  it('is the WebSocketUrl output (wss://), and the address the ticket route hands out', () => {
    const outputs = template.toJSON().Outputs;
    expect(outputs.WebSocketUrl.Value).toEqual(stageUrl('wss'));
    const tickets = resources[functionOf('realtime.tickets')]!;
    expect(tickets.Properties.Environment.Variables.SOCKET_URL).toEqual(stageUrl('wss'));
    expect(tickets.Properties.Environment.Variables.TICKET_SECONDS).toBeUndefined();
  });

  it("gives the functions that send to sockets the stage's https callback address", () => {
    for (const [rowId, row] of [...consumerRows, ...scheduleRows, ...socketRows]) {
      const variables = resources[functionOf(rowId)]!.Properties.Environment.Variables;
      if (row.env?.includes('SOCKET_CALLBACK_URL')) expect(variables.SOCKET_CALLBACK_URL).toEqual(stageUrl('https'));
      else expect(variables.SOCKET_CALLBACK_URL).toBeUndefined();
    }
  });

  it('rejects malformed socket throttling', () => {
    expect(() => buildApp(appProps(), { settings: { socketThrottle: { rateLimit: 'fast' as never, burstLimit: 40 } } })).toThrow(
      /"socketThrottle\.rateLimit" must be/,
    );
    expect(() => buildApp(appProps(), { settings: { socketThrottle: { rateLimit: 20, burstLimit: -1 } } })).toThrow(
      /"socketThrottle\.burstLimit" must be/,
    );
  });

  it('throttles harder in dev than in prod', () => {
    const prodConfig = synth({ stage: 'prod' }).config;
    expect(config.socketThrottle.rateLimit).toBeLessThan(prodConfig.socketThrottle.rateLimit);
    expect(config.socketThrottle.burstLimit).toBeLessThan(prodConfig.socketThrottle.burstLimit);
  });
});

describe('ManageConnections', () => {
  const grantees = () =>
    ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('execute-api:ManageConnections'))
      .flatMap(([, p]) => p.Properties.Roles.map((r: any) => r.Ref as string));
  const rowsThatSend = [...socketRows, ...consumerRows, ...scheduleRows].filter(([, row]) => row.manageConnections);

  it('is granted to exactly the functions whose row has manageConnections', () => {
    const roles = rowsThatSend.map(([rowId]) => refName(resources[functionOf(rowId)]!.Properties.Role));
    expect(rowsThatSend.length).toBeGreaterThan(0);
    expect(grantees().sort()).toEqual(roles.sort());
  });

  it("names only this stage's @connections, for POST (send) and DELETE (close)", () => {
    const statements = ofType('AWS::IAM::Policy')
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[])
      .filter((s) => [s.Action].flat().includes('execute-api:ManageConnections'));
    expect(statements.length).toBe(rowsThatSend.length);
    for (const statement of statements) {
      expect(statement.Action).toBe('execute-api:ManageConnections');
      expect(statement.Resource).toEqual(
        ['POST', 'DELETE'].map((method) => ({
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':execute-api:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':',
              { Ref: socketApi()[0] },
              `/${SOCKET_STAGE}/${method}/@connections/*`,
            ],
          ],
        })),
      );
    }
  });
});

describe('table stream', () => {
  it('streams new and old images and expires items by their ttl attribute (the shared table definition)', () => {
    expect(resources[tableId]!.Properties).toMatchObject({
      StreamSpecification: { StreamViewType: tableDefinition.streamView },
      TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
    });
    expect([tableDefinition.streamView, tableDefinition.timeToLiveAttribute]).toEqual(['NEW_AND_OLD_IMAGES', 'ttl']);
  });

  // DynamoDB Streams: no more than two processes should read one shard at the same time, or its
  // GetRecords are throttled, for every reader (docs/realtime.md "The readers"). Each mapping on the
  // table's stream is one such process on every shard.
  const streamMappingsOf = (all: Record<string, Resource>) =>
    Object.values(all).filter(
      (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.EventSourceArn?.['Fn::GetAtt']?.[1] === 'StreamArn',
    );
  it.each(['dev', 'prod'])('%s: at most two event source mappings read the table stream', (stage) => {
    const mappings = streamMappingsOf(stage === 'dev' ? resources : synth({ stage }).resources);
    expect(mappings.length).toBeGreaterThan(0);
    expect(mappings.length).toBeLessThanOrEqual(STREAM_READERS_MAX);
    expect(STREAM_READERS_MAX).toBe(2);
    for (const mapping of mappings) {
      expect(mapping.Properties.FilterCriteria.Filters.length).toBeGreaterThanOrEqual(1);
      expect(mapping.Properties.FilterCriteria.Filters.length).toBeLessThanOrEqual(STREAM_FILTERS_MAX);
    }
  });

  it('refuses to synthesize a third reader of the stream', () => {
    const third = { ...streamConsumers['events.broadcast'], id: 'third.reader' as const };
    expect(() =>
      synthDeployment(
        { stage: 'dev' },
        {
          tables: {
            routes,
            socketRoutes,
            schedules,
            queueConsumers,
            streamConsumers: { ...streamConsumers, 'third.reader': third },
          },
        },
      ),
    ).toThrow(/3 stream consumers .*at most 2 may read the table's stream/);
  });

  it('feeds exactly the streamConsumers rows, each through one event source mapping', () => {
    // A stream's mapping has a starting position; the deliveries queue's (webhooks.deliver) has none.
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.StartingPosition !== undefined);
    expect(mappings.map(([, m]) => m.Properties.FunctionName.Ref).sort()).toEqual(
      consumerRows.map(([rowId]) => functionOf(rowId)).sort(),
    );
  });

  it.each(consumerRows)(
    "%s's event source: the row's filters exactly, bisecting, retries, record age, batch item failures, dead letters",
    (rowId, row) => {
      const [, mapping] = ofType('AWS::Lambda::EventSourceMapping').find(
        ([, m]) => m.Properties.FunctionName.Ref === functionOf(rowId),
      )!;
      expect(mapping.Properties).toEqual({
        FunctionName: { Ref: functionOf(rowId) },
        EventSourceArn: { 'Fn::GetAtt': [tableId, 'StreamArn'] },
        StartingPosition: 'LATEST',
        BatchSize: row.batchSize,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: row.retryAttempts,
        MaximumRecordAgeInSeconds: row.maxRecordAgeSeconds,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        FilterCriteria: { Filters: row.filters.map((filter) => ({ Pattern: JSON.stringify(filter) })) },
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [expect.any(String), 'Arn'] } } },
      });
      expect(mapping.Properties.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual(
        row.filters,
      );

      // The dead-letter queue: encrypted, TLS only, two weeks of retention.
      const queueId = refName(mapping.Properties.DestinationConfig.OnFailure.Destination)!;
      expect(resources[queueId]).toMatchObject({
        Type: 'AWS::SQS::Queue',
        Properties: { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 60 * 60 },
      });
      const policy = ofType('AWS::SQS::QueuePolicy').find(([, p]) => p.Properties.Queues[0].Ref === queueId)!;
      expect(policy[1].Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    },
  );
});

describe('schedules', () => {
  it('has exactly one rule per schedules row', () => {
    expect(ofType('AWS::Events::Rule')).toHaveLength(scheduleRows.length);
  });

  it.each(scheduleRows)('%s runs on its rate, targeting its own function, which the rule may invoke', (rowId, row) => {
    const [ruleId, rule] = ofType('AWS::Events::Rule').find(
      ([, r]) => refName(r.Properties.Targets[0].Arn) === functionOf(rowId),
    )!;
    expect(rule.Properties).toMatchObject({
      ScheduleExpression: `rate(${row.everyMinutes} minute${row.everyMinutes === 1 ? '' : 's'})`,
      State: 'ENABLED',
      Targets: [{ Arn: { 'Fn::GetAtt': [functionOf(rowId), 'Arn'] } }],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      FunctionName: { 'Fn::GetAtt': [functionOf(rowId), 'Arn'] },
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
    });
  });
});

describe('alarms', () => {
  const topicId = ofType('AWS::SNS::Topic')[0]![0];
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const wired = (alarm: any) => {
    expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
    expect(alarm.OKActions).toEqual([{ Ref: topicId }]);
    expect(alarm.ComparisonOperator).toBe('GreaterThanOrEqualToThreshold');
  };

  const liveRows: [string][] = [...socketRows, ...consumerRows, ...scheduleRows].map(([rowId]) => [rowId]);
  // A stream consumer has its own errors and throttles alarms; a socket route's or a schedule's
  // function is one line of its group's (a metric math sum of up to ten functions).
  const reads = (alarm: any, metric: string, rowId: string) =>
    (alarm.MetricName === metric &&
      alarm.Namespace === 'AWS/Lambda' &&
      alarm.Dimensions?.[0]?.Value?.Ref === functionOf(rowId)) ||
    (alarm.Metrics ?? []).some(
      (query: any) =>
        query.MetricStat?.Metric.MetricName === metric &&
        query.MetricStat.Metric.Namespace === 'AWS/Lambda' &&
        query.MetricStat.Metric.Dimensions[0].Value.Ref === functionOf(rowId),
    );
  it.each(liveRows)('%s: errors and throttles alarm into the topic', (rowId) => {
    for (const metric of ['Errors', 'Throttles']) {
      const found = alarms.filter((a) => reads(a, metric, rowId));
      expect(found).toHaveLength(1);
      expect(found[0].Threshold).toBe(1);
      wired(found[0]);
      if (rowId in streamConsumers) expect(found[0].MetricName).toBe(metric);
      else expect(found[0].Metrics.find((query: any) => query.ReturnData !== false).Expression).toBe('SUM(METRICS())');
    }
  });

  it.each(consumerRows)('%s: iterator age of a minute or more, and any dead-lettered batch, alarm into the topic', (rowId) => {
    const age = alarms.filter((a) => a.MetricName === 'IteratorAge' && a.Dimensions?.[0]?.Value?.Ref === functionOf(rowId));
    expect(age).toHaveLength(1);
    expect(age[0]).toMatchObject({ Namespace: 'AWS/Lambda', Statistic: 'Maximum', Threshold: 60_000 });
    wired(age[0]);

    const [, mapping] = ofType('AWS::Lambda::EventSourceMapping').find(
      ([, m]) => m.Properties.FunctionName.Ref === functionOf(rowId),
    )!;
    const queueId = refName(mapping.Properties.DestinationConfig.OnFailure.Destination);
    const depth = alarms.filter(
      (a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && a.Dimensions?.[0]?.Value?.['Fn::GetAtt']?.[0] === queueId,
    );
    expect(depth).toHaveLength(1);
    expect(depth[0]).toMatchObject({
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Threshold: 1,
    });
    wired(depth[0]);
  });
});

describe('cdk-nag', () => {
  const acknowledgedOn = (resource: Resource & { Metadata?: any }) =>
    ((resource.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string }[]).map(({ id, reason }) => {
      expect(reason.length).toBeGreaterThan(40);
      return id;
    });

  it('acknowledges each finding the design cannot meet, with a reason, on the resources concerned', () => {
    // Every WebSocket route: API Gateway authorizes $connect only, and there the ticket is checked.
    const routes = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => r.Properties.ApiId.Ref === socketApi()[0]);
    for (const [, route] of routes) expect(acknowledgedOn(route)).toContain('AwsSolutions-APIG4');
    // The dead-letter queues are dead-letter queues (the deliveries queue has its own); a schedule
    // has nothing to dead-letter.
    for (const [, queue] of ofType('AWS::SQS::Queue').filter(([, q]) => q.Properties.RedrivePolicy === undefined)) {
      expect(acknowledgedOn(queue)).toEqual(expect.arrayContaining(['AwsSolutions-SQS3', 'Serverless-SQSRedrivePolicy']));
    }
    for (const [, rule] of ofType('AWS::Events::Rule')) expect(acknowledgedOn(rule)).toContain('Serverless-EventBusDLQ');
    // ManageConnections on @connections/* (the connection id is known at run time only).
    for (const [rowId, row] of [...socketRows, ...consumerRows, ...scheduleRows]) {
      const role = resources[refName(resources[functionOf(rowId)]!.Properties.Role)!]!;
      const connections = acknowledgedOn(role).filter((id) => id.includes('@connections'));
      expect(connections).toHaveLength(row.manageConnections ? 2 : 0);
    }
  });

  it('acknowledges nothing on the table or the WebSocket API and stage themselves', () => {
    expect(acknowledgedOn(resources[tableId]!)).toEqual([]);
    expect(acknowledgedOn(socketApi()[1])).toEqual([]);
    expect(acknowledgedOn(socketStage()[1])).toEqual([]);
  });

  it('passes in prod with every option set', () => {
    expect(() =>
      synth(
        { stage: 'prod' },
        {
          alarmEmail: 'ops@example.com',
          domain: { name: 'api.example.com', certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc-123' },
        },
      ),
    ).not.toThrow();
    expect(() => synth({}, { accountLogRole: false })).not.toThrow();
  });
});
