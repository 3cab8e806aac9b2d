import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { boardTreeETag, currentBoardTag, requireCardMatch, shownCard } from '../../lib/data/etags';
import type { CardRecord } from '../../lib/data/records';
import { BadRequest, PreconditionFailed } from '../../lib/domain/errors';
import { conditionsOf, matchesStrongly, matchesWeakly, parseEntityTags } from '../../lib/http/conditional';

const event = (headers: Record<string, string>) => ({ headers }) as unknown as APIGatewayProxyEventV2;

describe('If-Match / If-None-Match parsing', () => {
  it.each([
    ['*', '*'],
    [' * ', '*'],
    ['"abc"', ['"abc"']],
    ['W/"abc"', ['W/"abc"']],
    ['""', ['""']],
    ['"a", W/"b" ,"c"', ['"a"', 'W/"b"', '"c"']],
    // Empty list elements are skipped (RFC 9110 §5.6.1); two headers arrive joined by a comma.
    ['"a",,"b",', ['"a"', '"b"']],
    ['"a/b=c!#~"', ['"a/b=c!#~"']],
  ])('takes %j', (value, parsed) => {
    expect(parseEntityTags('If-Match', value)).toEqual(parsed);
  });

  it.each([
    '',
    ' ',
    ',',
    'abc',
    '"abc',
    'abc"',
    'W/abc',
    'w/"abc"',
    '"a" "b"',
    '"a b"',
    '"a"b"',
    '*, "a"',
    '**',
    '"a";"b"',
    '"\u0100"',
  ])('refuses %j with 400 naming the header', (value) => {
    let thrown: unknown;
    try {
      parseEntityTags('If-None-Match', value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BadRequest);
    expect((thrown as BadRequest).detail).toMatch(/If-None-Match/);
    expect((thrown as BadRequest).errors).toEqual([{ path: 'header.If-None-Match', message: expect.any(String) }]);
  });

  it('reads both headers, and neither when absent', () => {
    expect(conditionsOf(event({}))).toEqual({});
    expect(conditionsOf(event({ 'if-match': '"a"', 'if-none-match': '*' }))).toEqual({ ifMatch: ['"a"'], ifNoneMatch: '*' });
    expect(() => conditionsOf(event({ 'if-match': '"a"', 'if-none-match': 'nope' }))).toThrow(BadRequest);
  });

  it('compares strongly for If-Match (a weak tag never matches) and weakly for If-None-Match', () => {
    expect(matchesStrongly('*', '"x"')).toBe(true);
    expect(matchesStrongly(['"y"', '"x"'], '"x"')).toBe(true);
    expect(matchesStrongly(['W/"x"'], '"x"')).toBe(false);
    expect(matchesWeakly(['W/"x"'], '"x"')).toBe(true);
    expect(matchesWeakly(['"y"'], '"x"')).toBe(false);
    expect(matchesWeakly('*', '"x"')).toBe(true);
  });
});

describe('entity tags', () => {
  const card: CardRecord = {
    id: 'c1',
    board_id: 'b1',
    column_id: 'k1',
    title: 'One',
    description: null,
    position: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    label_ids: new Set(['l1']),
  };
  const labels = { l1: 'urgent', l2: 'later' };
  const tag = (c: CardRecord, l: Record<string, string> = labels) => shownCard(c, { labels: l }).etag;

  it("changes a card's tag with its write counter, any field, and the names of the labels it shows", () => {
    expect(tag(card)).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(tag({ ...card, version: 0 })).toBe(tag(card));
    expect(tag({ ...card, version: 1 })).not.toBe(tag(card));
    expect(tag({ ...card, title: 'Two' })).not.toBe(tag(card));
    expect(tag(card, { l1: 'very urgent', l2: 'later' })).not.toBe(tag(card));
    expect(tag(card, { l2: 'later' })).not.toBe(tag(card));
    // A label the card does not show changes nothing.
    expect(tag(card, { l1: 'urgent', l2: 'renamed' })).toBe(tag(card));
    expect(tag({ ...card, label_ids: new Set(['l1', 'gone']) })).toBe(tag(card));
  });

  it('refuses an If-Match that does not list the current tag, with that tag', () => {
    const current = tag(card);
    expect(() => requireCardMatch(undefined, card, { labels })).not.toThrow();
    expect(() => requireCardMatch('*', card, { labels })).not.toThrow();
    expect(() => requireCardMatch(['"old"', current], card, { labels })).not.toThrow();
    let thrown: unknown;
    try {
      requireCardMatch([`W/${current}`], card, { labels });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PreconditionFailed);
    expect((thrown as PreconditionFailed).etag).toBe(current);
  });

  it("finds a board tree's current tag by board and seq, never another board's or seq's", () => {
    const tree = boardTreeETag('b1', 7, '{"id":"b1"}');
    expect(currentBoardTag([tree], 'b1', 7)).toBe(tree);
    expect(currentBoardTag([`W/${tree}`], 'b1', 7)).toBe(tree);
    expect(currentBoardTag([tree], 'b1', 8)).toBeUndefined();
    expect(currentBoardTag([tree], 'b2', 7)).toBeUndefined();
    expect(currentBoardTag([boardTreeETag('b1', 70, '{}')], 'b1', 7)).toBeUndefined();
    expect(boardTreeETag('b1', 7, '{"id":"b1","title":"x"}')).not.toBe(tree);
  });
});
