import {
  CodeMismatchException,
  CognitoIdentityProviderClient,
  ConfirmForgotPasswordCommand,
  DescribeUserPoolClientCommand,
  ForgotPasswordCommand,
  InternalErrorException,
  LimitExceededException,
  TooManyFailedAttemptsException,
} from '@aws-sdk/client-cognito-identity-provider';
import { BatchGetCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as forgot } from '../../functions/auth/password-forgot';
import { handler as reset } from '../../functions/auth/password-reset';
import { apiEvent } from '../support/events';

/**
 * Cognito's answers the local emulator never gives (it has no lockout, no failures and no limit on
 * codes asked for): its refusals of a reset code are the same 400 invalid_code a wrong code gets,
 * never a 500; a failure of its own gives the try back; and asking for a code when it sends none
 * never starts the tries again. The five tries the service counts are tested over the local stack
 * (test/integration/identity-provider.test.ts).
 */
const cognito = mockClient(CognitoIdentityProviderClient);
const ddb = mockClient(DynamoDBDocumentClient);
const context = {} as Context;
const meta = { $metadata: {} };
const email = 'owner@example.test';

function publicEvent(path: string, body: unknown): APIGatewayProxyEventV2 {
  const withToken = apiEvent('unused', 'POST', path, body);
  const { authorization: _authorization, ...headers } = withToken.headers;
  return { ...withToken, headers };
}
const resetEvent = () => publicEvent('/auth/password/reset', { email, code: '123456', new_password: 'a new password' });

beforeEach(() => {
  cognito.reset();
  ddb.reset();
  cognito.on(DescribeUserPoolClientCommand).resolves({ UserPoolClient: { ClientSecret: 'secret' } });
  // The address is held by an account, and the code has tries left.
  ddb.on(BatchGetCommand).resolves({
    Responses: {
      [process.env.TABLE_NAME!]: [
        { pk: `EMAIL#${email}`, sk: '#EMAIL', user_id: 'u-1', email, display_name: 'O', verified: false },
      ],
    },
  });
  ddb.on(UpdateCommand).resolves({});
});

it.each([
  ['a wrong code', new CodeMismatchException({ message: 'Invalid code', ...meta })],
  ["Cognito's own lockout", new TooManyFailedAttemptsException({ message: 'Too many failed attempts', ...meta })],
  ['too many requests for the user', new LimitExceededException({ message: 'Attempt limit exceeded', ...meta })],
])('%s is 400 invalid_code, and the password is not reset', async (_case, error) => {
  cognito.on(ConfirmForgotPasswordCommand).rejects(error);
  const reply = await reset(resetEvent(), context);
  expect(reply.statusCode).toBe(400);
  expect(JSON.parse(reply.body ?? '{}')).toMatchObject({ status: 400, code: 'invalid_code' });
  expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1); // the try taken, nothing marked
});

it('a check Cognito could not make (its own failure) gives the try back: a 5xx, and the code keeps its tries', async () => {
  cognito.on(ConfirmForgotPasswordCommand).rejects(new InternalErrorException({ message: 'internal', ...meta }));
  const reply = await reset(resetEvent(), context);
  expect(reply.statusCode).toBeGreaterThanOrEqual(500);
  const updates = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input.UpdateExpression);
  expect(updates).toHaveLength(2);
  expect(updates[1]).toBe('ADD tries :minus');
});

describe('asking for a new reset code', () => {
  it('starts its tries again only after Cognito sent one', async () => {
    cognito.on(ForgotPasswordCommand).resolves({});
    ddb.on(PutCommand).resolves({});
    expect((await forgot(publicEvent('/auth/password/forgot', { email }), context)).statusCode).toBe(202);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(1);
  });

  it('when Cognito sends none (too many codes asked for), the earlier code keeps the tries it has left', async () => {
    cognito.on(ForgotPasswordCommand).rejects(new LimitExceededException({ message: 'Attempt limit exceeded', ...meta }));
    expect((await forgot(publicEvent('/auth/password/forgot', { email }), context)).statusCode).toBe(202);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });
});
