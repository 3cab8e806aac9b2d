import { scheduledJob } from '../../lib/schedule/job';
import { sweepExpiredSockets } from '../../lib/socket/sweep';

/** Every minute: closes the sockets whose token has expired (`token.expired`, then DeleteConnection). */
export const handler = scheduledJob('sockets.sweep', async () => ({ closed: await sweepExpiredSockets() }));
