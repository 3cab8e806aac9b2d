import { randomUUID } from 'node:crypto';

/**
 * DynamoDB round trips per endpoint, read from the local stack's trace headers
 * (TASK_BOARD_TRACE=1): total calls, calls one after another, capacity units consumed.
 */
export interface RoundTrips {
  route: string;
  status: number;
  calls: number;
  sequential: number;
  capacity: number;
  commands: string;
}

export async function measureRoundTrips(url: string): Promise<RoundTrips[]> {
  const results: RoundTrips[] = [];
  const send = async (route: string, method: string, path: string, token?: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    const h = (name: string) => Number(response.headers.get(`x-trace-dynamodb-${name}`) ?? Number.NaN);
    results.push({
      route,
      status: response.status,
      calls: h('calls'),
      sequential: h('sequential'),
      capacity: h('capacity'),
      commands: response.headers.get('x-trace-dynamodb-commands') ?? '',
    });
    return text ? JSON.parse(text) : undefined;
  };
  const email = `bench-${randomUUID()}@example.test`;
  await send('GET /health', 'GET', '/health');
  const { token } = await send('POST /auth/register', 'POST', '/auth/register', undefined, {
    email,
    password: 'bench password',
    display_name: 'Bench',
  });
  await send('POST /auth/login', 'POST', '/auth/login', undefined, { email, password: 'bench password' });
  const board = await send('POST /boards', 'POST', '/boards', token, { title: 'Bench' });
  await send('GET /boards', 'GET', '/boards', token);
  const column = await send('POST /boards/{id}/columns', 'POST', `/boards/${board.id}/columns`, token, { title: 'A' });
  const other = await send('POST /boards/{id}/columns (2nd)', 'POST', `/boards/${board.id}/columns`, token, { title: 'B' });
  const card = await send('POST /columns/{id}/cards', 'POST', `/columns/${column.id}/cards`, token, { title: 'One' });
  const second = await send('POST /columns/{id}/cards (2nd)', 'POST', `/columns/${column.id}/cards`, token, { title: 'Two' });
  await send('GET /cards/{id}', 'GET', `/cards/${card.id}`, token);
  await send('PATCH /cards/{id}', 'PATCH', `/cards/${card.id}`, token, { title: 'Uno' });
  await send('PATCH /cards/{id}/move', 'PATCH', `/cards/${card.id}/move`, token, {
    target_column_id: other.id,
  });
  await send('PATCH /cards/{id}/move (neighbours)', 'PATCH', `/cards/${second.id}/move`, token, {
    target_column_id: other.id,
    before_id: card.id,
  });
  await send('POST /boards/{id}/batch (25 card creates)', 'POST', `/boards/${board.id}/batch`, token, {
    operations: Array.from({ length: 25 }, (_, i) => ({ op: 'card.create', column_id: column.id, title: `Batched ${i}` })),
  });
  await send('GET /boards/{id}', 'GET', `/boards/${board.id}`, token);
  await send('PATCH /boards/{id}', 'PATCH', `/boards/${board.id}`, token, { title: 'Bench 2' });
  await send('DELETE /cards/{id}', 'DELETE', `/cards/${second.id}`, token);
  await send('DELETE /boards/{id}', 'DELETE', `/boards/${board.id}`, token);
  await send('GET /boards/{id} (stranger, 403)', 'GET', `/boards/${randomUUID()}`, token);
  return results;
}

if (process.argv[1]?.endsWith('round-trips.ts')) {
  const rows = await measureRoundTrips(process.argv[2] ?? 'http://127.0.0.1:3000');
  console.log('| route | status | sequential | calls | capacity units | commands |\n|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.route} | ${r.status} | ${r.sequential} | ${r.calls} | ${r.capacity} | ${r.commands} |`);
}
