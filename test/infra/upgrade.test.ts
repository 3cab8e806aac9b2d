import { synthDeployment } from './deployment';
import snapshot from './fixtures/stateful-resources.json';
import { STATEFUL_TYPES, statefulResourcesOf } from './stateful';

/**
 * No data loss on upgrade: a deployment of the single-stack layout (the snapshot of its stateful
 * resources, test/infra/stateful.ts) updated to the nested layout keeps each of them
 * in the root stack at the same logical id and type, so CloudFormation updates it in place: it
 * neither replaces it nor, by dropping it from the root template, deletes or orphans it.
 */
const contextOf = (flags: string) =>
  Object.fromEntries([...flags.matchAll(/-c (\S+?)=(\S+)/g)].map(([, key, value]) => [key!, value!]));

/**
 * The snapshot's deploy commands, as the stage's settings say them now (infra/stages/): `-c` names
 * the stage only; the custom domain and the alarm email of `prod-domain` are stage settings.
 */
const deploymentOf = (flags: string) => {
  const { stage, domainName, certificateArn, alarmEmail, ...rest } = contextOf(flags);
  expect(rest).toEqual({});
  return synthDeployment(
    { stage },
    {
      settings: {
        ...(domainName && certificateArn ? { domain: { name: domainName, certificateArn } } : {}),
        ...(alarmEmail ? { alarmEmail } : {}),
      },
    },
  );
};

const variants = Object.entries(snapshot.variants).map(([name, variant]) => {
  const built = deploymentOf(variant.context);
  return [name, variant, built] as const;
});

describe.each(variants)('%s: upgrading the single stack', (_name, variant, built) => {
  it('keeps the stack name', () => {
    expect(built.stack.stackName).toBe(variant.stack);
  });

  it('keeps every stateful resource of the snapshot in the root template, with its logical id and type', () => {
    const root = built.root.template.Resources!;
    const lost = Object.entries(variant.resources as Record<string, string>).filter(([id, type]) => root[id]?.Type !== type);
    expect(lost).toEqual([]);
  });

  it('moves no stateful resource to a nested stack, but the log groups and queue event sources of rows added since', () => {
    for (const nested of built.nested.values()) {
      const stateful = Object.entries(statefulResourcesOf(nested.template));
      // An SQS event source mapping keeps no position (unlike a stream's): it may live beside its
      // function (infra/task-board-stack.ts, the webhook deliveries' consumers).
      const queueSource = (id: string, type: string) =>
        type === 'AWS::Lambda::EventSourceMapping' && !nested.template.Resources![id]!.Properties?.StartingPosition;
      expect(stateful.filter(([id, type]) => type !== 'AWS::Logs::LogGroup' && !queueSource(id, type))).toEqual([]);
      for (const [id] of stateful) expect(variant.resources).not.toHaveProperty(id);
    }
  });

  it('keeps every route and route response of both APIs in the root, beside its API', () => {
    const rootIds = new Set(Object.keys(built.root.template.Resources!));
    const routes = Object.entries(built.flat.Resources!).filter(([, r]) =>
      ['AWS::ApiGatewayV2::Route', 'AWS::ApiGatewayV2::RouteResponse'].includes(r.Type),
    );
    expect(routes.length).toBeGreaterThan(0);
    for (const [id] of routes) expect(rootIds).toContain(id);
  });
});

it('the snapshot covers every stateful type the layout knows, and was taken from the single stack', () => {
  const types = new Set(Object.values(snapshot.variants).flatMap((variant) => Object.values(variant.resources)));
  for (const type of types) expect(Object.keys(STATEFUL_TYPES).concat('AWS::IAM::Role')).toContain(type);
  expect(snapshot.variants.prod.resources).toMatchObject({
    TableCD117FA1: 'AWS::DynamoDB::Table',
    Users0A0EEA89: 'AWS::Cognito::UserPool',
  });
});
