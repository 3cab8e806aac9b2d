import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { flattenTemplate, type TemplateJson } from '../infra/template-tree';

/**
 * `npm run sam:env -- local|<stack-name> [options]`: writes the file that `sam local invoke` and
 * `sam local start-api` take with `--env-vars`, so that the synthesized template's functions talk
 * to a real table, user pool and socket endpoint instead of the unresolved `Ref`s SAM would give
 * them.
 *
 *   npm run sam:env -- local                  # the running local stack (npm start), from <DATA_DIR>/local-env.json
 *   npm run sam:env -- TaskBoard-dev          # a deployed stack, from its outputs (AWS CLI, or --outputs <file>)
 *
 * The file has SAM's two forms at once: `Parameters` (every function) and, when the synthesized
 * template is found, one entry per function logical ID with the variables that function declares
 * (a function's own entry wins over `Parameters`).
 *
 * SAM only overrides variables the template declares on a function: TABLE_NAME, USER_POOL_ID,
 * USER_POOL_CLIENT_ID, TOKEN_ISSUER (and SOCKET_URL, SOCKET_CALLBACK_URL where used) are declared,
 * but the SDK's endpoint variables and the dummy credentials the emulators need are not (a
 * deployed function must not have them). So for `local` the script also writes a copy of the
 * template beside it, `<stack>.sam-local.template.json`, that declares them (empty) on every
 * function; run SAM with that template. It lives in the same folder as the original so that the
 * functions' asset paths still resolve.
 *
 * The functions live in nested stacks (infra/layout.ts) while the routes stay in the root with
 * their API, and `sam local start-api` only mounts a route whose integration and function are in
 * the route's own template (aws-sam-cli#3306, #4555). So the copy, written for a deployed stack
 * too, is the whole tree flattened into one template (infra/template-tree.ts): every function,
 * integration and route in one place, each under the logical id it has in its own template. The
 * plain template still serves `sam local invoke`, which follows nested stacks by itself.
 *
 * Options:
 *   --out <file>         where to write the env-vars file (default cdk.out/sam-env.<local|stack>.json)
 *   --template <file>    the synthesized template (default cdk.out/TaskBoard-dev.template.json for
 *                        local, cdk.out/<stack-name>.template.json otherwise); without it only
 *                        the `Parameters` form is written
 * local only:
 *   --data-dir <dir>     the local stack's DATA_DIR (default $DATA_DIR or .data)
 *   --host <host>        how SAM's containers reach this machine (default host.docker.internal).
 *                        Docker Desktop maps that name to the host; on Linux either pass
 *                        `--add-host host.docker.internal:host-gateway` to sam and start the
 *                        local stack with HOST=0.0.0.0 (the emulators listen on 127.0.0.1 only),
 *                        or — simpler — use `--host 127.0.0.1` with `sam … --docker-network host`.
 * stack only:
 *   --outputs <file>     the stack's outputs as JSON instead of asking the AWS CLI: what
 *                        `aws cloudformation describe-stacks --stack-name X --query Stacks[0].Outputs`
 *                        prints, the whole describe-stacks answer, or `cdk deploy --outputs-file`'s
 *   --region <region>    passed to the AWS CLI (default: its own configuration)
 */

export type Values = Record<string, string>;
/** SAM's --env-vars file: `Parameters` for every function, and per-function entries by logical ID. */
export type SamEnvFile = Record<string, Values>;

/** Variables the deployed functions read (lib/runtime/config.ts), which SAM can override. */
export const APP_VARIABLES = [
  'TABLE_NAME',
  'USER_POOL_ID',
  'USER_POOL_CLIENT_ID',
  'TOKEN_ISSUER',
  'SOCKET_URL',
  'SOCKET_CALLBACK_URL',
] as const;

/**
 * What only the local stack needs: the SDK's per-service endpoints and a region and credentials
 * (any will do for the emulators; dummy ones also make sure nothing reaches a real account).
 */
export const LOCAL_ONLY_VARIABLES = [
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
] as const;

/** Addresses the function itself calls, which from inside SAM's container are on the host. */
const CALLED_BY_FUNCTIONS = ['AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER', 'SOCKET_CALLBACK_URL'];

/** `http://127.0.0.1:8000` → `http://<host>:8000`; other hosts are left alone. */
export function onHost(url: string, host: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)(127\.0\.0\.1|localhost|\[::1\])(?=[:/]|$)/i, `$1${host}`);
}

/**
 * The values for the local stack, from the `local-env.json` it writes into its data directory
 * (infra/local/stack.ts). Only the addresses the functions call move to `host`: `SOCKET_URL` is
 * what clients (outside the container) are told to connect to, and `TOKEN_ISSUER` is the tokens'
 * `iss` claim, not an address anything fetches.
 */
export function localValues(localEnv: Record<string, unknown>, host: string): Values {
  const values: Values = {};
  for (const name of [...LOCAL_ONLY_VARIABLES, ...APP_VARIABLES]) {
    const value = localEnv[name];
    if (typeof value === 'string' && value !== '') values[name] = value;
  }
  values.AWS_REGION ??= 'us-east-1';
  values.AWS_ACCESS_KEY_ID ??= 'local';
  values.AWS_SECRET_ACCESS_KEY ??= 'local';
  for (const name of CALLED_BY_FUNCTIONS) if (values[name]) values[name] = onHost(values[name], host);
  const missing = ['AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER', 'TABLE_NAME', 'USER_POOL_ID']
    .concat(['USER_POOL_CLIENT_ID', 'TOKEN_ISSUER'])
    .filter((name) => !values[name]);
  if (missing.length) throw new Error(`local-env.json has no ${missing.join(', ')}: is it the local stack's?`);
  return values;
}

/** A stack's outputs in any of the three shapes the AWS CLI and the CDK CLI print them. */
export function outputsOf(json: unknown, stackName: string): Values {
  const fromList = (list: unknown): Values | undefined =>
    Array.isArray(list) && list.every((o) => o && typeof o === 'object' && 'OutputKey' in o && 'OutputValue' in o)
      ? Object.fromEntries(list.map((o: { OutputKey: string; OutputValue: string }) => [o.OutputKey, String(o.OutputValue)]))
      : undefined;
  const list = fromList(json); // aws cloudformation describe-stacks --query Stacks[0].Outputs
  if (list) return list;
  const stacks = (json as { Stacks?: { StackName?: string; Outputs?: unknown }[] } | undefined)?.Stacks;
  if (Array.isArray(stacks)) {
    // the whole describe-stacks answer
    const stack = stacks.find((s) => s.StackName === stackName) ?? (stacks.length === 1 ? stacks[0] : undefined);
    const outputs = fromList(stack?.Outputs);
    if (outputs) return outputs;
  }
  const cdkOutputs = (json as Record<string, unknown> | undefined)?.[stackName]; // cdk deploy --outputs-file
  if (cdkOutputs && typeof cdkOutputs === 'object')
    return Object.fromEntries(Object.entries(cdkOutputs).map(([k, v]) => [k, String(v)]));
  throw new Error(
    `no outputs of ${stackName} in that JSON: expected [{"OutputKey","OutputValue"}…], {"Stacks":[…]} or {"${stackName}":{…}}`,
  );
}

/**
 * The values for a deployed stack, from its outputs. The issuer is the pool's provider URL, as
 * CDK sets it; the region is the user pool id's prefix. The functions then run with the caller's
 * own AWS credentials and region (SAM passes the shell's profile), not with the function's role.
 */
export function stackValues(outputs: Values): Values {
  const missing = ['UserPoolId', 'UserPoolClientId', 'TableName'].filter((key) => !outputs[key]);
  if (missing.length) throw new Error(`the stack's outputs have no ${missing.join(', ')}`);
  const poolId = outputs.UserPoolId!;
  const region = /^([a-z]{2}(?:-[a-z]+)+-\d+)_/.exec(poolId)?.[1];
  if (!region) throw new Error(`UserPoolId ${poolId} is not <region>_<id>`);
  const values: Values = {
    TABLE_NAME: outputs.TableName!,
    USER_POOL_ID: poolId,
    USER_POOL_CLIENT_ID: outputs.UserPoolClientId!,
    TOKEN_ISSUER: `https://cognito-idp.${region}.amazonaws.com/${poolId}`,
  };
  if (outputs.WebSocketUrl) {
    // The WebSocket stage's URL is wss://<api>.execute-api.<region>.amazonaws.com/<stage>; its
    // connections endpoint (SOCKET_CALLBACK_URL, as CDK's callbackUrl) is the same over https.
    values.SOCKET_URL = outputs.WebSocketUrl;
    values.SOCKET_CALLBACK_URL = outputs.WebSocketUrl.replace(/^wss:\/\//, 'https://').replace(/\/+$/, '');
  }
  return values;
}

export interface Template {
  Resources?: Record<
    string,
    {
      Type?: string;
      Properties?: { Environment?: { Variables?: Record<string, unknown> }; [property: string]: unknown };
      Metadata?: Record<string, unknown>;
    }
  >;
}

/**
 * A synthesized template with its nested stacks inlined: each nested template is read from the
 * file its `aws:asset:path` names, beside the root template (as CDK writes them into cdk.out, and
 * as SAM finds them).
 */
export function flattenedTemplate(template: Template, templatePath: string): Template {
  return flattenTemplate(template as TemplateJson, (logicalId, resource) => {
    const file = resource.Metadata?.['aws:asset:path'];
    if (typeof file !== 'string') throw new Error(`nested stack ${logicalId} has no aws:asset:path: synthesize with the CDK CLI`);
    return readJson(join(dirname(templatePath), file), `the nested template of ${logicalId}`) as TemplateJson;
  }) as Template;
}

/**
 * The service's functions in a synthesized template, each with the variables it declares: every
 * AWS::Lambda::Function that declares TOKEN_ISSUER (CDK's own helper functions declare none).
 */
export function functionsOf(template: Template): { logicalId: string; declared: string[] }[] {
  return Object.entries(template.Resources ?? {})
    .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
    .map(([logicalId, resource]) => ({ logicalId, declared: Object.keys(resource.Properties?.Environment?.Variables ?? {}) }))
    .filter(({ declared }) => declared.includes('TOKEN_ISSUER'))
    .sort((a, b) => a.logicalId.localeCompare(b.logicalId));
}

/** The env-vars file: `Parameters` with every value, plus each function's declared ones by logical ID. */
export function envVarsFile(
  values: Values,
  functions: { logicalId: string; declared: string[] }[],
  extra: string[] = [],
): SamEnvFile {
  const file: SamEnvFile = { Parameters: values };
  for (const { logicalId, declared } of functions) {
    const own = Object.entries(values).filter(([name]) => declared.includes(name) || extra.includes(name));
    file[logicalId] = Object.fromEntries(own);
  }
  return file;
}

/** A copy of the template whose service functions also declare `names` (empty), for SAM to fill in. */
export function withDeclared(template: Template, names: readonly string[]): Template {
  const copy = structuredClone(template);
  for (const { logicalId } of functionsOf(template)) {
    const properties = copy.Resources![logicalId]!.Properties!;
    const variables = properties.Environment!.Variables!;
    for (const name of names) variables[name] ??= '';
  }
  return copy;
}

/** `cdk.out/TaskBoard-dev.template.json` → `cdk.out/TaskBoard-dev.sam-local.template.json`. */
export const samLocalTemplatePath = (templatePath: string) =>
  join(dirname(templatePath), `${basename(templatePath).replace(/\.template\.json$|\.json$/, '')}.sam-local.template.json`);

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read ${what} ${path}: ${(error as Error).message}`);
  }
}

function describeStack(stackName: string, region?: string): unknown {
  const args = [
    'cloudformation',
    'describe-stacks',
    '--stack-name',
    stackName,
    '--query',
    'Stacks[0].Outputs',
    '--output',
    'json',
  ];
  if (region) args.push('--region', region);
  const result = spawnSync('aws', args, { encoding: 'utf8', env: process.env });
  if (result.error) {
    throw new Error(
      `the AWS CLI could not be run (${result.error.message}): install it, or pass --outputs <file> with what ` +
        `\`aws cloudformation describe-stacks --stack-name ${stackName} --query Stacks[0].Outputs\` prints`,
    );
  }
  if (result.status !== 0) throw new Error(`aws cloudformation describe-stacks failed: ${result.stderr.trim()}`);
  return JSON.parse(result.stdout);
}

export interface Written {
  local: boolean;
  envFile: string;
  template?: string;
  samTemplate?: string;
  functions: number;
}

export function main(argv: string[]): Written {
  const { values: options, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      template: { type: 'string' },
      'data-dir': { type: 'string' },
      host: { type: 'string' },
      outputs: { type: 'string' },
      region: { type: 'string' },
    },
  });
  const target = positionals[0];
  if (!target || positionals.length > 1) throw new Error('usage: npm run sam:env -- local|<stack-name> [--out <file>] [options]');
  const local = target === 'local';
  const templatePath = options.template ?? join('cdk.out', `${local ? 'TaskBoard-dev' : target}.template.json`);
  const template = existsSync(templatePath)
    ? flattenedTemplate(readJson(templatePath, 'the template') as Template, templatePath)
    : undefined;
  const functions = template ? functionsOf(template) : [];

  let values: Values;
  if (local) {
    const dataDir = options['data-dir'] ?? process.env.DATA_DIR ?? '.data';
    const file = join(dataDir, 'local-env.json');
    if (!existsSync(file)) throw new Error(`no ${file}: start the local stack first (npm start) with the same DATA_DIR`);
    values = localValues(
      readJson(file, 'the local stack environment') as Record<string, unknown>,
      options.host ?? 'host.docker.internal',
    );
  } else {
    const outputs = options.outputs ? readJson(options.outputs, 'the stack outputs') : describeStack(target, options.region);
    values = stackValues(outputsOf(outputs, target));
  }

  const envFile = options.out ?? join('cdk.out', `sam-env.${local ? 'local' : target}.json`);
  mkdirSync(dirname(envFile), { recursive: true });
  writeFileSync(envFile, `${JSON.stringify(envVarsFile(values, functions, local ? [...LOCAL_ONLY_VARIABLES] : []), null, 2)}\n`);
  const written: Written = { local, envFile, functions: functions.length, template: template ? templatePath : undefined };
  if (template) {
    written.samTemplate = samLocalTemplatePath(templatePath);
    const copy = local ? withDeclared(template, LOCAL_ONLY_VARIABLES) : template;
    writeFileSync(written.samTemplate, `${JSON.stringify(copy, null, 1)}\n`);
  }
  return written;
}

if (process.argv[1]?.endsWith('sam-env.ts')) {
  try {
    const written = main(process.argv.slice(2));
    console.log(
      `sam:env: wrote ${written.envFile} (Parameters${written.functions ? ` and ${written.functions} functions by logical ID` : ''})`,
    );
    if (written.samTemplate) {
      console.log(
        `sam:env: wrote ${written.samTemplate} (the nested stacks in one template${written.local ? ', declaring the SDK endpoints and credentials' : ''})`,
      );
    }
    const template = written.samTemplate ?? written.template;
    if (template) {
      console.log(
        `sam:env: sam local start-api -t ${template} --env-vars ${written.envFile}${written.local ? '   (on Linux see --host)' : ''}`,
      );
    } else {
      console.log(
        `sam:env: no synthesized template was found, so only the Parameters form was written${written.local ? ', and SAM will ignore the endpoint variables a template copy would declare' : ''}: ` +
          'run `npm run synth` (add `-- -c stage=prod` for a prod stack) or pass --template <file>, then run this again',
      );
    }
  } catch (error) {
    console.error(`sam:env: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
