import AWS from 'aws-sdk';
import { LambdaService } from 'cognito-local/lib/services/lambda';
import { CustomMessage } from 'cognito-local/lib/services/triggers/customMessage';
import { type LocalLambdaServer, localFunctionName, startLocalLambda } from '../../infra/local/lambda';
import { mailTexts } from '../../lib/auth/messages';
import { poolTriggers } from '../../lib/routes';

/**
 * The local Lambda stand-in (infra/local/lambda.ts), called the way the Cognito emulator calls a
 * trigger: cognito-local's own CustomMessage trigger and LambdaService over the aws-sdk Lambda
 * client it builds from its config, pointed at the stand-in on a free port of 127.0.0.1.
 */
const row = poolTriggers['auth.message'];
const quiet = { logger: { debug() {}, info() {}, warn() {}, error() {} } };
let server: LocalLambdaServer;
let client: AWS.Lambda;

beforeAll(async () => {
  server = await startLocalLambda([row]);
  client = new AWS.Lambda({
    endpoint: server.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(() => server.close());

const customMessage = (source: string) =>
  CustomMessage({ lambda: new LambdaService({ CustomMessage: localFunctionName(row) }, client) } as never)(
    quiet as never,
    {
      clientId: 'client',
      clientMetadata: undefined,
      code: '123456',
      source,
      userAttributes: [{ Name: 'email', Value: 'someone@example.com' }],
      username: 'someone',
      userPoolId: 'local_pool',
    } as never,
  );

describe('local Lambda stand-in', () => {
  it.each([
    ['CustomMessage_VerifyUserAttribute', mailTexts.addressVerification],
    ['CustomMessage_UpdateUserAttribute', mailTexts.addressVerification],
    ['CustomMessage_ForgotPassword', mailTexts.passwordReset],
  ])('runs the trigger for %s: the subject of its purpose, the code in the text', async (source, text) => {
    expect(await customMessage(source)).toEqual({
      emailSubject: text.emailSubject,
      emailMessage: text.emailMessage('123456'),
      smsMessage: '',
    });
  });

  it("leaves any other source's message as Cognito makes it", async () => {
    expect(await customMessage('CustomMessage_AdminCreateUser')).toEqual({ emailSubject: '', emailMessage: '', smsMessage: '' });
  });

  it('answers a handler that throws as Lambda does: 200, Unhandled, the error payload', async () => {
    const out = await client.invoke({ FunctionName: localFunctionName(row), Payload: '{}' }).promise();
    expect(out.StatusCode).toBe(200);
    expect(out.FunctionError).toBe('Unhandled');
    expect(JSON.parse(String(out.Payload))).toEqual({ errorType: 'TypeError', errorMessage: expect.any(String) });
  });

  it('takes the function by its ARN too', async () => {
    const arn = `arn:aws:lambda:us-east-1:000000000000:function:${localFunctionName(row)}`;
    const event = { triggerSource: 'CustomMessage_ForgotPassword', request: { codeParameter: '{####}' }, response: {} };
    const out = await client.invoke({ FunctionName: arn, Payload: JSON.stringify(event) }).promise();
    expect(JSON.parse(String(out.Payload)).response.emailSubject).toBe(mailTexts.passwordReset.emailSubject);
  });

  it('answers an unknown function with ResourceNotFoundException, and runs nothing', async () => {
    await expect(client.invoke({ FunctionName: 'local-nothing', Payload: '{}' }).promise()).rejects.toMatchObject({
      code: 'ResourceNotFoundException',
      statusCode: 404,
    });
  });
});
