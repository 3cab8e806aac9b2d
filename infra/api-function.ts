import { resolve } from 'node:path';
import type { RemovalPolicy } from 'aws-cdk-lib';
import { Duration } from 'aws-cdk-lib';
import type { IUserPool } from 'aws-cdk-lib/aws-cognito';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { COLUMN_POSITION_INDEX } from '../lib/data/table';
import type { RouteRow } from '../lib/routes';
import { ENV } from '../lib/runtime/config';

export interface ApiFunctionProps {
  row: RouteRow;
  /** Values every function reads at cold start: the token issuer, the pool and its app client. */
  environment: Record<string, string>;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
}

/**
 * Function defaults, fixed once: Node.js 24 on arm64, ESM bundle with the AWS SDK inside
 * (minified, no source maps: see docs/performance.md), active tracing, its own log group with
 * retention, and a role that holds nothing until a grant below adds exactly what the route uses.
 */
export class ApiFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: ApiFunctionProps,
  ) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.logRemovalPolicy });
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.row.method} ${props.row.path}`,
    });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn], // this attribute already covers the group's streams
      }),
    );
    this.fn = new NodejsFunction(this, 'Function', {
      entry: resolve(props.row.entry),
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 1024,
      timeout: Duration.seconds(props.row.timeoutSeconds ?? 10),
      tracing: Tracing.ACTIVE,
      logGroup,
      role: this.role,
      description: `${props.row.method} ${props.row.path}: ${props.row.summary}`,
      environment: props.environment,
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        minify: true,
        sourceMap: false,
        mainFields: ['module', 'main'],
        externalModules: [],
        // Some bundled CommonJS dependencies call require() for Node built-ins.
        banner:
          "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
        forceDockerBundling: false,
      },
    });
  }

  /** The route's table actions on the table and its index actions on the index, exactly; plus TABLE_NAME. */
  grantTable(table: ITable): void {
    const { table: actions, index = [] } = this.props.row;
    if (actions.length === 0 && index.length === 0) return;
    if (actions.length > 0) {
      this.role.addToPolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: [...actions], resources: [table.tableArn] }));
    }
    if (index.length > 0) {
      this.role.addToPolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: [...index],
          resources: [`${table.tableArn}/index/${COLUMN_POSITION_INDEX}`],
        }),
      );
    }
    this.fn.addEnvironment(ENV.tableName, table.tableName);
  }

  /** The route's Cognito admin actions on the pool (the pool's id is in every function's environment). */
  grantUserPool(pool: IUserPool): void {
    const actions = this.props.row.cognito;
    if (actions.length === 0) return;
    this.role.addToPolicy(new PolicyStatement({ actions: [...actions], resources: [pool.userPoolArn] }));
  }
}
