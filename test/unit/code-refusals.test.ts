import {
  CodeMismatchException,
  CognitoIdentityProviderClient,
  ConfirmForgotPasswordCommand,
  DescribeUserPoolClientCommand,
  LimitExceededException,
  TooManyFailedAttemptsException,
} from '@aws-sdk/client-cognito-identity-provider';
import { BatchGetCommand, DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as reset } from '../../functions/auth/password-reset';
import { apiEvent } from '../support/events';

/**
 * Cognito's own refusals of a reset code, which the local emulator never gives (it has no
 * lockout): each is the same 400 invalid_code a wrong code gets, never a 500. The five tries the
 * service counts itself are tested over the local stack (test/integration/identity-provider.test.ts).
 */
const cognito = mockClient(CognitoIdentityProviderClient);
const ddb = mockClient(DynamoDBDocumentClient);
const context = {} as Context;
const meta = { $metadata: {} };
const email = 'owner@example.test';

function resetEvent(): APIGatewayProxyEventV2 {
  const withToken = apiEvent('unused', 'POST', '/auth/password/reset', { email, code: '123456', new_password: 'a new password' });
  const { authorization: _authorization, ...headers } = withToken.headers;
  return { ...withToken, headers };
}

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
