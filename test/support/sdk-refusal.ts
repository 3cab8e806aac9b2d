/**
 * What an AWS SDK v3 client throws for a refused call, as a plain object to compare: the error's
 * name (what a handler catches), the HTTP status and the message. Fails the test if the call
 * succeeds.
 */
export async function refusal(promise: Promise<unknown>): Promise<{ name: string; status?: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { name: string; message: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error('expected a refusal');
}
