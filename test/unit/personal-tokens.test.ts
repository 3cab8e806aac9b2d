import { isWellFormedPersonalToken, newPersonalTokenText } from '../../lib/domain/personal-tokens';
import { routes } from '../../lib/routes';
import { createsBoard, personalTokenScopeOf } from '../../lib/rows/row';

/**
 * Personal access tokens' pure rules (docs/tokens.md): the text's shape and checksum, and the
 * scope each row of the route table needs, derived from the row.
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('the token text', () => {
  it('is tbp_ and 49 base62 characters, new every time, and passes its own checksum', () => {
    const tokens = Array.from({ length: 200 }, newPersonalTokenText);
    for (const token of tokens) {
      expect(token).toMatch(/^tbp_[0-9A-Za-z]{49}$/);
      expect(isWellFormedPersonalToken(token)).toBe(true);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('refuses every token with one character changed, wherever it is (random part or checksum)', () => {
    const token = newPersonalTokenText();
    const refused: string[] = [];
    const accepted: string[] = [];
    for (let at = 4; at < token.length; at++) {
      for (const other of [BASE62[(BASE62.indexOf(token[at]!) + 1) % 62]!, BASE62[(BASE62.indexOf(token[at]!) + 31) % 62]!]) {
        const changed = token.slice(0, at) + other + token.slice(at + 1);
        (isWellFormedPersonalToken(changed) ? accepted : refused).push(changed);
      }
    }
    expect(accepted).toEqual([]);
    expect(refused).toHaveLength(2 * 49);
  });

  it.each([
    ['empty', ''],
    ['the prefix alone', 'tbp_'],
    ['one character short', () => newPersonalTokenText().slice(0, -1)],
    ['one character more', () => `${newPersonalTokenText()}0`],
    ['another prefix', () => `tbx_${newPersonalTokenText().slice(4)}`],
    ['a character outside base62', () => `${newPersonalTokenText().slice(0, 20)}-${newPersonalTokenText().slice(21)}`],
    ['a Cognito access token', 'eyJraWQiOiJ4In0.eyJzdWIiOiJ4In0.c2ln'],
  ])('refuses %s', (_, value) => {
    expect(isWellFormedPersonalToken(typeof value === 'function' ? value() : value)).toBe(false);
  });
});

describe('the scope each route needs', () => {
  const rows = Object.values(routes);
  const scopeOf = (id: keyof typeof routes) => personalTokenScopeOf(routes[id]);

  it('webhooks:admin for every webhook row, those under /boards/{id}/webhooks included', () => {
    const webhookRows = rows.filter((row) => row.id.startsWith('webhooks.'));
    expect(webhookRows.map((row) => row.path)).toContain('/boards/{id}/webhooks');
    expect(new Set(webhookRows.map(personalTokenScopeOf))).toEqual(new Set(['webhooks:admin']));
  });

  it('boards:read for the other GETs under /boards, /columns, /cards, /labels, and the socket ticket; boards:write for the rest there', () => {
    for (const row of rows.filter(
      (r) => !r.id.startsWith('webhooks.') && /^\/(boards|columns|cards|labels)(\/|$)/.test(r.path),
    )) {
      expect({ id: row.id, scope: personalTokenScopeOf(row) }).toEqual({
        id: row.id,
        scope: row.method === 'GET' ? 'boards:read' : 'boards:write',
      });
    }
    expect(scopeOf('boards.list')).toBe('boards:read');
    expect(scopeOf('boards.create')).toBe('boards:write');
    expect(scopeOf('realtime.tickets')).toBe('boards:read');
  });

  it('none for the account and token routes and the service rows: no personal token may call them', () => {
    const unscoped = rows.filter((row) => personalTokenScopeOf(row) === undefined).map((row) => row.id);
    expect(unscoped.filter((id) => !id.startsWith('auth.')).sort()).toEqual([
      'asyncapi',
      'docs',
      'docs.file',
      'fallback',
      'health',
      'openapi',
    ]);
    expect(unscoped).toEqual(expect.arrayContaining(['auth.tokens.create', 'auth.tokens.list', 'auth.tokens.delete', 'auth.me']));
  });

  it('POST /boards is the one row a token limited to boards may not call with boards:write', () => {
    expect(rows.filter(createsBoard).map((row) => row.id)).toEqual(['boards.create']);
  });
});
