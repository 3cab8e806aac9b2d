import { logger } from '../../lib/runtime/logger';
import { countColdStart } from '../../lib/runtime/metrics';
import { sweepExpiredSockets } from '../../lib/socket/sweep';

export const handler = async () => {
  countColdStart('functions/events/sweep.ts');
  const closed = await sweepExpiredSockets();
  if (closed > 0) logger.info('closed sockets whose token expired', { closed });
  return { closed };
};
