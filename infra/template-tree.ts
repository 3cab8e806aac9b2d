/**
 * The synthesized templates as one tree (the root stack and its nested stacks): their sizes
 * against CloudFormation's limits, and the tree flattened into one template for the tools that
 * read only one (`sam local start-api`, the infra tests' whole-deployment checks).
 */

/** CloudFormation's limits on one template (its quotas page): every template, nested ones included. */
const CLOUDFORMATION_LIMITS = {
  resources: 500,
  /** A template body read from S3, as CDK deploys every template. */
  bytes: 1_000_000,
  outputs: 200,
  parameters: 200,
} as const;

/** API Gateway's default quota of integrations per API (HTTP and WebSocket alike). */
export const API_INTEGRATIONS_LIMIT = 300;

/** The goal, room to grow: every template at or under half of each limit, every API under half its integrations. */
export const GOAL_SHARE = 0.5;

/** Where a test fails: 80 % of the goal, before a deploy would. */
export const ALERT_SHARE = 0.8;

type Limit = keyof typeof CLOUDFORMATION_LIMITS;

export interface TemplateJson {
  Parameters?: Record<string, unknown>;
  Resources?: Record<string, Resource>;
  Outputs?: Record<string, { Value: unknown; [key: string]: unknown }>;
  [section: string]: unknown;
}
export interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  DependsOn?: string | string[];
  [attribute: string]: unknown;
}

export interface TemplateFigures {
  resources: number;
  bytes: number;
  outputs: number;
  parameters: number;
}

/** A template's figures; `bytes` is the file as CDK writes it (one space of indent), which is what is uploaded. */
export function figuresOf(template: TemplateJson, bytes: number): TemplateFigures {
  return {
    resources: Object.keys(template.Resources ?? {}).length,
    bytes,
    outputs: Object.keys(template.Outputs ?? {}).length,
    parameters: Object.keys(template.Parameters ?? {}).length,
  };
}

/** Each limit a template passes `share` of, in words that name the template and the limit. */
export function overLimits(name: string, figures: TemplateFigures, share = ALERT_SHARE): string[] {
  return (Object.keys(CLOUDFORMATION_LIMITS) as Limit[]).flatMap((limit) => {
    const allowed = Math.floor(CLOUDFORMATION_LIMITS[limit] * GOAL_SHARE * share);
    return figures[limit] > allowed
      ? [
          `${name}: ${figures[limit]} ${limit}, over ${allowed} (${share * 100} % of half CloudFormation's ${CLOUDFORMATION_LIMITS[limit]})`,
        ]
      : [];
  });
}

/** The integrations of each API in a flattened template: API logical id → count. */
export function integrationsPerApi(flat: TemplateJson): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [id, resource] of Object.entries(flat.Resources ?? {})) {
    if (resource.Type === 'AWS::ApiGatewayV2::Api') counts[id] ??= 0;
  }
  for (const resource of Object.values(flat.Resources ?? {})) {
    if (resource.Type !== 'AWS::ApiGatewayV2::Integration') continue;
    const api = (resource.Properties?.ApiId as { Ref?: unknown } | undefined)?.Ref;
    if (typeof api !== 'string') throw new Error(`an integration whose ApiId is not a Ref: ${JSON.stringify(resource)}`);
    counts[api] = (counts[api] ?? 0) + 1;
  }
  return counts;
}

const isNestedStack = (resource: Resource) => resource.Type === 'AWS::CloudFormation::Stack';

/**
 * One template with the resources of the root and of every nested stack, as if they had been
 * written in one: a nested stack resource is replaced by its template's resources, a nested
 * parameter by the value the parent passes it, and a parent's `Fn::GetAtt [stack, Outputs.X]`
 * by that output's value. Logical ids are kept (CDK makes them unique across the stacks of one
 * app; a clash throws). `nestedOf` reads a nested stack's template, given its logical id and
 * resource.
 */
export function flattenTemplate(
  root: TemplateJson,
  nestedOf: (logicalId: string, resource: Resource) => TemplateJson,
): TemplateJson {
  const resources: Record<string, Resource> = {};
  const outputsOf = new Map<string, Record<string, unknown>>();

  const inline = (template: TemplateJson, parameters: Record<string, unknown>) => {
    const own = substitute(template, (node) => {
      const ref = node.Ref;
      if (typeof ref === 'string' && ref in parameters) return parameters[ref];
      return undefined;
    }) as TemplateJson;
    for (const [id, resource] of Object.entries(own.Resources ?? {})) {
      if (isNestedStack(resource)) {
        const nested = nestedOf(id, resource);
        const values = (resource.Properties?.Parameters ?? {}) as Record<string, unknown>;
        const flatNested = inline(nested, values);
        outputsOf.set(
          id,
          Object.fromEntries(Object.entries(flatNested.Outputs ?? {}).map(([name, output]) => [name, output.Value])),
        );
        continue;
      }
      // Each template has CDK's version-reporting resource; the root's stands for all.
      if (resource.Type === 'AWS::CDK::Metadata' && template !== root) continue;
      if (id in resources) throw new Error(`logical id ${id} is in two templates`);
      resources[id] = resource;
    }
    return own;
  };
  const flatRoot = inline(root, {});

  // Outputs of nested stacks may name other nested stacks' outputs (passed through the parent):
  // replace until none is left.
  const resolveOutputs = (value: unknown): unknown =>
    substitute(value, (node) => {
      const getAtt = node['Fn::GetAtt'];
      if (!Array.isArray(getAtt) || !outputsOf.has(getAtt[0])) return undefined;
      const [stack, attribute] = getAtt as [string, string];
      const name = attribute.replace(/^Outputs\./, '');
      const outputs = outputsOf.get(stack)!;
      if (!(name in outputs)) throw new Error(`nested stack ${stack} has no output ${name}`);
      return resolveOutputs(outputs[name]);
    });
  const nestedIds = new Set(outputsOf.keys());
  const withoutNestedDependencies = (resource: Resource): Resource => {
    if (resource.DependsOn === undefined) return resource;
    const dependsOn = [resource.DependsOn].flat().filter((id) => !nestedIds.has(id));
    const { DependsOn: _, ...rest } = resource;
    return dependsOn.length ? { ...rest, DependsOn: dependsOn } : rest;
  };
  return {
    ...flatRoot,
    Resources: Object.fromEntries(
      Object.entries(resources).map(([id, resource]) => [id, withoutNestedDependencies(resolveOutputs(resource) as Resource)]),
    ),
    ...(flatRoot.Outputs ? { Outputs: resolveOutputs(flatRoot.Outputs) as TemplateJson['Outputs'] } : {}),
  };
}

/** A deep copy of `value` in which every object `replace` returns a value for is replaced by it. */
function substitute(value: unknown, replace: (node: Record<string, unknown>) => unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => substitute(item, replace));
  if (value === null || typeof value !== 'object') return value;
  const replaced = replace(value as Record<string, unknown>);
  if (replaced !== undefined) return replaced;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, replace)]));
}
