import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../infra/build-app';
import { OUTBOX_PATH } from '../../infra/local/outbox';
import { routes } from '../../lib/routes';
import { unbundledAppProps } from './app-props';

/**
 * The local outbox (GET /local/outbox, infra/local/outbox.ts) shows every code the local stack's
 * Cognito would have mailed. It must exist only on the local HTTP server: no row of the route
 * table names it, and nothing CDK synthesizes (a route, a function, a path, an entry) does either.
 */
const template = Template.fromStack(buildApp(unbundledAppProps()).stack);
const resources = Object.entries(template.toJSON().Resources as Record<string, { Type: string; Properties?: any }>);

describe('the local outbox is never deployed', () => {
  it('is no row of the route table', () => {
    for (const row of Object.values(routes) as { path: string; entry: string }[]) {
      expect(row.path.startsWith('/local')).toBe(false);
      expect(row.entry).not.toMatch(/infra\/local/);
    }
  });

  it('has no HTTP API route, and the HTTP API has a route for every other row', () => {
    const routeKeys = resources
      .filter(([, resource]) => resource.Type === 'AWS::ApiGatewayV2::Route')
      .map(([, resource]) => String(resource.Properties.RouteKey));
    expect(routeKeys).toContain('POST /auth/password/forgot');
    expect(routeKeys).toContain('GET /auth/me');
    expect(routeKeys.filter((key) => key.includes('/local'))).toEqual([]);
    expect(routeKeys).not.toContain(`GET ${OUTBOX_PATH}`);
  });

  it('appears nowhere in the synthesized template', () => {
    expect(JSON.stringify(template.toJSON())).not.toContain(OUTBOX_PATH);
    expect(JSON.stringify(template.toJSON())).not.toMatch(/outbox/i);
  });
});
