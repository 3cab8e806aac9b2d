import Ajv2020 from 'ajv/dist/2020';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import asyncapiDocument from '../../docs/asyncapi.json';
import { buildOpenApiDocument, serversFor } from '../../lib/http/openapi';
import { version } from '../../package.json';

/**
 * The served description: a client generated from it types the two
 * documents it serves (not `{}`), the one version is package.json's, a failed sign-in's example
 * says what was refused, and the served `servers` entry names its environment (OWASP API9).
 */
const document = buildOpenApiDocument() as any;
const okSchemaOf = (path: string) => document.paths[path].get.responses['200'].content['application/json'].schema;

describe('the served descriptions', () => {
  it.each([
    ['/openapi.json', document, ['openapi', 'info', 'paths']],
    ['/asyncapi.json', asyncapiDocument, ['asyncapi', 'info', 'channels']],
  ])('GET %s declares the fields a client reads, and the document it serves has them', (path, served, fields) => {
    const schema = okSchemaOf(path as string);
    expect(schema.required).toEqual(fields);
    for (const field of fields as string[]) expect(schema.properties[field]).toBeDefined();
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate(served)).toBe(true);
    expect(validate({})).toBe(false);
  });

  it("carries package.json's version, the one version of the service", () => {
    expect(document.info.version).toBe(version);
  });

  it.each([
    ['/auth/login', 'The email or password is wrong.'],
    ['/auth/refresh', 'The refresh token is invalid, expired or revoked.'],
    ['/auth/logout', 'The refresh token is invalid, expired or revoked.'],
  ])("shows %s's own refusal as its 401 example, not the access token's", (path, detail) => {
    const example = document.paths[path].post.responses['401'].content['application/problem+json'].example;
    expect(example).toMatchObject({ status: 401, code: 'unauthorized', detail });
  });

  it('names the environment of the origin it was requested from, as OWASP API9 asks', () => {
    const owaspEnvironment = /(local|sandbox|alpha|beta|test|testing|stag|staging|prod|production|next|preprod|preproduction)/i;
    const event = (proto: string, domainName: string) =>
      ({ headers: { 'x-forwarded-proto': proto }, requestContext: { domainName } }) as unknown as APIGatewayProxyEventV2;
    const local = serversFor(event('http', '127.0.0.1:3000'));
    const deployed = serversFor(event('https', 'abc123.execute-api.eu-west-1.amazonaws.com'));
    expect(local).toEqual([
      expect.objectContaining({ url: 'http://127.0.0.1:3000', description: expect.stringMatching(/local/) }),
    ]);
    expect(deployed).toEqual([
      expect.objectContaining({
        url: 'https://abc123.execute-api.eu-west-1.amazonaws.com',
        description: expect.stringMatching(/production/),
      }),
    ]);
    for (const server of [...local, ...deployed, ...document.servers]) expect(server.description).toMatch(owaspEnvironment);
  });
});
