import type { Node } from 'constructs';

/**
 * Deployment settings, read from CDK context (`-c key=value` or cdk.json) and validated once.
 * `stage` picks safe defaults; each can be overridden on its own.
 */
export type Stage = 'dev' | 'prod';

export interface StackConfig {
  stage: Stage;
  /** Table deletion protection (prod default true). */
  deletionProtection: boolean;
  /** Keep the table and the user pool when the stack is deleted (prod default true). */
  retainData: boolean;
  corsOrigins: string[];
  logRetentionDays: number;
}

const STAGES: Stage[] = ['dev', 'prod'];

export function readStackConfig(node: Node): StackConfig {
  const stage = String(node.tryGetContext('stage') ?? 'dev');
  if (!STAGES.includes(stage as Stage)) throw new Error(`context "stage" must be one of ${STAGES.join(', ')}; got "${stage}"`);
  const prod = stage === 'prod';
  const corsOrigins = String(node.tryGetContext('corsOrigins') ?? '*')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin))
      throw new Error(`context "corsOrigins": "${origin}" is not an origin`);
  }
  return {
    stage: stage as Stage,
    deletionProtection: flag(node, 'deletionProtection', prod),
    retainData: flag(node, 'retainData', prod),
    corsOrigins,
    logRetentionDays: prod ? 365 : 30,
  };
}

function flag(node: Node, key: string, fallback: boolean): boolean {
  const value = node.tryGetContext(key);
  if (value === undefined) return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`context "${key}" must be true or false; got "${value}"`);
}
