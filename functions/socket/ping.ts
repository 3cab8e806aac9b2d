import { socketRoute } from '../../lib/socket/chain';

export const handler = socketRoute('socket.ping', async () => ({ type: 'pong' }));
