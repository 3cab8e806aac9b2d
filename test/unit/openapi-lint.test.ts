import { join } from 'node:path';
import { REPO_ROOT, runCommand } from '../support/run-node';

/**
 * docs/openapi.json lints clean: Redocly's recommended rules (redocly.yaml) and Spectral's OpenAPI
 * rules with the OWASP API Security ruleset (.spectral.yaml), no error and no warning. The rules
 * turned off, and why, are in those two files and in README.md ("Linting the API document").
 * The CLIs run as child processes (their programmatic APIs are ESM-only and slow to load under
 * jest); each is killed by its pid if it overruns.
 */
const root = REPO_ROOT;
// A hang guard, not a speed target: on a busy shared 2-core machine, Spectral alone can take over
// 40 s.
const DEADLINE_MS = 240_000;

/** A CLI of node_modules/.bin, with no telemetry and no update check: the test must not reach the network. */
const run = (bin: string, args: string[]) =>
  runCommand(join(root, 'node_modules/.bin', bin), args, {
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    timeoutMs: DEADLINE_MS,
  });

describe('docs/openapi.json lints clean', () => {
  it(
    "with Redocly's recommended rules and with Spectral's OpenAPI and OWASP API Security rules",
    async () => {
      const [redocly, spectral] = await Promise.all([
        run('redocly', ['lint', 'docs/openapi.json', '--config', 'redocly.yaml', '--format=json']),
        run('spectral', [
          'lint',
          'docs/openapi.json',
          '--ruleset',
          '.spectral.yaml',
          '--format',
          'json',
          '--fail-severity',
          'hint',
          '--quiet',
        ]),
      ]);

      const redoclyReport = JSON.parse(redocly.stdout) as { totals: Record<string, number>; problems: unknown[] };
      expect(redoclyReport.problems).toEqual([]);
      expect(redoclyReport.totals).toEqual(expect.objectContaining({ errors: 0, warnings: 0 }));
      expect(redocly.code).toBe(0);

      // Spectral prints a JSON array of results (information and hints included).
      const spectralResults = JSON.parse(spectral.stdout) as {
        code: string;
        message: string;
        path: string[];
      }[];
      expect(spectralResults.map(({ code, message, path }) => `${code} at ${path.join('.')}: ${message}`)).toEqual([]);
      expect(spectral.code).toBe(0);
    },
    DEADLINE_MS + 5_000,
  );
});
