import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { readStackConfig } from './config';
import { type RowTables, TaskBoardStack } from './task-board-stack';

/**
 * The CDK app, built the same way by `cdk synth` (infra/app.ts) and by the infra tests. No
 * account or region is resolved (environment-agnostic), so synth needs no credentials. The row
 * tables are lib/routes.ts's unless a test passes others (test/infra/headroom.test.ts).
 */
export function buildApp(props: AppProps = {}, options: { tables?: RowTables } = {}) {
  const app = new App(props);
  const config = readStackConfig(app.node);
  const stack = new TaskBoardStack(app, `TaskBoard-${config.stage}`, {
    config,
    tables: options.tables,
    description: `Task-board REST service (${config.stage})`,
  });
  // Acknowledgements are also written into the template's Metadata, for whoever reviews it.
  Validations.of(app).addPlugins(
    new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }),
    new ServerlessChecks(app, { writeSuppressionsToCloudFormation: true }),
  );
  return { app, stack, config };
}
