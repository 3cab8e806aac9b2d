import { socketsSweep } from '../../lib/rows/sockets';
import { scheduledJob } from '../../lib/schedule/job';
import { sweepExpiredSockets } from '../../lib/socket/sweep';

/** Every minute: closes the sockets whose token has expired (`token.expired`, then DeleteConnection). */
export const handler = scheduledJob(socketsSweep, async () => ({ closed: await sweepExpiredSockets() }));
