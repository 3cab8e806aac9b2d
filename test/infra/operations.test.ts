import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnyRow } from '../../infra/api-function';
import { functionIdOf } from '../../infra/api-function';
import { type BuildOptions, buildApp } from '../../infra/build-app';
import { DASHBOARD_LIMITS, DASHBOARD_RUNBOOK_ANCHOR } from '../../infra/dashboard';
import { RUNBOOK_ANCHORS } from '../../infra/monitoring';
import { defaultRunbookUrl } from '../../infra/settings';
import {
  poolTriggers,
  queueConsumers,
  type RouteRow,
  routeKeyOf,
  routes,
  SOCKET_STAGE,
  schedules,
  socketRoutes,
  streamConsumers,
} from '../../lib/routes';
import { METRICS_NAMESPACE } from '../../lib/runtime/metrics';
import { unbundledAppProps } from './app-props';
import { synthDeployment } from './deployment';

/**
 * Operations (infra/dashboard.ts, infra/monitoring.ts, docs/runbook.md): the dashboard holds a
 * line for every route row, every function, the table, the live events; every alarm links to a
 * section of the runbook that exists. Synthesized without bundling (stack.test.ts bundles), with
 * cdk-nag, so the dashboard's own limit checks run too.
 */
type Resource = { Type: string; Properties: any };

// The whole deployment as one template (root and nested stacks: test/infra/deployment.ts).
const synth = (context: Record<string, unknown> = {}, settings: BuildOptions['settings'] = {}) => {
  const built = synthDeployment(context, { settings });
  const template = built.flat as any;
  return { ...built, template, resources: template.Resources as Record<string, Resource> };
};
const dev = synth({ stage: 'dev' });
const ofType = (type: string, resources = dev.resources) => Object.entries(resources).filter(([, r]) => r.Type === type);

const httpRows = Object.values(routes) as RouteRow[];
const namedRows = httpRows.filter((row) => row.path !== '$default');
const functionRows = [routes, socketRoutes, streamConsumers, queueConsumers, schedules, poolTriggers].flatMap(
  (table) => Object.entries(table) as [string, AnyRow][],
);
const functionOf = (rowId: string) => {
  const found = ofType('AWS::Lambda::Function').filter(([id]) => id.startsWith(`${functionIdOf(rowId)}Function`));
  expect(found).toHaveLength(1);
  return found[0]![0];
};
/**
 * A function's name as the dashboard body has it: the name the stack gives a grouped function
 * (infra/task-board-stack.ts), or CloudFormation's, written `${LogicalId}`.
 */
const nameOf = (rowId: string) => dev.resources[functionOf(rowId)]!.Properties.FunctionName ?? `\${${functionOf(rowId)}}`;
const apiOf = (protocol: 'HTTP' | 'WEBSOCKET') =>
  ofType('AWS::ApiGatewayV2::Api').find(([, r]) => r.Properties.ProtocolType === protocol)![0];

/**
 * A dashboard body as CloudWatch will read it: CloudFormation's Fn::Join of JSON fragments and
 * tokens, joined with each token written `${LogicalId}` or `${LogicalId.Attribute}`.
 */
function renderBody(body: any): any {
  const parts: any[] = typeof body === 'string' ? [body] : body['Fn::Join'][1];
  const text = parts
    .map((part) => {
      if (typeof part === 'string') return part;
      if (part.Ref) return `\${${part.Ref}}`;
      if (part['Fn::GetAtt']) return `\${${part['Fn::GetAtt'].join('.')}}`;
      throw new Error(`unexpected token in the dashboard body: ${JSON.stringify(part)}`);
    })
    .join('');
  return JSON.parse(text);
}

const dashboardOf = (resources: Record<string, Resource>) => {
  const found = ofType('AWS::CloudWatch::Dashboard', resources);
  expect(found).toHaveLength(1);
  const { DashboardName, DashboardBody } = found[0]![1].Properties;
  return { name: DashboardName as string, body: renderBody(DashboardBody) };
};
const { body } = dashboardOf(dev.resources);
const widgets = body.widgets as { type: string; width: number; height: number; properties: any }[];
const text = JSON.stringify(body);

/** Metric lines of a widget: `[namespace, name, dim, value, ..., options?]`, math expressions left out. */
const metricLines = (widget: { properties: any }) =>
  ((widget.properties.metrics ?? []) as any[][])
    .filter((line) => typeof line[0] === 'string')
    .map((line) => {
      const options = typeof line.at(-1) === 'object' ? line.at(-1) : {};
      const flat = (typeof line.at(-1) === 'object' ? line.slice(0, -1) : line) as string[];
      const dimensions: Record<string, string> = {};
      for (let i = 2; i < flat.length; i += 2) dimensions[flat[i]!] = flat[i + 1]!;
      return { namespace: flat[0]!, name: flat[1]!, dimensions, options };
    });
const allLines = widgets.flatMap(metricLines);
const widgetTitled = (title: string) => {
  const found = widgets.filter((w) => w.properties.title === title);
  expect(found).toHaveLength(1);
  return found[0]!;
};

/** GitHub's anchors of a markdown file's headings (fenced code left out, repeats numbered). */
function anchorsOf(markdown: string): string[] {
  const seen = new Map<string, number>();
  const anchors: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && line.match(/^#{1,6}\s+(.+?)\s*#*\s*$/);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.push(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
const runbook = readFileSync(join(__dirname, '../../docs/runbook.md'), 'utf8');
const anchors = anchorsOf(runbook);

/** The text of the section under an anchor: up to the next heading of the same or a higher level. */
const sectionOf = (anchor: string) => {
  const lines = runbook.split('\n');
  const headings = lines.flatMap((line, index) => (/^#{1,6}\s/.test(line) ? [index] : []));
  const levels = new Map(headings.map((index) => [index, lines[index]!.match(/^#+/)![0].length]));
  const start = headings.find((index) => anchorsOf(lines[index]!)[0] === anchor)!;
  const end = headings.find((index) => index > start && levels.get(index)! <= levels.get(start)!) ?? lines.length;
  return lines.slice(start, end).join('\n');
};

describe('dashboard', () => {
  it('is named TaskBoard-<stage>, and the DashboardUrl output opens it in the stack region', () => {
    expect(dashboardOf(dev.resources).name).toBe('TaskBoard-dev');
    expect(dev.template.Outputs.DashboardUrl.Value).toEqual({
      'Fn::Join': [
        '',
        [
          'https://',
          { Ref: 'AWS::Region' },
          '.console.aws.amazon.com/cloudwatch/home?region=',
          { Ref: 'AWS::Region' },
          '#dashboards:name=TaskBoard-dev',
        ],
      ],
    });
  });

  it('stays within CloudWatch limits (widgets, metrics per widget) and inside the 24-unit grid', () => {
    expect(widgets.length).toBeLessThanOrEqual(DASHBOARD_LIMITS.widgets);
    for (const widget of widgets) {
      expect((widget.properties.metrics ?? []).length).toBeLessThanOrEqual(DASHBOARD_LIMITS.metricsPerWidget);
      expect(widget.width).toBeLessThanOrEqual(24);
    }
  });

  it('names every HTTP route key of the route table', () => {
    for (const row of httpRows) expect(text).toContain(JSON.stringify(routeKeyOf(row)).slice(1, -1));
  });

  it.each([
    ['Requests by route (per minute)', 'Count', 'Sum'],
    ['4xx by route (per minute)', '4xx', 'Sum'],
    ['5xx by route (per minute)', '5xx', 'Sum'],
    ['Latency p50 by route (ms)', 'Latency', 'p50'],
    ['Latency p99 by route (ms)', 'Latency', 'p99'],
  ])('%s: one line per route row, from the HTTP stage detailed metrics', (title, metricName, stat) => {
    const lines = metricLines(widgetTitled(title)).filter((line) => line.dimensions.Method);
    expect(lines.map((line) => line.options.label).sort()).toEqual(namedRows.map(routeKeyOf).sort());
    for (const line of lines) {
      const row = namedRows.find((r) => routeKeyOf(r) === line.options.label)!;
      expect(line).toMatchObject({
        namespace: 'AWS/ApiGateway',
        name: metricName,
        dimensions: { ApiId: `\${${apiOf('HTTP')}}`, Stage: '$default', Method: row.method, Resource: row.path },
        options: { stat },
      });
    }
    // The $default row: what the stage counted that no named route did.
    if (stat === 'Sum') {
      const rest = widgetTitled(title).properties.metrics.find((line: any[]) => line[0]?.expression);
      expect(rest[0].label).toMatch(/^\$default /);
    }
  });

  it('enables the per-route (detailed) metrics on the HTTP stage, /auth/* routes included', () => {
    const [, stage] = ofType('AWS::ApiGatewayV2::Stage').find(([, r]) => r.Properties.ApiId.Ref === apiOf('HTTP'))!;
    expect(stage.Properties.DefaultRouteSettings.DetailedMetricsEnabled).toBe(true);
    for (const settings of Object.values(stage.Properties.RouteSettings) as any[]) {
      expect(settings.DetailedMetricsEnabled).toBe(true);
    }
  });

  it.each([
    ['Errors', 'Sum'],
    ['Throttles', 'Sum'],
    ['Duration', 'p50'],
    ['Duration', 'p99'],
    ['Invocations', 'Sum'],
  ])('shows every function: %s (%s)', (metricName, stat) => {
    const lines = allLines.filter((l) => l.namespace === 'AWS/Lambda' && l.name === metricName && l.options.stat === stat);
    expect(lines.map((l) => l.dimensions.FunctionName).sort()).toEqual(functionRows.map(([rowId]) => nameOf(rowId)).sort());
    expect(lines.map((l) => l.options.label).sort()).toEqual(functionRows.map(([rowId]) => rowId).sort());
  });

  it("shows every function's cold starts from the service's own ColdStart metric", () => {
    const lines = allLines.filter((l) => l.namespace === METRICS_NAMESPACE && l.name === 'ColdStart');
    expect(lines.map((l) => l.dimensions)).toEqual(
      expect.arrayContaining(functionRows.map(([rowId]) => ({ service: 'task-board', function_name: nameOf(rowId) }))),
    );
    expect(lines).toHaveLength(functionRows.length);
  });

  it("shows the table's consumed capacity and throttles", () => {
    const table = `\${${ofType('AWS::DynamoDB::Table')[0]![0]}}`;
    const names = allLines.filter((l) => l.namespace === 'AWS/DynamoDB' && l.dimensions.TableName === table).map((l) => l.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'ConsumedReadCapacityUnits',
        'ConsumedWriteCapacityUnits',
        'ReadThrottleEvents',
        'WriteThrottleEvents',
      ]),
    );
    // Per-operation metrics (ThrottledRequests has no series without the Operation dimension).
    expect(text).toContain(`MetricName=\\"ThrottledRequests\\" TableName=\\"${table}\\"`);
  });

  it("shows each stream consumer's iterator age and dead-letter depth", () => {
    // The stream's mappings (the deliveries queue's have no on-failure destination: infra/webhooks.ts).
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.StartingPosition);
    expect(mappings).toHaveLength(Object.keys(streamConsumers).length);
    for (const rowId of Object.keys(streamConsumers)) {
      const age = allLines.filter((l) => l.name === 'IteratorAge' && l.dimensions.FunctionName === nameOf(rowId));
      expect(age).toHaveLength(1);
      expect(age[0]!.options).toMatchObject({ stat: 'Maximum', label: rowId });
      const mapping = mappings.find(([, m]) => m.Properties.FunctionName.Ref === functionOf(rowId))![1];
      const queue = mapping.Properties.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0];
      const depth = allLines.filter(
        (l) => l.name === 'ApproximateNumberOfMessagesVisible' && l.dimensions.QueueName === `\${${queue}.QueueName}`,
      );
      expect(depth).toHaveLength(1);
    }
  });

  it('shows the WebSocket stage (connects, messages, errors), events sent and the business counts', () => {
    const socket = allLines.filter((l) => l.namespace === 'AWS/ApiGateway' && l.dimensions.ApiId === `\${${apiOf('WEBSOCKET')}}`);
    expect(new Set(socket.map((l) => l.name))).toEqual(
      new Set(['ConnectCount', 'MessageCount', 'ClientError', 'IntegrationError', 'ExecutionError', 'IntegrationLatency']),
    );
    for (const line of socket) expect(line.dimensions.Stage).toBe(SOCKET_STAGE);
    const own = allLines.filter(
      (l) => l.namespace === METRICS_NAMESPACE && l.name !== 'ColdStart' && !l.name.startsWith('Webhook'),
    );
    const business = httpRows.flatMap((row) => (row.metric ? [row.metric] : []));
    expect(own.map((l) => l.name).sort()).toEqual(['EventsSent', ...business].sort());
    for (const line of own) expect(line.dimensions).toEqual({ service: 'task-board' });
  });

  it("shows webhook deliveries: the worker's counts (service dimension), deferred attempts, the deliveries queue and its dead letters", () => {
    const counts = allLines.filter((l) => l.namespace === METRICS_NAMESPACE && l.name.startsWith('Webhook'));
    expect(counts.map((l) => l.name).sort()).toEqual(
      ['WebhookAttemptDeferred', 'WebhookAttemptFailed', 'WebhookDelivered', 'WebhookDeliveryFailed', 'WebhookDisabled'].sort(),
    );
    for (const line of counts) expect(line.dimensions).toEqual({ service: 'task-board' });
    const queueOf = (prefix: string) => `\${${ofType('AWS::SQS::Queue').find(([id]) => id.startsWith(prefix))![0]}.QueueName}`;
    const onQueue = (queue: string) =>
      allLines.filter((l) => l.namespace === 'AWS/SQS' && l.dimensions.QueueName === queue).map((l) => l.name);
    expect(onQueue(queueOf('WebhooksDeliveries')).sort()).toEqual(
      [
        'ApproximateAgeOfOldestMessage',
        'ApproximateNumberOfMessagesDelayed',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesVisible',
      ].sort(),
    );
    expect(onQueue(queueOf('WebhooksDeadLetters'))).toEqual(['ApproximateNumberOfMessagesVisible']);
  });

  it('reads the metrics the service writes (namespace and dimensions of lib/runtime/metrics.ts)', () => {
    const written: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const previous = process.env.METRICS_DISABLED;
    process.env.METRICS_DISABLED = 'false';
    try {
      jest.isolateModules(() => {
        const metrics = require('../../lib/runtime/metrics') as typeof import('../../lib/runtime/metrics');
        metrics.countColdStart('functions/health.ts');
        metrics.emitMetric('EventsSent', { service: metrics.SERVICE }, 3);
      });
    } finally {
      write.mockRestore();
      if (previous === undefined) delete process.env.METRICS_DISABLED;
      else process.env.METRICS_DISABLED = previous;
    }
    const lines = written.map((line) => JSON.parse(line)._aws.CloudWatchMetrics[0]);
    expect(lines).toEqual([
      {
        Namespace: METRICS_NAMESPACE,
        Dimensions: [['service', 'function_name']],
        Metrics: [{ Name: 'ColdStart', Unit: 'Count' }],
      },
      { Namespace: METRICS_NAMESPACE, Dimensions: [['service']], Metrics: [{ Name: 'EventsSent', Unit: 'Count' }] },
    ]);
  });

  it('shows every alarm of the stack in its alarm status widget', () => {
    const shown = widgets.filter((w) => w.type === 'alarm').flatMap((w) => w.properties.alarms as string[]);
    expect(shown.sort()).toEqual(
      ofType('AWS::CloudWatch::Alarm')
        .map(([id]) => `\${${id}.Arn}`)
        .sort(),
    );
  });

  it('queries the HTTP access log and every function log group for recent failures', () => {
    const queries = widgets.filter((w) => w.type === 'log').map((w) => w.properties.query as string);
    const sources = queries.join('\n');
    const accessLogs = ofType('AWS::Logs::LogGroup').find(([id]) => id.startsWith('AccessLogs'))![0];
    expect(sources).toContain(`SOURCE '\${${accessLogs}}'`);
    for (const [rowId] of functionRows) {
      const fn = dev.resources[functionOf(rowId)]!;
      expect(sources).toContain(`SOURCE '\${${fn.Properties.LoggingConfig.LogGroup.Ref}}'`);
    }
  });
});

describe('runbook', () => {
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([id, a]) => [id, a.Properties.AlarmDescription as string] as const);

  it('has a section for every kind of alarm: what users see, likely causes, first checks, how to recover', () => {
    for (const anchor of Object.values(RUNBOOK_ANCHORS)) {
      expect(anchors).toContain(anchor);
      const section = sectionOf(anchor);
      expect(section).toMatch(/\*\*(What users see|What it means)\.\*\*/);
      expect(section).toMatch(/\*\*Likely causes/);
      expect(section).toContain('**First checks.**');
      expect(section).toContain('**Recover.**');
    }
  });

  // Absolute, so that it is a link in an alarm email and in the console: docs/runbook.md on the
  // main branch of package.json's repository, unless the stage file sets runbookUrl.
  const runbookUrl = defaultRunbookUrl();
  it("links docs/runbook.md by an absolute https address, by default on the main branch of package.json's repository", () => {
    expect(runbookUrl).toMatch(/^https:\/\/[^/\s]+\/[^\s#?]+\/blob\/main\/docs\/runbook\.md$/);
  });

  it.each(alarms)(
    '%s: its description ends with an absolute Runbook link to a heading of docs/runbook.md',
    (_id, description) => {
      const link = description.match(/ Runbook: (\S+)#([\w-]+)$/);
      expect(link).not.toBeNull();
      expect(link![1]).toBe(runbookUrl);
      expect(new URL(link![1]!).protocol).toBe('https:');
      expect(anchors).toContain(link![2]);
      expect(description.length).toBeLessThanOrEqual(1024);
    },
  );

  it("the dashboard's header links the runbook's section on alarms and the dashboard, absolutely", () => {
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
    expect(links).toEqual([`${runbookUrl}#${DASHBOARD_RUNBOOK_ANCHOR}`]);
    expect(anchors).toContain(DASHBOARD_RUNBOOK_ANCHOR);
  });

  it('links within itself only to headings it has', () => {
    const links = [...runbook.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(anchors).toContain(link);
  });

  it("takes the runbook address from the stage file's runbookUrl where it sets one (prod: TaskBoard-prod)", () => {
    const url = 'https://wiki.example.com/ops/task-board/runbook';
    const prod = synth({ stage: 'prod' }, { runbookUrl: url });
    const dashboard = dashboardOf(prod.resources);
    expect(dashboard.name).toBe('TaskBoard-prod');
    expect(JSON.stringify(dashboard.body)).toContain(`](${url}#${DASHBOARD_RUNBOOK_ANCHOR})`);
    const descriptions = ofType('AWS::CloudWatch::Alarm', prod.resources).map(([, a]) => a.Properties.AlarmDescription);
    expect(descriptions.length).toBe(alarms.length);
    for (const description of descriptions) expect(description).toMatch(new RegExp(` Runbook: ${url}#[\\w-]+$`));
  });

  it('rejects a runbookUrl that is not an absolute https URL without query or anchor', () => {
    for (const runbookUrl of [
      'docs/runbook.md',
      'http://example.com/runbook.md',
      'https://example.com/runbook.md#top',
      'https://example.com/a b.md',
    ]) {
      expect(() => buildApp(unbundledAppProps(), { settings: { runbookUrl } })).toThrow(/"runbookUrl" must be/);
    }
  });
});
