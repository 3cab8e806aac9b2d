import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../support/api';

describe('GET /openapi.json', () => {
  it('serves the committed OpenAPI document without a token', async () => {
    const reply = await call('GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.body).toEqual(JSON.parse(readFileSync(join(__dirname, '../../docs/openapi.json'), 'utf8')));
  });
});
