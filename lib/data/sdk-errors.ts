/**
 * Reading DynamoDB's errors without loading its client: lib/http/problem.ts needs this in every
 * function, including those that never touch the table.
 */

/** Which items of a cancelled transaction failed their condition (by index), per DynamoDB's reasons. */
export function cancellationCodes(error: unknown): string[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  return reasons?.map((reason) => reason.Code ?? 'None');
}
