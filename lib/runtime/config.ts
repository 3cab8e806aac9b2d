/**
 * Environment contract between CDK (which sets these on each function) and the code (which reads
 * them once, at cold start, in the module that needs them). A missing variable fails the cold
 * start loudly instead of failing some later request obscurely.
 */
export const ENV = {
  tableName: 'TABLE_NAME',
  userPoolId: 'USER_POOL_ID',
  userPoolClientId: 'USER_POOL_CLIENT_ID',
  tokenIssuer: 'TOKEN_ISSUER',
} as const;

export type EnvName = (typeof ENV)[keyof typeof ENV];

export function requireEnv(name: EnvName): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}
