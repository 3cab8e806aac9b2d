import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import {
  CognitoIdentityProviderClient,
  ConfirmForgotPasswordCommand,
  DeleteUserCommand,
  ForgotPasswordCommand,
  GetTokensFromRefreshTokenCommand,
  InitiateAuthCommand,
  RevokeTokenCommand,
  SignUpCommand,
  UpdateUserAttributesCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { baseUrl, call, expectProblem, newBoard, newUser, type TestUser, uniqueEmail } from '../support/api';
import { codeSentBy, outbox } from '../support/mail';

/**
 * The identity provider is no second door (docs/accounts.md): each test is an attack made with
 * nothing but what the service hands out, an access token and the app client id it names, sent
 * straight to the identity provider's public API (the local stack's Cognito emulator, which
 * enforces the same client and pool rules as Cognito), and then checked through the API.
 */
const localEnv = JSON.parse(readFileSync(join(process.env.TASK_BOARD_DATA_DIR!, 'local-env.json'), 'utf8')) as Record<
  string,
  string
>;
const idp = new CognitoIdentityProviderClient({
  endpoint: localEnv.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER,
  region: 'us-east-1',
  credentials: { accessKeyId: 'attacker', secretAccessKey: 'attacker' },
});
afterAll(() => idp.destroy());

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { client_id: string; sub: string };
const clientIdOf = (token: string) => claimsOf(token).client_id;

async function register(email: string, password = `pw-${randomUUID()}`) {
  const reply = await call('POST', '/auth/register', { body: { email, password, display_name: 'Someone' } });
  return { reply, password };
}

/** A POST to the API from another source address of this machine (127.0.0.0/8 is all loopback). */
function postFrom(localAddress: string, path: string, body: unknown): Promise<number> {
  const url = new URL(path, baseUrl());
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const wrongCode = (right: string) => (right === '000000' ? '111111' : '000000');

describe('an access token cannot change what the account stands for', () => {
  it('UpdateUserAttributes cannot move the address to a mailbox the caller holds, so no code of it can verify the first', async () => {
    const squatter = await newUser(undefined, { verified: false });
    const attackerMailbox = uniqueEmail();
    await expect(
      idp.send(
        new UpdateUserAttributesCommand({
          AccessToken: squatter.token,
          UserAttributes: [{ Name: 'email', Value: attackerMailbox }],
        }),
      ),
    ).rejects.toMatchObject({ name: 'NotAuthorizedException' });
    await expect(
      idp.send(
        new UpdateUserAttributesCommand({
          AccessToken: squatter.token,
          UserAttributes: [{ Name: 'email_verified', Value: 'true' }],
        }),
      ),
    ).rejects.toMatchObject({ name: 'NotAuthorizedException' });

    // The code the API then asks for goes to the registered address, never to the attacker's.
    await codeSentBy(squatter.email, () => call('POST', '/auth/verify-email/request', { token: squatter.token }));
    expect(await outbox(attackerMailbox)).toEqual([]);
    const me = await call('GET', '/auth/me', { token: squatter.token });
    expect(me.body).toMatchObject({ email: squatter.email, email_verified: false });
  });
});

describe('nobody can sign up, sign in or use reset codes around the API', () => {
  it('SignUp with the app client id is refused, and the address stays free for its owner', async () => {
    const probe = await newUser(undefined, { verified: false });
    const email = uniqueEmail();
    const attempt = (SecretHash?: string) =>
      idp.send(
        new SignUpCommand({
          ClientId: clientIdOf(probe.token),
          Username: email,
          Password: 'squatter-password',
          SecretHash,
          UserAttributes: [{ Name: 'email', Value: email }],
        }),
      );
    await expect(attempt()).rejects.toMatchObject({ name: 'NotAuthorizedException' });
    await expect(attempt('bm90IHRoZSBzZWNyZXQgaGFzaA==')).rejects.toMatchObject({ name: 'NotAuthorizedException' });

    const { reply, password } = await register(email);
    expect(reply.status).toBe(201);
    expect((await call('POST', '/auth/login', { body: { email, password } })).status).toBe(200);
  });

  it('password sign-in, refresh and token revocation need the client secret, so only the API can make them', async () => {
    const user = await newUser(undefined, { verified: false });
    const ClientId = clientIdOf(user.token);
    await expect(
      idp.send(
        new InitiateAuthCommand({
          ClientId,
          AuthFlow: 'USER_PASSWORD_AUTH',
          AuthParameters: { USERNAME: user.email, PASSWORD: user.password },
        }),
      ),
    ).rejects.toMatchObject({ name: expect.stringMatching(/^(NotAuthorizedException|InvalidParameterException)$/) });
    await expect(
      idp.send(
        new InitiateAuthCommand({
          ClientId,
          AuthFlow: 'REFRESH_TOKEN_AUTH',
          AuthParameters: { REFRESH_TOKEN: user.refreshToken! },
        }),
      ),
    ).rejects.toMatchObject({ name: 'NotAuthorizedException' });
    await expect(
      idp.send(new GetTokensFromRefreshTokenCommand({ ClientId, RefreshToken: user.refreshToken!, ClientSecret: 'guessed' })),
    ).rejects.toMatchObject({ name: 'NotAuthorizedException' });
    await expect(idp.send(new RevokeTokenCommand({ ClientId, Token: user.refreshToken! }))).rejects.toMatchObject({
      name: 'NotAuthorizedException',
    });
    // None of it did anything: the refresh token still works through the API.
    expect((await call('POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } })).status).toBe(200);
  });

  it('ForgotPassword and ConfirmForgotPassword are refused without the secret: no code is mailed, none can be tried', async () => {
    const user = await newUser(undefined, { verified: false });
    const ClientId = clientIdOf(user.token);
    await expect(idp.send(new ForgotPasswordCommand({ ClientId, Username: user.email }))).rejects.toMatchObject({
      name: 'NotAuthorizedException',
    });
    expect(await outbox(user.email)).toEqual([]);

    const code = await codeSentBy(user.email, () => call('POST', '/auth/password/forgot', { body: { email: user.email } }));
    await expect(
      idp.send(
        new ConfirmForgotPasswordCommand({ ClientId, Username: user.email, ConfirmationCode: code, Password: 'taken-over-pw' }),
      ),
    ).rejects.toMatchObject({ name: 'NotAuthorizedException' });
    expect((await call('POST', '/auth/login', { body: { email: user.email, password: 'taken-over-pw' } })).status).toBe(401);
    expect((await call('POST', '/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(200);
  });
});

describe("an identity deleted around the API does not keep its address from the mailbox's owner", () => {
  let squatter: TestUser;
  beforeAll(async () => {
    squatter = await newUser(undefined, { verified: false });
    await newBoard(squatter, 'the squatter board');
    await idp.send(new DeleteUserCommand({ AccessToken: squatter.token }));
  });

  it('a reset for the address answers 202, not 500', async () => {
    const reply = await call('POST', '/auth/password/forgot', { body: { email: squatter.email } });
    expect(reply.status).toBe(202);
  });

  it('the owner registers the address and signs in; the left-behind account reaches nothing', async () => {
    const { reply, password } = await register(squatter.email);
    expect(reply.status).toBe(201);
    expect((await call('POST', '/auth/login', { body: { email: squatter.email, password } })).status).toBe(200);
    const me = await call('GET', '/auth/me', { token: reply.body.token });
    expect(me.body).toMatchObject({ email: squatter.email, email_verified: false });
    expect(me.body.id).not.toBe(squatter.id);
    expectProblem(await call('GET', '/auth/me', { token: squatter.token }), 401);
    expect((await call('GET', '/boards', { token: squatter.token })).body).toEqual([]);
  });
});

describe('a code is tried at most five times', () => {
  it('address verification: after five wrong codes the right one is refused, until a new code is asked for', async () => {
    const user = await newUser(undefined, { verified: false });
    const code = await codeSentBy(user.email, () => call('POST', '/auth/verify-email/request', { token: user.token }));
    for (let i = 0; i < 5; i++) {
      expectProblem(await call('POST', '/auth/verify-email', { token: user.token, body: { code: wrongCode(code) } }), 400);
    }
    const refused = await call('POST', '/auth/verify-email', { token: user.token, body: { code } });
    expectProblem(refused, 400);
    expect(refused.body.code).toBe('invalid_code');
    expect((await call('GET', '/auth/me', { token: user.token })).body.email_verified).toBe(false);

    const next = await codeSentBy(user.email, () => call('POST', '/auth/verify-email/request', { token: user.token }));
    expect((await call('POST', '/auth/verify-email', { token: user.token, body: { code: next } })).status).toBe(204);
    expect((await call('GET', '/auth/me', { token: user.token })).body.email_verified).toBe(true);
  });

  it('address verification: twelve wrong codes sent at once use up the code all the same', async () => {
    const user = await newUser(undefined, { verified: false });
    const code = await codeSentBy(user.email, () => call('POST', '/auth/verify-email/request', { token: user.token }));
    const replies = await Promise.all(
      Array.from({ length: 12 }, () =>
        call('POST', '/auth/verify-email', { token: user.token, body: { code: wrongCode(code) } }),
      ),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(12).fill(400));
    expectProblem(await call('POST', '/auth/verify-email', { token: user.token, body: { code } }), 400);
  });

  it('password reset: five wrong codes from five source addresses void the code for all of them', async () => {
    const user = await newUser(undefined, { verified: false });
    const code = await codeSentBy(user.email, () => call('POST', '/auth/password/forgot', { body: { email: user.email } }));
    const tries = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'].map((address) =>
      postFrom(address, '/auth/password/reset', { email: user.email, code: wrongCode(code), new_password: 'taken-over-pw' }),
    );
    expect(await Promise.all(tries)).toEqual([400, 400, 400, 400, 400]);
    const refused = await postFrom('127.0.0.7', '/auth/password/reset', {
      email: user.email,
      code,
      new_password: 'taken-over-pw',
    });
    expect(refused).toBe(400);
    expect((await call('POST', '/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(200);

    const next = await codeSentBy(user.email, () => call('POST', '/auth/password/forgot', { body: { email: user.email } }));
    const reset = await call('POST', '/auth/password/reset', {
      body: { email: user.email, code: next, new_password: 'mine-again-pw' },
    });
    expect(reset.status).toBe(204);
    expect((await call('POST', '/auth/login', { body: { email: user.email, password: 'mine-again-pw' } })).status).toBe(200);
  });
});

describe('mail', () => {
  it('registration mails nothing', async () => {
    const email = uniqueEmail();
    expect((await register(email)).reply.status).toBe(201);
    expect(await outbox(email)).toEqual([]);
  });

  // The pool's CustomMessage trigger (functions/auth/message.ts) names each message's purpose.
  it('an address verification is mailed under a subject naming it, with the code that verifies the address', async () => {
    const user = await newUser(undefined, { verified: false });
    const code = await codeSentBy(user.email, async () =>
      expect((await call('POST', '/auth/verify-email/request', { token: user.token })).status).toBe(202),
    );
    const [mail] = await outbox(user.email);
    expect(mail!.subject).toMatch(/verify your email address/i);
    expect(mail!.subject).not.toMatch(/reset|password/i);
    expect((await call('POST', '/auth/verify-email', { token: user.token, body: { code } })).status).toBe(204);
  });

  it('a password reset is mailed under a subject naming it, with the code that resets the password', async () => {
    const user = await newUser();
    const code = await codeSentBy(user.email, async () =>
      expect((await call('POST', '/auth/password/forgot', { body: { email: user.email } })).status).toBe(202),
    );
    const [mail] = await outbox(user.email);
    expect(mail!.subject).toMatch(/reset your .* password/i);
    expect(mail!.subject).not.toMatch(/verif/i);
    const newPassword = `new-${randomUUID()}`;
    const reset = await call('POST', '/auth/password/reset', { body: { email: user.email, code, new_password: newPassword } });
    expect(reset.status).toBe(204);
    expect((await call('POST', '/auth/login', { body: { email: user.email, password: newPassword } })).status).toBe(200);
  });
});
