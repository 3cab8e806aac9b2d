import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core';
import { DOCS_FILE_NAMES, DOCS_FILES } from '../../lib/contract/docs-assets';
import { lambdaLimits } from '../../lib/runtime/aws-limits';
import { baseUrl, call, expectProblem, newBoard, newUser, rawGet } from '../support/api';

/**
 * GET /docs: Swagger UI from the npm package, served by the stack itself. Over
 * HTTP: the page, its allow-listed files and nothing else. In a real browser (the system's
 * Chromium, driven by puppeteer-core, which downloads no browser): every operation of the served
 * document is rendered, no request leaves the stack's origin, and "Try it out" calls the stack,
 * without and with a bearer token.
 */
const packageDir = join(__dirname, '../../node_modules/swagger-ui-dist');
const rendererVersion = (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Chromium from PATH (Debian's `chromium`; `apt-get install -y chromium`, as .ci/run does). */
function chromiumPath(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new Error('No chromium on PATH: install it (apt-get install -y chromium), see README "Quick start"');
}

describe('GET /docs and its files over HTTP', () => {
  it('serves the page without a token: HTML, a Content-Security-Policy, only relative URLs', async () => {
    const reply = await call('GET', '/docs');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(reply.headers.get('cache-control')).toBe('public, max-age=300');
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = reply.headers.get('content-security-policy')!;
    expect(csp).toMatch(/^default-src 'none'; /);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe');
    const urls = [...(reply.body as string).matchAll(/\b(?:src|href)="([^"]*)"/g)].map(([, url]) => url!);
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) expect(url).toMatch(/^docs\/[\w.-]+\?v=[\w.-]+$/);
  });

  it.each(DOCS_FILE_NAMES)(
    'serves %s as the package has it, with its content type, cached for a year under its version',
    async (file) => {
      const reply = await rawGet(`/docs/${file}?v=${encodeURIComponent(rendererVersion)}`, {});
      expect({ status: reply.status, type: reply.headers['content-type'] }).toEqual({ status: 200, type: DOCS_FILES[file] });
      expect(reply.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(reply.bytes.equals(readFileSync(join(packageDir, file)))).toBe(true);
    },
  );

  it('does not let a browser keep a file for a year under another version or none (a page and a file function of two deployments)', async () => {
    for (const query of ['?v=0.0.1', '']) {
      const reply = await rawGet(`/docs/swagger-ui.css${query}`, {});
      expect(reply.status).toBe(200);
      expect(reply.headers['cache-control']).toBe('no-cache');
    }
  });

  it('sends the renderer compressed to a client that accepts brotli, far below what a Lambda answer may carry', async () => {
    const reply = await rawGet('/docs/swagger-ui-bundle.js', { 'accept-encoding': 'br' });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-encoding']).toBe('br');
    expect(String(reply.headers.vary)).toContain('accept-encoding');
    const original = readFileSync(join(packageDir, 'swagger-ui-bundle.js'));
    expect(brotliDecompressSync(reply.bytes).equals(original)).toBe(true);
    expect(reply.bytes.length).toBeLessThan(original.length / 3);
    // Uncompressed it goes base64 (4/3 of the bytes), still well within the limit.
    expect(Math.ceil(original.length / 3) * 4).toBeLessThan(lambdaLimits.responseBytes / 2);
  });

  it.each([
    'index.html', // in the package, not on the list
    'swagger-ui-bundle.js.map',
    'swagger-initializer.js',
    'package.json',
    'LICENSE',
    'nope.js',
  ])('answers 404 problem+json for /docs/%s', async (file) => {
    const problem = expectProblem(await call('GET', `/docs/${file}`), 404);
    expect(problem.detail).toBe(`The file ${file} was not found.`);
  });

  it.each(['..%2Fpackage.json', '%2Fetc%2Fpasswd', 'a%20b'])(
    'answers 400 problem+json for /docs/%s (not a file name)',
    async (file) => {
      expectProblem(await call('GET', `/docs/${file}`), 400);
    },
  );
});

describe('GET /docs in a browser (Chromium, headless)', () => {
  let browser: Browser | undefined;
  let launching: Promise<Browser> | undefined;
  let page: Page;
  const origin = new URL(baseUrl()).origin;
  const requests: HTTPRequest[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    // Kept as a promise too, so that afterAll closes a browser whose launch outlived this hook.
    launching = puppeteer.launch({
      executablePath: chromiumPath(),
      headless: true,
      // /dev/shm is 64 MB in a default container: Chromium then uses /tmp instead.
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    browser = await launching;
    page = await browser.newPage();
    // Hang guards inside jest's own (300 s): the machine has 2 cores, two test workers, and may be
    // shared with other work.
    page.setDefaultTimeout(240_000);
    page.setDefaultNavigationTimeout(240_000);
    await page.setViewport({ width: 1280, height: 1000 });
    // Every request the page makes is seen here; one to anywhere else is recorded and refused.
    await page.setRequestInterception(true);
    page.on('request', (req) => {
      requests.push(req);
      if (new URL(req.url()).origin === origin || req.url().startsWith('data:')) void req.continue();
      else void req.abort();
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) {
        problems.push(`console ${message.type()}: ${message.text()}`);
      }
    });
    await page.goto(`${origin}/docs`, { waitUntil: 'networkidle0' });
  }, 300_000);

  afterAll(async () => {
    await (browser ?? (await launching?.catch(() => undefined)))?.close();
  });

  /** The operation's block, found by its method and path as rendered. */
  async function operation(method: string, path: string) {
    const blocks = await page.$$('.opblock');
    for (const block of blocks) {
      const shown = await block.evaluate((element) => ({
        method: element.querySelector('.opblock-summary-method')?.textContent?.trim(),
        path: element.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
      }));
      if (shown.method === method && shown.path === path) return block;
    }
    throw new Error(`${method} ${path} is not rendered`);
  }

  /** Expands the operation, clicks "Try it out" then "Execute", and returns the status and body it shows. */
  async function tryIt(method: string, path: string) {
    const block = await operation(method, path);
    await (await block.$('.opblock-summary-control'))!.click();
    await (await block.waitForSelector('.try-out__btn'))!.click();
    await (await block.waitForSelector('.btn.execute'))!.click();
    const status = await block.waitForSelector('.live-responses-table tbody .response-col_status');
    const body = await block.waitForSelector('.live-responses-table tbody .response-col_description .highlight-code pre');
    return {
      status: (await status!.evaluate((element) => element.textContent ?? '')).trim(),
      body: await body!.evaluate((element) => element.textContent ?? ''),
    };
  }

  it('renders every operation of the served OpenAPI document', async () => {
    const document = (await call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => METHODS.includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.length).toBeGreaterThan(30);
    await page.waitForSelector('.opblock');
    const rendered = await page.$$eval('.opblock', (blocks) =>
      blocks.map(
        (block) =>
          `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block
            .querySelector('.opblock-summary-path')
            ?.getAttribute('data-path')}`,
      ),
    );
    expect(rendered.sort()).toEqual(documented.sort());
    expect(await page.title()).toBe('task-board API reference');
    // Swagger UI shows what it could not read or resolve in an errors box: there is none.
    expect(await page.$$eval('.errors-wrapper', (boxes) => boxes.map((box) => box.textContent))).toEqual([]);
  });

  it('"Try it out" on GET /health calls the stack and shows its answer', async () => {
    const { status, body } = await tryIt('GET', '/health');
    expect(status).toBe('200');
    expect(JSON.parse(body)).toEqual({ status: 'ok' });
  });

  it('"Authorize" with an access token, then "Try it out" on GET /boards shows the caller\'s boards', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Seen in the reference page');
    await (await page.waitForSelector('.auth-wrapper .authorize'))!.click();
    await (await page.waitForSelector('.auth-container input'))!.focus();
    await page.keyboard.sendCharacter(user.token); // one input event: typing a JWT key by key takes seconds
    await (await page.waitForSelector('.auth-btn-wrapper .authorize'))!.click();
    await (await page.waitForSelector('.auth-btn-wrapper .btn-done'))!.click();

    const { status, body } = await tryIt('GET', '/boards');
    expect(status).toBe('200');
    expect(JSON.parse(body)).toEqual([board]);
    const sent = requests.find((req) => req.url() === `${origin}/boards`);
    expect(sent?.headers().authorization).toBe(`Bearer ${user.token}`);
  });

  it('made no request outside the stack: page, files, document and calls all went to its origin', () => {
    const urls = requests.map((req) => req.url());
    const elsewhere = urls.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
    expect(elsewhere).toEqual([]);
    const paths = urls.filter((url) => !url.startsWith('data:')).map((url) => new URL(url).pathname);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/docs',
        '/docs/swagger-ui.css',
        '/docs/swagger-ui-bundle.js',
        '/openapi.json',
        '/health',
        '/boards',
      ]),
    );
    expect(problems).toEqual([]);
  });
});
