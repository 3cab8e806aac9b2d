import { Stack } from 'aws-cdk-lib';
import { groupOf } from '../../infra/layout';
import {
  ALERT_SHARE,
  API_INTEGRATIONS_LIMIT,
  figuresOf,
  GOAL_SHARE,
  integrationsPerApi,
  overLimits,
} from '../../infra/template-tree';
import type { FunctionRow, RouteRow } from '../../lib/routes';
import { poolTriggers, queueConsumers, routes, schedules, socketRoutes, streamConsumers } from '../../lib/routes';
import { synthDeployment } from './deployment';

/**
 * Room to grow: every template, the root and each nested stack, stays at or under half
 * of each CloudFormation limit, and a test fails once one passes 80 % of that half (naming the
 * template and the limit), before a deploy would. Measured on the layouts deployed (dev, prod, prod
 * with a custom domain and an alarm email) and on the route table with the 27 HTTP routes still
 * to come (accounts, event history and webhooks in groups of their own; card details in `cards`).
 */
const integrationsAllowed = Math.floor(API_INTEGRATIONS_LIMIT * GOAL_SHARE * ALERT_SHARE);

/**
 * `count` more HTTP rows in `group`, each a copy of an existing row on a path of its own, with its
 * log group beside it as any row added now has (lib/rows/row.ts `logGroup`).
 */
function extraRows(group: string, count: number, like: RouteRow): Record<string, RouteRow> {
  const { logGroup: _logGroup, ...shape } = like;
  return Object.fromEntries(
    Array.from({ length: count }, (_, i) => {
      const id = `${group}.extra${i + 1}` as const;
      return [id, { ...shape, id, path: `/${group}-extra/${i + 1}/{id}` } as RouteRow];
    }),
  );
}
/**
 * The HTTP rows of the route table before this round (fa9badb), and the 27 to come: this round's
 * 16 (accounts, event history, webhooks) and card details' 11. The projection fills the table up
 * to their sum, so that rows already added this round are not counted twice.
 */
const ROWS_BEFORE = 36;
const ROWS_TO_COME = 27;
const like = routes['boards.get'] as RouteRow;
const current = routes as Record<string, RouteRow>;
const missing = Math.max(0, ROWS_BEFORE + ROWS_TO_COME - Object.keys(current).length);
const cards = Math.min(11, missing);
const spread = missing - cards;
const comingRoutes = {
  ...current,
  ...extraRows('accounts', Math.ceil(spread / 3), like),
  ...extraRows('events', Math.ceil((spread - Math.ceil(spread / 3)) / 2), like),
  ...extraRows('webhooks', spread - Math.ceil(spread / 3) - Math.ceil((spread - Math.ceil(spread / 3)) / 2), like),
  ...extraRows('cards', cards, like),
};

/** Every row of every layout, by id. */
const rowsById: Record<string, FunctionRow> = {
  ...comingRoutes,
  ...socketRoutes,
  ...streamConsumers,
  ...schedules,
  ...queueConsumers,
  ...poolTriggers,
};

const layouts = [
  ['dev', synthDeployment({ stage: 'dev' })],
  [
    'prod, custom domain and alarm email',
    synthDeployment(
      { stage: 'prod' },
      {
        settings: {
          domain: { name: 'api.example.com', certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc-123' },
          alarmEmail: 'ops@example.com',
        },
      },
    ),
  ],
  [
    `prod with the table at ${ROWS_BEFORE + ROWS_TO_COME} HTTP routes`,
    synthDeployment(
      { stage: 'prod' },
      { tables: { routes: comingRoutes, socketRoutes, streamConsumers, schedules, queueConsumers, poolTriggers } },
    ),
  ],
] as const;

describe.each(layouts)('%s', (_name, built) => {
  it.each(built.templates.map((t) => [t.name, t] as const))(
    '%s stays under 80 % of half of every CloudFormation limit',
    (_template, { name, template, bytes }) => {
      expect(overLimits(name, figuresOf(template, bytes))).toEqual([]);
    },
  );

  it(`gives each API at most ${integrationsAllowed} integrations (80 % of half of API Gateway's ${API_INTEGRATIONS_LIMIT})`, () => {
    const counts = integrationsPerApi(built.flat);
    expect(Object.keys(counts)).toHaveLength(2);
    for (const count of Object.values(counts)) expect(count).toBeLessThanOrEqual(integrationsAllowed);
  });

  // A pool trigger stays with the pool: the pool names its function and the function's invoke
  // permission names the pool, which across a nested stack's boundary would be a dependency cycle.
  it("puts every function in its group's nested stack, but the stream consumers and the pool triggers, which stay in the root", () => {
    for (const [rowId, fn] of built.stack.functions) {
      const inRoot = rowId in streamConsumers || rowId in poolTriggers;
      const row = rowsById[rowId]!;
      const expected = inRoot ? built.stack : built.stack.groups.get(groupOf(row));
      expect([rowId, Stack.of(fn)]).toEqual([rowId, expected]);
      // A grouped function's name says its stack, group and row (infra/task-board-stack.ts).
      if (!inRoot) expect(fn.functionName).toBe(`${built.stack.stackName}-${groupOf(row)}-${fn.node.id}`);
    }
  });
});

it('with the routes to come, a new group gets a stack of its own and the root grows by one route a row', () => {
  const [, now] = layouts[1];
  const [, later] = layouts[2];
  expect(Object.keys(comingRoutes)).toHaveLength(Math.max(ROWS_BEFORE + ROWS_TO_COME, Object.keys(current).length));
  const newGroups = later.stack.groups.size - now.stack.groups.size;
  const resources = (built: typeof now) => Object.keys(built.root.template.Resources!).length;
  // Each new route: its route in the root; its log group, function, role, policy, permission and
  // integration in its group's stack. Each new group: one nested stack resource. (The domain and
  // the email subscription of the second layout are three more.)
  expect(resources(later) - (resources(now) - 3)).toBe(missing + newGroups);
});

describe('the check itself', () => {
  it('names the template and the limit it passes', () => {
    expect(overLimits('TaskBoard-prod', { resources: 201, bytes: 400_001, outputs: 81, parameters: 81 })).toEqual([
      "TaskBoard-prod: 201 resources, over 200 (80 % of half CloudFormation's 500)",
      "TaskBoard-prod: 400001 bytes, over 400000 (80 % of half CloudFormation's 1000000)",
      "TaskBoard-prod: 81 outputs, over 80 (80 % of half CloudFormation's 200)",
      "TaskBoard-prod: 81 parameters, over 80 (80 % of half CloudFormation's 200)",
    ]);
    expect(overLimits('x', { resources: 200, bytes: 400_000, outputs: 80, parameters: 80 })).toEqual([]);
  });

  it('counts integrations per API across nested stacks', () => {
    expect(
      integrationsPerApi({
        Resources: {
          Api: { Type: 'AWS::ApiGatewayV2::Api' },
          Other: { Type: 'AWS::ApiGatewayV2::Api' },
          I1: { Type: 'AWS::ApiGatewayV2::Integration', Properties: { ApiId: { Ref: 'Api' } } },
          I2: { Type: 'AWS::ApiGatewayV2::Integration', Properties: { ApiId: { Ref: 'Api' } } },
        },
      }),
    ).toEqual({ Api: 2, Other: 0 });
  });
});
