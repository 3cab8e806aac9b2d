import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { readStackConfig } from './config';
import type { StageSettings } from './settings';
import { type RowTables, TaskBoardStack } from './task-board-stack';

export interface BuildOptions {
  /** The row tables; lib/routes.ts's unless a test passes others (test/infra/headroom.test.ts). */
  tables?: RowTables;
  /**
   * Settings that replace the stage file's, key by key, validated the same way: for tests and
   * for code that embeds the app. The command line has no such thing (`-c` takes only `stage`).
   */
  settings?: Partial<StageSettings>;
}

/**
 * The CDK app, built the same way by `cdk synth` (infra/app.ts) and by the infra tests: the stage
 * from `-c stage=` (cdk.json: dev), its settings from infra/stages/ (infra/config.ts). No account
 * or region is resolved (environment-agnostic), so synth needs no credentials.
 */
export function buildApp(props: AppProps = {}, options: BuildOptions = {}) {
  const app = new App(props);
  const config = readStackConfig(app.node, options.settings);
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

/**
 * The files an earlier synth left in an output directory (cdk.out): each stack's template, the
 * nested stacks' templates, the asset and metadata manifests, and what `npm run sam:env` derived
 * from them (`*.sam-local.template.json`, `sam-env.*.json`). infra/app.ts removes them before each
 * synth, so that cdk.out holds the stage asked for and nothing else: after `cdk synth -c
 * stage=prod`, cfn-lint and sam:env find TaskBoard-prod's templates, not also an older
 * TaskBoard-dev's. Asset directories (`asset.<hash>`, named by content) stay, as a cache.
 */
const EARLIER_SYNTH = /(\.template|\.assets|\.metadata)\.json$|^sam-env\..+\.json$/;

export function clearEarlierSynth(outdir: string): string[] {
  if (!existsSync(outdir)) return [];
  const removed = readdirSync(outdir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && EARLIER_SYNTH.test(entry.name))
    .map((entry) => entry.name);
  for (const name of removed) rmSync(join(outdir, name));
  return removed;
}
