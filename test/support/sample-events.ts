import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventFileOf, PLACEHOLDER } from '../../scripts/make-events';
import { call, newBoard, newCard, newColumn, newUser, uniqueEmail } from './api';
import { codeSentBy } from './mail';
import { REPO_ROOT } from './run-node';

/**
 * A route's sample event (events/<row>.json, scripts/make-events.ts) with its placeholders filled
 * in from a world made for it on the running stack: a user with a board, a column and a card, a
 * teammate where the event names one, and whatever the route acts on (a label, a webhook, a
 * comment, a personal token, an assignee to take off, a due date to clear, an archived card to
 * restore, a mailed code), and the board. What the sample events test (handlers imported) and the
 * SAM environment test (bundles run) share.
 */
export async function filledSampleEvent(routeId: string): Promise<{ text: string; board: Awaited<ReturnType<typeof newBoard>> }> {
  const user = await newUser();
  const board = await newBoard(user, `A sample's board (${routeId})`);
  const column = await newColumn(user, board.id);
  const card = await newCard(user, column.id);
  const post = async (path: string, body?: unknown) =>
    (await call<{ id: string }>('POST', path, { token: user.token, ...(body === undefined ? {} : { body }) })).body;
  const sample = readFileSync(join(REPO_ROOT, 'events', eventFileOf(routeId)), 'utf8');
  // The member and assignee routes act on a second user, whom their events name (by id or by
  // address): not yet a member for add, already one otherwise. Only an event that names that user
  // gets one: for any other, it would be an account no request of the sample touches, whose
  // registration and verification would only cost the stack's time.
  const teammate = sample.includes(PLACEHOLDER.user) || sample.includes(PLACEHOLDER.teammateEmail) ? await newUser() : undefined;
  if (['members.update', 'members.remove', 'cards.assignees.add', 'cards.assignees.remove'].includes(routeId)) {
    await post(`/boards/${board.id}/members`, { email: teammate!.email });
  }
  // The label routes act on a label of the board (on the card already, for detach).
  const label =
    routeId.startsWith('labels.') || routeId.startsWith('cards.labels.')
      ? await post(`/boards/${board.id}/labels`, { name: `L-${randomUUID().slice(0, 8)}`, color: '#d73a4a' })
      : undefined;
  if (routeId === 'cards.labels.detach') await call('PUT', `/cards/${card.id}/labels/${label!.id}`, { token: user.token });
  // The /webhooks/{id} routes act on a webhook of the board (the local stack lets 127.0.0.1 through).
  const webhook =
    routeId.startsWith('webhooks.') && !['webhooks.create', 'webhooks.list'].includes(routeId)
      ? await post(`/boards/${board.id}/webhooks`, { url: 'http://127.0.0.1:9/sample-hook' })
      : undefined;
  // The token's delete acts on a personal token of the user.
  const personalToken =
    routeId === 'auth.tokens.delete'
      ? await post('/auth/tokens', { name: 'Sample', scopes: ['boards:read'], expires_in_days: 1 })
      : undefined;
  // Taking an assignee off, clearing a due date and restoring act on a card that has one to lose.
  if (routeId === 'cards.assignees.remove')
    await call('PUT', `/cards/${card.id}/assignees/${teammate!.id}`, { token: user.token });
  if (routeId === 'cards.due.clear') {
    await call('PATCH', `/cards/${card.id}`, { token: user.token, body: { due_at: '2026-12-01T17:00:00.000Z' } });
  }
  if (routeId === 'cards.restore') await post(`/cards/${card.id}/archive`);
  // The /comments/{id} routes act on a comment of the card, by the user who wrote it.
  const comment = routeId.startsWith('comments.') ? await post(`/cards/${card.id}/comments`, { body: 'First!' }) : undefined;
  // The account routes act on the user's own account: its address, its password, a code mailed to it.
  const ownAccount = ['auth.login', 'auth.password.reset', 'auth.password.change', 'auth.account.delete'].includes(routeId);
  const code =
    routeId === 'auth.verify-email'
      ? await codeSentBy(user.email, () => call('POST', '/auth/verify-email/request', { token: user.token }))
      : routeId === 'auth.password.reset'
        ? await codeSentBy(user.email, () => call('POST', '/auth/password/forgot', { body: { email: user.email } }))
        : '123456';
  const text = sample
    .replaceAll(PLACEHOLDER.token, user.token)
    .replaceAll(PLACEHOLDER.refreshToken, user.refreshToken!)
    .replaceAll(PLACEHOLDER.board, board.id)
    .replaceAll(PLACEHOLDER.column, column.id)
    .replaceAll(PLACEHOLDER.card, card.id)
    .replaceAll(PLACEHOLDER.user, teammate?.id ?? PLACEHOLDER.user)
    .replaceAll(PLACEHOLDER.teammateEmail, teammate?.email ?? PLACEHOLDER.teammateEmail)
    .replaceAll(PLACEHOLDER.label, label?.id ?? PLACEHOLDER.label)
    .replaceAll(PLACEHOLDER.webhook, webhook?.id ?? PLACEHOLDER.webhook)
    .replaceAll(PLACEHOLDER.comment, comment?.id ?? PLACEHOLDER.comment)
    .replaceAll(PLACEHOLDER.personalToken, personalToken?.id ?? PLACEHOLDER.personalToken)
    .replaceAll('new-user@example.com', ownAccount ? user.email : uniqueEmail())
    .replaceAll('correct horse battery', ownAccount ? user.password : 'correct horse battery')
    .replaceAll('123456', code);
  return { text, board };
}
