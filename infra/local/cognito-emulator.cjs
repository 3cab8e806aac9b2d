'use strict';
/**
 * The local stack's Cognito: npm `cognito-local`, started the way its own `bin/start.js` starts it
 * (`createDefaultServer`, rebuilt here from its exported parts) with two differences, both local
 * only and never deployed:
 *
 * - Mail. cognito-local "sends" a code by printing it in a box on its console. Here every message
 *   it would send is also appended, as one JSON line, to `outbox.jsonl` in its working directory:
 *   the local HTTP server serves that file at `GET /local/outbox` (infra/local/outbox.ts). The
 *   subject is the one the pool's CustomMessage trigger answers (the local stack runs it through
 *   its Lambda stand-in, infra/local/lambda.ts), else the pool's verification message subject, as
 *   a deployed pool's own mail carries.
 * - AdminUserGlobalSignOut. cognito-local does not implement it (it answers "Unsupported"). On
 *   AWS it invalidates every refresh token Cognito issued to the user. cognito-local keeps a
 *   user's refresh tokens on the user record (`RefreshTokens`, which REFRESH_TOKEN_AUTH and
 *   RevokeToken read), so the operation is that list emptied: the same effect on the same data.
 * - GetTokensFromRefreshToken, which cognito-local lacks: the refresh of InitiateAuth, with the
 *   client secret passed as it is rather than hashed.
 * - The app client's and the pool's rules, which cognito-local stores but does not enforce and
 *   which the service's account rules rest on (docs/accounts.md, "Cognito is no second door"):
 *   a client with a secret refuses every call that lacks its SECRET_HASH (or, for RevokeToken
 *   and GetTokensFromRefreshToken, the secret itself); InitiateAuth and AdminInitiateAuth refuse
 *   a flow the client does not allow; SignUp is refused when only administrators may create
 *   users; and a client may write only its WriteAttributes (SignUp, UpdateUserAttributes,
 *   DeleteUserAttributes). Each refusal is the exception and message AWS answers with.
 *
 * Plain CommonJS, because it runs in its own process without the TypeScript loader.
 */
const { appendFileSync } = require('node:fs');
const { join } = require('node:path');
const AWS = require('aws-sdk');
const pino = require('pino');
const { createServer } = require('cognito-local/lib/server/server');
const { loadConfig } = require('cognito-local/lib/server/config');
const { Router } = require('cognito-local/lib/server/Router');
const services = require('cognito-local/lib/services');
const { CognitoServiceFactoryImpl } = require('cognito-local/lib/services/cognitoService');
const { CryptoService } = require('cognito-local/lib/services/crypto');
const { StormDBDataStoreFactory } = require('cognito-local/lib/services/dataStore/stormDb');
const { ConsoleMessageSender } = require('cognito-local/lib/services/messageDelivery/consoleMessageSender');
const { MessageDeliveryService } = require('cognito-local/lib/services/messageDelivery/messageDelivery');
const { otp } = require('cognito-local/lib/services/otp');
const { JwtTokenGenerator } = require('cognito-local/lib/services/tokenGenerator');
const { UserPoolServiceFactoryImpl } = require('cognito-local/lib/services/userPoolService');
const { createHmac, timingSafeEqual } = require('node:crypto');
const jwt = require('jsonwebtoken');
const { InvalidParameterError, NotAuthorizedError, UserNotFoundError } = require('cognito-local/lib/errors');

const OUTBOX_FILE = join(process.cwd(), 'outbox.jsonl');
/** Cognito's own default subject, for a pool created without a verification message template. */
const DEFAULT_SUBJECT = 'Your verification code';

/** Prints as cognito-local does, and keeps each email in the outbox. */
class OutboxMessageSender extends ConsoleMessageSender {
  constructor(cognito) {
    super();
    this.cognito = cognito;
  }

  async sendEmail(ctx, user, destination, message) {
    await super.sendEmail(ctx, user, destination, message);
    let subject = message.emailSubject;
    if (!subject) {
      const poolId = ctx.userPoolId;
      const pool = poolId ? await this.cognito.getUserPool(ctx, poolId).catch(() => undefined) : undefined;
      const template = pool?.options?.VerificationMessageTemplate;
      subject = template?.EmailSubject ?? pool?.options?.EmailVerificationSubject ?? DEFAULT_SUBJECT;
    }
    const entry = { to: String(destination).toLowerCase(), subject, code: message.__code, sent_at: new Date().toISOString() };
    appendFileSync(OUTBOX_FILE, `${JSON.stringify(entry)}\n`);
  }
}

/** MessagesService does not hand the pool's id to the sender: it rides on the context. */
class PoolAwareMessages extends services.MessagesService {
  deliver(ctx, source, clientId, userPoolId, user, code, clientMetadata, deliveryDetails) {
    return super.deliver({ ...ctx, userPoolId }, source, clientId, userPoolId, user, code, clientMetadata, deliveryDetails);
  }
}

const adminUserGlobalSignOut =
  ({ cognito }) =>
  async (ctx, req) => {
    const pool = await cognito.getUserPool(ctx, req.UserPoolId);
    const user = await pool.getUserByUsername(ctx, req.Username);
    if (!user) throw new UserNotFoundError();
    await pool.saveUser(ctx, { ...user, RefreshTokens: [] });
    return {};
  };

/** Cognito's SECRET_HASH: Base64(HMAC-SHA256(client secret, user name + client id)). */
const secretHashOf = (secret, username, clientId) =>
  createHmac('sha256', secret).update(`${username}${clientId}`).digest('base64');

const sameText = (a, b) =>
  typeof a === 'string' && typeof b === 'string' && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Where each public, client-id call carries its SECRET_HASH and the user name it is computed over. */
const SECRET_HASH_OF = {
  SignUp: (req) => [req.SecretHash, req.Username],
  ConfirmSignUp: (req) => [req.SecretHash, req.Username],
  ResendConfirmationCode: (req) => [req.SecretHash, req.Username],
  ForgotPassword: (req) => [req.SecretHash, req.Username],
  ConfirmForgotPassword: (req) => [req.SecretHash, req.Username],
  InitiateAuth: (req) => [req.AuthParameters?.SECRET_HASH, req.AuthParameters?.USERNAME],
  AdminInitiateAuth: (req) => [req.AuthParameters?.SECRET_HASH, req.AuthParameters?.USERNAME],
  RespondToAuthChallenge: (req) => [req.ChallengeResponses?.SECRET_HASH, req.ChallengeResponses?.USERNAME],
};

/** The ExplicitAuthFlows entry each AuthFlow needs; a client made without any allows AWS's defaults. */
const FLOW_SETTING = {
  USER_PASSWORD_AUTH: 'ALLOW_USER_PASSWORD_AUTH',
  ADMIN_USER_PASSWORD_AUTH: 'ALLOW_ADMIN_USER_PASSWORD_AUTH',
  ADMIN_NO_SRP_AUTH: 'ALLOW_ADMIN_USER_PASSWORD_AUTH',
  USER_SRP_AUTH: 'ALLOW_USER_SRP_AUTH',
  CUSTOM_AUTH: 'ALLOW_CUSTOM_AUTH',
  REFRESH_TOKEN_AUTH: 'ALLOW_REFRESH_TOKEN_AUTH',
  REFRESH_TOKEN: 'ALLOW_REFRESH_TOKEN_AUTH',
  USER_AUTH: 'ALLOW_USER_AUTH',
};
const DEFAULT_FLOWS = ['ALLOW_USER_SRP_AUTH', 'ALLOW_CUSTOM_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'];
const REFRESH_FLOWS = ['REFRESH_TOKEN_AUTH', 'REFRESH_TOKEN'];

/**
 * The app client's and the pool's rules, checked before cognito-local's own operation runs. An
 * unknown client is left to the operation, which answers it as cognito-local always did.
 */
const clientRules =
  ({ cognito }) =>
  async (ctx, target, req) => {
    const clientId = target === 'UpdateUserAttributes' || target === 'DeleteUserAttributes' ? tokenClient(req) : req.ClientId;
    const client = clientId ? await cognito.getAppClient(ctx, clientId) : null;
    if (!client) return;
    const pool = await cognito.getUserPoolForClientId(ctx, clientId);

    if (target === 'InitiateAuth' || target === 'AdminInitiateAuth') {
      const setting = FLOW_SETTING[req.AuthFlow];
      const allowed = client.ExplicitAuthFlows?.length ? client.ExplicitAuthFlows : DEFAULT_FLOWS;
      if (setting && !allowed.includes(setting))
        throw new InvalidParameterError(`${req.AuthFlow} flow not enabled for this client`);
    }
    if (client.ClientSecret && SECRET_HASH_OF[target]) {
      let [hash, username] = SECRET_HASH_OF[target](req);
      // A refresh names no user: the hash is over the user name of the refresh token's user.
      if (REFRESH_FLOWS.includes(req.AuthFlow)) {
        const user = await pool.getUserByRefreshToken(ctx, req.AuthParameters?.REFRESH_TOKEN ?? '');
        username = user?.Username;
      }
      if (hash === undefined)
        throw new NotAuthorizedError(`Client ${clientId} is configured with secret but SECRET_HASH was not received`);
      if (!username || !sameText(hash, secretHashOf(client.ClientSecret, username, clientId))) {
        throw new NotAuthorizedError(`Unable to verify secret hash for client ${clientId}`);
      }
    }
    if ((target === 'RevokeToken' || target === 'GetTokensFromRefreshToken') && client.ClientSecret) {
      if (!sameText(req.ClientSecret, client.ClientSecret)) throw new NotAuthorizedError('Client secret is invalid');
    }
    if (target === 'SignUp' && pool.options.AdminCreateUserConfig?.AllowAdminCreateUserOnly) {
      throw new NotAuthorizedError('SignUp is not permitted for this user pool');
    }
    const written =
      target === 'SignUp' || target === 'UpdateUserAttributes'
        ? (req.UserAttributes ?? []).map((attribute) => attribute.Name)
        : target === 'DeleteUserAttributes'
          ? (req.UserAttributeNames ?? [])
          : [];
    if (client.WriteAttributes?.length && written.some((name) => !client.WriteAttributes.includes(name))) {
      throw new NotAuthorizedError('A client attempted to write unauthorized attribute');
    }
  };

/** The app client an access token was issued to (`client_id`); unreadable tokens are the operation's to refuse. */
const tokenClient = (req) => {
  const claims = typeof req.AccessToken === 'string' ? jwt.decode(req.AccessToken) : null;
  return claims && typeof claims === 'object' ? claims.client_id : undefined;
};

/** GetTokensFromRefreshToken: InitiateAuth's refresh once the client and its secret are checked. */
const getTokensFromRefreshToken = (initiateAuth) => async (ctx, req) => {
  const out = await initiateAuth(ctx, {
    AuthFlow: 'REFRESH_TOKEN_AUTH',
    ClientId: req.ClientId,
    ClientMetadata: req.ClientMetadata,
    AuthParameters: { REFRESH_TOKEN: req.RefreshToken },
  });
  return { AuthenticationResult: out.AuthenticationResult };
};

async function main() {
  const logger = pino({ level: process.env.DEBUG ? 'debug' : 'info' });
  const ctx = { logger };
  const config = await loadConfig(ctx, new StormDBDataStoreFactory('.cognito'));
  const clock = new services.DateClock();
  const dataStoreFactory = new StormDBDataStoreFactory('.cognito/db');
  const cognito = await new CognitoServiceFactoryImpl(
    '.cognito/db',
    dataStoreFactory,
    new UserPoolServiceFactoryImpl(clock, dataStoreFactory),
  ).create(ctx, config.UserPoolDefaults);
  const triggers = new services.TriggersService(
    clock,
    cognito,
    new services.LambdaService(config.TriggerFunctions, new AWS.Lambda(config.LambdaClient)),
    new CryptoService(config.KMSConfig),
  );
  const all = {
    clock,
    cognito,
    config,
    messages: new PoolAwareMessages(triggers, new MessageDeliveryService(new OutboxMessageSender(cognito))),
    otp,
    tokenGenerator: new JwtTokenGenerator(clock, triggers, config.TokenConfig),
    triggers,
  };
  const route = Router(all);
  const added = {
    AdminUserGlobalSignOut: adminUserGlobalSignOut(all),
    GetTokensFromRefreshToken: getTokensFromRefreshToken(route('InitiateAuth')),
  };
  const checkRules = clientRules(all);
  const router = (target) => {
    const operation = added[target] ?? route(target);
    return async (ctx, req) => {
      await checkRules(ctx, target, req ?? {});
      return operation(ctx, req);
    };
  };
  const server = createServer(router, logger, config.ServerConfig, all);
  await server.start();
  logger.info(`Cognito Local running on http://${config.ServerConfig.hostname}:${config.ServerConfig.port}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
