import { randomUUID } from 'node:crypto';
import {
  addMember,
  call,
  expectProblem,
  newBoard,
  newUser,
  type Reply,
  subjectOf,
  type TestUser,
  uniqueEmail,
} from '../support/api';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import { codeSentBy, outbox, verifyAddress } from '../support/mail';
import { closeAllSockets, connect, getTicket, refusedStatus, socketAddress } from '../support/sockets';
import { eventually } from '../support/wait';

/**
 * The contract's "Accounts: verified addresses, passwords, leaving", over the local
 * stack: codes are read from the local outbox, as their owner would read them in a mailbox.
 */
jest.setTimeout(120_000);

afterEach(closeAllSockets);

const env = localEnv();
const documentClient = localDocumentClient(env);
afterAll(() => documentClient.destroy());
const partition = (pk: string) => readPartition(documentClient, env.TABLE_NAME!, pk);

const register = async (email = uniqueEmail(), password = `pw-${randomUUID()}`): Promise<TestUser> => {
  const reply = await call('POST', '/auth/register', { body: { email, password, display_name: 'Someone' } });
  expect(reply.status).toBe(201);
  return { id: subjectOf(reply.body.token), email, password, token: reply.body.token, refreshToken: reply.body.refresh_token };
};
const me = (user: Pick<TestUser, 'token'>) => call('GET', '/auth/me', { token: user.token });
const login = (email: string, password: string) => call('POST', '/auth/login', { body: { email, password } });
const refresh = (user: Pick<TestUser, 'refreshToken'>) =>
  call('POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } });
const forgot = (email: string) => call('POST', '/auth/password/forgot', { body: { email } });
const reset = (email: string, code: string, new_password: string) =>
  call('POST', '/auth/password/reset', { body: { email, code, new_password } });
const resetCode = (email: string) => codeSentBy(email, async () => expect((await forgot(email)).status).toBe(202));
const addByEmail = (owner: TestUser, boardId: string, email: string) =>
  call('POST', `/boards/${boardId}/members`, { token: owner.token, body: { email } });
/** A problem body without its per-request `instance`: what two answers must share to say the same. */
const sameness = (reply: Reply) => {
  const { instance: _instance, ...rest } = reply.body as Record<string, unknown>;
  return { status: reply.status, type: reply.headers.get('content-type'), body: rest };
};
/** A code the outbox never showed for this address. */
const wrongCode = async (email: string) => {
  const sent = new Set((await outbox(email)).map((mail) => mail.code));
  let code = '000000';
  for (let n = 0; sent.has(code); n++) code = String(n).padStart(6, '0');
  return code;
};

describe('GET /auth/me', () => {
  it('answers the account, unverified at first', async () => {
    const user = await register();
    const reply = await me(user);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ id: user.id, email: user.email, display_name: 'Someone', email_verified: false });
  });

  it('answers 401 without a token', async () => {
    expectProblem(await call('GET', '/auth/me'), 401);
  });
});

describe('verifying the address', () => {
  it('mails a code to the address (202), and the code verifies it (204)', async () => {
    const user = await register();
    const requested = await call('POST', '/auth/verify-email/request', { token: user.token });
    expect(requested.status).toBe(202);
    const [mail] = await outbox(user.email);
    expect(mail).toEqual({
      to: user.email,
      subject: expect.any(String),
      code: expect.stringMatching(/^\d{6}$/),
      sent_at: expect.any(String),
    });
    expect((await call('POST', '/auth/verify-email', { token: user.token, body: { code: mail!.code } })).status).toBe(204);
    expect((await me(user)).body.email_verified).toBe(true);
  });

  it('answers 400 invalid_code for a wrong code and for a code already used, and changes nothing', async () => {
    const user = await register();
    const code = await codeSentBy(user.email, () => call('POST', '/auth/verify-email/request', { token: user.token }));
    const wrong = await call('POST', '/auth/verify-email', { token: user.token, body: { code: await wrongCode(user.email) } });
    expect(expectProblem(wrong, 400).code).toBe('invalid_code');
    expect((await me(user)).body.email_verified).toBe(false);
    expect((await call('POST', '/auth/verify-email', { token: user.token, body: { code } })).status).toBe(204);
    const again = await call('POST', '/auth/verify-email', { token: user.token, body: { code } });
    expect(expectProblem(again, 400).code).toBe('invalid_code');
  });

  it('answers 400 bad_request for a body without a code, and 401 without a token', async () => {
    const user = await register();
    expect(expectProblem(await call('POST', '/auth/verify-email', { token: user.token, body: {} }), 400).code).toBe(
      'bad_request',
    );
    expectProblem(await call('POST', '/auth/verify-email', { body: { code: '123456' } }), 401);
    expectProblem(await call('POST', '/auth/verify-email/request'), 401);
  });
});

describe('adding a member by email finds verified accounts only', () => {
  it('answers an unverified account exactly as an address nobody registered, and adds it once verified', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const unverified = await register();
    const asUnverified = await addByEmail(owner, board.id, unverified.email);
    const asUnknown = await addByEmail(owner, board.id, uniqueEmail());
    expect(asUnverified.status).toBe(404);
    expect(sameness(asUnverified)).toEqual(sameness(asUnknown));
    expect((await call('GET', `/boards/${board.id}`, { token: unverified.token })).status).toBe(403);

    await verifyAddress(unverified);
    const added = await addByEmail(owner, board.id, unverified.email.toUpperCase());
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ user_id: unverified.id, role: 'member' });
  });
});

describe('forgotten password', () => {
  it('answers 202 with the same answer for a verified, an unverified and an unknown address', async () => {
    const verified = await newUser();
    const unverified = await register();
    const answers = await Promise.all([verified.email, unverified.email, uniqueEmail()].map(forgot));
    for (const reply of answers) expect(reply.status).toBe(202);
    const shapes = answers.map((reply) => ({ type: reply.headers.get('content-type'), body: reply.body }));
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[2]).toEqual(shapes[0]);
  });

  it('a reset replaces the password, verifies the address and revokes every refresh token', async () => {
    const user = await newUser();
    const other = await login(user.email, user.password); // a second session
    const code = await resetCode(user.email);
    const newPassword = `new-${randomUUID()}`;
    expect((await reset(user.email, code, newPassword)).status).toBe(204);
    expectProblem(await login(user.email, user.password), 401);
    expect((await login(user.email, newPassword)).status).toBe(200);
    expectProblem(await refresh(user), 401);
    expectProblem(await refresh({ refreshToken: other.body.refresh_token }), 401);
    expect((await me(user)).body.email_verified).toBe(true);
  });

  it('answers 400 invalid_code for a wrong code, a used code and an unknown address alike, and changes nothing', async () => {
    const user = await newUser();
    const code = await resetCode(user.email);
    const wrong = await reset(user.email, await wrongCode(user.email), `new-${randomUUID()}`);
    const unknown = await reset(uniqueEmail(), code, `new-${randomUUID()}`);
    expect(expectProblem(wrong, 400).code).toBe('invalid_code');
    expect(sameness(unknown)).toEqual(sameness(wrong));
    expect((await login(user.email, user.password)).status).toBe(200);
    expect((await refresh(user)).status).toBe(200);
    expect((await reset(user.email, code, `new-${randomUUID()}`)).status).toBe(204);
    expect(expectProblem(await reset(user.email, code, `new-${randomUUID()}`), 400).code).toBe('invalid_code');
  });

  it('refuses a new password outside the input rules with 400, before any code is checked', async () => {
    const user = await newUser();
    const code = await resetCode(user.email);
    expect(expectProblem(await reset(user.email, code, 'short'), 400).code).toBe('bad_request');
    expect((await reset(user.email, code, `new-${randomUUID()}`)).status).toBe(204);
  });

  it("the mailbox's owner takes back an address someone else registered: the squatter is invisible, then signed out", async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const address = uniqueEmail();
    // The squatter registers Alice's address first and never proves it.
    const squatter = await register(address, 'squatters-password');
    const shared = await addByEmail(owner, board.id, address);
    expect(sameness(shared)).toEqual(sameness(await addByEmail(owner, board.id, uniqueEmail())));
    // Alice cannot register her own address...
    expectProblem(
      await call('POST', '/auth/register', { body: { email: address, password: 'alices-password', display_name: 'Alice' } }),
      409,
    );
    // ...but she reads her mailbox: the reset code reaches her although the address was never verified.
    const code = await resetCode(address);
    expect((await reset(address, code, 'alices-password')).status).toBe(204);
    expectProblem(await refresh(squatter), 401);
    expectProblem(await login(address, 'squatters-password'), 401);
    const alice = await login(address, 'alices-password');
    expect(alice.status).toBe(200);
    expect((await me({ token: alice.body.token })).body).toMatchObject({ email: address, email_verified: true });
    // Now the address is proven, and the owner's board reaches Alice.
    expect((await addByEmail(owner, board.id, address)).status).toBe(201);
    expect((await call('GET', `/boards/${board.id}`, { token: alice.body.token })).status).toBe(200);
  });
});

describe('changing the password', () => {
  it('answers 403 wrong_password for a wrong current password, and changes nothing', async () => {
    const user = await newUser();
    const reply = await call('POST', '/auth/password', {
      token: user.token,
      body: { current_password: 'not-the-password', new_password: `new-${randomUUID()}` },
    });
    expect(expectProblem(reply, 403).code).toBe('wrong_password');
    expect((await login(user.email, user.password)).status).toBe(200);
    expect((await refresh(user)).status).toBe(200);
  });

  it('replaces the password and revokes every refresh token, the caller’s own included', async () => {
    const user = await newUser();
    const other = await login(user.email, user.password);
    const newPassword = `new-${randomUUID()}`;
    const reply = await call('POST', '/auth/password', {
      token: user.token,
      body: { current_password: user.password, new_password: newPassword },
    });
    expect(reply.status).toBe(204);
    expectProblem(await refresh(user), 401);
    expectProblem(await refresh({ refreshToken: other.body.refresh_token }), 401);
    expectProblem(await login(user.email, user.password), 401);
    expect((await login(user.email, newPassword)).status).toBe(200);
  });

  it('refuses a body without the current password with 400', async () => {
    const user = await newUser();
    const reply = await call('POST', '/auth/password', { token: user.token, body: { new_password: `new-${randomUUID()}` } });
    expect(expectProblem(reply, 400).code).toBe('bad_request');
  });
});

describe('deleting the account', () => {
  const deleteAccount = (user: TestUser, password = user.password) =>
    call('DELETE', '/auth/account', { token: user.token, body: { password } });

  it('answers 403 wrong_password for a wrong password, and the account stays', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    expect(expectProblem(await deleteAccount(user, 'not-the-password'), 403).code).toBe('wrong_password');
    expect((await me(user)).status).toBe(200);
    expect((await call('GET', `/boards/${board.id}`, { token: user.token })).status).toBe(200);
  });

  it('leaves every board, deletes the boards it owned alone, frees the address; watchers hear it', async () => {
    const leaver = await newUser();
    const coOwner = await newUser();
    const member = await newUser();
    const alone = await newBoard(leaver, 'owned alone');
    const shared = await newBoard(coOwner, 'shared, as a member');
    const coOwned = await newBoard(coOwner, 'co-owned');
    await addMember(leaver, alone.id, member);
    await addMember(coOwner, shared.id, leaver);
    await addMember(coOwner, coOwned.id, leaver, 'owner');
    // An Idempotency-Key record of the leaver's, and an open socket of theirs.
    const keyed = await call('POST', '/boards', {
      token: leaver.token,
      body: { title: 'keyed' },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(keyed.status).toBe(201);
    const memberSocket = await connect(member, 'member');
    await memberSocket.watch(alone.id);
    const coOwnerSocket = await connect(coOwner, 'co-owner');
    await coOwnerSocket.watch(shared.id);
    await coOwnerSocket.watch(coOwned.id);
    const leaverSocket = await connect(leaver, 'leaver');

    expect((await deleteAccount(leaver)).status).toBe(204);

    // At once: the token reaches nothing, the refresh token is refused, the address is free.
    expectProblem(await me(leaver), 401);
    expect((await call('GET', '/boards', { token: leaver.token })).body).toEqual([]);
    for (const board of [alone, shared, coOwned]) {
      expectProblem(await call('GET', `/boards/${board.id}`, { token: leaver.token }), 403);
    }
    expectProblem(await call('POST', '/boards', { token: leaver.token, body: { title: 'after' } }), 401);
    expectProblem(await call('POST', '/realtime/tickets', { token: leaver.token }), 401);
    expectProblem(await refresh(leaver), 401);
    expectProblem(await login(leaver.email, leaver.password), 401);
    expect(sameness(await addByEmail(coOwner, shared.id, leaver.email))).toEqual(
      sameness(await addByEmail(coOwner, shared.id, uniqueEmail())),
    );

    // Soon: the watchers hear it, the boards are as a removal and a deletion leave them.
    const deleted = await memberSocket.waitFor((frame) => frame.type === 'board.deleted' && frame.board_id === alone.id);
    expect(deleted).toMatchObject({ actor_id: leaver.id });
    // The two boards' events come in either order (each board's own order is all that is promised).
    await eventually(async () => {
      const removed = coOwnerSocket.received.filter((frame) => frame.type === 'member.removed');
      expect(removed.map((frame) => frame.board_id).sort()).toEqual([shared.id, coOwned.id].sort());
      for (const frame of removed) expect(frame).toMatchObject({ user_id: leaver.id, actor_id: leaver.id });
    }, 60_000);
    // The deletion's transaction (whose event the member heard) comes before its memberships are
    // removed: until then the member reads a board that is gone (404), then one it is no member of.
    await eventually(async () => {
      expectProblem(await call('GET', `/boards/${alone.id}`, { token: member.token }), 403);
    });
    for (const board of [shared, coOwned]) {
      const members = await call('GET', `/boards/${board.id}/members`, { token: coOwner.token });
      expect(members.body.map((m: { user_id: string }) => m.user_id)).toEqual([coOwner.id]);
    }
    await leaverSocket.closed();

    // Nothing left behind: the user's partition (memberships, sockets, tickets, the marker), its
    // idempotency records, and the board it owned alone.
    await eventually(async () => {
      expect(await partition(`USER#${leaver.id}`)).toEqual([]);
      expect(await partition(`IDEMPOTENCY#${leaver.id}`)).toEqual([]);
      expect(await partition(`BOARD#${alone.id}`)).toEqual([]);
    }, 30_000);

    // The address registers again, as a new account.
    const again = await register(leaver.email);
    expect(again.id).not.toBe(leaver.id);
    expect((await me(again)).body.email_verified).toBe(false);
  });

  it('the last of two co-owners to leave deletes the board, also when both leave at once', async () => {
    const [first, second] = [await newUser(), await newUser()];
    const board = await newBoard(first);
    await addMember(first, board.id, second, 'owner');
    const answers = await Promise.all([deleteAccount(first), deleteAccount(second)]);
    expect(answers.map((reply) => reply.status)).toEqual([204, 204]);
    await eventually(async () => expect(await partition(`BOARD#${board.id}`)).toEqual([]), 30_000);
  });

  it('a ticket issued before the deletion opens no socket after it', async () => {
    const user = await newUser();
    const ticket = await getTicket(user);
    expect((await deleteAccount(user)).status).toBe(204);
    expect(await refusedStatus(socketAddress(ticket))).toBe(401);
    await eventually(async () => expect(await partition(`USER#${user.id}`)).toEqual([]), 30_000);
  });

  it('a second deletion with the same token finds nothing to delete', async () => {
    const user = await newUser();
    expect((await deleteAccount(user)).status).toBe(204);
    await eventually(async () => expect(await partition(`USER#${user.id}`)).toEqual([]), 30_000);
    expectProblem(await deleteAccount(user), 401);
  });
});

describe('the local outbox', () => {
  it('answers 400 without an address, and an empty list for an address nothing was sent to', async () => {
    expect(expectProblem(await call('GET', '/local/outbox'), 400).code).toBe('bad_request');
    expect((await call('GET', `/local/outbox?email=${encodeURIComponent(uniqueEmail())}`)).body).toEqual([]);
  });

  it('lists the messages to an address newest first, whatever the letter case', async () => {
    const user = await register();
    await call('POST', '/auth/verify-email/request', { token: user.token });
    await call('POST', '/auth/verify-email/request', { token: user.token });
    const mails = await outbox(user.email.toUpperCase());
    expect(mails.length).toBeGreaterThanOrEqual(2);
    expect(mails.map((mail) => mail.sent_at)).toEqual([...mails.map((mail) => mail.sent_at)].sort().reverse());
    for (const mail of mails) expect(mail.to).toBe(user.email);
  });
});
