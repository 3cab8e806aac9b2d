import { socketPing } from '../../lib/rows/socket';
import { socketRoute } from '../../lib/socket/chain';

export const handler = socketRoute(socketPing, async () => ({ type: 'pong' }));
