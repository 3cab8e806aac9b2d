import type { BuildOptions } from 'esbuild';
import { BUNDLE_ALIASES, BUNDLE_BANNER } from '../infra/bundling';

/**
 * The esbuild options of infra/api-function.ts (NodejsFunction `bundling`), written out: what the
 * benchmark's bundles (bench/bundles.ts) and test/infra/bundle-growth.test.ts build with. A module
 * of its own so that a test can import it without the benchmark. The banner and the aliases come
 * from infra/bundling.ts, which the CDK side reads too.
 */
export const DEPLOYED_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  minify: true,
  sourcemap: false,
  mainFields: ['module', 'main'],
  banner: { js: BUNDLE_BANNER },
  alias: BUNDLE_ALIASES,
  logLevel: 'silent',
};
