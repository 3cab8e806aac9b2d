import type { BuildOptions } from 'esbuild';

/**
 * The esbuild options of infra/api-function.ts (NodejsFunction `bundling`), written out: what the
 * benchmark's bundles (bench/bundles.ts) and test/infra/bundle-growth.test.ts build with. A module
 * of its own so that a test can import it without the benchmark.
 */
const BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";
export const DEPLOYED_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  minify: true,
  sourcemap: false,
  mainFields: ['module', 'main'],
  banner: { js: BANNER },
  logLevel: 'silent',
};
