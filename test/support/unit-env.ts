// Unit tests import handler modules, which read their configuration at load; these values
// point nowhere, because unit tests stub every AWS call (aws-sdk-client-mock).
process.env.TABLE_NAME ??= 'unit-test-table';
process.env.USER_POOL_ID ??= 'us-east-1_unitTest';
process.env.USER_POOL_CLIENT_ID ??= 'unit-test-client';
process.env.TOKEN_ISSUER ??= 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_unitTest';
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'unit';
process.env.AWS_SECRET_ACCESS_KEY ??= 'unit';
process.env.LOG_LEVEL ??= 'SILENT';
process.env.METRICS_DISABLED ??= 'true';
process.env.SOCKET_URL ??= 'wss://unit-test.execute-api.us-east-1.amazonaws.com/live';
process.env.SOCKET_CALLBACK_URL ??= 'https://unit-test.execute-api.us-east-1.amazonaws.com/live';
process.env.WEBHOOK_KEY_ID ??= 'alias/unit-test-webhook-secrets';
process.env.WEBHOOK_QUEUE_URL ??= 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-test-webhook-deliveries';
