import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { instrumentClient, type RequestTrace, type TraceMode, traceModeFrom, traceStorage } from '../../infra/local/trace';

/**
 * The local stack's trace (TASK_BOARD_TRACE): `1` asks DynamoDB for each call's consumed capacity,
 * `calls` records the calls without asking anything the deployed service does not ask, and a
 * value it does not know stops the stack before it starts.
 */

/** What a traced client sends DynamoDB for one GetItem, and what the trace recorded of it. */
async function sentWith(mode: TraceMode) {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    }),
  );
  instrumentClient(client, mode);
  let sent: Record<string, unknown> = {};
  // Answers in place of DynamoDB, with the request as it would have gone out.
  client.middlewareStack.add(
    () => async (args) => {
      sent = JSON.parse(String((args.request as { body: string }).body));
      return { response: { statusCode: 200, headers: {}, body: undefined }, output: { $metadata: {} } } as never;
    },
    { step: 'finalizeRequest', name: 'answeredHere', priority: 'low' },
  );
  const trace: RequestTrace = { calls: [] };
  await traceStorage.run(trace, () =>
    client.send(new GetCommand({ TableName: 'any-table', Key: { pk: 'BOARD#1', sk: '#BOARD' } })),
  );
  client.destroy();
  return { sent, calls: trace.calls.map((call) => call.command) };
}

it('asks for consumed capacity only when tracing capacity', async () => {
  const withCapacity = await sentWith('capacity');
  expect(withCapacity.sent.ReturnConsumedCapacity).toBe('TOTAL');
  expect(withCapacity.calls).toEqual(['GetItemCommand']);

  const callsOnly = await sentWith('calls');
  expect(callsOnly.sent).not.toHaveProperty('ReturnConsumedCapacity');
  expect(callsOnly.calls).toEqual(['GetItemCommand']);
});

it('reads TASK_BOARD_TRACE: unset or 0 is off, 1 is capacity, calls is calls, anything else is refused', () => {
  expect(traceModeFrom(undefined)).toBe('off');
  expect(traceModeFrom('')).toBe('off');
  expect(traceModeFrom('1')).toBe('capacity');
  expect(traceModeFrom('calls')).toBe('calls');
  expect(traceModeFrom('0')).toBe('off');
  expect(() => traceModeFrom('yes')).toThrow('TASK_BOARD_TRACE must be 1, calls or 0, got yes');
});
