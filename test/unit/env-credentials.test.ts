import { build } from 'esbuild';
import { DEPLOYED_OPTIONS } from '../../bench/esbuild-options';
import { routes } from '../../lib/routes';
import { defaultProvider } from '../../lib/runtime/env-credentials';

/**
 * A deployed bundle reads its credentials from the environment (what Lambda and `sam local`
 * give every function) and carries none of the SDK's other credential sources
 * (lib/runtime/env-credentials.ts says why).
 */
describe('credentials of a deployed function', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it("come from the function's environment, session token included", async () => {
    process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret-example';
    process.env.AWS_SESSION_TOKEN = 'session-example';
    await expect(defaultProvider()()).resolves.toMatchObject({
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'secret-example',
      sessionToken: 'session-example',
    });
  });

  it('are refused with the SDK’s own error when the environment has none, instead of trying profiles', async () => {
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    process.env.AWS_PROFILE = 'someone-else';
    await expect(defaultProvider()()).rejects.toMatchObject({ name: 'CredentialsProviderError' });
  });

  it.each([
    ['cards.get', routes['cards.get'].entry],
    ['auth.login', routes['auth.login'].entry],
  ])('%s is bundled without the SSO, profile, metadata and STS credential sources', async (_id, entry) => {
    const result = await build({ ...DEPLOYED_OPTIONS, entryPoints: [entry], write: false, metafile: true, outfile: 'out.mjs' });
    const inputs = Object.keys(result.metafile.inputs);
    expect(
      inputs.filter((path) => /credential-provider-(node|sso|ini|imds|process|web-identity|login|http)\//.test(path)),
    ).toEqual([]);
    expect(inputs.filter((path) => path.includes('nested-clients'))).toEqual([]);
    expect(inputs).toContainEqual(expect.stringContaining('credential-provider-env/'));
    expect(inputs).toContain('lib/runtime/env-credentials.ts');
  });
});
