/**
 * Why a fetch failed, from its `cause` chain (ECONNREFUSED 127.0.0.1:1, ENOTFOUND …, certificate
 * …), for the command-line scripts' one-line messages.
 */
export function fetchFailure(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const e = current as { name?: string; message?: string; cause?: unknown };
    if (e.name === 'TimeoutError') return 'no answer in time';
    if (e.message && !parts.includes(e.message)) parts.push(e.message);
    current = e.cause;
  }
  return parts.join(': ') || String(error);
}
