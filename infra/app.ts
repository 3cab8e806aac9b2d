import { buildApp } from './build-app';

// `npm run synth` / `npm run deploy -- -c stage=prod` (see README "Deploying").
buildApp().app.synth();
