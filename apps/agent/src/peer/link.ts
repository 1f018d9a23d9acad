import { CLOSE, parseMessage, type PeerMessage } from '@pipeloom/core';
import { FrameSocket, WS_CLOSE } from './frames.js';

// A direct agent-to-agent connection: buffer data as binary messages, barrier tokens as text.
// Host-to-host data never passes through the coordinator.
//
// A transfer is one binary message: u32 iteration, u16 key length, the key (`from->to` buffer
// ids), then the bytes. The receiving lane says where the bytes go before they arrive
// (`receive`), and they are copied there from the socket's chunks as they come: one copy, as
// with raw TCP. Bytes that arrive first wait in a buffer kept per key, and are copied over
// when the lane asks for them.
//
// A task-bag link (`onlyAsked`) reads only what this agent asked for: each binary message must
// answer an outstanding pull, with its id, its key and exactly its size, and is written into a
// buffer of that size made when its header arrives. Anything else fails the link naming the
// peer, before its bytes are read: what a link holds is bounded by its outstanding pulls.
// A static run's link (`expect`) takes only the transfers the run sends this way, each no
// larger than its slot, and holds at most a few of each that came before their lane asked.

const EMPTY = Buffer.alloc(0);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

interface Waiter {
  dst: Uint8Array;
  resolve: (firstByteUs: number) => void;
}

/** A task-bag pull whose answer this link waits for. */
interface Asked {
  wire: Buffer;
  /** The exact bytes of the output asked for. */
  size: number;
  alloc: (bytes: number) => Uint8Array;
  dst: Uint8Array;
  resolve: (r: { bytes: Uint8Array; firstByteUs: number }) => void;
  reject: (e: Error) => void;
  /** The asker gave up (timed out, freed the key): a late answer is read and dropped, not failed. */
  abandoned: boolean;
}

/** Pulls given up on whose late answers a task-bag link still accepts (and drops); older ones are forgotten. */
export const MAX_ABANDONED_PULLS = 1024;

/** Bytes that arrived before their lane asked: kept until `receive`. */
interface Held {
  bytes: Buffer;
  length: number;
  firstByteUs: number;
}

/**
 * One transfer key's traffic on this link. Lanes and messages find it by key once; within it
 * iterations are numbers, so a steady run builds no `key#iteration` strings per transfer.
 */
interface Channel {
  key: string;
  /** The key as it is on the wire, to recognise it in a header without decoding it. */
  wire: Buffer;
  waiters: Map<number, Waiter>;
  held: Map<number, Held>;
  /** A buffer for early bytes, reused by the key's next early message instead of allocating. */
  spare: Buffer | null;
}

/** The message being read (one object per link, reset per message): its header so far, then where its bytes go. */
interface Incoming {
  length: number;
  /** The header's bytes: in the socket's buffer at `headerAt`, or gathered at 0 of a buffer of its own. */
  header: Buffer;
  headerAt: number;
  headerGot: number;
  /** Header size once the key length is known. */
  headerSize: number;
  channel: Channel | null;
  iteration: number;
  into: Uint8Array | null;
  waiter: Waiter | null;
  held: Held | null;
  /** The pull this message answers (task-bag links). */
  reply: Asked | null;
  got: number;
  firstByteUs: number;
}

/**
 * Peer-link heartbeat: each side pings every `intervalMs`; a link that has read nothing for
 * `silentMs` is dead (a peer frozen, or a half-open TCP connection that no write would ever
 * reveal), and closes naming the peer. A tick that comes late means this thread was busy, not
 * that the peer is silent: it restarts the count instead of counting against the peer.
 */
export const HEARTBEAT = { intervalMs: 250, silentMs: 1_500 } as const;

export class PeerLink {
  private channels = new Map<string, Channel>();
  /** The channel of the last message read: consecutive messages of one key skip the lookup. */
  private last: Channel | null = null;
  private readonly incoming: Incoming = {
    length: 0,
    header: EMPTY,
    headerAt: 0,
    headerGot: 0,
    headerSize: 6,
    channel: null,
    iteration: 0,
    into: null,
    waiter: null,
    held: null,
    reply: null,
    got: 0,
    firstByteUs: 0,
  };
  /** Static runs: the transfers this link may carry, by key: their bytes and how many may wait early (null: not declared). */
  private expected: Map<string, { bytes: number; early: number }> | null = null;
  /** Task-bag links: the pulls whose answers may come, by pull id (null: a static run's link, which keeps early bytes). */
  private asked: Map<number, Asked> | null = null;
  private abandoned = 0;
  /** Whether a binary message is being read. */
  private reading = false;
  onMessage: (m: PeerMessage) => void = () => {};
  onClose: (reason: string) => void = () => {};
  private closed = false;
  private heartbeat: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly host: string,
    readonly frames: FrameSocket,
    /** Bytes per second cap on sends (0 = none), to make a fast loopback look like a slower network. */
    public rate = 0,
  ) {
    frames.handlers = {
      text: (s) => {
        const parsed = parseMessage<PeerMessage>(s, ['barrier', 'credit', 'abort', 'pull', 'pull-miss']);
        if (!parsed.ok) {
          this.protocolError(parsed.reason);
          return;
        }
        this.onMessage(parsed.message);
      },
      binaryStart: (length) => {
        const m = this.incoming;
        m.length = length;
        m.header = EMPTY;
        m.headerAt = 0;
        m.headerGot = 0;
        m.headerSize = 6;
        m.channel = m.into = m.waiter = m.held = m.reply = null;
        m.got = m.firstByteUs = 0;
        this.reading = true;
      },
      chunk: (data, start, end) => this.chunk(data, start, end),
      binaryEnd: () => this.end(),
      close: (code, reason) => {
        clearInterval(this.heartbeat);
        if (this.closed) return;
        this.closed = true;
        const why = reason || `connection closed (${code})`;
        this.dropAsked(why);
        this.onClose(why);
      },
    };
    this.beat(HEARTBEAT.intervalMs, HEARTBEAT.silentMs);
  }

  private beat(intervalMs: number, silentMs: number): void {
    let seen = this.frames.reads;
    let heardAt = performance.now();
    let tickAt = heardAt;
    this.heartbeat = setInterval(() => {
      const now = performance.now();
      const late = now - tickAt > 2 * intervalMs;
      tickAt = now;
      if (this.frames.reads !== seen || late) {
        seen = this.frames.reads;
        heardAt = now;
      } else if (now - heardAt >= silentMs) {
        clearInterval(this.heartbeat);
        this.frames.close(CLOSE.protocol, `no heartbeat for ${silentMs / 1000} s`);
        return;
      }
      this.frames.ping();
    }, intervalMs);
    this.heartbeat.unref?.();
  }

  send(m: PeerMessage): void {
    this.frames.sendText(JSON.stringify(m));
  }

  /**
   * Sends one buffer's bytes for an iteration, written straight from the slot. Resolves once
   * the socket has taken them (and the rate cap allows): the slot may change after that.
   */
  sendFrame(key: string, iteration: number, payload: Uint8Array): Promise<void> {
    const started = performance.now();
    const kb = this.channel(key).wire;
    const sent = this.frames.sendBinary(payload, 6 + kb.length, (head, at) => {
      head.writeUInt32LE(iteration, at);
      head.writeUInt16LE(kb.length, at + 4);
      kb.copy(head, at + 6);
    });
    if (!(this.rate > 0)) return sent;
    return sent.then(async () => {
      const due = (payload.byteLength / this.rate) * 1000 - (performance.now() - started);
      if (due > 0) await new Promise((r) => setTimeout(r, due));
    });
  }

  /**
   * Puts the bytes of `key` for `iteration` into `dst`, as they arrive or from where they
   * waited. Resolves with the time (µs, this thread's clock) their first bytes came in.
   */
  receive(key: string, iteration: number, dst: Uint8Array): Promise<number> {
    const c = this.channel(key);
    const ready = c.held.get(iteration);
    if (ready) {
      c.held.delete(iteration);
      this.deliver(c, ready, dst);
      return Promise.resolve(ready.firstByteUs);
    }
    return new Promise((resolve) => c.waiters.set(iteration, { dst, resolve }));
  }

  /** A static run's link: from now on it carries only the transfers `expect` declares (none yet). */
  onlyExpected(): void {
    this.expected ??= new Map();
  }

  /** A static run's transfer on this link: `key`, at most `bytes` per message, at most `early` of them held before their lane asks. */
  expect(key: string, bytes: number, early: number): void {
    (this.expected ??= new Map()).set(key, { bytes, early });
  }

  /** From now on, binary messages must answer this agent's pulls (`pull`): a task-bag run's link. */
  onlyAsked(): void {
    this.asked ??= new Map();
  }

  /**
   * Waits for the answer to pull `id` of `key`: a binary message of exactly `size` bytes, put
   * where `alloc` makes them once its header is read. Only on an `onlyAsked` link.
   */
  pull(id: number, key: string, size: number, alloc: (bytes: number) => Uint8Array): Promise<{ bytes: Uint8Array; firstByteUs: number }> {
    const asked = this.asked;
    if (!asked) throw new Error('pull on a link that is not onlyAsked');
    if (this.closed) return Promise.reject(new Error(`the link to ${this.host} is closed`));
    return new Promise((resolve, reject) => asked.set(id, { wire: Buffer.from(key, 'utf8'), size, alloc, dst: EMPTY, resolve, reject, abandoned: false }));
  }

  /** The asker gave up on pull `id`: its answer may still come, and is then dropped. */
  abandon(id: number): void {
    const a = this.asked?.get(id);
    if (!a || a.abandoned) return;
    a.abandoned = true;
    if (++this.abandoned > MAX_ABANDONED_PULLS) {
      for (const [k, x] of this.asked!) {
        if (!x.abandoned) continue;
        this.asked!.delete(k);
        this.abandoned--;
        break;
      }
    }
  }

  /** The peer says it has no answer to pull `id` (pull-miss): false when no such pull is outstanding. */
  missed(id: number): boolean {
    const a = this.asked?.get(id);
    if (!a) return false;
    this.asked!.delete(id);
    if (a.abandoned) this.abandoned--;
    return true;
  }

  /** Closes the link for a protocol error the peer made (`reason` names it; never its bytes). */
  fail(reason: string): void {
    this.protocolError(reason);
  }

  private dropAsked(why: string): void {
    if (!this.asked) return;
    for (const a of this.asked.values()) a.reject(new Error(why));
    this.asked.clear();
    this.abandoned = 0;
  }

  /** Drops what the link keeps for `key` (its waiters never resolve): a task-bag output that was freed. */
  forget(key: string): void {
    if (this.last?.key === key) this.last = null;
    this.channels.delete(key);
  }

  private channel(key: string): Channel {
    let c = this.channels.get(key);
    if (!c) this.channels.set(key, (c = { key, wire: Buffer.from(key, 'utf8'), waiters: new Map(), held: new Map(), spare: null }));
    return c;
  }

  /** The channel whose key is in the header (at `at`, `size` bytes in all): the last one's if the bytes match, else by decoding it. */
  private channelAt(header: Buffer, at: number, size: number): Channel {
    const last = this.last;
    const from = at + 6;
    if (last && last.wire.length === size - 6) {
      const w = last.wire;
      let same = true;
      for (let i = 0; i < w.length && same; i++) same = w[i] === header[from + i];
      if (same) return last;
    }
    return (this.last = this.channel(header.toString('utf8', from, at + size)));
  }

  private chunk(data: Buffer, start: number, end: number): void {
    const m = this.incoming;
    if (!this.reading || this.closed) return;
    let at = start;
    if (m.headerGot < m.headerSize) {
      // Most often the whole header is in the message's first chunk: read it in place.
      const keyLength = end - start >= 6 ? data.readUInt16LE(start + 4) : -1;
      if (m.headerGot === 0 && keyLength >= 0 && end - start >= 6 + keyLength) {
        m.headerSize = 6 + keyLength;
        if (m.headerSize > m.length) {
          this.protocolError('malformed transfer: its header is longer than the message');
          return;
        }
        m.header = data;
        m.headerAt = start;
        m.headerGot = m.headerSize;
        if (this.route(m) < 0) return;
        at = start + m.headerSize;
      } else {
        at = this.readHeader(m, data, start, end);
        if (at < 0) return;
      }
    }
    if (at >= end) return;
    if (!m.firstByteUs) m.firstByteUs = nowUs();
    // Buffer#copy takes the range as offsets: no view of the socket's buffer is made per piece.
    // No `into`: the late answer of an abandoned pull, read and dropped.
    if (m.into) data.copy(m.into, m.got, at, end);
    m.got += end - at;
  }

  /** Gathers a header split across chunks from data[start, end); returns where the message's bytes start in `data`, or -1 after closing the link. */
  private readHeader(m: Incoming, bytes: Buffer, start: number, end: number): number {
    if (m.header === EMPTY) m.header = Buffer.allocUnsafe(6);
    let at = start;
    while (m.headerGot < m.headerSize && at < end) {
      const n = Math.min(m.headerSize - m.headerGot, end - at);
      bytes.copy(m.header, m.headerGot, at, at + n);
      m.headerGot += n;
      at += n;
      if (m.headerGot === 6 && m.headerSize === 6) {
        m.headerSize = 6 + m.header.readUInt16LE(4);
        if (m.headerSize > m.length) return this.protocolError('malformed transfer: its header is longer than the message');
        const grown = Buffer.allocUnsafe(m.headerSize);
        m.header.copy(grown, 0, 0, 6);
        m.header = grown;
      }
    }
    if (m.headerGot < m.headerSize) return at;
    return this.route(m) < 0 ? -1 : at;
  }

  /** With the header read: where the message's bytes go (the waiting slot or a spare buffer); -1 after closing the link. */
  private route(m: Incoming): number {
    if (this.asked) return this.routeAnswer(m);
    const size = m.length - m.headerSize;
    let bound: { bytes: number; early: number } | undefined;
    if (this.expected) {
      // Checked before a channel is made for the key: an unknown one leaves nothing behind.
      bound = this.expected.get(m.header.toString('utf8', m.headerAt + 6, m.headerAt + m.headerSize));
      if (!bound) return this.protocolError(`peer ${this.host} sent a transfer this run does not send this way`);
      if (size > bound.bytes) return this.protocolError(`peer ${this.host} sent ${size} bytes for a transfer of ${bound.bytes}`);
    }
    const c = this.channelAt(m.header, m.headerAt, m.headerSize);
    const iteration = m.header.readUInt32LE(m.headerAt);
    m.channel = c;
    m.iteration = iteration;
    const w = c.waiters.get(iteration);
    if (w) {
      if (size > w.dst.byteLength) return this.protocolError(`transfer ${c.key} of ${size} bytes does not fit its slot of ${w.dst.byteLength}`);
      c.waiters.delete(iteration);
      m.waiter = w;
      m.into = w.dst;
    } else {
      if (bound && c.held.size >= bound.early)
        return this.protocolError(`peer ${this.host} sent transfer ${c.key} more than ${bound.early} times ahead of this agent`);
      let spare = c.spare;
      if (!spare || spare.length < size) spare = Buffer.allocUnsafe(size);
      else c.spare = null;
      m.held = { bytes: spare, length: size, firstByteUs: 0 };
      m.into = spare;
    }
    return m.headerSize;
  }

  /** A task-bag link's message: the answer to an outstanding pull (id, key and size as asked), or the link fails. */
  private routeAnswer(m: Incoming): number {
    const id = m.header.readUInt32LE(m.headerAt);
    const size = m.length - m.headerSize;
    const a = this.asked!.get(id);
    if (!a) return this.protocolError(`peer ${this.host} sent ${size} bytes that answer no pull of this agent`);
    const key = m.header.subarray(m.headerAt + 6, m.headerAt + m.headerSize);
    if (!key.equals(a.wire)) return this.protocolError(`peer ${this.host} answered pull ${id} with another output than the one asked for`);
    if (size !== a.size) return this.protocolError(`peer ${this.host} answered pull ${id} with ${size} bytes; the output asked for holds ${a.size}`);
    this.asked!.delete(id);
    if (a.abandoned) this.abandoned--;
    else a.dst = a.alloc(size);
    m.reply = a;
    m.into = a.abandoned ? null : a.dst;
    return m.headerSize;
  }

  private end(): void {
    const m = this.incoming;
    const reading = this.reading;
    this.reading = false;
    if (this.closed) return;
    if (!reading || m.headerGot < m.headerSize) {
      this.protocolError('malformed transfer: a binary message shorter than its header');
      return;
    }
    const first = m.firstByteUs || nowUs();
    const reply = m.reply;
    if (reply) {
      m.reply = m.into = null;
      if (!reply.abandoned) reply.resolve({ bytes: reply.dst, firstByteUs: first });
      return;
    }
    const c = m.channel!;
    const waiter = m.waiter;
    const held = m.held;
    m.channel = m.into = m.waiter = m.held = null;
    if (waiter) {
      waiter.resolve(first);
      return;
    }
    held!.firstByteUs = first;
    // The lane may have asked while these bytes were arriving into the spare buffer.
    const late = c.waiters.get(m.iteration);
    if (late) {
      c.waiters.delete(m.iteration);
      this.deliver(c, held!, late.dst);
      late.resolve(first);
    } else c.held.set(m.iteration, held!);
  }

  /** Copies bytes that waited into the lane's slot; their buffer becomes the key's spare. */
  private deliver(c: Channel, held: Held, dst: Uint8Array): void {
    dst.set(held.bytes.subarray(0, Math.min(held.length, dst.byteLength)));
    c.spare = held.bytes;
  }

  private protocolError(reason: string): -1 {
    this.frames.close(CLOSE.protocol, reason);
    return -1;
  }

  close(reason = 'run over'): void {
    clearInterval(this.heartbeat);
    this.closed = true;
    this.dropAsked(reason);
    this.channels.clear();
    this.last = null;
    this.frames.close(WS_CLOSE.normal, reason);
  }
}
