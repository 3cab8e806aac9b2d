import WebSocket from 'ws';
import { call, type TestUser } from './api';

/**
 * A small WebSocket client for the live board events (docs/reference.md, "Live events"): tickets,
 * sockets, and waits for frames that fail with every frame the socket received. Every socket is
 * remembered until `closeAllSockets()`, which a test file calls in afterEach, so none outlives
 * its test (no open handles).
 */

/** A frame from the server: a board event or a control frame (watch.ack, pong, error, …). */
export interface Frame {
  type: string;
  [field: string]: unknown;
}

export interface Ticket {
  ticket: string;
  url: string;
  expires_in: number;
}

/**
 * How long a wait for a frame lasts by default: stream poll, broadcaster and send, on a busy machine.
 * A hang guard, not a speed target (on a busy machine a frame can take over 10 s): a frame that
 * comes ends the wait at once, and absence is asserted with expectNoFrame after a later frame.
 */
const FRAME_TIMEOUT_MS = 60_000;

/** POST /realtime/tickets as `user`, which must succeed (201). */
export async function getTicket(user: Pick<TestUser, 'token'>, url?: string): Promise<Ticket> {
  const reply = await call<Ticket>('POST', '/realtime/tickets', { token: user.token, url });
  if (reply.status !== 201) throw new Error(`ticket failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** `${url}?ticket=…`: where a ticket is used. */
export const socketAddress = (ticket: Pick<Ticket, 'url' | 'ticket'>) =>
  `${ticket.url}?ticket=${encodeURIComponent(ticket.ticket)}`;

const open = new Set<TestSocket>();

type Waiter = { test: (frame: Frame) => boolean; resolve: (frame: Frame) => void; fail: () => void };

export class TestSocket {
  /** Every frame received, in order (consumed or not). */
  readonly received: Frame[] = [];
  /** Frames no wait has taken yet. */
  private pending: Frame[] = [];
  private waiter: Waiter | undefined;
  private closeInfo: { code: number; reason: string } | undefined;
  private closeListeners: ((info: { code: number; reason: string }) => void)[] = [];
  /**
   * Events of each watched board written before the watch was asked for (ISO time, the same clock
   * as the stack's): the stream may still carry them after watch.ack, and the contract promises a
   * watcher only what happens after it watches, so tests leave them out.
   */
  private readonly watchedSince = new Map<string, string>();
  /** Frames left out as older than their board's watch. */
  readonly beforeWatch: Frame[] = [];

  constructor(
    readonly ws: WebSocket,
    readonly label: string,
  ) {
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? `<binary ${(data as Buffer).length} bytes>` : data.toString();
      let frame: Frame;
      try {
        frame = JSON.parse(text) as Frame;
      } catch {
        frame = { type: '<not JSON>', text };
      }
      const since = typeof frame.board_id === 'string' ? this.watchedSince.get(frame.board_id) : undefined;
      if (since && typeof frame.occurred_at === 'string' && frame.occurred_at < since) {
        this.beforeWatch.push(frame);
        return;
      }
      this.received.push(frame);
      if (this.waiter?.test(frame)) {
        const { resolve } = this.waiter;
        this.waiter = undefined;
        resolve(frame);
      } else {
        this.pending.push(frame);
      }
    });
    ws.on('close', (code, reason) => {
      this.closeInfo = { code, reason: reason.toString() };
      open.delete(this);
      // No frame comes after a close: a wait still running fails now, not at its timeout.
      this.waiter?.fail();
      for (const listener of this.closeListeners.splice(0)) listener(this.closeInfo);
    });
    // An error is followed by 'close'; a listener keeps it from being thrown.
    ws.on('error', () => {});
  }

  get isOpen() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends a message: an object as JSON, a string as is. */
  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** Sends bytes as they are, in a text frame (UTF-8 or not). */
  sendBytes(bytes: Buffer): void {
    this.ws.send(bytes, { binary: false });
  }

  /**
   * The next frame that matches `test`; frames before it that do not match are taken too (a
   * test that cares about them uses `next()`). Fails after `timeoutMs` listing every frame seen.
   */
  waitFor(test: (frame: Frame) => boolean, what = 'a matching frame', timeoutMs = FRAME_TIMEOUT_MS): Promise<Frame> {
    if (this.waiter) throw new Error(`${this.label}: already waiting for a frame`);
    const skipped: Frame[] = [];
    while (this.pending.length > 0) {
      const frame = this.pending.shift()!;
      if (test(frame)) return Promise.resolve(frame);
      skipped.push(frame);
    }
    return new Promise<Frame>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const fail = () => {
        clearTimeout(timer);
        this.waiter = undefined;
        this.pending.unshift(...skipped);
        reject(
          new Error(
            `${this.label}: no frame matching ${what} ` +
              `${this.closeInfo ? `before the socket closed with ${this.closeInfo.code}` : `within ${timeoutMs} ms`}; ` +
              `frames received: ${describe(this.received)}`,
          ),
        );
      };
      if (this.closeInfo) {
        fail();
        return;
      }
      timer = setTimeout(fail, timeoutMs);
      this.waiter = {
        fail,
        test: (frame) => {
          if (test(frame)) return true;
          skipped.push(frame);
          return false;
        },
        resolve: (frame) => {
          clearTimeout(timer);
          resolve(frame);
        },
      };
    });
  }

  /** The very next frame, whatever it is. */
  next(timeoutMs = FRAME_TIMEOUT_MS): Promise<Frame> {
    return this.waitFor(() => true, 'any frame', timeoutMs);
  }

  /** The very next frame, which must be of `type` (its fields are the caller's to check). */
  async nextOfType(type: string, timeoutMs = FRAME_TIMEOUT_MS): Promise<Frame> {
    const frame = await this.next(timeoutMs);
    if (frame.type !== type) {
      throw new Error(
        `${this.label}: expected the next frame to be ${type}, got ${JSON.stringify(frame)}; frames received: ${describe(this.received)}`,
      );
    }
    return frame;
  }

  /** Sends a message and waits for the frame that answers it. */
  async request(message: unknown, test: (frame: Frame) => boolean, what: string, timeoutMs = FRAME_TIMEOUT_MS): Promise<Frame> {
    const answer = this.waitFor(test, what, timeoutMs);
    this.send(message);
    return answer;
  }

  /** watch → the watch.ack or the watch error for that board (returned, not checked). */
  watchReply(boardId: unknown): Promise<Frame> {
    return this.request(
      { action: 'watch', board_id: boardId },
      (frame) => (frame.type === 'watch.ack' || (frame.type === 'error' && frame.ref === 'watch')) && frame.board_id === boardId,
      `the answer to watch ${String(boardId)}`,
    );
  }

  /** watch, which must be acknowledged; `replayed` keeps events whatever their time (a replayed sample). */
  async watch(boardId: string, options: { replayed?: boolean } = {}): Promise<void> {
    if (!options.replayed && !this.watchedSince.has(boardId)) this.watchedSince.set(boardId, new Date().toISOString());
    const answer = await this.watchReply(boardId);
    if (answer.type !== 'watch.ack') throw new Error(`${this.label}: watch ${boardId} refused: ${JSON.stringify(answer)}`);
  }

  /** unwatch, which must be acknowledged. */
  async unwatch(boardId: string): Promise<void> {
    await this.request(
      { action: 'unwatch', board_id: boardId },
      (frame) => frame.type === 'unwatch.ack' && frame.board_id === boardId,
      `unwatch.ack for ${boardId}`,
    );
  }

  /** ping → pong. */
  async ping(): Promise<void> {
    await this.request({ action: 'ping' }, (frame) => frame.type === 'pong', 'pong');
  }

  /** Fails if a frame no wait has taken is pending, or arrives within `ms`. */
  async expectNoFrame(ms: number): Promise<void> {
    const before = this.received.length;
    if (this.pending.length === 0) await new Promise((resolve) => setTimeout(resolve, ms));
    if (this.pending.length > 0) {
      throw new Error(
        `${this.label}: expected no frame (within ${ms} ms), got ${describe(this.pending)}; ` +
          `frames received before: ${describe(this.received.slice(0, before))}`,
      );
    }
  }

  /** Frames no wait has taken (for a final `toEqual([])`). */
  unread(): Frame[] {
    return [...this.pending];
  }

  /** The close, from the server or the client: its code and reason. */
  closed(timeoutMs = FRAME_TIMEOUT_MS): Promise<{ code: number; reason: string }> {
    if (this.closeInfo) return Promise.resolve(this.closeInfo);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.label}: not closed within ${timeoutMs} ms; frames received: ${describe(this.received)}`)),
        timeoutMs,
      );
      this.closeListeners.push((info) => {
        clearTimeout(timer);
        resolve(info);
      });
    });
  }

  /** Closes from the client side and waits for the close to finish. */
  async close(): Promise<void> {
    if (this.closeInfo) return;
    const done = this.closed(5_000).catch(() => undefined);
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
    else this.ws.terminate();
    await done;
    if (!this.closeInfo) this.ws.terminate();
  }

  /** Drops the TCP connection without a closing handshake (a client that vanished). */
  async terminate(): Promise<void> {
    const done = this.closed(5_000);
    this.ws.terminate();
    await done;
  }
}

const describe = (frames: Frame[]) => (frames.length === 0 ? '(none)' : frames.map((f) => JSON.stringify(f)).join(', '));

/**
 * Opens a socket with a ticket; resolves once open. A refused handshake rejects with a
 * `HandshakeRefused` that carries the HTTP status.
 */
export function openSocket(address: string, label = 'socket'): Promise<TestSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(address);
    const socket = new TestSocket(ws, label);
    open.add(socket);
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      reject(new HandshakeRefused(res.statusCode ?? 0));
    });
    ws.once('open', () => resolve(socket));
    ws.once('close', (code) => reject(new Error(`${label}: closed (${code}) before it opened`)));
  });
}

class HandshakeRefused extends Error {
  constructor(readonly statusCode: number) {
    super(`handshake refused with ${statusCode}`);
  }
}

/** The HTTP status a handshake at `address` is refused with (fails if it opens). */
export async function refusedStatus(address: string): Promise<number> {
  try {
    const socket = await openSocket(address, 'refused socket');
    await socket.close();
  } catch (error) {
    if (error instanceof HandshakeRefused) return error.statusCode;
    throw error;
  }
  throw new Error(`the handshake at ${address} was accepted`);
}

/** A new ticket for `user`, and a socket opened with it. */
export async function connect(user: Pick<TestUser, 'token'>, label = 'socket', url?: string): Promise<TestSocket> {
  return openSocket(socketAddress(await getTicket(user, url)), label);
}

/** Closes every socket still open; for afterEach/afterAll. */
export async function closeAllSockets(): Promise<void> {
  await Promise.all([...open].map((socket) => socket.close()));
  open.clear();
}

/** Event envelope fields (every board event has them). */
export const ISO_MS_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
