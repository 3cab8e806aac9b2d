import { routeMetrics } from '../../lib/http/metrics';
import type { RouteMiddleware } from '../../lib/http/types';
import { routes } from '../../lib/routes';
import { emitMetric } from '../../lib/runtime/metrics';

jest.mock('../../lib/runtime/metrics', () => ({
  ...jest.requireActual('../../lib/runtime/metrics'),
  emitMetric: jest.fn(),
}));

/** A replayed answer (a retried Idempotency-Key) created nothing: the dashboards must not count it. */
describe('business metrics and Idempotency-Key replays', () => {
  const after = routeMetrics(routes['boards.create']).after as (request: unknown) => void;
  const answered = (headers: Record<string, string>) =>
    after({ response: { statusCode: 201, headers } } as unknown as Parameters<NonNullable<RouteMiddleware['after']>>[0]);

  beforeEach(() => jest.mocked(emitMetric).mockClear());

  it('counts BoardCreated for a board created', () => {
    answered({ 'content-type': 'application/json' });
    expect(emitMetric).toHaveBeenCalledWith('BoardCreated', expect.any(Object));
  });

  it('counts nothing for the same answer replayed', () => {
    answered({ 'content-type': 'application/json', 'idempotent-replayed': 'true' });
    expect(emitMetric).not.toHaveBeenCalled();
  });
});
