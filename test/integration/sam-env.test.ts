import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newBoard, newUser } from '../support/api';
import { runNode } from '../support/run-node';

/**
 * `npm run sam:env -- local` against the real local stack of global setup, and a handler run with
 * exactly the variables the file gives its function, as `sam local invoke` would run it (SAM needs
 * Docker, which these machines lack; the handler runs in a plain child process instead). The host
 * is 127.0.0.1 here, as with `sam … --docker-network host`.
 *
 * What it shows: the public routes work as they are; a route that needs a token gets 401, because
 * aws-jwt-verify fetches the JWKS over https only and the emulator serves http. The local stack
 * gets round that by handing the verifier the emulator's keys (infra/local/stack.ts); done the
 * same way in the child, the token verifies and the handler reads the local table.
 */

const dir = mkdtempSync(join(tmpdir(), 'task-board-sam-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A template shaped like the synthesized one, for the two functions the child runs. */
const declared = (withTable: boolean) => ({
  TOKEN_ISSUER: { 'Fn::GetAtt': ['Users0A0EEA89', 'ProviderURL'] },
  USER_POOL_ID: { Ref: 'Users0A0EEA89' },
  USER_POOL_CLIENT_ID: { Ref: 'UsersApiClientD8D32A2C' },
  ...(withTable ? { TABLE_NAME: { Ref: 'TableCD117FA1' } } : {}),
});
const template = {
  Resources: {
    HealthFunction64F2C32C: { Type: 'AWS::Lambda::Function', Properties: { Environment: { Variables: declared(false) } } },
    BoardsListFunctionA9D47887: { Type: 'AWS::Lambda::Function', Properties: { Environment: { Variables: declared(true) } } },
  },
};

/**
 * The child: imports the health and boards.list handlers, invokes them with the sample events
 * (events/health.json, events/boards-list.json with the token filled in) and prints their answers.
 */
const child = `
(async () => {
  const { readFileSync } = await import('node:fs');
  const [token, mode] = process.argv.slice(1);
  const context = { awsRequestId: 'sam-env-test' };
  if (mode === 'hand-over-jwks') {
    const { accessTokenVerifier } = await import('./lib/auth/verifier.ts');
    const { AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: cognito, USER_POOL_ID: pool } = process.env;
    accessTokenVerifier.cacheJwks(await (await fetch(cognito + '/' + pool + '/.well-known/jwks.json')).json());
  }
  const health = (await import('./functions/health.ts')).handler;
  const list = (await import('./functions/boards/list.ts')).handler;
  const healthReply = await health(JSON.parse(readFileSync('events/health.json', 'utf8')), context);
  const event = JSON.parse(readFileSync('events/boards-list.json', 'utf8').replaceAll('ACCESS_TOKEN', token));
  const listReply = await list(event, context);
  console.log('RESULT ' + JSON.stringify({ health: healthReply.statusCode, list: listReply.statusCode, body: JSON.parse(listReply.body) }));
})();
`;

async function invoke(env: Record<string, string>, token: string, mode: 'as-sam' | 'hand-over-jwks') {
  const run = await runNode(['-e', child, token, mode], { env: { ...env }, timeoutMs: 90_000 });
  const line = run.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (run.code !== 0 || !line) throw new Error(`handler child failed (${run.code})\n${run.stdout}\n${run.stderr}`);
  return JSON.parse(line.slice('RESULT '.length)) as { health: number; list: number; body: unknown };
}

describe('npm run sam:env -- local, with the running local stack', () => {
  const templatePath = join(dir, 'TaskBoard-dev.template.json');
  const envFile = join(dir, 'env.local.json');
  let file: Record<string, Record<string, string>>;

  beforeAll(async () => {
    writeFileSync(templatePath, JSON.stringify(template));
    const run = await runNode([
      'scripts/sam-env.ts',
      'local',
      '--data-dir',
      process.env.TASK_BOARD_DATA_DIR!,
      '--host',
      '127.0.0.1',
      '--template',
      templatePath,
      '--out',
      envFile,
    ]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`sam:env: wrote ${envFile} (Parameters and 2 functions by logical ID)`);
    expect(run.stdout).toContain(`sam:env: wrote ${join(dir, 'TaskBoard-dev.sam-local.template.json')}`);
    file = JSON.parse(readFileSync(envFile, 'utf8'));
  });

  it('names the local stack: its table, pool, client, issuer and the emulators it runs', () => {
    const stack = JSON.parse(readFileSync(join(process.env.TASK_BOARD_DATA_DIR!, 'local-env.json'), 'utf8'));
    expect(file.Parameters).toEqual(stack);
    expect(file.BoardsListFunctionA9D47887).toEqual({
      AWS_ENDPOINT_URL_DYNAMODB: stack.AWS_ENDPOINT_URL_DYNAMODB,
      AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: stack.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER,
      AWS_REGION: stack.AWS_REGION,
      AWS_ACCESS_KEY_ID: stack.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: stack.AWS_SECRET_ACCESS_KEY,
      TABLE_NAME: stack.TABLE_NAME,
      USER_POOL_ID: stack.USER_POOL_ID,
      USER_POOL_CLIENT_ID: stack.USER_POOL_CLIENT_ID,
      TOKEN_ISSUER: stack.TOKEN_ISSUER,
    });
  });

  it('runs a handler with exactly its function’s variables: public routes work, a token verifies only with the keys handed over', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Seen through sam:env');
    const env = file.BoardsListFunctionA9D47887!;

    // As SAM would run it: the token cannot be verified (no https JWKS), the public route works.
    const asSam = await invoke(env, user.token, 'as-sam');
    expect({ health: asSam.health, list: asSam.list }).toEqual({ health: 200, list: 401 });
    expect(asSam.body).toMatchObject({ status: 401, code: 'unauthorized' });

    // As the local stack runs it (the emulator's keys handed to the verifier): 200, from the same table.
    const handedOver = await invoke(env, user.token, 'hand-over-jwks');
    expect({ health: handedOver.health, list: handedOver.list }).toEqual({ health: 200, list: 200 });
    expect(handedOver.body).toEqual([board]);
  });
});
