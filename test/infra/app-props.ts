import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppProps } from 'aws-cdk-lib';

/**
 * The props of every App a test builds (through buildApp or not), on top of its own.
 *
 * `outdir`: a directory of its own, under one directory per test file that afterAll removes. An
 * App given none takes CDK_OUTDIR where that is set, where a file's synths would overwrite one
 * another's assemblies while a test still reads one (stack.test.ts runs the bundles in its own);
 * and where it is not, it makes a `cdk.outXXXXXX` in the system's temporary directory as it is
 * constructed (synthesized or not, even when the stage's settings then fail), which nothing removes.
 *
 * `builtinCloudFormationValidation: false`: CDK's own template validation cannot fail a synth
 * here. Without the feature flag `@aws-cdk/core:validateAgainstDefaultRules`, which these apps
 * are not given, it turns each of its findings into a warning and reports success; yet it costs
 * some 4 s of CPU in every test file (its WebAssembly validator is compiled again in each file's
 * module registry). `npm run synth` (CI synthesizes every stage) still runs it. cdk-nag is the
 * app's own validation plugin (infra/build-app.ts): it runs as before and fails synth on a finding.
 */
let root: string | undefined;

afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

export function appProps(props: AppProps = {}): AppProps {
  root ??= mkdtempSync(join(tmpdir(), 'task-board-infra-'));
  return { builtinCloudFormationValidation: false, ...props, outdir: props.outdir ?? mkdtempSync(join(root, 'cdk.out-')) };
}

/** The props of an App whose functions are not bundled (`aws:cdk:bundling-stacks` empty), with `context`. */
export const unbundledAppProps = (context: Record<string, unknown> = {}): AppProps =>
  appProps({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
