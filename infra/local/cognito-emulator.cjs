'use strict';
/**
 * The local stack's Cognito: npm `cognito-local`, started the way its own `bin/start.js` starts it
 * (`createDefaultServer`, rebuilt here from its exported parts) with two differences, both local
 * only and never deployed:
 *
 * - Mail. cognito-local "sends" a code by printing it in a box on its console. Here every message
 *   it would send is also appended, as one JSON line, to `outbox.jsonl` in its working directory:
 *   the local HTTP server serves that file at `GET /local/outbox` (infra/local/outbox.ts). The
 *   subject is the pool's verification message subject, as a deployed pool's own mail carries.
 * - AdminUserGlobalSignOut. cognito-local does not implement it (it answers "Unsupported"). On
 *   AWS it invalidates every refresh token Cognito issued to the user. cognito-local keeps a
 *   user's refresh tokens on the user record (`RefreshTokens`, which REFRESH_TOKEN_AUTH and
 *   RevokeToken read), so the operation is that list emptied: the same effect on the same data.
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
const { UserNotFoundError } = require('cognito-local/lib/errors');

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
  const signOut = adminUserGlobalSignOut(all);
  const router = (target) => (target === 'AdminUserGlobalSignOut' ? signOut : route(target));
  const server = createServer(router, logger, config.ServerConfig, all);
  await server.start();
  logger.info(`Cognito Local running on http://${config.ServerConfig.hostname}:${config.ServerConfig.port}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
