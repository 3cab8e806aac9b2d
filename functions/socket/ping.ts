import { socketPing } from '../../lib/rows/realtime';
import { socketRoute } from '../../lib/socket/chain';

export const handler = socketRoute(socketPing, async () => ({ type: 'pong' }));
