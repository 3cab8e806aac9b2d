import { allowedAt, catchAllAnswer } from '../../lib/http/catch-all';
import { servedMethods } from '../../lib/rows/served';

/** `GET /docs/` and `HEAD /health`, which the catch-all answers before its 404 and 405. */
describe('the catch-all before its 404 and 405', () => {
  it('answers HEAD /health as the health check, without a body', () => {
    expect(catchAllAnswer('HEAD', '/health', '', servedMethods)).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    });
    expect(allowedAt(servedMethods, '/health')).toEqual(['GET', 'HEAD']);
  });

  it.each([
    ['GET', '/docs/', '', '/docs'],
    ['HEAD', '/docs/', '', '/docs'],
    ['GET', '/docs//', 'x=1', '/docs?x=1'],
    ['GET', '/openapi.json/', '', '/openapi.json'],
  ])('redirects %s %s to the path without the slash (308)', (method, path, query, location) => {
    expect(catchAllAnswer(method, path, query, servedMethods)).toEqual({ status: 308, headers: { location } });
  });

  it.each([
    ['POST', '/boards/'],
    ['GET', '/nothing-here/'],
    ['HEAD', '/boards'],
    ['GET', '/health'],
    ['DELETE', '/health'],
  ])('leaves %s %s to the 404 or 405', (method, path) => {
    expect(catchAllAnswer(method, path, '', servedMethods)).toBeUndefined();
  });

  it('adds HEAD to Allow only where it is served', () => {
    expect(allowedAt(servedMethods, '/boards')).not.toContain('HEAD');
    expect(allowedAt(servedMethods, '/nothing-here')).toEqual([]);
  });
});
