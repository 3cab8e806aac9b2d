import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ApiFunction, functionIdOf } from '../../infra/api-function';
import { DOCS_BUNDLED_FILES, DOCS_FILE_NAMES, DOCS_FILES } from '../../lib/contract/docs-assets';
import { routes } from '../../lib/routes';
import { appProps } from './app-props';

/**
 * The API reference page's functions as CDK bundles them (local esbuild, offline): the file
 * function's asset carries the renderer's allow-listed files from the repository's node_modules,
 * and each bundle, run where no node_modules is above it (a temporary directory), answers from
 * its own asset. Only the two docs functions are synthesized, in a stack of their own.
 */
const app = new App(appProps({ context: { 'aws:cdk:enable-asset-metadata': true } }));
const stack = new Stack(app, 'Docs');
const rowIds = ['docs', 'docs.file'] as const;
const functions = Object.fromEntries(
  rowIds.map((id) => [
    id,
    new ApiFunction(stack, functionIdOf(id), {
      row: routes[id],
      environment: {},
      logRetention: RetentionDays.ONE_WEEK,
      logRemovalPolicy: RemovalPolicy.DESTROY,
    }),
  ]),
) as Record<(typeof rowIds)[number], ApiFunction>;
const assembly = app.synth();
const resources = assembly.getStackByName(stack.stackName).template.Resources as Record<
  string,
  { Type: string; Metadata?: Record<string, string> }
>;

/** The directory of a function's code asset in the cloud assembly. */
function assetDirOf(id: (typeof rowIds)[number]): string {
  const logicalId = stack.getLogicalId(functions[id].fn.node.defaultChild as never);
  const path = resources[logicalId]?.Metadata?.['aws:asset:path'];
  expect(path).toEqual(expect.any(String));
  return join(assembly.directory, path!);
}

function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

const packageDir = join(__dirname, '../../node_modules/swagger-ui-dist');

describe('the docs functions as bundled by CDK', () => {
  it("docs.file's asset holds its bundle and exactly the renderer's allow-listed files, as the package has them", () => {
    const dir = assetDirOf('docs.file');
    expect(filesUnder(dir)).toEqual(
      ['index.mjs', ...DOCS_BUNDLED_FILES.map((file) => join('node_modules', 'swagger-ui-dist', file))].sort(),
    );
    for (const file of DOCS_BUNDLED_FILES) {
      expect(readFileSync(join(dir, 'node_modules', 'swagger-ui-dist', file)).equals(readFileSync(join(packageDir, file)))).toBe(
        true,
      );
    }
  });

  it("the page's asset is its bundle alone (the page is made in code)", () => {
    expect(filesUnder(assetDirOf('docs'))).toEqual(['index.mjs']);
  });

  it('each bundle answers from its own asset, with no node_modules above it', () => {
    const event = (path: string, file?: string) => ({
      version: '2.0',
      routeKey: file === undefined ? 'GET /docs' : 'GET /docs/{file}',
      rawPath: path,
      rawQueryString: '',
      headers: { host: 'localhost', 'accept-encoding': 'identity' },
      ...(file === undefined ? {} : { pathParameters: { file } }),
      requestContext: { requestId: 'bundle-test', http: { method: 'GET', path }, domainName: 'localhost', apiId: 'local' },
      isBase64Encoded: false,
    });
    const requests = [
      ['docs', event('/docs')],
      ...DOCS_FILE_NAMES.map((file) => ['docs.file', event(`/docs/${file}`, file)]),
      ['docs.file', event('/docs/index.html', 'index.html')],
    ] as const;
    const bundles = Object.fromEntries(rowIds.map((id) => [id, join(assetDirOf(id), 'index.mjs')]));
    const script = `
      const bundles = ${JSON.stringify(bundles)};
      const requests = ${JSON.stringify(requests)};
      const out = [];
      for (const [id, event] of requests) {
        const { handler } = await import(bundles[id]);
        out.push(await handler(event, { getRemainingTimeInMillis: () => 10000 }));
      }
      process.stdout.write(JSON.stringify(out));`;
    const replies = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: assembly.directory,
        env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', METRICS_DISABLED: 'true', LOG_LEVEL: 'SILENT' },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      }),
    ) as { statusCode: number; headers: Record<string, string>; body: string; isBase64Encoded?: boolean }[];
    const bytesOf = (reply: (typeof replies)[number]) => Buffer.from(reply.body, reply.isBase64Encoded ? 'base64' : 'utf8');

    const [page, ...rest] = replies;
    expect(page!.statusCode).toBe(200);
    expect(page!.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page!.headers['content-security-policy']).toMatch(/^default-src 'none'; /);
    expect(bytesOf(page!).toString('utf8')).toContain('swagger-ui-bundle.js');
    DOCS_FILE_NAMES.forEach((file, i) => {
      const reply = rest[i]!;
      expect({ file, status: reply.statusCode, type: reply.headers['content-type'] }).toEqual({
        file,
        status: 200,
        type: DOCS_FILES[file],
      });
      expect(bytesOf(reply).equals(readFileSync(join(packageDir, file)))).toBe(true);
    });
    const unknown = rest[DOCS_FILE_NAMES.length]!;
    expect({ status: unknown.statusCode, type: unknown.headers['content-type'] }).toEqual({
      status: 404,
      type: 'application/problem+json',
    });
  });
});
