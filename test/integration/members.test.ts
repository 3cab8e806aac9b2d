import { randomUUID } from 'node:crypto';
import {
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  subjectOf,
  type TestUser,
  uniqueEmail,
  unknownId,
} from '../support/api';
import { verifyAddress } from '../support/mail';

/**
 * Members and roles, and owner vs member vs stranger on every route, as a REST client sees them:
 * status, body shape, and that a rejected request changes nothing.
 */

// --- helpers -------------------------------------------------------------------------------------

type Role = 'owner' | 'member';

interface MemberView {
  user_id: string;
  email: string;
  display_name: string;
  role: Role;
}

interface Person extends TestUser {
  displayName: string;
}

/** A registered user, address verified, with a display name of its own, so that the member view can be checked. */
async function register(displayName = `Name ${randomUUID().slice(0, 8)}`, email = uniqueEmail()): Promise<Person> {
  const password = `pw-${randomUUID()}`;
  const reply = await call('POST', '/auth/register', { body: { email, password, display_name: displayName } });
  if (reply.status !== 201) throw new Error(`register failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  const person = { id: subjectOf(reply.body.token), email, password, token: reply.body.token, displayName };
  // Only a verified address can be added by email (docs/accounts.md).
  await verifyAddress(person);
  return person;
}

const addMember = (caller: TestUser, boardId: string, body: unknown) =>
  call<MemberView>('POST', `/boards/${boardId}/members`, { token: caller.token, body });
const getMembers = (caller: TestUser, boardId: string) =>
  call<MemberView[]>('GET', `/boards/${boardId}/members`, { token: caller.token });
const changeRole = (caller: TestUser, boardId: string, userId: string, body: unknown) =>
  call<MemberView>('PATCH', `/boards/${boardId}/members/${userId}`, { token: caller.token, body });
const removeMember = (caller: TestUser, boardId: string, userId: string) =>
  call('DELETE', `/boards/${boardId}/members/${userId}`, { token: caller.token });
const getBoard = (caller: TestUser, boardId: string) => call('GET', `/boards/${boardId}`, { token: caller.token });
const deleteBoard = (caller: TestUser, boardId: string) => call('DELETE', `/boards/${boardId}`, { token: caller.token });

/** The member view a client expects for this person with this role. */
const viewOf = (person: Person, role: Role): MemberView => ({
  user_id: person.id,
  email: person.email.toLowerCase(),
  display_name: person.displayName,
  role,
});

async function membersOf(caller: TestUser, boardId: string): Promise<MemberView[]> {
  const reply = await getMembers(caller, boardId);
  expect(reply.status).toBe(200);
  return reply.body;
}

async function boardIdsOf(user: TestUser): Promise<string[]> {
  const reply = await call<{ id: string }[]>('GET', '/boards', { token: user.token });
  expect(reply.status).toBe(200);
  return reply.body.map((b) => b.id);
}

/** created_at has millisecond precision: make sure the next board gets a later one. */
async function nextMillisecond(after: string) {
  while (new Date().toISOString() <= after) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** Adds `person` with `role` and checks the 201. */
async function join(owner: TestUser, boardId: string, person: Person, role: Role = 'member') {
  const reply = await addMember(owner, boardId, { email: person.email, role });
  expect(reply.status).toBe(201);
  expect(reply.body).toEqual(viewOf(person, role));
}

/** A board of `owner` with one more user of role `member`. */
async function teamBoard() {
  const owner = await register('Olivia Owner');
  const member = await register('Max Member');
  const board = await newBoard(owner, 'Team board');
  await join(owner, board.id, member);
  return { owner, member, board };
}

/** Everything a rejected request could have changed: the members and the whole tree. */
async function snapshot(owner: TestUser, boardId: string) {
  const tree = await getBoard(owner, boardId);
  expect(tree.status).toBe(200);
  return { members: await membersOf(owner, boardId), tree: tree.body };
}

// --- tests ---------------------------------------------------------------------------------------

describe('POST /boards/{id}/members', () => {
  it('lets the owner add a registered user: 201 with exactly the member view, role defaulting to member', async () => {
    const owner = await register('Olivia Owner');
    const newcomer = await register('Nora Newcomer');
    const board = await newBoard(owner);
    const reply = await addMember(owner, board.id, { email: newcomer.email });
    expect(reply.status).toBe(201);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual(viewOf(newcomer, 'member'));
    expect(Object.keys(reply.body).sort()).toEqual(['display_name', 'email', 'role', 'user_id']);

    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner'), viewOf(newcomer, 'member')]);
    expect(await boardIdsOf(newcomer)).toEqual([board.id]);
  });

  it('adds with role owner when asked, and the new owner can manage members', async () => {
    const owner = await register();
    const coOwner = await register();
    const third = await register();
    const board = await newBoard(owner);
    await join(owner, board.id, coOwner, 'owner');
    const reply = await addMember(coOwner, board.id, { email: third.email, role: 'member' });
    expect(reply.status).toBe(201);
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner'), viewOf(coOwner, 'owner'), viewOf(third, 'member')]);
  });

  it('matches the email case-insensitively', async () => {
    const owner = await register();
    const mixed = await register('Mixed Case', `Mixed.Case-${randomUUID()}@Example.TEST`);
    const board = await newBoard(owner);
    const reply = await addMember(owner, board.id, { email: mixed.email.toUpperCase() });
    expect(reply.status).toBe(201);
    expect(reply.body.user_id).toBe(mixed.id);
    expect(reply.body.email.toLowerCase()).toBe(mixed.email.toLowerCase());
    expect(reply.body).toMatchObject({ display_name: 'Mixed Case', role: 'member' });
    expect(await boardIdsOf(mixed)).toEqual([board.id]);
  });

  it('can add a user registered a moment ago, who then has access at once', async () => {
    const owner = await register();
    const board = await newBoard(owner);
    const fresh = await register('Just Registered');
    const reply = await addMember(owner, board.id, { email: fresh.email });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual(viewOf(fresh, 'member'));
    expect((await getBoard(fresh, board.id)).status).toBe(200);
    expect(await boardIdsOf(fresh)).toEqual([board.id]);
  });

  it('answers 404 for an email no user is registered with, and adds nobody', async () => {
    const owner = await register();
    const board = await newBoard(owner);
    expectProblem(await addMember(owner, board.id, { email: uniqueEmail() }), 404);
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner')]);
  });

  it('answers 409 for a user who is already a member (any casing, any role, the owner too) and changes nothing', async () => {
    const { owner, member, board } = await teamBoard();
    const before = await snapshot(owner, board.id);
    expectProblem(await addMember(owner, board.id, { email: member.email }), 409);
    expectProblem(await addMember(owner, board.id, { email: member.email.toUpperCase(), role: 'owner' }), 409);
    expectProblem(await addMember(owner, board.id, { email: owner.email, role: 'member' }), 409);
    expect(await snapshot(owner, board.id)).toEqual(before);
  });

  it('answers 403 to a member who is not an owner, and adds nobody', async () => {
    const { owner, member, board } = await teamBoard();
    const outsider = await register();
    const before = await snapshot(owner, board.id);
    expectProblem(await addMember(member, board.id, { email: outsider.email }), 403);
    expectProblem(await addMember(member, board.id, { email: outsider.email, role: 'owner' }), 403);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expect(await boardIdsOf(outsider)).toEqual([]);
  });

  it('answers 403 to a stranger, also when adding themselves, and adds nobody', async () => {
    const { owner, board } = await teamBoard();
    const stranger = await register();
    const outsider = await register();
    const before = await snapshot(owner, board.id);
    expectProblem(await addMember(stranger, board.id, { email: outsider.email }), 403);
    expectProblem(await addMember(stranger, board.id, { email: stranger.email, role: 'owner' }), 403);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expect(await boardIdsOf(stranger)).toEqual([]);
    expect(await boardIdsOf(outsider)).toEqual([]);
  });

  it('answers 403 (not 404) for a board that does not exist, whatever the email', async () => {
    const user = await register();
    const other = await register();
    await newBoard(user);
    expectProblem(await addMember(user, unknownId(), { email: other.email }), 403);
    expectProblem(await addMember(user, unknownId(), { email: uniqueEmail() }), 403);
    expect(await boardIdsOf(other)).toEqual([]);
  });

  it('answers 403 to the former owner of a deleted board', async () => {
    const owner = await register();
    const other = await register();
    const board = await newBoard(owner);
    expect((await deleteBoard(owner, board.id)).status).toBe(204);
    expectProblem(await addMember(owner, board.id, { email: other.email }), 403);
    expect(await boardIdsOf(other)).toEqual([]);
  });

  /** Each case gets the email of a registered non-member, for the cases that are not about the email. */
  const invalidBodies: [string, (email: string) => unknown][] = [
    ['a missing email', () => ({})],
    ['a missing email with a role', () => ({ role: 'member' })],
    ['an empty email', () => ({ email: '' })],
    ['an email without @', () => ({ email: 'not-an-email' })],
    ['an email without domain', () => ({ email: 'someone@' })],
    ['a numeric email', () => ({ email: 42 })],
    ['a null email', () => ({ email: null })],
    ['an array email', (email) => ({ email: [email] })],
    [
      'an email longer than 254 characters',
      () => ({ email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.test` }),
    ],
    ['an unknown role', (email) => ({ email, role: 'admin' })],
    ['a role in upper case', (email) => ({ email, role: 'OWNER' })],
    ['a numeric role', (email) => ({ email, role: 1 })],
    ['a body that is an array', (email) => [{ email }]],
    ['a body that is a string', (email) => email],
  ];

  it.each(invalidBodies)('answers 400 for %s and adds nobody', async (_case, body) => {
    const owner = await register();
    const target = await register();
    const board = await newBoard(owner);
    expectProblem(await addMember(owner, board.id, body(target.email)), 400);
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner')]);
    expect(await boardIdsOf(target)).toEqual([]);
  });

  it('answers 400 for a board id that is not a UUID', async () => {
    const owner = await register();
    const target = await register();
    expectProblem(await addMember(owner, 'not-a-uuid', { email: target.email }), 400);
  });
});

describe('GET /boards/{id}/members', () => {
  it('answers 200 to every member with the member views in the order they joined, owner first', async () => {
    const owner = await register('First');
    const second = await register('Second');
    const third = await register('Third');
    const fourth = await register('Fourth');
    const board = await newBoard(owner);
    await join(owner, board.id, second);
    await join(owner, board.id, third, 'owner');
    await join(owner, board.id, fourth);
    const expected = [viewOf(owner, 'owner'), viewOf(second, 'member'), viewOf(third, 'owner'), viewOf(fourth, 'member')];

    for (const caller of [owner, second, third, fourth]) {
      const reply = await getMembers(caller, board.id);
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.body).toEqual(expected);
    }
  });

  it('keeps the join order when roles change', async () => {
    const { owner, member, board } = await teamBoard();
    const late = await register();
    await join(owner, board.id, late);
    expect((await changeRole(owner, board.id, late.id, { role: 'owner' })).status).toBe(200);
    expect((await changeRole(late, board.id, owner.id, { role: 'member' })).status).toBe(200);
    expect(await membersOf(member, board.id)).toEqual([viewOf(owner, 'member'), viewOf(member, 'member'), viewOf(late, 'owner')]);
  });

  it('answers 403 to a stranger, revealing no member, also for a board that does not exist', async () => {
    const { owner, board } = await teamBoard();
    const stranger = await register();
    const reply = await getMembers(stranger, board.id);
    expectProblem(reply, 403);
    expect(JSON.stringify(reply.body)).not.toContain(owner.email);
    expectProblem(await getMembers(stranger, unknownId()), 403);
    expectProblem(await getMembers(owner, unknownId()), 403);
  });

  it('answers 400 for a board id that is not a UUID', async () => {
    const owner = await register();
    expectProblem(await getMembers(owner, 'not-a-uuid'), 400);
  });
});

describe('PATCH /boards/{id}/members/{user_id}', () => {
  it('lets an owner promote a member: 200 with the member view, and the new owner can manage members', async () => {
    const { owner, member, board } = await teamBoard();
    const reply = await changeRole(owner, board.id, member.id, { role: 'owner' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual(viewOf(member, 'owner'));
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner'), viewOf(member, 'owner')]);

    const newcomer = await register();
    expect((await addMember(member, board.id, { email: newcomer.email })).status).toBe(201);
  });

  it('lets an owner demote another owner, who then loses the owner-only rights', async () => {
    const owner = await register();
    const coOwner = await register();
    const board = await newBoard(owner);
    await join(owner, board.id, coOwner, 'owner');
    const reply = await changeRole(owner, board.id, coOwner.id, { role: 'member' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(viewOf(coOwner, 'member'));
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner'), viewOf(coOwner, 'member')]);

    expectProblem(await addMember(coOwner, board.id, { email: (await register()).email }), 403);
    expectProblem(await deleteBoard(coOwner, board.id), 403);
    expect((await getBoard(owner, board.id)).status).toBe(200);
  });

  it('with two owners, an owner may demote themselves; then the remaining owner cannot be demoted (409)', async () => {
    const owner = await register();
    const coOwner = await register();
    const board = await newBoard(owner);
    await join(owner, board.id, coOwner, 'owner');
    const reply = await changeRole(owner, board.id, owner.id, { role: 'member' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(viewOf(owner, 'member'));

    expectProblem(await changeRole(coOwner, board.id, coOwner.id, { role: 'member' }), 409);
    expect(await membersOf(coOwner, board.id)).toEqual([viewOf(owner, 'member'), viewOf(coOwner, 'owner')]);
  });

  it('answers 409 when the only owner demotes themselves, and they stay owner', async () => {
    const { owner, member, board } = await teamBoard();
    const before = await snapshot(owner, board.id);
    expectProblem(await changeRole(owner, board.id, owner.id, { role: 'member' }), 409);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expect(await membersOf(member, board.id)).toEqual([viewOf(owner, 'owner'), viewOf(member, 'member')]);
    // Still an owner in deed: may manage members.
    expect((await changeRole(owner, board.id, member.id, { role: 'owner' })).status).toBe(200);
  });

  it('answers 200 and changes nothing when the role is already the asked one', async () => {
    const { owner, member, board } = await teamBoard();
    const same = await changeRole(owner, board.id, member.id, { role: 'member' });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(viewOf(member, 'member'));
    const self = await changeRole(owner, board.id, owner.id, { role: 'owner' });
    expect(self.status).toBe(200);
    expect(self.body).toEqual(viewOf(owner, 'owner'));
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner'), viewOf(member, 'member')]);
  });

  it('answers 403 to a member who is not an owner (promoting themselves or demoting the owner), changing nothing', async () => {
    const { owner, member, board } = await teamBoard();
    const before = await snapshot(owner, board.id);
    expectProblem(await changeRole(member, board.id, member.id, { role: 'owner' }), 403);
    expectProblem(await changeRole(member, board.id, owner.id, { role: 'member' }), 403);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expectProblem(await deleteBoard(member, board.id), 403);
  });

  it('answers 403 to a stranger, also for a board that does not exist, changing nothing', async () => {
    const { owner, member, board } = await teamBoard();
    const stranger = await register();
    const before = await snapshot(owner, board.id);
    expectProblem(await changeRole(stranger, board.id, member.id, { role: 'owner' }), 403);
    expectProblem(await changeRole(stranger, board.id, stranger.id, { role: 'owner' }), 403);
    expectProblem(await changeRole(stranger, unknownId(), stranger.id, { role: 'owner' }), 403);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expect(await boardIdsOf(stranger)).toEqual([]);
  });

  it('answers 404 when the target is not a member, and does not make them one', async () => {
    const { owner, board } = await teamBoard();
    const outsider = await register();
    const before = await snapshot(owner, board.id);
    expectProblem(await changeRole(owner, board.id, outsider.id, { role: 'member' }), 404);
    expectProblem(await changeRole(owner, board.id, outsider.id, { role: 'owner' }), 404);
    expectProblem(await changeRole(owner, board.id, unknownId(), { role: 'owner' }), 404);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expect(await boardIdsOf(outsider)).toEqual([]);
    expectProblem(await getBoard(outsider, board.id), 403);
  });

  const invalidBodies: [string, unknown][] = [
    ['a missing role', {}],
    ['an unknown role', { role: 'admin' }],
    ['a role in upper case', { role: 'MEMBER' }],
    ['a null role', { role: null }],
    ['a numeric role', { role: 0 }],
    ['a body that is an array', ['owner']],
  ];

  it.each(invalidBodies)('answers 400 for %s and changes nothing', async (_case, body) => {
    const { owner, member, board } = await teamBoard();
    const before = await snapshot(owner, board.id);
    expectProblem(await changeRole(owner, board.id, member.id, body), 400);
    expect(await snapshot(owner, board.id)).toEqual(before);
  });

  it('answers 400 for a board id or user id that is not a UUID', async () => {
    const { owner, member, board } = await teamBoard();
    expectProblem(await changeRole(owner, board.id, 'not-a-uuid', { role: 'owner' }), 400);
    expectProblem(await changeRole(owner, 'not-a-uuid', member.id, { role: 'owner' }), 400);
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner'), viewOf(member, 'member')]);
  });
});

describe('DELETE /boards/{id}/members/{user_id}', () => {
  it('lets the owner remove a member: 204, and the member loses access at once', async () => {
    const { owner, member, board } = await teamBoard();
    const column = await newColumn(owner, board.id, 'Todo');
    const card = await newCard(owner, column.id, { title: 'Shared card' });
    // The member had access before.
    expect((await getBoard(member, board.id)).status).toBe(200);
    expect((await call('GET', `/cards/${card.id}`, { token: member.token })).status).toBe(200);

    const reply = await removeMember(owner, board.id, member.id);
    expect(reply.status).toBe(204);
    expect(reply.body).toBe('');

    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner')]);
    expect(await boardIdsOf(member)).toEqual([]);
    const t = member.token;
    expectProblem(await getBoard(member, board.id), 403);
    expectProblem(await call('PATCH', `/boards/${board.id}`, { token: t, body: { title: 'Gone?' } }), 403);
    expectProblem(await getMembers(member, board.id), 403);
    expectProblem(await call('POST', `/boards/${board.id}/columns`, { token: t, body: { title: 'Late' } }), 403);
    expectProblem(await call('GET', `/columns/${column.id}`, { token: t }), 403);
    expectProblem(await call('POST', `/columns/${column.id}/cards`, { token: t, body: { title: 'Late' } }), 403);
    expectProblem(await call('GET', `/cards/${card.id}`, { token: t }), 403);
    expectProblem(await call('PATCH', `/cards/${card.id}`, { token: t, body: { title: 'Edited' } }), 403);
    expectProblem(await call('PATCH', `/cards/${card.id}/move`, { token: t, body: { target_column_id: column.id } }), 403);
    expectProblem(await call('DELETE', `/cards/${card.id}`, { token: t }), 403);

    // The board and its card are still there for the owner, unchanged.
    const card2 = await call('GET', `/cards/${card.id}`, { token: owner.token });
    expect(card2.body).toEqual(card);
    expect((await getBoard(owner, board.id)).body.title).toBe('Team board');
  });

  it('lets the owner add a removed member again, who regains access', async () => {
    const { owner, member, board } = await teamBoard();
    expect((await removeMember(owner, board.id, member.id)).status).toBe(204);
    await join(owner, board.id, member);
    expect((await getBoard(member, board.id)).status).toBe(200);
    expect(await boardIdsOf(member)).toEqual([board.id]);
  });

  it('lets a member leave: 204, and they lose access', async () => {
    const { owner, member, board } = await teamBoard();
    const other = await register();
    await join(owner, board.id, other);
    const reply = await removeMember(member, board.id, member.id);
    expect(reply.status).toBe(204);
    expect(reply.body).toBe('');
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner'), viewOf(other, 'member')]);
    expect(await boardIdsOf(member)).toEqual([]);
    expectProblem(await getBoard(member, board.id), 403);
    expect((await getBoard(other, board.id)).status).toBe(200);
  });

  it('answers 403 to a member removing someone else (a member or the owner), changing nothing', async () => {
    const { owner, member, board } = await teamBoard();
    const other = await register();
    await join(owner, board.id, other);
    const before = await snapshot(owner, board.id);
    expectProblem(await removeMember(member, board.id, other.id), 403);
    expectProblem(await removeMember(member, board.id, owner.id), 403);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expect((await getBoard(other, board.id)).status).toBe(200);
  });

  it('answers 409 for removing the last owner, also when the owner leaves, and they stay owner', async () => {
    const { owner, member, board } = await teamBoard();
    const before = await snapshot(owner, board.id);
    expectProblem(await removeMember(owner, board.id, owner.id), 409);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expect(await boardIdsOf(owner)).toEqual([board.id]);
    expect((await changeRole(owner, board.id, member.id, { role: 'owner' })).status).toBe(200);
  });

  it('answers 409 when the lone owner of a board without other members leaves', async () => {
    const owner = await register();
    const board = await newBoard(owner);
    expectProblem(await removeMember(owner, board.id, owner.id), 409);
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner')]);
    expect(await boardIdsOf(owner)).toEqual([board.id]);
  });

  it('with two owners, an owner may remove the other or leave; the last one then cannot leave', async () => {
    const owner = await register();
    const coOwner = await register();
    const third = await register();
    const board = await newBoard(owner);
    await join(owner, board.id, coOwner, 'owner');
    await join(owner, board.id, third, 'owner');

    expect((await removeMember(coOwner, board.id, owner.id)).status).toBe(204);
    expectProblem(await getBoard(owner, board.id), 403);
    expect((await removeMember(coOwner, board.id, coOwner.id)).status).toBe(204);
    expect(await boardIdsOf(coOwner)).toEqual([]);
    expectProblem(await removeMember(third, board.id, third.id), 409);
    expect(await membersOf(third, board.id)).toEqual([viewOf(third, 'owner')]);
  });

  it('answers 404 when the target is not a member (never was, unknown id, already removed)', async () => {
    const { owner, member, board } = await teamBoard();
    const outsider = await register();
    const leaver = await register();
    await join(owner, board.id, leaver);
    expect((await removeMember(owner, board.id, leaver.id)).status).toBe(204);
    const before = await snapshot(owner, board.id);
    expectProblem(await removeMember(owner, board.id, outsider.id), 404);
    expectProblem(await removeMember(owner, board.id, unknownId()), 404);
    expectProblem(await removeMember(owner, board.id, leaver.id), 404);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expect(before.members).toEqual([viewOf(owner, 'owner'), viewOf(member, 'member')]);
  });

  it('answers 403 to a stranger (removing a member, themselves, or on a board that does not exist)', async () => {
    const { owner, member, board } = await teamBoard();
    const stranger = await register();
    const before = await snapshot(owner, board.id);
    expectProblem(await removeMember(stranger, board.id, member.id), 403);
    expectProblem(await removeMember(stranger, board.id, owner.id), 403);
    expectProblem(await removeMember(stranger, board.id, stranger.id), 403);
    expectProblem(await removeMember(stranger, unknownId(), stranger.id), 403);
    expect(await snapshot(owner, board.id)).toEqual(before);
  });

  it('answers 400 for a board id or user id that is not a UUID', async () => {
    const { owner, member, board } = await teamBoard();
    expectProblem(await removeMember(owner, board.id, 'not-a-uuid'), 400);
    expectProblem(await removeMember(owner, 'not-a-uuid', member.id), 400);
    expect(await membersOf(owner, board.id)).toEqual([viewOf(owner, 'owner'), viewOf(member, 'member')]);
  });
});

describe('a member who is not an owner', () => {
  it('sees the board in GET /boards, with owner_id the creator, and reads the same tree as the owner', async () => {
    const { owner, member, board } = await teamBoard();
    const column = await newColumn(owner, board.id, 'Todo');
    await newCard(owner, column.id, { title: 'One', description: 'first' });
    const list = await call('GET', '/boards', { token: member.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([board]);
    expect(list.body[0].owner_id).toBe(owner.id);

    const mine = await getBoard(member, board.id);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual((await getBoard(owner, board.id)).body);
  });

  it('lists a board they were added to by the board’s created_at, among their own boards (newest first)', async () => {
    const owner = await register();
    const member = await register();
    const older = await newBoard(owner, 'Older, joined later');
    await nextMillisecond(older.created_at);
    const own = await newBoard(member, 'Own, newer');
    await join(owner, older.id, member);
    const list = await call('GET', '/boards', { token: member.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([own, older]);
  });

  it('renames the board, creates columns and cards, edits and moves cards', async () => {
    const { owner, member, board } = await teamBoard();
    const t = member.token;
    const renamed = await call('PATCH', `/boards/${board.id}`, { token: t, body: { title: 'Renamed by member' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...board, title: 'Renamed by member' });

    const todo = await call('POST', `/boards/${board.id}/columns`, { token: t, body: { title: 'Todo' } });
    expect(todo.status).toBe(201);
    const done = await call('POST', `/boards/${board.id}/columns`, { token: t, body: { title: 'Done' } });
    expect(done.status).toBe(201);
    const first = await call('POST', `/columns/${todo.body.id}/cards`, { token: t, body: { title: 'First' } });
    expect(first.status).toBe(201);
    const second = await call('POST', `/columns/${todo.body.id}/cards`, { token: t, body: { title: 'Second' } });
    expect(second.status).toBe(201);

    const edited = await call('PATCH', `/cards/${first.body.id}`, { token: t, body: { description: 'by member' } });
    expect(edited.status).toBe(200);
    expect(edited.body).toEqual({ ...first.body, description: 'by member' });
    expect((await call('GET', `/cards/${second.body.id}`, { token: t })).body).toEqual(second.body);

    const moved = await call('PATCH', `/cards/${first.body.id}/move`, { token: t, body: { target_column_id: done.body.id } });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ ...edited.body, column_id: done.body.id, position: 1 });
    expect((await call('DELETE', `/cards/${second.body.id}`, { token: t })).status).toBe(204);

    // The owner sees everything the member did.
    const tree = await getBoard(owner, board.id);
    expect(tree.body).toEqual({
      ...board,
      title: 'Renamed by member',
      // The member's addition, then the member's rename, 2 columns, 2 cards, edit, move, delete.
      seq: 9,
      columns: [
        { ...todo.body, cards: [] },
        { ...done.body, cards: [moved.body] },
      ],
      labels: [],
    });
  });

  it('gets 403 on deleting the board and on managing members, and nothing changes', async () => {
    const { owner, member, board } = await teamBoard();
    const column = await newColumn(owner, board.id);
    await newCard(owner, column.id);
    const outsider = await register();
    const before = await snapshot(owner, board.id);
    expectProblem(await deleteBoard(member, board.id), 403);
    expectProblem(await addMember(member, board.id, { email: outsider.email }), 403);
    expectProblem(await changeRole(member, board.id, member.id, { role: 'owner' }), 403);
    expectProblem(await removeMember(member, board.id, owner.id), 403);
    expect(await snapshot(owner, board.id)).toEqual(before);
    expect(await boardIdsOf(member)).toEqual([board.id]);
  });

  it('loses the board when the owner deletes it: gone from GET /boards, 403 on it', async () => {
    const { owner, member, board } = await teamBoard();
    expect((await deleteBoard(owner, board.id)).status).toBe(204);
    expect(await boardIdsOf(member)).toEqual([]);
    expectProblem(await getBoard(member, board.id), 403);
    expectProblem(await getMembers(member, board.id), 403);
  });
});

describe('owner_id', () => {
  it("stays the creator's id after another owner is added, after the creator is demoted and after the creator leaves", async () => {
    const creator = await register();
    const coOwner = await register();
    const board = await newBoard(creator, 'Owned');
    await join(creator, board.id, coOwner, 'owner');
    const ownerIdSeenBy = async (user: TestUser) => {
      const tree = await getBoard(user, board.id);
      expect(tree.status).toBe(200);
      const list = await call<{ id: string; owner_id: string }[]>('GET', '/boards', { token: user.token });
      expect(list.body.find((b) => b.id === board.id)?.owner_id).toBe(tree.body.owner_id);
      return tree.body.owner_id as string;
    };
    expect(await ownerIdSeenBy(coOwner)).toBe(creator.id);

    expect((await changeRole(coOwner, board.id, creator.id, { role: 'member' })).status).toBe(200);
    expect(await ownerIdSeenBy(coOwner)).toBe(creator.id);
    const renamed = await call('PATCH', `/boards/${board.id}`, { token: coOwner.token, body: { title: 'Still owned' } });
    expect(renamed.body).toEqual({ ...board, title: 'Still owned' });

    expect((await removeMember(creator, board.id, creator.id)).status).toBe(204);
    expect(await ownerIdSeenBy(coOwner)).toBe(creator.id);
  });
});

describe('concurrent role changes', () => {
  const ROUNDS = 6;

  it('two owners demoting each other at the same moment never leave the board without an owner', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: ROUNDS }, async () => {
        const a = await register();
        const b = await register();
        const board = await newBoard(a);
        await join(a, board.id, b, 'owner');
        const [ab, ba] = await Promise.all([
          changeRole(a, board.id, b.id, { role: 'member' }),
          changeRole(b, board.id, a.id, { role: 'member' }),
        ]);
        const owners = (await membersOf(a, board.id)).filter((m) => m.role === 'owner').map((m) => m.user_id);
        return { statuses: [ab.status, ba.status], owners, a: a.id, b: b.id };
      }),
    );
    for (const { statuses, owners, a, b } of outcomes) {
      // Exactly one demotion lands; the other is refused: 409 (last owner) when it raced, or 403
      // when its caller had already been demoted before its request was checked.
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect([403, 409]).toContain(statuses.find((s) => s !== 200));
      expect(owners).toHaveLength(1);
      // The owner left is the one whose demotion of the other succeeded.
      expect(owners[0]).toBe(statuses[0] === 200 ? a : b);
    }
    // The race was really run: at least one request was refused as the last owner's demotion.
    expect(outcomes.flatMap((o) => o.statuses)).toContain(409);
  });

  it('two owners leaving at the same moment never leave the board without an owner', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: ROUNDS }, async () => {
        const a = await register();
        const b = await register();
        const watcher = await register();
        const board = await newBoard(a);
        await join(a, board.id, b, 'owner');
        await join(a, board.id, watcher);
        const replies = await Promise.all([removeMember(a, board.id, a.id), removeMember(b, board.id, b.id)]);
        const members = await membersOf(watcher, board.id);
        return { statuses: replies.map((r) => r.status), members, a: a.id, b: b.id };
      }),
    );
    for (const { statuses, members, a, b } of outcomes) {
      expect([...statuses].sort()).toEqual([204, 409]);
      const owners = members.filter((m) => m.role === 'owner').map((m) => m.user_id);
      expect(owners).toEqual([statuses[0] === 204 ? b : a]);
      expect(members).toHaveLength(2);
    }
  });
});
