import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readStackConfig } from './config';
import { TaskBoardStack } from './task-board-stack';

/**
 * CDK entry: `npm run synth` / `npm run deploy -- -c stage=prod`. No account or region is
 * resolved at synth time (environment-agnostic), so synth needs no credentials.
 */
const app = new App();
const config = readStackConfig(app.node);
new TaskBoardStack(app, `TaskBoard-${config.stage}`, {
  config,
  description: `Task-board REST service (${config.stage})`,
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
