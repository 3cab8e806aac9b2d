import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { flattenTemplate, type TemplateJson } from '../infra/template-tree';

/**
 * `npm run sam:env`: writes the file that `sam local invoke` and `sam local start-api` take with
 * `--env-vars`, and the template they take with `-t`, so that the synthesized template's functions
 * talk to a real table, user pool and socket endpoint instead of the unresolved `Ref`s SAM would
 * give them. USAGE below is what `--help` prints; docs/sam.md has the steps in order.
 *
 * The file has SAM's two forms at once: `Parameters` (every function) and, when the synthesized
 * template is found, one entry per function logical ID with the variables that function declares
 * (a function's own entry wins over `Parameters`).
 *
 * SAM only overrides variables the template declares on a function: TABLE_NAME, USER_POOL_ID,
 * USER_POOL_CLIENT_ID, TOKEN_ISSUER (and SOCKET_URL, SOCKET_CALLBACK_URL where used) are declared,
 * but the SDK's endpoint variables, the dummy credentials the emulators need and the local pool's
 * keys (TOKEN_JWKS: aws-jwt-verify fetches a JWKS over https only, the emulator serves http) are
 * not (a deployed function must not have them). So for `local` the copy of the template written
 * beside it, `<stack>.sam-local.template.json`, declares them (empty) on every function.
 *
 * The functions live in nested stacks (infra/layout.ts) while the routes stay in the root with
 * their API, and `sam local start-api` only mounts a route whose integration and function are in
 * the route's own template (aws-sam-cli#3306, #4555). So the copy, written for a deployed stack
 * too, is the whole tree flattened into one template (infra/template-tree.ts): every function,
 * integration and route in one place, each under the logical id it has in its own template. Its
 * functions run on this machine's architecture unless told otherwise (deployed: arm64, which an
 * x86-64 host runs only through QEMU).
 */
export const USAGE = `usage: npm run sam:env -- local|<stack-name> [options]

Writes SAM's --env-vars file and a template for sam local (docs/sam.md has the steps in order).

  npm run sam:env -- local           the running local stack (npm start), from <DATA_DIR>/local-env.json
  npm run sam:env -- TaskBoard-dev   a deployed stack, from its outputs (AWS CLI, or --outputs <file>)

Writes cdk.out/sam-env.<local|stack>.json and, beside the synthesized template,
<stack>.sam-local.template.json: the nested stacks in one template (what sam local start-api
needs), its functions declaring the variables the env file sets and built for --arch.

Options:
  --out <file>         the env-vars file (default cdk.out/sam-env.<local|stack-name>.json)
  --template <file>    the synthesized template (default cdk.out/TaskBoard-dev.template.json for
                       local, cdk.out/<stack-name>.template.json otherwise); without one only the
                       Parameters form is written
  --log-level <level>  LOG_LEVEL of the functions under SAM (default DEBUG: a refused token's
                       reason is logged at DEBUG)
  --arch <arch>        arm64 or x86_64: the architecture the copy's functions run on under SAM
                       (default $SAM_ARCH, else this machine's: ${localArchitecture(process.arch)} here). Deployed
                       functions are arm64 whatever this says; arm64 on an x86-64 host needs QEMU
  -h, --help           this text
local only:
  --data-dir <dir>     the local stack's DATA_DIR (default $DATA_DIR or .data)
  --host <host>        how SAM's containers reach this machine (default: ${defaultHost(process.platform)} here).
                       Linux: 127.0.0.1, with --docker-network host on every sam local command.
                       macOS and Windows (Docker Desktop): host.docker.internal.
                       Or any address the containers reach, with HOST=0.0.0.0 npm start.
stack only:
  --outputs <file>     the stack's outputs as JSON instead of asking the AWS CLI: what
                       aws cloudformation describe-stacks --stack-name X --query Stacks[0].Outputs
                       prints, the whole describe-stacks answer, or cdk deploy --outputs-file's
  --region <region>    passed to the AWS CLI (default: its own configuration)
`;

/**
 * Where SAM's containers find this machine's 127.0.0.1. On Linux, Docker Engine has no
 * host.docker.internal by default and the emulators listen on loopback only, so the functions run
 * on the host's network (`--docker-network host`) and call 127.0.0.1; Docker Desktop (macOS,
 * Windows) maps host.docker.internal to the host's loopback.
 */
export function defaultHost(platform: NodeJS.Platform): string {
  return platform === 'linux' ? '127.0.0.1' : 'host.docker.internal';
}

export type Architecture = 'arm64' | 'x86_64';

/** Lambda's name for a Node.js `process.arch` (anything else runs as arm64, as deployed). */
export function localArchitecture(arch: string): Architecture {
  return arch === 'x64' ? 'x86_64' : 'arm64';
}

function architectureOf(value: string | undefined, source: string): Architecture | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'arm64' || value === 'x86_64') return value;
  throw new Error(`${source} must be arm64 or x86_64, not ${value}`);
}

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
  // Webhooks (infra/webhooks.ts): the deliveries queue and the secrets' key, where a row names them.
  'WEBHOOK_QUEUE_URL',
  'WEBHOOK_KEY_ID',
] as const;

/**
 * What only the local stack needs: the SDK's per-service endpoints and a region and credentials
 * (any will do for the emulators; dummy ones also make sure nothing reaches a real account).
 */
export const LOCAL_ONLY_VARIABLES = [
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER',
  // The webhook stand-ins (infra/local/sqs.ts, infra/local/kms.ts).
  'AWS_ENDPOINT_URL_SQS',
  'AWS_ENDPOINT_URL_KMS',
  // Hosts let through the webhook address check (the local stack's receivers); unset on AWS.
  'WEBHOOK_ALLOW_HOSTS',
  // Shorter retries, when the local stack was started with them.
  'WEBHOOK_RETRY_SCHEDULE',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  // The emulator's signing keys, which the verifier takes for an http:// issuer only (lib/auth/verifier.ts).
  'TOKEN_JWKS',
] as const;

/**
 * Set for SAM in either file and declared on every function of the copy: the log level (DEBUG
 * unless --log-level says otherwise), so that a refused token's reason is in SAM's output.
 */
export const SAM_VARIABLES = ['LOG_LEVEL'] as const;
const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'TRACE', 'FATAL'];

/** Addresses the function itself calls, which from inside SAM's container are on the host. */
const CALLED_BY_FUNCTIONS = [
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER',
  'AWS_ENDPOINT_URL_SQS',
  'AWS_ENDPOINT_URL_KMS',
  'WEBHOOK_QUEUE_URL',
  'SOCKET_CALLBACK_URL',
];

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
  // Without the keys every token route answers 401 under SAM (the JWKS is http).
  if (!values.TOKEN_JWKS) throw new Error('local-env.json has no TOKEN_JWKS: it is from an older local stack; restart npm start');
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
  if (outputs.WebhookQueueUrl) values.WEBHOOK_QUEUE_URL = outputs.WebhookQueueUrl;
  if (outputs.WebhookKeyArn) values.WEBHOOK_KEY_ID = outputs.WebhookKeyArn;
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

/**
 * A copy of the template whose service functions also declare `names` (empty), for SAM to fill
 * in, and run on `architecture` when one is given.
 */
export function withDeclared(template: Template, names: readonly string[], architecture?: Architecture): Template {
  const copy = structuredClone(template);
  for (const { logicalId } of functionsOf(template)) {
    const properties = copy.Resources![logicalId]!.Properties!;
    const variables = properties.Environment!.Variables!;
    for (const name of names) variables[name] ??= '';
    if (architecture) properties.Architectures = [architecture];
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
  /** The host the functions call (local). */
  host?: string;
  /** What the copy's functions run on. */
  architecture: Architecture;
}

export function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Written | 'help' {
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
      arch: { type: 'string' },
      'log-level': { type: 'string', default: 'DEBUG' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (options.help) return 'help';
  const target = positionals[0];
  if (!target || positionals.length > 1) throw new Error(`one target, local or a stack name\n\n${USAGE}`);
  const local = target === 'local';
  const architecture =
    architectureOf(options.arch, '--arch') ?? architectureOf(env.SAM_ARCH, 'SAM_ARCH') ?? localArchitecture(process.arch);
  const templatePath = options.template ?? join('cdk.out', `${local ? 'TaskBoard-dev' : target}.template.json`);
  const template = existsSync(templatePath)
    ? flattenedTemplate(readJson(templatePath, 'the template') as Template, templatePath)
    : undefined;
  const functions = template ? functionsOf(template) : [];

  let values: Values;
  const host = local ? (options.host ?? defaultHost(process.platform)) : undefined;
  if (local) {
    const dataDir = options['data-dir'] ?? env.DATA_DIR ?? '.data';
    const file = join(dataDir, 'local-env.json');
    if (!existsSync(file)) throw new Error(`no ${file}: start the local stack first (npm start) with the same DATA_DIR`);
    values = localValues(readJson(file, 'the local stack environment') as Record<string, unknown>, host!);
  } else {
    const outputs = options.outputs ? readJson(options.outputs, 'the stack outputs') : describeStack(target, options.region);
    values = stackValues(outputsOf(outputs, target));
  }

  const logLevel = options['log-level']!.toUpperCase();
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not ${logLevel}`);
  values.LOG_LEVEL = logLevel;
  const extra = local ? [...LOCAL_ONLY_VARIABLES, ...SAM_VARIABLES] : [...SAM_VARIABLES];

  const envFile = options.out ?? join('cdk.out', `sam-env.${local ? 'local' : target}.json`);
  mkdirSync(dirname(envFile), { recursive: true });
  writeFileSync(envFile, `${JSON.stringify(envVarsFile(values, functions, extra), null, 2)}\n`);
  const written: Written = {
    local,
    envFile,
    functions: functions.length,
    architecture,
    ...(host ? { host } : {}),
    ...(template ? { template: templatePath } : {}),
  };
  if (template) {
    written.samTemplate = samLocalTemplatePath(templatePath);
    const copy = withDeclared(template, extra, architecture);
    writeFileSync(written.samTemplate, `${JSON.stringify(copy, null, 1)}\n`);
  }
  return written;
}

/** What to run next, for the person at the terminal. */
export function nextSteps(written: Written, platform: NodeJS.Platform = process.platform): string[] {
  const lines = [
    `sam:env: wrote ${written.envFile} (Parameters${written.functions ? ` and ${written.functions} functions by logical ID` : ''})`,
  ];
  if (written.samTemplate) {
    lines.push(
      `sam:env: wrote ${written.samTemplate} (the nested stacks in one template, functions on ${written.architecture}${written.local ? ', declaring the SDK endpoints, credentials and TOKEN_JWKS' : ''})`,
    );
  }
  const template = written.samTemplate ?? written.template;
  if (!template) {
    lines.push(
      `sam:env: no synthesized template was found, so only the Parameters form was written${written.local ? ', and SAM will ignore the endpoint variables a template copy would declare' : ''}: ` +
        'run `npm run synth` (add `-- -c stage=prod` for a prod stack) or pass --template <file>, then run this again',
    );
    return lines;
  }
  const network = written.local && (written.host === '127.0.0.1' || written.host === 'localhost') ? ' --docker-network host' : '';
  lines.push(`sam:env: sam local start-api -t ${template} --env-vars ${written.envFile}${network}`);
  lines.push(
    `sam:env: sam local invoke -t ${template} --env-vars ${written.envFile}${network} -e events/health.json <logical id>`,
  );
  if (written.architecture === 'arm64' && localArchitecture(process.arch) === 'x86_64') {
    lines.push('sam:env: arm64 functions on this x86-64 host run through QEMU (binfmt); --arch x86_64 runs them natively');
  }
  if (network && platform !== 'linux') {
    lines.push(
      'sam:env: --docker-network host reaches 127.0.0.1 on Linux only; with Docker Desktop use --host host.docker.internal',
    );
  }
  return lines;
}

if (process.argv[1]?.endsWith('sam-env.ts')) {
  try {
    const written = main(process.argv.slice(2));
    if (written === 'help') process.stdout.write(USAGE);
    else for (const line of nextSteps(written)) console.log(line);
  } catch (error) {
    console.error(`sam:env: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
