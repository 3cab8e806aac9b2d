import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { baseUrl, call, newUser } from '../support/api';
import { runNode } from '../support/run-node';

/**
 * `npm run smoke -- <ApiUrl>` (scripts/smoke.ts), run as a child process the way the deploy
 * workflow runs it: against the local stack of global setup, against a server that answers 500,
 * and against a closed port.
 */
jest.setTimeout(120_000);

const smoke = (url: string, ...rest: (string | Record<string, string>)[]) => {
  const args = rest.filter((arg): arg is string => typeof arg === 'string');
  const env = rest.find((arg): arg is Record<string, string> => typeof arg === 'object');
  return runNode(['scripts/smoke.ts', url, ...args], { timeoutMs: 90_000, ...(env ? { env: { ...process.env, ...env } } : {}) });
};

/** A server on a free port that answers /health like the service, and `status` to everything else. */
async function misbehavingApi(status: number): Promise<{ url: string; server: Server; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    request.resume();
    if (request.url === '/health') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    response
      .writeHead(status, { 'content-type': 'application/problem+json' })
      .end(JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status, detail: 'Something broke.' }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
}

const close = (server: Server) => new Promise<void>((done) => server.close(() => done()));

describe('npm run smoke', () => {
  it('passes against the local stack: exit 0 and one summary line, nothing else', async () => {
    const run = await smoke(baseUrl());
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const url = baseUrl().replace(/[.]/g, '\\.');
    expect(run.stdout).toMatch(
      new RegExp(
        `^smoke: 20 steps passed against ${url} in \\d+\\.\\d s; board deleted; ` +
          'users smoke\\+[0-9a-f-]{36}-\\{owner,member\\}@example\\.com deleted\\n$',
      ),
    );
  });

  it("against a stage without an outbox, uses an operator's verified member, logs it in and never deletes it", async () => {
    const operator = await newUser();
    const run = await smoke(baseUrl(), {
      TASK_BOARD_SMOKE_MEMBER_EMAIL: operator.email,
      TASK_BOARD_SMOKE_MEMBER_PASSWORD: operator.password,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(
      /^smoke: 18 steps passed against .* board deleted; user smoke\+[0-9a-f-]{36}-owner@example\.com deleted\n$/,
    );
    expect((await call('POST', '/auth/login', { body: { email: operator.email, password: operator.password } })).status).toBe(
      200,
    );
  });

  it('--keep leaves the board and prints how to log in to inspect it', async () => {
    const run = await smoke(baseUrl(), '--keep');
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    const { kept } = JSON.parse(lines[0]!) as {
      kept: {
        api: string;
        board_id: string;
        owner: { email: string; password: string };
        member: { email: string; password: string };
      };
    };
    expect(kept.api).toBe(baseUrl());
    expect(kept.owner.email).toMatch(/^smoke\+[0-9a-f-]{36}-owner@example\.com$/);
    expect(lines[1]).toMatch(new RegExp(`^smoke: 17 steps passed against .* board ${kept.board_id} kept \\(--keep\\)`));

    // A person can log in with what it printed and find everything the run made.
    const login = await call('POST', '/auth/login', { body: kept.owner });
    expect(login.status).toBe(200);
    const token = login.body.token as string;
    const boards = await call('GET', '/boards', { token });
    expect(boards.body).toEqual([expect.objectContaining({ id: kept.board_id, title: expect.stringMatching(/^smoke /) })]);
    const tree = await call('GET', `/boards/${kept.board_id}`, { token });
    expect(tree.body.columns).toHaveLength(1);
    expect(tree.body.columns[0].cards.map((card: { title: string }) => card.title)).toEqual([
      'second card',
      'first card',
      'watched card',
    ]);
    const members = await call('GET', `/boards/${kept.board_id}/members`, { token });
    expect(members.body.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [kept.owner.email, 'owner'],
      [kept.member.email, 'member'],
    ]);
    const memberLogin = await call('POST', '/auth/login', { body: kept.member });
    expect(memberLogin.status).toBe(200);

    expect((await call('DELETE', `/boards/${kept.board_id}`, { token })).status).toBe(204);
  });

  it('fails with exit code 1 naming the step, the status and the body when the API answers 500', async () => {
    const api = await misbehavingApi(500);
    try {
      const run = await smoke(api.url);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(`smoke: FAILED at step 2/20 "register the owner" (POST /auth/register) against ${api.url}`);
      expect(run.stderr).toContain(
        'expected 201, got HTTP 500: {"type":"about:blank","title":"Internal Server Error","status":500,"detail":"Something broke."}',
      );
      expect(run.stderr).toContain('[clean-up: no board was left]');
      expect(api.seen).toEqual(['GET /health', 'POST /auth/register']);
    } finally {
      await close(api.server);
    }
  });

  it('fails with exit code 1 when an answer has the right status but the wrong shape', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>a proxy page</html>');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const run = await smoke(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('step 1/20 "health" (GET /health)');
      expect(run.stderr).toContain('expected 200 {"status":"ok"}, got HTTP 200: <html>a proxy page</html>');
    } finally {
      await close(server);
    }
  });

  it('exits with 2 when nothing answers (a closed port)', async () => {
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await close(server);
    const run = await smoke(url);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      new RegExp(`^smoke: UNREACHABLE: ${url.replace(/[.]/g, '\\.')} did not answer at step 1/20 "health"`),
    );
    expect(run.stderr).toContain('ECONNREFUSED');
  });

  it('fails with exit code 1 at the socket step when the ticket’s WebSocket address does not answer, and still deletes its board', async () => {
    // The real API behind a proxy that changes one thing: the address tickets name, to a closed port.
    const closedPort = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => done(port));
      });
    });
    const deadSocket = `ws://127.0.0.1:${closedPort}/live`;
    const proxy = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
      ) as Record<string, string>;
      const answer = await fetch(`${baseUrl()}${request.url}`, {
        method: request.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      let text = await answer.text();
      if (request.url === '/realtime/tickets' && answer.status === 201)
        text = JSON.stringify({ ...JSON.parse(text), url: deadSocket });
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const run = await smoke(url);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        `smoke: FAILED at step 16/20 "open a socket and watch the board" (WS ${deadSocket}) against ${url}`,
      );
      expect(run.stderr).toContain('expected the socket to open with the ticket');
      expect(run.stderr).toMatch(/\[clean-up: board [0-9a-f-]{36} deleted\]/);
    } finally {
      await close(proxy);
    }
  });

  it('--help prints the usage and the options and exits 0', async () => {
    const run = await runNode(['scripts/smoke.ts', '--help']);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^usage: npm run smoke -- <ApiUrl> \[--keep\] \[--timeout <seconds>\]/);
    for (const option of ['--keep', '--timeout', '--help', 'TASK_BOARD_SMOKE_MEMBER_EMAIL']) expect(run.stdout).toContain(option);
  });

  it('exits with 64 and the usage without a URL', async () => {
    const { TASK_BOARD_URL: _unset, ...env } = process.env;
    const run = await runNode(['scripts/smoke.ts'], { env: { ...env, NODE_NO_WARNINGS: '1' } });
    expect(run.code).toBe(64);
    expect(run.stderr).toMatch(/^smoke: usage: npm run smoke -- <ApiUrl> \[--keep\]/);
  });
});
