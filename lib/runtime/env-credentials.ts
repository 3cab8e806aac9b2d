import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { AwsCredentialIdentityProvider } from '@smithy/types';

/**
 * What a deployed function's bundle has in place of the SDK's default credential chain
 * (`@aws-sdk/credential-provider-node`): esbuild aliases that package to this module
 * (infra/bundling.ts), so every client of the bundle reads its credentials from the environment.
 *
 * Why: Lambda always hands a function its role's credentials in `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, and the chain's first link is exactly that
 * (`fromEnv`); `sam local` passes credentials the same way. The chain's other links (SSO, INI and
 * process profiles, web identity, the container and instance metadata endpoints, the console
 * login) never run in a function, yet the chain imports them all, and with them the STS, SSO and
 * sign-in clients: about 135 KB of the 400 KB bundle, parsed at every cold start
 * (docs/performance.md, "Cold import"). The local stack runs the handlers unbundled, where the
 * whole chain is still there.
 *
 * Unlike the chain, `AWS_PROFILE` is not consulted: a function has no profile files.
 */
export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}): AwsCredentialIdentityProvider => fromEnv(init);
