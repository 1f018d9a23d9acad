import { CLOSE, parseMessage, type PeerMessage } from '@pipeloom/core/coordinator/protocol';
import { FrameSocket, WS_CLOSE } from './frames.js';

// A direct agent-to-agent connection: buffer data as binary messages, barrier tokens as text.
// Host-to-host data never passes through the coordinator.
//
// A transfer is one binary message: u32 iteration, u16 key length, the key (`from->to` buffer
// ids), then the bytes. The receiving lane says where the bytes go before they arrive
// (`receive`), and they are copied there from the socket's chunks as they come: one copy, as
// with raw TCP. Bytes that arrive first wait in a buffer kept per key, and are copied over
// when the lane asks for them.

const EMPTY = Buffer.alloc(0);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

interface Waiter {
  dst: Uint8Array;
  resolve: (firstByteUs: number) => void;
}

/** Bytes that arrived before their lane asked: kept until `receive`. */
interface Held {
  /** The transfer's key (without the iteration): its buffer goes back to that key's spare. */
  key: string;
  bytes: Buffer;
  length: number;
  firstByteUs: number;
}

/** The message being read: its header so far, then where its bytes go. */
interface Incoming {
  length: number;
  header: Buffer;
  headerGot: number;
  /** Header size once the key length is known. */
  headerSize: number;
  key?: string;
  into?: Uint8Array;
  waiter?: Waiter;
  held?: Held;
  got: number;
  firstByteUs: number;
}

export class PeerLink {
  private held = new Map<string, Held>();
  private waiters = new Map<string, Waiter>();
  /** Spare buffers for early bytes, per key: steady runs reuse them instead of allocating. */
  private spare = new Map<string, Buffer>();
  private incoming: Incoming | null = null;
  private keyBytes = new Map<string, Buffer>();
  onMessage: (m: PeerMessage) => void = () => {};
  onClose: (reason: string) => void = () => {};
  private closed = false;

  constructor(
    readonly host: string,
    readonly frames: FrameSocket,
    /** Bytes per second cap on sends (0 = none), to make a fast loopback look like a slower network. */
    public rate = 0,
  ) {
    frames.handlers = {
      text: (s) => {
        const parsed = parseMessage<PeerMessage>(s, ['barrier', 'release', 'abort']);
        if (!parsed.ok) {
          this.protocolError(parsed.reason);
          return;
        }
        this.onMessage(parsed.message);
      },
      binaryStart: (length) => {
        this.incoming = { length, header: EMPTY, headerGot: 0, headerSize: 6, got: 0, firstByteUs: 0 };
      },
      chunk: (bytes) => this.chunk(bytes),
      binaryEnd: () => this.end(),
      close: (code, reason) => {
        if (this.closed) return;
        this.closed = true;
        this.onClose(reason || `connection closed (${code})`);
      },
    };
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
    let keyBytes = this.keyBytes.get(key);
    if (!keyBytes) this.keyBytes.set(key, (keyBytes = Buffer.from(key, 'utf8')));
    const kb = keyBytes;
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
    const k = `${key}#${iteration}`;
    const ready = this.held.get(k);
    if (ready) {
      this.held.delete(k);
      this.deliver(ready, dst);
      return Promise.resolve(ready.firstByteUs);
    }
    return new Promise((resolve) => this.waiters.set(k, { dst, resolve }));
  }

  private chunk(bytes: Buffer): void {
    const m = this.incoming;
    if (!m || this.closed) return;
    let at = 0;
    if (m.headerGot < m.headerSize) {
      // Most often the whole header is in the message's first chunk: read it in place.
      if (m.headerGot === 0 && bytes.length >= 6 && bytes.length >= 6 + bytes.readUInt16LE(4)) {
        m.headerSize = 6 + bytes.readUInt16LE(4);
        if (m.headerSize > m.length) {
          this.protocolError('malformed transfer: its header is longer than the message');
          return;
        }
        m.header = bytes;
        m.headerGot = m.headerSize;
        at = this.route(m);
      } else at = this.readHeader(m, bytes);
      if (at < 0) return;
    }
    if (at >= bytes.length) return;
    if (!m.firstByteUs) m.firstByteUs = nowUs();
    const piece = at ? bytes.subarray(at) : bytes;
    m.into!.set(piece, m.got);
    m.got += piece.length;
  }

  /** Reads the transfer header from the message's first bytes; returns where its data starts in `bytes`, or -1 after closing the link. */
  private readHeader(m: Incoming, bytes: Buffer): number {
    if (m.header === EMPTY) m.header = Buffer.allocUnsafe(6);
    let at = 0;
    while (m.headerGot < m.headerSize && at < bytes.length) {
      const n = Math.min(m.headerSize - m.headerGot, bytes.length - at);
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
    const iteration = m.header.readUInt32LE(0);
    const key = m.header.toString('utf8', 6, m.headerSize);
    const k = `${key}#${iteration}`;
    const size = m.length - m.headerSize;
    m.key = k;
    const w = this.waiters.get(k);
    if (w) {
      if (size > w.dst.byteLength) return this.protocolError(`transfer ${key} of ${size} bytes does not fit its slot of ${w.dst.byteLength}`);
      this.waiters.delete(k);
      m.waiter = w;
      m.into = w.dst;
    } else {
      let spare = this.spare.get(key);
      if (!spare || spare.length < size) spare = Buffer.allocUnsafe(size);
      else this.spare.delete(key);
      m.held = { key, bytes: spare, length: size, firstByteUs: 0 };
      m.into = spare;
    }
    return m.headerSize;
  }

  private end(): void {
    const m = this.incoming;
    this.incoming = null;
    if (this.closed) return;
    if (!m || m.headerGot < m.headerSize) {
      this.protocolError('malformed transfer: a binary message shorter than its header');
      return;
    }
    const first = m.firstByteUs || nowUs();
    if (m.waiter) {
      m.waiter.resolve(first);
      return;
    }
    const held = m.held!;
    held.firstByteUs = first;
    // The lane may have asked while these bytes were arriving into the spare buffer.
    const late = this.waiters.get(m.key!);
    if (late) {
      this.waiters.delete(m.key!);
      this.deliver(held, late.dst);
      late.resolve(first);
    } else this.held.set(m.key!, held);
  }

  /** Copies bytes that waited into the lane's slot; their buffer becomes the key's spare. */
  private deliver(held: Held, dst: Uint8Array): void {
    dst.set(held.bytes.subarray(0, Math.min(held.length, dst.byteLength)));
    this.spare.set(held.key, held.bytes);
  }

  private protocolError(reason: string): -1 {
    this.frames.close(CLOSE.protocol, reason);
    return -1;
  }

  close(reason = 'run over'): void {
    this.closed = true;
    this.held.clear();
    this.waiters.clear();
    this.spare.clear();
    this.frames.close(WS_CLOSE.normal, reason);
  }
}
