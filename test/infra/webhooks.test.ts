import { Template } from 'aws-cdk-lib/assertions';
import { functionIdOf } from '../../infra/api-function';
import { WEBHOOK_OLDEST_MESSAGE_ALARM_SECONDS } from '../../infra/monitoring';
import type { RowTables } from '../../infra/task-board-stack';
import { deliveriesQueueSettings } from '../../infra/webhook-queue';
import { KEY_PURPOSE } from '../../infra/webhooks';
import {
  type QueueConsumerRow,
  queueConsumers,
  type RouteRow,
  routes,
  schedules,
  socketRoutes,
  streamConsumers,
} from '../../lib/routes';
import { ENV } from '../../lib/runtime/config';
import { synthDeployment } from './deployment';

/**
 * Webhooks on AWS (infra/webhooks.ts), on fixture tables so that the grants are shown whatever
 * rows the route table holds: a route that sends to the queue, one that seals with the key, one
 * that does neither, and a queue consumer that decrypts and re-sends. Then the real tables.
 */
type Resource = { Type: string; Properties: any; DeletionPolicy?: string; UpdateReplacePolicy?: string };

const like = routes['boards.get'] as RouteRow;
const consumer: QueueConsumerRow = {
  entry: Object.values(streamConsumers)[0]!.entry,
  id: 'fixture.deliver',
  summary: 'fixture queue consumer',
  table: ['dynamodb:BatchGetItem'],
  cognito: [],
  queue: ['sqs:SendMessage'],
  key: ['kms:Decrypt'],
  env: [ENV.webhookQueueUrl, ENV.webhookKeyId],
  timeoutSeconds: 20,
  batchSize: 7,
  maxReceiveCount: 4,
  maxConcurrency: 3,
};
const fixtureRows: Record<string, RouteRow> = {
  'fixture.send': {
    ...like,
    id: 'fixture.send',
    path: '/fixture-send/{id}',
    queue: ['sqs:SendMessage'],
    env: [ENV.webhookQueueUrl],
  },
  'fixture.seal': { ...like, id: 'fixture.seal', path: '/fixture-seal/{id}', key: ['kms:Encrypt'], env: [ENV.webhookKeyId] },
  'fixture.plain': { ...like, id: 'fixture.plain', path: '/fixture-plain/{id}', env: [ENV.webhookAllowHosts] },
};
// No row of the real tables is copied with its webhook fields: the fixture decides who gets what.
const withoutWebhookFields = <T extends object>(table: Record<string, T>) =>
  Object.fromEntries(
    Object.entries(table).map(([id, row]) => {
      const { queue: _q, key: _k, env = [], ...rest } = row as T & { queue?: unknown; key?: unknown; env?: string[] };
      return [id, { ...rest, env: env.filter((name) => !name.startsWith('WEBHOOK_')) } as T];
    }),
  );
const tables: RowTables = {
  routes: { ...withoutWebhookFields(routes as Record<string, RouteRow>), ...fixtureRows },
  socketRoutes: withoutWebhookFields(socketRoutes),
  streamConsumers: withoutWebhookFields(streamConsumers),
  schedules: withoutWebhookFields(schedules),
  queueConsumers: { 'fixture.deliver': consumer },
};

const built = synthDeployment({ stage: 'prod' }, { tables });
const resources = Template.fromJSON(built.flat).toJSON().Resources as Record<string, Resource>;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const refName = (value: any): string | undefined => value?.['Fn::GetAtt']?.[0] ?? value?.Ref;
const functionOf = (rowId: string) => {
  const found = ofType('AWS::Lambda::Function').filter(([id]) => id.startsWith(`${functionIdOf(rowId)}Function`));
  expect(found).toHaveLength(1);
  return found[0]!;
};
const queues = ofType('AWS::SQS::Queue').filter(([id]) => id.startsWith('Webhooks'));
const deliveriesId = queues.find(([id]) => id.startsWith('WebhooksDeliveries'))![0];
const deadLettersId = queues.find(([id]) => id.startsWith('WebhooksDeadLetters'))![0];
const [keyId, key] = ofType('AWS::KMS::Key').find(([id]) => id.startsWith('WebhooksSecretsKey'))!;

/** A role's statements that name the deliveries queue or the key: [actions, resource, condition]. */
function webhookStatementsOf(rowId: string) {
  const roleId = refName(functionOf(rowId)[1].Properties.Role)!;
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[])
    .filter((s) => [s.Resource].flat().some((r: any) => [deliveriesId, keyId, deadLettersId].includes(refName(r)!)))
    .map((s) => ({
      actions: [s.Action].flat().sort(),
      resources: [s.Resource]
        .flat()
        .map((r: any) => (refName(r) === keyId ? 'key' : refName(r) === deliveriesId ? 'queue' : 'other')),
      condition: s.Condition,
    }));
}

describe('the deliveries queue and its dead-letter queue', () => {
  it('encrypts both, takes TLS only, keeps messages 4 days and dead letters 14', () => {
    for (const [, queue] of queues) expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    expect(resources[deliveriesId]!.Properties.MessageRetentionPeriod).toBeGreaterThanOrEqual(4 * 24 * 3600);
    expect(resources[deadLettersId]!.Properties.MessageRetentionPeriod).toBe(14 * 24 * 3600);
    const tlsOnly = ofType('AWS::SQS::QueuePolicy').filter(([, p]) =>
      p.Properties.Queues.some((q: any) => [deliveriesId, deadLettersId].includes(refName(q)!)),
    );
    expect(tlsOnly).toHaveLength(2);
    for (const [, policy] of tlsOnly) {
      expect(policy.Properties.PolicyDocument.Statement).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      );
    }
  });

  it("hides a received message for 6 x the consumer's timeout and dead-letters it after the row's receive count", () => {
    expect(resources[deliveriesId]!.Properties).toMatchObject({
      VisibilityTimeout: 6 * 20,
      MaximumMessageSize: 262_144,
      RedrivePolicy: { maxReceiveCount: 4, deadLetterTargetArn: { 'Fn::GetAtt': [deadLettersId, 'Arn'] } },
    });
  });

  it('feeds each queueConsumers row through an SQS event source: batch size, maximum concurrency, partial batch responses', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, m]) => refName(m.Properties.EventSourceArn) === deliveriesId,
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]![1].Properties).toMatchObject({
      FunctionName: { Ref: functionOf('fixture.deliver')[0] },
      BatchSize: 7,
      ScalingConfig: { MaximumConcurrency: 3 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it("keeps the queues and the key in the root stack, the consumer and its event source in its group's", () => {
    const root = built.root.template.Resources!;
    for (const id of [deliveriesId, deadLettersId, keyId]) expect(root).toHaveProperty(id);
    const group = built.stack.groups.get('fixture')!;
    const nested = [...built.nested.values()].find((t) => t.name === group.group)!.template.Resources!;
    expect(nested).toHaveProperty(functionOf('fixture.deliver')[0]);
    expect(Object.values(nested).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping')).toHaveLength(1);
  });
});

describe("the secrets' key", () => {
  it('rotates and is retained when the stack or the resource goes', () => {
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.DeletionPolicy).toBe('Retain');
    expect(key.UpdateReplacePolicy).toBe('Retain');
  });
});

describe('grants from the rows', () => {
  it('a row with `queue` may send to the deliveries queue and nothing more', () => {
    expect(webhookStatementsOf('fixture.send')).toEqual([
      { actions: ['sqs:SendMessage'], resources: ['queue'], condition: undefined },
    ]);
  });

  it('a row with `key` may use the key for its actions only, with the webhook-secret encryption context', () => {
    expect(webhookStatementsOf('fixture.seal')).toEqual([
      {
        actions: ['kms:Encrypt'],
        resources: ['key'],
        condition: { StringEquals: { 'kms:EncryptionContext:purpose': KEY_PURPOSE } },
      },
    ]);
  });

  it('a row with neither gets no queue or key statement, nor the queue or key in its environment', () => {
    expect(webhookStatementsOf('fixture.plain')).toEqual([]);
    const variables = functionOf('fixture.plain')[1].Properties.Environment?.Variables ?? {};
    expect(Object.keys(variables).filter((name) => name.startsWith('WEBHOOK_'))).toEqual([]);
  });

  it('the consumer may receive and delete (its event source), re-send, and decrypt with the context', () => {
    const statements = webhookStatementsOf('fixture.deliver');
    expect(statements.filter((s) => s.resources.includes('key'))).toEqual([
      {
        actions: ['kms:Decrypt'],
        resources: ['key'],
        condition: { StringEquals: { 'kms:EncryptionContext:purpose': KEY_PURPOSE } },
      },
    ]);
    const onQueue = statements.filter((s) => s.resources.includes('queue'));
    expect(onQueue.every((s) => s.condition === undefined && s.resources.every((r) => r === 'queue'))).toBe(true);
    expect(onQueue.flatMap((s) => s.actions).sort()).toEqual(
      [
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ].sort(),
    );
  });

  it('WEBHOOK_QUEUE_URL and WEBHOOK_KEY_ID go to the rows that name them, as the queue URL and the key ARN', () => {
    const variablesOf = (rowId: string) => functionOf(rowId)[1].Properties.Environment?.Variables ?? {};
    expect(Object.keys(variablesOf('fixture.send')).filter((n) => n.startsWith('WEBHOOK_'))).toEqual(['WEBHOOK_QUEUE_URL']);
    expect(Object.keys(variablesOf('fixture.seal')).filter((n) => n.startsWith('WEBHOOK_'))).toEqual(['WEBHOOK_KEY_ID']);
    const consumerVariables = variablesOf('fixture.deliver');
    // In the root stack, the values are the resources themselves.
    expect(consumerVariables.WEBHOOK_QUEUE_URL).toEqual({ Ref: deliveriesId });
    expect(consumerVariables.WEBHOOK_KEY_ID).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
  });
});

describe('alarms', () => {
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const named = (start: string) => alarms.filter((a) => String(a.AlarmDescription).startsWith(start));

  it('dead letters, the oldest waiting message, most attempts failing and many webhooks switched off each alarm with a runbook link', () => {
    const deadLetters = named('Webhook delivery messages dead-lettered');
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
    expect(deadLetters[0].Dimensions).toEqual([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLettersId, 'QueueName'] } }]);
    const oldest = named('The oldest webhook delivery message');
    expect(oldest).toHaveLength(1);
    expect(oldest[0]).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: WEBHOOK_OLDEST_MESSAGE_ALARM_SECONDS,
    });
    expect(named('Half or more of all webhook delivery attempts failed')).toHaveLength(1);
    expect(named('Ten or more webhooks were switched off')).toHaveLength(1);
    for (const alarm of [...deadLetters, ...oldest, ...named('Half or more'), ...named('Ten or more webhooks')]) {
      expect(alarm.AlarmDescription).toMatch(/Runbook: https:\/\/\S+#webhook/);
    }
  });

  it("reads the worker's counts as the worker writes them: namespace TaskBoard, dimension service", () => {
    const [failing] = named('Half or more of all webhook delivery attempts failed');
    const read = failing.Metrics.flatMap((m: any) => (m.MetricStat ? [m.MetricStat.Metric] : []));
    expect(read.map((m: any) => m.MetricName).sort()).toEqual(['WebhookAttemptFailed', 'WebhookDelivered']);
    for (const metric of read) {
      expect(metric.Namespace).toBe('TaskBoard');
      expect(metric.Dimensions).toEqual([{ Name: 'service', Value: 'task-board' }]);
    }
    const [off] = named('Ten or more webhooks were switched off');
    expect(off).toMatchObject({ MetricName: 'WebhookDisabled', Namespace: 'TaskBoard' });
    expect(off.Dimensions).toEqual([{ Name: 'service', Value: 'task-board' }]);
  });
});

describe('the real route table', () => {
  it('synthesizes with its queueConsumers rows (cdk-nag clean), one queue, one key', () => {
    const real = synthDeployment({ stage: 'dev' });
    const flat = Template.fromJSON(real.flat).toJSON().Resources as Record<string, Resource>;
    const types = Object.values(flat).map((r) => r.Type);
    expect(types.filter((t) => t === 'AWS::KMS::Key')).toHaveLength(1);
    const settings = deliveriesQueueSettings();
    const mappings = Object.values(flat).filter(
      (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionResponseTypes && !r.Properties.StartingPosition,
    );
    expect(mappings).toHaveLength(Object.keys(queueConsumers).length);
    for (const mapping of mappings) {
      expect(mapping.Properties.BatchSize).toBe(settings.consumer!.batchSize);
      expect(mapping.Properties.ScalingConfig).toEqual({ MaximumConcurrency: settings.consumer!.maxConcurrency });
    }
  });
});
