import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CognitoIdentityProviderClient,
  CreateUserPoolClientCommand,
  CreateUserPoolCommand,
  type CreateUserPoolCommandInput,
  DescribeUserPoolClientCommand,
  DescribeUserPoolCommand,
  UpdateUserPoolCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import {
  appClient as appClientDefinition,
  explicitAuthFlows,
  passwordPolicy,
  selfSignUp,
  tokenValidity,
  verificationMessage,
} from '../../lib/auth/pool';
import { captureOutput, spawnGuarded, waitFor } from './processes';

/**
 * The issuer domain is pinned in the emulator's config rather than derived from its port, so
 * tokens issued before a restart (on another free port) still verify afterwards.
 */
const LOCAL_ISSUER_DOMAIN = 'http://cognito-local.localhost';

/** The pool's triggers for the emulator: each trigger's function name, and the Lambda endpoint that runs them. */
export interface LocalPoolTriggers {
  functions: Record<string, string>;
  lambdaEndpoint: string;
}

/**
 * The emulator on `port`, listening on `host` (127.0.0.1 unless the stack is asked for another),
 * invoking `triggers` (Cognito's trigger name → function name) through the Lambda endpoint given.
 */
export async function startCognitoLocal(
  port: number,
  dataDir: string,
  host = '127.0.0.1',
  triggers?: LocalPoolTriggers,
): Promise<ChildProcess> {
  const cwd = resolve(dataDir);
  mkdirSync(join(cwd, '.cognito'), { recursive: true });
  // Written on every start: the Lambda stand-in's port changes from one start to the next.
  const config = {
    TokenConfig: { IssuerDomain: LOCAL_ISSUER_DOMAIN },
    ...(triggers ? { TriggerFunctions: triggers.functions, LambdaClient: { endpoint: triggers.lambdaEndpoint } } : {}),
  };
  writeFileSync(join(cwd, '.cognito', 'config.json'), JSON.stringify(config, null, 2));
  // cognito-local with the outbox and AdminUserGlobalSignOut (cognito-emulator.cjs says why).
  const entry = join(dirname(fileURLToPath(import.meta.url)), 'cognito-emulator.cjs');
  const child = spawnGuarded(process.execPath, [entry], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: String(port), HOST: host, NODE_NO_WARNINGS: '1' },
  });
  const output = captureOutput(child);
  try {
    await waitFor('cognito-local', async () => (await fetch(`http://127.0.0.1:${port}/health`)).ok, child);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${output()}`);
  }
  return child;
}

/** What the local pool shares with the deployed one besides its sign-in by email. */
const poolSettings = {
  AdminCreateUserConfig: { AllowAdminCreateUserOnly: !selfSignUp },
  // As the deployed pool (CDK verifies the sign-in alias): codes go to the address by email.
  AutoVerifiedAttributes: ['email'],
  VerificationMessageTemplate: {
    DefaultEmailOption: 'CONFIRM_WITH_CODE',
    EmailSubject: verificationMessage.emailSubject,
    EmailMessage: verificationMessage.emailBody,
  },
  Policies: {
    PasswordPolicy: {
      MinimumLength: passwordPolicy.minLength,
      RequireLowercase: passwordPolicy.requireLowercase,
      RequireUppercase: passwordPolicy.requireUppercase,
      RequireNumbers: passwordPolicy.requireDigits,
      RequireSymbols: passwordPolicy.requireSymbols,
    },
  },
} satisfies Omit<CreateUserPoolCommandInput, 'PoolName'>;

export interface LocalPool {
  userPoolId: string;
  userPoolClientId: string;
  issuer: string;
}

/**
 * Creates the pool and app client once per data directory and reuses them on every restart.
 * `accessTokenSeconds` shortens the access tokens' life below Cognito's (one hour, the default),
 * so that tests of what happens at a token's expiry take seconds; it applies to a new data
 * directory only.
 */
export async function ensurePool(endpoint: string, dataDir: string, accessTokenSeconds?: number): Promise<LocalPool> {
  const stateFile = join(resolve(dataDir), 'pool.json');
  const client = new CognitoIdentityProviderClient({ endpoint });
  try {
    if (existsSync(stateFile)) {
      const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as LocalPool;
      const found = await client
        .send(new DescribeUserPoolCommand({ UserPoolId: saved.userPoolId }))
        .then((out) => out.UserPool)
        .catch(() => undefined);
      // A pool made by an older version (an older DATA_DIR) gets the settings it lacks, and an app
      // client with a secret in place of one without (its users sign in again, as after a deploy).
      if (found) {
        if (found.AdminCreateUserConfig?.AllowAdminCreateUserOnly !== !selfSignUp) {
          await client.send(new UpdateUserPoolCommand({ UserPoolId: saved.userPoolId, ...poolSettings }));
        }
        const current = await client
          .send(new DescribeUserPoolClientCommand({ UserPoolId: saved.userPoolId, ClientId: saved.userPoolClientId }))
          .then((out) => out.UserPoolClient);
        if (current?.ClientSecret) return saved;
        return save(stateFile, saved.userPoolId, await createAppClient(client, saved.userPoolId, accessTokenSeconds));
      }
    }
    const pool = await client.send(
      new CreateUserPoolCommand({ PoolName: 'task-board-local', UsernameAttributes: ['email'], ...poolSettings }),
    );
    const userPoolId = pool.UserPool!.Id!;
    return save(stateFile, userPoolId, await createAppClient(client, userPoolId, accessTokenSeconds));
  } finally {
    client.destroy();
  }
}

/** The app client as lib/auth/pool.ts defines it; its secret stays in the emulator's data. */
async function createAppClient(client: CognitoIdentityProviderClient, userPoolId: string, accessTokenSeconds?: number) {
  const appClient = await client.send(
    new CreateUserPoolClientCommand({
      UserPoolId: userPoolId,
      ClientName: 'task-board-api',
      GenerateSecret: appClientDefinition.generateSecret,
      ExplicitAuthFlows: explicitAuthFlows,
      WriteAttributes: [...appClientDefinition.writeAttributes],
      EnableTokenRevocation: true,
      PreventUserExistenceErrors: appClientDefinition.preventUserExistenceErrors ? 'ENABLED' : 'LEGACY',
      AccessTokenValidity: accessTokenSeconds ?? tokenValidity.accessTokenMinutes,
      RefreshTokenValidity: tokenValidity.refreshTokenDays,
      TokenValidityUnits: { AccessToken: accessTokenSeconds ? 'seconds' : 'minutes', RefreshToken: 'days' },
    }),
  );
  return appClient.UserPoolClient!.ClientId!;
}

function save(stateFile: string, userPoolId: string, userPoolClientId: string): LocalPool {
  const saved: LocalPool = { userPoolId, userPoolClientId, issuer: `${LOCAL_ISSUER_DOMAIN}/${userPoolId}` };
  writeFileSync(stateFile, JSON.stringify(saved, null, 2));
  return saved;
}

/** The emulator's signing keys, fetched once over http and handed to the functions in TOKEN_JWKS. */
export async function fetchJwks(port: number, userPoolId: string): Promise<unknown> {
  const response = await fetch(`http://127.0.0.1:${port}/${userPoolId}/.well-known/jwks.json`);
  if (!response.ok) throw new Error(`JWKS fetch failed: ${response.status}`);
  return response.json();
}
