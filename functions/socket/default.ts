import { BadRequest } from '../../lib/domain/errors';
import { socketDefault } from '../../lib/rows/socket';
import { socketRoute } from '../../lib/socket/chain';

/** Whatever no action route took: not JSON, no `action`, or an action the contract does not have. */
export const handler = socketRoute(socketDefault, async () => {
  throw new BadRequest('Unknown message: send a JSON object whose "action" is watch, unwatch or ping.');
});
