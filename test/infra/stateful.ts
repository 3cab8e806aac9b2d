/**
 * What an existing deployment must keep where it is across an upgrade: every resource that holds
 * data, or a name, key or address that is unique or that someone outside the stack uses. Moving
 * one to another logical id (a nested stack included) makes CloudFormation create the new one
 * before it deletes the old one (cleanup phase): data would be orphaned or lost (a table, a pool,
 * logs, a dead-letter queue), clients would get new URLs (an API, a stage), or the create fails
 * on the name the old one still holds (an API Gateway v2 route key, a route response key, a
 * dashboard name, the region's API Gateway account setting).
 */
export const STATEFUL_TYPES: Record<string, string> = {
  'AWS::DynamoDB::Table': 'the data',
  'AWS::Cognito::UserPool': 'the accounts',
  'AWS::Cognito::UserPoolClient': 'its id is in every client and token',
  'AWS::Logs::LogGroup': 'function and access logs (retained in prod)',
  'AWS::SQS::Queue': 'dead-lettered stream batches; webhook deliveries waiting for their next attempt',
  'AWS::KMS::Key': 'every stored webhook secret is sealed under it (retained)',
  'AWS::Lambda::EventSourceMapping': "the stream consumers' position in the table stream",
  'AWS::ApiGatewayV2::Api': 'its id is the URL clients use',
  'AWS::ApiGatewayV2::Stage': 'its name is in the URL; unique per API',
  'AWS::ApiGatewayV2::Route': 'the route key is unique per API',
  'AWS::ApiGatewayV2::RouteResponse': 'the route response key is unique per route',
  'AWS::ApiGatewayV2::DomainName': 'the custom domain is unique per region',
  'AWS::ApiGatewayV2::ApiMapping': 'unique per domain and path',
  'AWS::ApiGateway::Account': "the region's API Gateway account setting (one per region)",
  'AWS::CloudWatch::Dashboard': 'the dashboard name is unique per account',
  'AWS::SNS::Topic': 'operators subscribe to it',
  'AWS::SNS::Subscription': 'a confirmed email subscription',
};

export type StatefulSnapshot = Record<string, string>;

/**
 * The stateful resources of a template: those of the types above, and whatever else is retained
 * when deleted (the region's API Gateway logging role), which a move would orphan by definition.
 * Logical id -> type, sorted by logical id.
 */
export function statefulResourcesOf(template: {
  Resources?: Record<string, { Type: string; DeletionPolicy?: string }>;
}): StatefulSnapshot {
  return Object.fromEntries(
    Object.entries(template.Resources ?? {})
      .filter(([, resource]) => resource.Type in STATEFUL_TYPES || resource.DeletionPolicy === 'Retain')
      .map(([logicalId, resource]) => [logicalId, resource.Type] as const)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}
