import { CfnParameter, NestedStack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

export interface FunctionGroupProps {
  /** The group (infra/layout.ts `groupOf`): `boards`, `cards`, `live`, ... */
  group: string;
  /** The root stack's description, which the group's own adds to. */
  description: string;
}

/**
 * One group's functions (infra/layout.ts): each function with its role, invoke permission and API
 * integration, a schedule's rule, and the group's errors and throttles alarms. Everything here is
 * stateless and named by CloudFormation, so it can be made, moved or replaced without losing
 * anything; what the root stack's resources need from it CDK passes as nested stack outputs and
 * parameters.
 */
export class FunctionGroup extends NestedStack {
  readonly group: string;

  constructor(scope: Construct, id: string, props: FunctionGroupProps) {
    super(scope, id, { description: `${props.description}: ${props.group} functions` });
    this.group = props.group;
  }

  /**
   * A value of the root stack under a parameter name of our choosing, made once per group. CDK
   * names the parameters it makes for cross-stack references after construct paths; where a
   * policy's resource text is acknowledged by cdk-nag (the WebSocket API id in ManageConnections),
   * a name that does not depend on paths keeps that acknowledgement exact.
   */
  parameter(name: string, value: string): string {
    const existing = this.node.tryFindChild(name);
    if (existing instanceof CfnParameter) return existing.valueAsString;
    const parameter = new CfnParameter(this, name, { type: 'String' });
    this.setParameter(name, value);
    return parameter.valueAsString;
  }
}
