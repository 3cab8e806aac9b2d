import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppProps } from 'aws-cdk-lib';
import { type BuildOptions, buildApp } from '../../infra/build-app';
import type { RowTables } from '../../infra/task-board-stack';
import { flattenTemplate, type TemplateJson } from '../../infra/template-tree';
import { appProps } from './app-props';

export interface SynthesizedTemplate {
  /** `TaskBoard-dev`, or the nested stack's group (`boards`). */
  name: string;
  file: string;
  template: TemplateJson;
  /** The file's size as CDK wrote it: what CloudFormation is given. */
  bytes: number;
}

/**
 * The app synthesized (cdk-nag included: synth throws on a finding), with its root template, its
 * nested stacks' templates by logical id, and all of them flattened into one (infra/template-tree.ts)
 * for the checks that look at the whole deployment, wherever each resource lives. `context` is
 * what `-c` gives (the stage, CDK's own keys); `settings` replace the stage file's (infra/stages/).
 */
export function synthDeployment(
  context: Record<string, unknown> = {},
  options: { tables?: RowTables; props?: AppProps; settings?: BuildOptions['settings'] } = {},
) {
  const built = buildApp(appProps({ ...options.props, context: { 'aws:cdk:bundling-stacks': [], ...context } }), {
    tables: options.tables,
    settings: options.settings,
  });
  const assembly = built.app.synth();
  const read = (name: string, file: string): SynthesizedTemplate => {
    const text = readFileSync(join(assembly.directory, file), 'utf8');
    return { name, file, template: JSON.parse(text), bytes: Buffer.byteLength(text) };
  };
  const root = read(built.stack.stackName, built.stack.templateFile);
  const nested = new Map(
    [...built.stack.groups.values()].map((group) => [
      built.stack.getLogicalId(group.nestedStackResource!),
      read(group.group, group.templateFile),
    ]),
  );
  const flat = flattenTemplate(root.template, (logicalId) => {
    const found = nested.get(logicalId);
    if (!found) throw new Error(`no nested stack ${logicalId}`);
    return found.template;
  });
  return { ...built, assembly, root, nested, templates: [root, ...nested.values()], flat };
}
