import { buildApp, clearEarlierSynth } from './build-app';

// `npm run synth` / `npm run deploy -- -c stage=prod` (docs/operators.md, "Stages"). The CLI
// names its output directory (cdk.out, or --output) in CDK_OUTDIR.
if (process.env.CDK_OUTDIR) clearEarlierSynth(process.env.CDK_OUTDIR);
buildApp().app.synth();
