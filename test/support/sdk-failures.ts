import { ProvisionedThroughputExceededException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';

/**
 * The DynamoDB failures the unit tests make the SDK throw (aws-sdk-client-mock), for the paths
 * DynamoDB Local cannot show on demand.
 */

/** A throttled request, as DynamoDB answers it when a partition is over its capacity. */
export const throttled = () => new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} });

/** A cancelled transaction with one reason code per item, in the items' order. */
export const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: `Transaction cancelled [${codes.join(', ')}]`,
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
