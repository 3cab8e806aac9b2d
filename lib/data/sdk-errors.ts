import { DomainError, Unavailable } from '../domain/errors';

/**
 * Reading the SDK's errors (DynamoDB's and Cognito's) without loading a client: every transport's
 * error mapping (lib/http/problem.ts, lib/socket/chain.ts) needs this in every function, including
 * those that never touch the table.
 */

/** Which items of a cancelled transaction failed their condition (by index), per DynamoDB's reasons. */
export function cancellationCodes(error: unknown): string[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  return reasons?.map((reason) => reason.Code ?? 'None');
}

/** SDK error names that mean "storage or identity provider overloaded or down, try again". */
const TRANSIENT_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'ThrottlingError',
  'TooManyRequestsException',
  'LimitExceededException',
  'InternalServerError',
  'InternalErrorException',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TransactionInProgressException',
  'TimeoutError',
  'StorageBusy',
  'DeadlineExceeded',
  'AbortError',
]);
const NETWORK_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** Turns anything thrown into a DomainError, or undefined for a genuine bug (500). */
export function asDomainError(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (!(error instanceof Error)) return undefined;
  const code = (error as Error & { code?: string }).code;
  const status = (error as Error & { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const codes = cancellationCodes(error);
  if (codes) {
    // Throttled, or still losing to concurrent transactions after transactWrite's retries:
    // transient storage contention, not a conflict with what the client asked for.
    if (
      codes.some(
        (code) => code === 'ThrottlingError' || code === 'ProvisionedThroughputExceeded' || code === 'TransactionConflict',
      )
    ) {
      return new Unavailable('The database is busy; retry shortly.');
    }
    return undefined;
  }
  if (
    TRANSIENT_ERROR_NAMES.has(error.name) ||
    (code && NETWORK_ERROR_CODES.has(code)) ||
    (status !== undefined && status >= 500)
  ) {
    return new Unavailable('A backing service is busy or unavailable; retry shortly.');
  }
  return undefined;
}
