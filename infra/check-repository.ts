import { readFileSync } from 'node:fs';
import { BASE_STAGES, defaultRunbookUrl, repositoryWebUrl } from './settings';
import { STAGE_FILES } from './stages';

/**
 * `node --import tsx infra/check-repository.ts <repository URL>`: the pipeline's check that
 * package.json's `repository`, from which every stage's alarms and dashboard link the runbook
 * (infra/settings.ts `defaultRunbookUrl`), is the repository the pipeline runs in
 * (`$GITHUB_SERVER_URL/$GITHUB_REPOSITORY`). Prints the runbook link and exits 0, or says what to
 * change and exits 1; 64 on a usage error. A fork fails here until its package.json names it.
 */
export function checkRepository(expected: string, root = process.cwd()): { ok: boolean; message: string } {
  const onDefault = BASE_STAGES.filter((stage) => STAGE_FILES[stage].runbookUrl === undefined);
  if (onDefault.length === 0) return { ok: true, message: 'Runbook links: every stage sets its runbookUrl' };
  const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { repository?: unknown };
  const actual = repositoryWebUrl(pkg.repository);
  const want = expected.replace(/\/+$/, '').replace(/\.git$/, '');
  if (actual.toLowerCase() !== want.toLowerCase()) {
    return {
      ok: false,
      message: `package.json "repository" is ${actual}, but this runs in ${want}: alarm emails and the dashboard would link another repository's runbook. Set "repository" to "git+${want}.git" (or set runbookUrl in infra/stages/${onDefault.join('.ts, ')}.ts).`,
    };
  }
  return { ok: true, message: `Runbook links (${onDefault.join(', ')}): ${defaultRunbookUrl(root)}#<section>` };
}

if (process.argv[1]?.endsWith('check-repository.ts')) {
  const [expected] = process.argv.slice(2);
  if (!expected || !/^https?:\/\//.test(expected)) {
    console.error('usage: node --import tsx infra/check-repository.ts <https://host/owner/repo>');
    process.exit(64);
  }
  const { ok, message } = checkRepository(expected);
  (ok ? console.log : console.error)(message);
  process.exit(ok ? 0 : 1);
}
