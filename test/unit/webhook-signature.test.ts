import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import {
  deliveryId,
  isSecret,
  newSecret,
  ROTATION_OVERLAP_MS,
  rotateSecret,
  type SecretState,
  sign,
  signatureHeaders,
  signingSecrets,
} from '../../lib/webhooks/signature';

/**
 * Signatures as webhooks.md and the Standard Webhooks specification say, checked with that
 * project's published JavaScript verifier (`standardwebhooks`), as a receiver would: it accepts
 * what the service signs and refuses a wrong secret, a changed body, id or timestamp, and a
 * timestamp older than its 5-minute tolerance. The verifier reads the clock, so every attempt
 * here is signed at the real time or minutes away from it, never near its edge.
 */
const event = {
  type: 'card.moved',
  event_id: '0d3c8a4e-5b0f-4b8a-9e43-2f6f0d1c2b3a',
  board_id: '6a1f3c2e-8d4b-4f7a-9c1e-5b2d3a4c6e7f',
  actor_id: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
  occurred_at: '2026-11-27T03:00:00.000Z',
  seq: 42,
  card: { id: 'f0e1d2c3-b4a5-4968-8776-655443322110', title: 'Über die Brücke ✓ 😀', position: 1.5 },
  from_column_id: '11111111-2222-4333-8444-555555555555',
  from_position: 3,
};
const body = JSON.stringify(event);
const id = deliveryId('9b8a7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d', event.event_id);

const verify = (secret: string, payload: string | Buffer, headers: Record<string, string>) =>
  new Webhook(secret).verify(payload, headers);
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof WebhookVerificationError ? error.message : `not a WebhookVerificationError: ${String(error)}`;
  }
  return 'accepted';
};

describe('secrets', () => {
  it('are whsec_ and the base64 of 32 random bytes, a new one each time', () => {
    const secrets = Array.from({ length: 50 }, newSecret);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
      expect(isSecret(secret)).toBe(true);
    }
    expect(new Set(secrets).size).toBe(50);
  });

  it.each([
    ['whsec_'],
    ['whsec_abc'],
    ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqrTwjUPD8='],
    [`whsec_${Buffer.alloc(16, 1).toString('base64')}`],
    [`whsec_${Buffer.alloc(65, 1).toString('base64')}`],
    [`whsec_${Buffer.alloc(32, 1).toString('base64url')}_`],
    [`whsec_${Buffer.alloc(32, 1).toString('base64').replace('=', '')}!`],
  ])('%j does not sign, and the error does not repeat it', (secret) => {
    let message = 'signed';
    try {
      sign(secret, id, 1, body);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe('not a whsec_ signing secret (base64 of 24 to 64 bytes)');
    expect(isSecret(secret)).toBe(false);
  });
});

describe('signatures a Standard Webhooks verifier accepts', () => {
  it("reproduces the specification's published example (a 24-byte secret)", () => {
    const signature = sign(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs as the library signs, for a body with non-ASCII text, as a string or as its bytes', () => {
    const secret = newSecret();
    const at = new Date('2026-11-27T03:00:00.999Z');
    const expected = new Webhook(secret).sign(id, at, body);
    expect(sign(secret, id, 1795748400, body)).toBe(expected);
    expect(sign(secret, id, 1795748400, Buffer.from(body, 'utf8'))).toBe(expected);
    expect(sign(secret, id, 1795748400, new TextEncoder().encode(body))).toBe(expected);
  });

  it('gives the three headers: the id, the attempt time in Unix seconds, one v1 signature; the verifier returns the event', () => {
    const secret = newSecret();
    const at = new Date();
    const headers = signatureHeaders({ id, at, body, secrets: [secret] });
    expect(headers).toEqual({
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
    });
    expect(verify(secret, body, { ...headers })).toEqual(event);
    expect(verify(secret, Buffer.from(body), { ...headers })).toEqual(event);
    // Header names are case-insensitive on the wire.
    expect(
      verify(secret, body, {
        'Webhook-Id': headers['webhook-id'],
        'Webhook-Timestamp': headers['webhook-timestamp'],
        'Webhook-Signature': headers['webhook-signature'],
      }),
    ).toEqual(event);
  });

  it('is refused with another secret, a changed body, id or timestamp, and when too old or too new', () => {
    const secret = newSecret();
    const now = Date.now();
    const headers = { ...signatureHeaders({ id, at: new Date(now), body, secrets: [secret] }) };
    expect(refusal(() => verify(newSecret(), body, headers))).toBe('No matching signature found');
    expect(refusal(() => verify(secret, body.replace('"seq":42', '"seq":43'), headers))).toBe('No matching signature found');
    expect(refusal(() => verify(secret, JSON.stringify(event, null, 1), headers))).toBe('No matching signature found');
    expect(refusal(() => verify(secret, `${body} `, headers))).toBe('No matching signature found');
    expect(refusal(() => verify(secret, body, { ...headers, 'webhook-id': deliveryId('other-webhook', event.event_id) }))).toBe(
      'No matching signature found',
    );
    const later = String(Number(headers['webhook-timestamp']) + 1);
    expect(refusal(() => verify(secret, body, { ...headers, 'webhook-timestamp': later }))).toBe('No matching signature found');
    expect(
      refusal(() =>
        verify(secret, body, { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') }),
      ),
    ).toBe('No matching signature found');
    const old = signatureHeaders({ id, at: new Date(now - 10 * 60_000), body, secrets: [secret] });
    expect(refusal(() => verify(secret, body, { ...old }))).toBe('Message timestamp too old');
    const ahead = signatureHeaders({ id, at: new Date(now + 10 * 60_000), body, secrets: [secret] });
    expect(refusal(() => verify(secret, body, { ...ahead }))).toBe('Message timestamp too new');
    const { 'webhook-signature': _, ...unsigned } = headers;
    expect(refusal(() => verify(secret, body, unsigned))).toBe('Missing required headers');
  });

  it('needs at least one secret', () => {
    expect(() => signatureHeaders({ id, at: new Date(), body, secrets: [] })).toThrow('at least one signing secret');
  });
});

describe('rotation: the old secret signs beside the new one for 24 hours', () => {
  const rotatedAt = new Date('2026-11-27T03:00:00.000Z');
  const first: SecretState = { secret: newSecret() };
  const rotated = rotateSecret(first, rotatedAt);
  const at = (ms: number) => new Date(rotatedAt.getTime() + ms);

  it('keeps the replaced secret, with the time of the rotation', () => {
    expect(rotated).toEqual({
      secret: expect.any(String),
      previous_secret: first.secret,
      rotated_at: '2026-11-27T03:00:00.000Z',
    });
    expect(isSecret(rotated.secret)).toBe(true);
    expect(rotated.secret).not.toBe(first.secret);
  });

  it('signs with both until 24 hours have passed, new first, then with the new one alone', () => {
    expect(signingSecrets(first, at(0))).toEqual([first.secret]);
    expect(signingSecrets(rotated, at(0))).toEqual([rotated.secret, first.secret]);
    expect(signingSecrets(rotated, at(ROTATION_OVERLAP_MS - 1))).toEqual([rotated.secret, first.secret]);
    expect(signingSecrets(rotated, at(ROTATION_OVERLAP_MS))).toEqual([rotated.secret]);
    expect(signingSecrets({ ...rotated, rotated_at: null }, at(0))).toEqual([rotated.secret]);
  });

  it('during the overlap sends two signatures, space-separated, each accepted by a verifier holding either secret', () => {
    // The webhook was rotated 23 h ago; the attempt is now (the verifier reads the real clock).
    const now = new Date();
    const state = rotateSecret(first, new Date(now.getTime() - 23 * 3600_000));
    const headers = signatureHeaders({ id, at: now, body, secrets: signingSecrets(state, now) });
    expect(headers['webhook-signature'].split(' ')).toEqual([
      sign(state.secret, id, Number(headers['webhook-timestamp']), body),
      sign(first.secret, id, Number(headers['webhook-timestamp']), body),
    ]);
    expect(verify(state.secret, body, { ...headers })).toEqual(event);
    expect(verify(first.secret, body, { ...headers })).toEqual(event);
    expect(refusal(() => verify(newSecret(), body, { ...headers }))).toBe('No matching signature found');
  });

  it('after the overlap, a receiver still holding the old secret refuses', () => {
    const now = new Date();
    const state = rotateSecret(first, new Date(now.getTime() - ROTATION_OVERLAP_MS - 1000));
    const headers = signatureHeaders({ id, at: now, body, secrets: signingSecrets(state, now) });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(verify(state.secret, body, { ...headers })).toEqual(event);
    expect(refusal(() => verify(first.secret, body, { ...headers }))).toBe('No matching signature found');
  });

  it('a second rotation within the 24 hours drops the oldest secret at once: never more than two signatures', () => {
    const second = rotateSecret(rotated, at(3600_000));
    expect(signingSecrets(second, at(2 * 3600_000))).toEqual([second.secret, rotated.secret]);
    expect(signingSecrets(second, at(2 * 3600_000))).not.toContain(first.secret);
  });
});

describe('deliveryId: the webhook-id', () => {
  it('is the same for one event and webhook on every attempt and after a redelivered stream record', () => {
    expect(deliveryId('w1', 'e1')).toBe(deliveryId('w1', 'e1'));
    expect(deliveryId('w1', 'e1')).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
  });

  it('differs between webhooks and between events, and is not fooled by moving the separator', () => {
    const ids = new Set([
      deliveryId('w1', 'e1'),
      deliveryId('w2', 'e1'),
      deliveryId('w1', 'e2'),
      deliveryId('a\nb', 'c'),
      deliveryId('a', 'b\nc'),
    ]);
    expect(ids.size).toBe(5);
  });
});
