import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseUrl, call } from '../support/api';

describe('GET /openapi.json', () => {
  it('serves the committed OpenAPI document without a token, its servers naming the origin it was asked at', async () => {
    const reply = await call('GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json');
    const { servers, ...served } = reply.body;
    const { servers: deployed, ...committed } = JSON.parse(readFileSync(join(__dirname, '../../docs/openapi.json'), 'utf8'));
    expect(served).toEqual(committed);
    expect(deployed[0].url).toBe('https://{apiId}.execute-api.{region}.amazonaws.com');
    expect(servers).toEqual([expect.objectContaining({ url: new URL(baseUrl()).origin, 'x-internal': false })]);
  });
});
