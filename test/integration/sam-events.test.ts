import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { type RouteId, type RouteRow, routes } from '../../lib/routes';
import { eventFileOf, PLACEHOLDER } from '../../scripts/make-events';
import { call, newBoard, newCard, newColumn, newUser, uniqueEmail } from '../support/api';

/**
 * SAM cannot run here (no Docker), so this checks what `sam local invoke -e events/<route>.json`
 * would do: each sample event, with its placeholders filled in, runs through the route's real
 * handler module in this process, against the local stack's DynamoDB and Cognito.
 */
const root = join(__dirname, '..', '..');
const rows = Object.entries(routes) as [RouteId, RouteRow][];
type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

beforeAll(async () => {
  const env = JSON.parse(readFileSync(join(process.env.TASK_BOARD_DATA_DIR!, 'local-env.json'), 'utf8'));
  Object.assign(process.env, env, { LOG_LEVEL: 'SILENT', METRICS_DISABLED: 'true' });
  const { accessTokenVerifier } = await import('../../lib/auth/verifier');
  const jwks = await fetch(`${env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER}/${env.USER_POOL_ID}/.well-known/jwks.json`);
  accessTokenVerifier.cacheJwks((await jwks.json()) as Parameters<typeof accessTokenVerifier.cacheJwks>[0]);
});

describe('sample events (events/)', () => {
  it('has exactly one sample event per route row', () => {
    expect(readdirSync(join(root, 'events')).sort()).toEqual(rows.map(([id]) => eventFileOf(id)).sort());
  });

  it.each(rows)("events/%s runs through its real handler and gets the route's success status", async (routeId, row) => {
    const user = await newUser();
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const card = await newCard(user, column.id);
    const email = uniqueEmail();
    // The member routes act on a second user: not yet a member for add, already one otherwise.
    const teammate = await newUser();
    if (routeId === 'members.update' || routeId === 'members.remove') {
      await call('POST', `/boards/${board.id}/members`, { token: user.token, body: { email: teammate.email } });
    }
    const text = readFileSync(join(root, 'events', eventFileOf(routeId)), 'utf8')
      .replaceAll(PLACEHOLDER.token, user.token)
      .replaceAll(PLACEHOLDER.board, board.id)
      .replaceAll(PLACEHOLDER.column, column.id)
      .replaceAll(PLACEHOLDER.card, card.id)
      .replaceAll(PLACEHOLDER.user, teammate.id)
      .replaceAll(PLACEHOLDER.teammateEmail, teammate.email)
      .replaceAll('new-user@example.com', routeId === 'auth.login' ? user.email : email)
      .replaceAll('correct horse battery', routeId === 'auth.login' ? user.password : 'correct horse battery');
    const event = JSON.parse(text) as APIGatewayProxyEventV2;
    const { handler } = (await import(join(root, row.entry))) as { handler: Handler };
    const reply = await handler(event, { awsRequestId: 'sample' } as Context);
    expect({ status: reply.statusCode, body: reply.body && JSON.parse(reply.body) }).toMatchObject({
      status: row.success.status,
    });
  });
});
