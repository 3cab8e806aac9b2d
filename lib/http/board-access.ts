import { type AccessRule, type Preload, type RelatedIds, resolveBoardScope } from '../data/access';
import type { RouteMiddleware } from './types';

export interface BoardAccessOptions<B, P> {
  /** Ids in the body or path to fetch with the addressed one (e.g. a move's target and neighbours). */
  related?: (body: B, params: Record<string, unknown>) => RelatedIds;
  /**
   * Work that needs only the board id (and the body, which is checked by then), run in parallel
   * with the membership read.
   */
  preload?: (found: Parameters<Preload<P>>[0], body: B) => Promise<P>;
}

/** Membership (and owner) checks of a board route, in the spec's order of checks. */
export function requireBoardMember<B, P>(
  rule: Extract<AccessRule, { scope: 'board' }>,
  options: BoardAccessOptions<B, P>,
): RouteMiddleware {
  return {
    before: async ({ context }) => {
      const { route } = context;
      const { scope, preloaded } = await resolveBoardScope(
        rule,
        route.caller!.id,
        route.params.id as string,
        options.related?.(route.body as B, route.params),
        options.preload && ((found) => options.preload!(found, route.body as B)),
      );
      route.scope = scope;
      route.preloaded = preloaded;
    },
  };
}
