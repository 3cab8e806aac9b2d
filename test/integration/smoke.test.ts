import { call, newBoard, newUser } from '../support/api';

describe('smoke', () => {
  it('registers, creates a board and reads it back', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Smoke');
    const tree = await call('GET', `/boards/${board.id}`, { token: user.token });
    expect(tree.status).toBe(200);
    expect(tree.body).toEqual({ ...board, seq: 0, columns: [], labels: [] });
  });
});
