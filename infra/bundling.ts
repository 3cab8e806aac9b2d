/**
 * How every function is bundled: the one description that CDK's NodejsFunction
 * (infra/api-function.ts) and the esbuild replica (bench/esbuild-options.ts, which the bench, the
 * bundle-growth and the SAM tests build with) both read, so that the replica stays the deployed
 * bundle byte for byte (`npm run bench` compares the two: bench/bundles.ts `replicaCheck`).
 */

/** Some bundled CommonJS dependencies call require() for Node built-ins. */
export const BUNDLE_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/**
 * Packages replaced in every bundle, with their replacement (a path from the repository root,
 * where both CDK's local esbuild and the replica run): the SDK's default credential chain by the
 * environment's credentials, which is all a Lambda function ever uses of it
 * (lib/runtime/env-credentials.ts says why; docs/performance.md measures it).
 */
export const BUNDLE_ALIASES: Record<string, string> = {
  '@aws-sdk/credential-provider-node': './lib/runtime/env-credentials.ts',
};

/** The aliases as NodejsFunction's `esbuildArgs` (`--alias:<package>=<path>`, as esbuild's CLI takes them). */
export const aliasArgs = (): string[] => Object.entries(BUNDLE_ALIASES).map(([name, path]) => `${name}=${path}`);
