import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/**
 * Response compression for the shared chain. API Gateway's HTTP APIs do not compress, and a
 * function's answer may be at most 6 MB, so the function compresses: a 5,000-card tree with
 * 1,000-character descriptions is 6.2 MB of JSON and about 1.2 MB in brotli (docs/performance.md).
 * Levels are chosen for a function's CPU, measured on that tree: brotli quality 4 (0.14 s) is as
 * small as gzip level 6 (0.41 s); gzip level 4 (0.10 s) is within 17 % of level 6.
 */
export type Encoding = 'br' | 'gzip';

/** Below this, compression saves a few hundred bytes for its own cost (CloudFront's threshold too). */
export const COMPRESS_MIN_BYTES = 1000;

/**
 * The encoding to answer with, from `Accept-Encoding` (RFC 9110 §12.5.3): brotli where accepted,
 * else gzip; `q=0` refuses an encoding, `*` accepts any not named. None when nothing fits.
 */
export function negotiateEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [rawName, ...params] = part.toLowerCase().split(';');
    // RFC 9110 allows white space around the ';' of a parameter.
    const name = rawName?.trim();
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q ? Number(q.slice(2)) : 1;
    weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weightOf = (encoding: Encoding) => weights.get(encoding) ?? weights.get('*') ?? 0;
  const best = (['br', 'gzip'] as const).filter((encoding) => weightOf(encoding) > 0);
  best.sort((a, b) => weightOf(b) - weightOf(a));
  return best[0];
}

export function compress(body: Buffer, encoding: Encoding): Buffer {
  if (encoding === 'br') {
    return brotliCompressSync(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    });
  }
  return gzipSync(body, { level: 4 });
}
