/**
 * Three tiers (see README "Tests"): unit (no I/O), integration (HTTP against the one local stack
 * started in global setup), infra (CDK assertions and cdk-nag). @swc/jest compiles TypeScript and
 * the ESM-only @middy packages; no TypeScript JS API is needed.
 */
const transform = {
  '^.+\\.(t|j|mj)s$': [
    '@swc/jest',
    { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
  ],
};
const common = {
  transform,
  transformIgnorePatterns: ['node_modules/(?!(@middy|@seriousme)/)'],
  // @middy/core exports only an `import` condition, which jest's CommonJS resolver skips.
  moduleNameMapper: { '^@middy/(core|util)$': '<rootDir>/node_modules/@middy/$1/index.js' },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testEnvironment: 'node',
};

export default {
  // Two cores on every machine, CI included, and one worker more: many files spend much of their
  // time waiting (rate-limit windows, the SDK's backoff, live events), and with two workers the
  // cores were idle a fifth of a run (docs/ci.md, "Where the time goes").
  maxWorkers: 3,
  // Jest reads the timeout only at the top level, and for every test: a hang guard, not a
  // performance target, wide enough for a shared 2-core machine with other work beside the run.
  // On a busy machine (other jobs beside the run), a whole integration file can take over 10 min
  // and a single test (labels' 60-card cascade, big-board's seeding) over 60 s, where the whole
  // suite takes about 15 min on a shared one (docs/ci.md). A file's jest.setTimeout replaces
  // it: set none shorter.
  testTimeout: 300_000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/unit-env.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    { ...common, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
  ],
};
