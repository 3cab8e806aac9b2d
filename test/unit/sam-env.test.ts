import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  APP_VARIABLES,
  defaultHost,
  envVarsFile,
  functionsOf,
  LOCAL_ONLY_VARIABLES,
  localArchitecture,
  localValues,
  main,
  nextSteps,
  onHost,
  outputsOf,
  SAM_VARIABLES,
  type SamEnvFile,
  samLocalTemplatePath,
  stackValues,
  USAGE,
  type Written,
} from '../../scripts/sam-env';

/**
 * `npm run sam:env`: the --env-vars files SAM gets, by shape, from fixtures: a local stack's
 * local-env.json, a deployed stack's outputs (in each shape the AWS and CDK CLIs print them) and a
 * small synthesized-looking template. test/integration/sam-env.test.ts runs a handler with the
 * file made from the real local stack.
 */
const dir = mkdtempSync(join(tmpdir(), 'task-board-sam-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What infra/local/stack.ts writes into the data directory. */
const localEnv = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:41001',
  AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: 'http://127.0.0.1:41002',
  TABLE_NAME: 'task-board-local',
  USER_POOL_ID: 'local_abc123',
  USER_POOL_CLIENT_ID: 'client123',
  TOKEN_ISSUER: 'http://cognito-local.localhost/local_abc123',
  SOCKET_URL: 'ws://127.0.0.1:3001/live',
  SOCKET_CALLBACK_URL: 'http://127.0.0.1:3001/live',
  TOKEN_JWKS: '{"keys":[{"kty":"RSA","kid":"CognitoLocal","alg":"RS256","use":"sig","n":"n","e":"AQAB"}]}',
  AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:41004',
  AWS_ENDPOINT_URL_KMS: 'http://127.0.0.1:41005',
  WEBHOOK_QUEUE_URL: 'http://127.0.0.1:41004/000000000000/task-board-local-webhook-deliveries',
  WEBHOOK_KEY_ID: 'arn:aws:kms:us-east-1:000000000000:key/local',
  WEBHOOK_ALLOW_HOSTS: '127.0.0.1,localhost',
  WEBHOOK_RETRY_SCHEDULE: '1,1',
};
/** This machine's architecture, as Lambda names it: what the copy's functions run on unless told. */
const here = localArchitecture(process.arch);
/** main's answer when it wrote files. */
const run = (argv: string[], env: NodeJS.ProcessEnv = {}) => main(argv, env) as Written;

/** The parts of a synthesized template that matter: functions with their declared variables. */
const issuer = { 'Fn::GetAtt': ['Users0A0EEA89', 'ProviderURL'] };
const fn = (variables: Record<string, unknown>, asset: string) => ({
  Type: 'AWS::Lambda::Function',
  Properties: { Handler: 'index.handler', Environment: { Variables: { TOKEN_ISSUER: issuer, ...variables } } },
  Metadata: { 'aws:asset:path': asset, 'aws:asset:property': 'Code' },
});
const template = {
  Resources: {
    HealthFunction64F2C32C: fn(
      { USER_POOL_ID: { Ref: 'Users0A0EEA89' }, USER_POOL_CLIENT_ID: { Ref: 'UsersApiClient' } },
      'asset.1',
    ),
    BoardsListFunctionA9D47887: fn(
      { USER_POOL_ID: { Ref: 'Users0A0EEA89' }, USER_POOL_CLIENT_ID: { Ref: 'UsersApiClient' }, TABLE_NAME: { Ref: 'Table' } },
      'asset.2',
    ),
    RealtimeTicketsFunctionD867FF84: fn(
      {
        USER_POOL_ID: { Ref: 'Users0A0EEA89' },
        USER_POOL_CLIENT_ID: { Ref: 'UsersApiClient' },
        TABLE_NAME: { Ref: 'Table' },
        SOCKET_URL: 'wss://…',
      },
      'asset.3',
    ),
    // CDK's own helper functions (custom resources) are not the service's: no TOKEN_ISSUER.
    LogRetentionHelper: { Type: 'AWS::Lambda::Function', Properties: { Handler: 'index.handler' } },
    Table: { Type: 'AWS::DynamoDB::Table', Properties: {} },
  },
};
const serviceFunctions = ['BoardsListFunctionA9D47887', 'HealthFunction64F2C32C', 'RealtimeTicketsFunctionD867FF84'];

const outputsList = [
  {
    OutputKey: 'ApiUrl',
    OutputValue: 'https://abc123.execute-api.eu-west-1.amazonaws.com',
    Description: 'Base URL of the REST API',
  },
  { OutputKey: 'WebSocketUrl', OutputValue: 'wss://sock456.execute-api.eu-west-1.amazonaws.com/live' },
  { OutputKey: 'AlarmTopicArn', OutputValue: 'arn:aws:sns:eu-west-1:123456789012:TaskBoard-prod-Alarms' },
  { OutputKey: 'UserPoolId', OutputValue: 'eu-west-1_AbCdEf123' },
  { OutputKey: 'UserPoolClientId', OutputValue: '1example23456789' },
  { OutputKey: 'TableName', OutputValue: 'TaskBoard-prod-TableCD117FA1-ABC' },
];
const deployedValues = {
  TABLE_NAME: 'TaskBoard-prod-TableCD117FA1-ABC',
  USER_POOL_ID: 'eu-west-1_AbCdEf123',
  USER_POOL_CLIENT_ID: '1example23456789',
  TOKEN_ISSUER: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123',
  SOCKET_URL: 'wss://sock456.execute-api.eu-west-1.amazonaws.com/live',
  SOCKET_CALLBACK_URL: 'https://sock456.execute-api.eu-west-1.amazonaws.com/live',
};

function write(name: string, value: unknown): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, JSON.stringify(value));
  return path;
}
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

describe('sam:env local', () => {
  const dataDir = join(dir, 'data');
  write('data/local-env.json', localEnv);
  const templatePath = write('cdk.out/TaskBoard-dev.template.json', template);

  it('moves only the addresses the functions call to the Docker host; clients keep theirs, the issuer is a claim', () => {
    expect(localValues(localEnv, 'host.docker.internal')).toEqual({
      ...localEnv,
      AWS_ENDPOINT_URL_DYNAMODB: 'http://host.docker.internal:41001',
      AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: 'http://host.docker.internal:41002',
      AWS_ENDPOINT_URL_SQS: 'http://host.docker.internal:41004',
      AWS_ENDPOINT_URL_KMS: 'http://host.docker.internal:41005',
      WEBHOOK_QUEUE_URL: 'http://host.docker.internal:41004/000000000000/task-board-local-webhook-deliveries',
      SOCKET_CALLBACK_URL: 'http://host.docker.internal:3001/live',
      // unchanged: the address clients are told to connect to, and the tokens' iss claim
      SOCKET_URL: 'ws://127.0.0.1:3001/live',
      TOKEN_ISSUER: 'http://cognito-local.localhost/local_abc123',
    });
    expect(localValues(localEnv, '127.0.0.1')).toEqual(localEnv);
    expect(onHost('http://localhost:8000', 'h')).toBe('http://h:8000');
    expect(onHost('https://dynamodb.us-east-1.amazonaws.com', 'h')).toBe('https://dynamodb.us-east-1.amazonaws.com');
  });

  it('asks for a restart when local-env.json is from a stack that did not hand the keys over (TOKEN_JWKS)', () => {
    const { TOKEN_JWKS: _keys, ...older } = localEnv;
    expect(() => localValues(older, 'h')).toThrow(
      'local-env.json has no TOKEN_JWKS: it is from an older local stack; restart npm start',
    );
  });

  it('runs the copy’s functions on --arch, else $SAM_ARCH, else this machine’s; the deployed template keeps arm64', () => {
    const out = join(dir, 'out', 'env.arch.json');
    const copyOf = (written: Written) => readJson(written.samTemplate!);
    const architectures = (written: Written) =>
      serviceFunctions.map((id) => copyOf(written).Resources[id].Properties.Architectures[0] as string);
    const base = ['local', '--data-dir', dataDir, '--template', templatePath, '--out', out, '--host', '127.0.0.1'];
    expect(architectures(run([...base, '--arch', 'x86_64']))).toEqual(['x86_64', 'x86_64', 'x86_64']);
    expect(architectures(run(base, { SAM_ARCH: 'arm64' }))).toEqual(['arm64', 'arm64', 'arm64']);
    expect(architectures(run([...base, '--arch', 'arm64'], { SAM_ARCH: 'x86_64' }))).toEqual(['arm64', 'arm64', 'arm64']);
    expect(() => run([...base, '--arch', 'amd64'])).toThrow('--arch must be arm64 or x86_64, not amd64');
    expect(() => run(base, { SAM_ARCH: 'x64' })).toThrow('SAM_ARCH must be arm64 or x86_64, not x64');
    expect(localArchitecture('x64')).toBe('x86_64');
    expect(localArchitecture('arm64')).toBe('arm64');
    expect(readJson(templatePath)).toEqual(template);
  });

  it('defaults the host to what works on each platform, and says which sam options go with it', () => {
    expect(defaultHost('linux')).toBe('127.0.0.1');
    expect(defaultHost('darwin')).toBe('host.docker.internal');
    expect(defaultHost('win32')).toBe('host.docker.internal');
    const written: Written = {
      local: true,
      envFile: 'cdk.out/sam-env.local.json',
      template: 'cdk.out/TaskBoard-dev.template.json',
      samTemplate: 'cdk.out/TaskBoard-dev.sam-local.template.json',
      functions: 43,
      host: '127.0.0.1',
      architecture: 'x86_64',
    };
    expect(nextSteps(written, 'linux')).toContain(
      'sam:env: sam local start-api -t cdk.out/TaskBoard-dev.sam-local.template.json --env-vars cdk.out/sam-env.local.json --docker-network host',
    );
    expect(nextSteps({ ...written, host: 'host.docker.internal' }, 'darwin')).toContain(
      'sam:env: sam local start-api -t cdk.out/TaskBoard-dev.sam-local.template.json --env-vars cdk.out/sam-env.local.json',
    );
    expect(nextSteps(written, 'darwin').join('\n')).toContain('with Docker Desktop use --host host.docker.internal');
  });

  it('answers --help with the usage, and a missing target with the usage as the error', () => {
    expect(main(['--help'])).toBe('help');
    expect(main(['-h'])).toBe('help');
    expect(USAGE).toMatch(/^usage: npm run sam:env -- local\|<stack-name> \[options\]/);
    for (const option of ['--out', '--template', '--arch', '--data-dir', '--host', '--outputs', '--region', '--help']) {
      expect(USAGE).toContain(option);
    }
    expect(() => main([])).toThrow(/one target, local or a stack name\n\nusage:/);
    expect(USAGE).toContain('--log-level');
  });

  it('sets the functions’ LOG_LEVEL under SAM: DEBUG unless --log-level says otherwise', () => {
    const out = join(dir, 'out', 'env.level.json');
    run(['local', '--data-dir', dataDir, '--template', join(dir, 'nowhere.json'), '--out', out, '--log-level', 'warn']);
    expect(readJson(out).Parameters.LOG_LEVEL).toBe('WARN');
    expect(() => run(['local', '--data-dir', dataDir, '--out', out, '--log-level', 'loud'])).toThrow(
      '--log-level must be one of DEBUG, INFO, WARN, ERROR, SILENT, TRACE, FATAL, not LOUD',
    );
  });

  it('supplies a region and dummy credentials when the file has none, and refuses a file that is not the local stack’s', () => {
    const { AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...rest } = localEnv;
    expect(localValues(rest, 'h')).toMatchObject({
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    expect(() => localValues({ TABLE_NAME: 't' }, 'h')).toThrow(/no AWS_ENDPOINT_URL_DYNAMODB, .*USER_POOL_ID/);
  });

  it('writes Parameters and one entry per service function, and a template copy that declares the local-only variables', () => {
    const out = join(dir, 'out', 'env.local.json');
    const written = run([
      'local',
      '--data-dir',
      dataDir,
      '--template',
      templatePath,
      '--out',
      out,
      '--host',
      'host.docker.internal',
    ]);
    expect(written).toEqual({
      local: true,
      envFile: out,
      template: templatePath,
      samTemplate: join(dir, 'cdk.out', 'TaskBoard-dev.sam-local.template.json'),
      functions: 3,
      host: 'host.docker.internal',
      architecture: here,
    });
    const file = readJson(out) as SamEnvFile;
    expect(Object.keys(file).sort()).toEqual(['Parameters', ...serviceFunctions].sort());
    expect(file.Parameters).toEqual({ ...localValues(localEnv, 'host.docker.internal'), LOG_LEVEL: 'DEBUG' });
    // Each function gets what it declares plus the local-only variables and the log level, nothing else.
    expect(Object.keys(file.HealthFunction64F2C32C!).sort()).toEqual(
      [...LOCAL_ONLY_VARIABLES, ...SAM_VARIABLES, 'TOKEN_ISSUER', 'USER_POOL_ID', 'USER_POOL_CLIENT_ID'].sort(),
    );
    expect(file.BoardsListFunctionA9D47887).toMatchObject({
      TABLE_NAME: 'task-board-local',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://host.docker.internal:41001',
    });
    expect(file.BoardsListFunctionA9D47887).not.toHaveProperty('SOCKET_URL');
    expect(file.RealtimeTicketsFunctionD867FF84).toMatchObject({ SOCKET_URL: 'ws://127.0.0.1:3001/live' });
    for (const id of serviceFunctions) {
      for (const [name, value] of Object.entries(file[id]!)) expect(file.Parameters![name]).toBe(value);
    }

    // The copy: the same template, its service functions declaring the local-only variables
    // empty (so that SAM lets the env-vars file set them) and running on this machine's
    // architecture, beside the original (asset paths).
    const copy = readJson(written.samTemplate!);
    for (const id of serviceFunctions) {
      const variables = copy.Resources[id].Properties.Environment.Variables;
      for (const name of [...LOCAL_ONLY_VARIABLES, ...SAM_VARIABLES]) expect(variables[name]).toBe('');
      for (const name of [...LOCAL_ONLY_VARIABLES, ...SAM_VARIABLES]) delete variables[name];
      expect(copy.Resources[id].Properties.Architectures).toEqual([here]);
      delete copy.Resources[id].Properties.Architectures;
    }
    expect(copy.Resources.LogRetentionHelper.Properties.Architectures).toBeUndefined();
    expect(copy).toEqual(template);
    expect(readJson(templatePath)).toEqual(template);
  });

  it('writes only the Parameters form without a template', () => {
    const out = join(dir, 'out', 'env.no-template.json');
    const written = run([
      'local',
      '--data-dir',
      dataDir,
      '--template',
      join(dir, 'nowhere.json'),
      '--out',
      out,
      '--host',
      '10.0.2.2',
    ]);
    expect(written).toEqual({ local: true, envFile: out, functions: 0, host: '10.0.2.2', architecture: here });
    const file = readJson(out);
    expect(Object.keys(file)).toEqual(['Parameters']);
    expect(file.Parameters.AWS_ENDPOINT_URL_DYNAMODB).toBe('http://10.0.2.2:41001');
  });

  it('says to start the local stack when its data directory has no local-env.json', () => {
    expect(() => run(['local', '--data-dir', join(dir, 'empty')])).toThrow(/local-env\.json: start the local stack first/);
  });
});

describe('sam:env <stack-name>', () => {
  const templatePath = write('cdk.out/TaskBoard-prod.template.json', template);

  it.each([
    ['aws cloudformation describe-stacks --query Stacks[0].Outputs', outputsList],
    ['the whole describe-stacks answer', { Stacks: [{ StackName: 'TaskBoard-prod', Outputs: outputsList }] }],
    [
      'cdk deploy --outputs-file',
      { 'TaskBoard-prod': Object.fromEntries(outputsList.map(({ OutputKey, OutputValue }) => [OutputKey, OutputValue])) },
    ],
  ])('reads the outputs as %s', (_shape, json) => {
    expect(stackValues(outputsOf(json, 'TaskBoard-prod'))).toEqual(deployedValues);
  });

  it('writes the deployed values per declared variable, with no endpoints or credentials (SAM passes your own)', () => {
    const out = join(dir, 'out', 'env.prod.json');
    const written = run([
      'TaskBoard-prod',
      '--outputs',
      write('outputs.json', outputsList),
      '--template',
      templatePath,
      '--out',
      out,
    ]);
    const copyPath = join(dir, 'cdk.out', 'TaskBoard-prod.sam-local.template.json');
    expect(written).toEqual({
      local: false,
      envFile: out,
      template: templatePath,
      samTemplate: copyPath,
      functions: 3,
      architecture: here,
    });
    const file = readJson(out) as SamEnvFile;
    expect(file.Parameters).toEqual({ ...deployedValues, LOG_LEVEL: 'DEBUG' });
    expect(file.HealthFunction64F2C32C).toEqual({
      TOKEN_ISSUER: deployedValues.TOKEN_ISSUER,
      USER_POOL_ID: deployedValues.USER_POOL_ID,
      USER_POOL_CLIENT_ID: deployedValues.USER_POOL_CLIENT_ID,
      LOG_LEVEL: 'DEBUG',
    });
    expect(file.RealtimeTicketsFunctionD867FF84).toEqual({
      TOKEN_ISSUER: deployedValues.TOKEN_ISSUER,
      USER_POOL_ID: deployedValues.USER_POOL_ID,
      USER_POOL_CLIENT_ID: deployedValues.USER_POOL_CLIENT_ID,
      TABLE_NAME: deployedValues.TABLE_NAME,
      SOCKET_URL: deployedValues.SOCKET_URL,
      LOG_LEVEL: 'DEBUG',
    });
    expect(JSON.stringify(file)).not.toMatch(/AWS_|TOKEN_JWKS|127\.0\.0\.1|host\.docker/);
    expect(Object.keys(file.Parameters!).every((name) => [...APP_VARIABLES, ...SAM_VARIABLES].includes(name as never))).toBe(
      true,
    );
    // The copy for `sam local start-api`: the template as it is (it has no nested stacks), no
    // local-only variables declared (the log level only), the functions on this machine's architecture.
    const copy = readJson(copyPath);
    for (const id of serviceFunctions) {
      expect(copy.Resources[id].Properties.Architectures).toEqual([here]);
      delete copy.Resources[id].Properties.Architectures;
      expect(copy.Resources[id].Properties.Environment.Variables.LOG_LEVEL).toBe('');
      delete copy.Resources[id].Properties.Environment.Variables.LOG_LEVEL;
    }
    expect(copy).toEqual(template);
  });

  it('without --outputs asks the AWS CLI: aws cloudformation describe-stacks', () => {
    // A stand-in `aws` first on PATH, which records its arguments and prints the outputs.
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'aws'),
      `#!/bin/sh\necho "$@" > "${join(bin, 'args.txt')}"\ncat "${write('cli-outputs.json', outputsList)}"\n`,
    );
    chmodSync(join(bin, 'aws'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const out = join(dir, 'out', 'env.cli.json');
      run(['TaskBoard-prod', '--region', 'eu-west-1', '--template', join(dir, 'nowhere.json'), '--out', out]);
      expect(readJson(out)).toEqual({ Parameters: { ...deployedValues, LOG_LEVEL: 'DEBUG' } });
    } finally {
      process.env.PATH = path;
    }
    expect(readFileSync(join(bin, 'args.txt'), 'utf8').trim()).toBe(
      'cloudformation describe-stacks --stack-name TaskBoard-prod --query Stacks[0].Outputs --output json --region eu-west-1',
    );
  });

  it('leaves the socket variables out for a stack without WebSocketUrl, and names missing outputs', () => {
    const withoutSockets = outputsOf(
      outputsList.filter((o) => o.OutputKey !== 'WebSocketUrl'),
      'TaskBoard-prod',
    );
    expect(Object.keys(stackValues(withoutSockets)).sort()).toEqual([
      'TABLE_NAME',
      'TOKEN_ISSUER',
      'USER_POOL_CLIENT_ID',
      'USER_POOL_ID',
    ]);
    expect(() => stackValues({ ApiUrl: 'https://x' })).toThrow(
      "the stack's outputs have no UserPoolId, UserPoolClientId, TableName",
    );
    expect(() => outputsOf({ Other: {} }, 'TaskBoard-prod')).toThrow(/no outputs of TaskBoard-prod/);
  });
});

describe('template helpers', () => {
  it('finds the service functions by their TOKEN_ISSUER, and names the copy beside the template', () => {
    expect(functionsOf(template).map((f) => f.logicalId)).toEqual(serviceFunctions);
    expect(samLocalTemplatePath('cdk.out/TaskBoard-dev.template.json')).toBe(
      join('cdk.out', 'TaskBoard-dev.sam-local.template.json'),
    );
    expect(envVarsFile({ A: '1' }, [])).toEqual({ Parameters: { A: '1' } });
  });
});

describe('nested stacks (the functions in their groups, the routes in the root: infra/layout.ts)', () => {
  // A root with the HTTP API's route and a nested stack holding the route's function and
  // integration, wired as CDK wires them: parameters in, outputs back out.
  const nestedFile = 'TaskBoarddevBoardsFunctions5FC8EA0D.nested.template.json';
  const nested = {
    Parameters: {
      referencetoTaskBoarddevApiF70053CDRef: { Type: 'String' },
      referencetoTaskBoarddevTableCD117FA1Ref: { Type: 'String' },
    },
    Resources: {
      BoardsListFunctionA9D47887: fn({ TABLE_NAME: { Ref: 'referencetoTaskBoarddevTableCD117FA1Ref' } }, 'asset.2'),
      BoardsListIntegration2C6A1F7B: {
        Type: 'AWS::ApiGatewayV2::Integration',
        Properties: {
          ApiId: { Ref: 'referencetoTaskBoarddevApiF70053CDRef' },
          IntegrationType: 'AWS_PROXY',
          IntegrationUri: { 'Fn::GetAtt': ['BoardsListFunctionA9D47887', 'Arn'] },
          PayloadFormatVersion: '2.0',
        },
      },
    },
    Outputs: { TaskBoarddevBoardsIntegrationRef: { Value: { Ref: 'BoardsListIntegration2C6A1F7B' } } },
  };
  const root = {
    Resources: {
      TableCD117FA1: { Type: 'AWS::DynamoDB::Table', Properties: {} },
      ApiF70053CD: { Type: 'AWS::ApiGatewayV2::Api', Properties: { ProtocolType: 'HTTP' } },
      BoardsFunctionsNestedStack: {
        Type: 'AWS::CloudFormation::Stack',
        Properties: {
          TemplateURL: { 'Fn::Join': ['', ['https://s3.', { Ref: 'AWS::Region' }, '/x.json']] },
          Parameters: {
            referencetoTaskBoarddevApiF70053CDRef: { Ref: 'ApiF70053CD' },
            referencetoTaskBoarddevTableCD117FA1Ref: { Ref: 'TableCD117FA1' },
          },
        },
        Metadata: { 'aws:asset:path': nestedFile, 'aws:asset:property': 'TemplateURL' },
      },
      ApiGETboards1E69A3FA: {
        Type: 'AWS::ApiGatewayV2::Route',
        Properties: {
          ApiId: { Ref: 'ApiF70053CD' },
          RouteKey: 'GET /boards',
          Target: {
            'Fn::Join': [
              '',
              ['integrations/', { 'Fn::GetAtt': ['BoardsFunctionsNestedStack', 'Outputs.TaskBoarddevBoardsIntegrationRef'] }],
            ],
          },
        },
        DependsOn: ['BoardsFunctionsNestedStack'],
      },
    },
  };
  const rootPath = write('nested/cdk.out/TaskBoard-dev.template.json', root);
  write(`nested/cdk.out/${nestedFile}`, nested);
  const dataDir = dirname(write('nested/data/local-env.json', localEnv));

  it('writes the env-vars entry of a function of a nested stack under its logical id, as SAM looks it up', () => {
    const out = join(dir, 'nested', 'env.json');
    const written = run(['local', '--data-dir', dataDir, '--template', rootPath, '--out', out]);
    expect(written.functions).toBe(1);
    expect(readJson(out).BoardsListFunctionA9D47887).toMatchObject({ TABLE_NAME: 'task-board-local' });
  });

  it('writes one template for sam local start-api: route, integration and function together, wired as deployed', () => {
    run(['local', '--data-dir', dataDir, '--template', rootPath, '--out', join(dir, 'nested', 'env.json')]);
    const copy = readJson(join(dir, 'nested', 'cdk.out', 'TaskBoard-dev.sam-local.template.json'));
    expect(Object.keys(copy.Resources).sort()).toEqual(
      [
        'ApiF70053CD',
        'ApiGETboards1E69A3FA',
        'BoardsListFunctionA9D47887',
        'BoardsListIntegration2C6A1F7B',
        'TableCD117FA1',
      ].sort(),
    );
    // The route targets the integration by its own logical id, the integration names the API and
    // the function, the function the table: what SAM follows from a route to a function.
    expect(copy.Resources.ApiGETboards1E69A3FA.Properties.Target).toEqual({
      'Fn::Join': ['', ['integrations/', { Ref: 'BoardsListIntegration2C6A1F7B' }]],
    });
    expect(copy.Resources.ApiGETboards1E69A3FA.DependsOn).toBeUndefined();
    expect(copy.Resources.BoardsListIntegration2C6A1F7B.Properties.ApiId).toEqual({ Ref: 'ApiF70053CD' });
    expect(copy.Resources.BoardsListFunctionA9D47887.Properties.Environment.Variables.TABLE_NAME).toEqual({
      Ref: 'TableCD117FA1',
    });
    // Its asset path is still relative to cdk.out, where the copy is.
    expect(copy.Resources.BoardsListFunctionA9D47887.Metadata['aws:asset:path']).toBe('asset.2');
  });

  it('names a nested stack it cannot read', () => {
    const broken = structuredClone(root);
    broken.Resources.BoardsFunctionsNestedStack.Metadata = {} as never;
    const path = write('nested/cdk.out/broken.template.json', broken);
    expect(() => run(['local', '--data-dir', dataDir, '--template', path])).toThrow(
      /nested stack BoardsFunctionsNestedStack has no aws:asset:path/,
    );
  });
});
