import type WebSocket from 'ws';
import { parseMessage, type PeerMessage } from '@pipeloom/core/coordinator/protocol';

// A direct agent-to-agent connection: buffer data as binary frames, barrier tokens as text.
// Host-to-host data never passes through the coordinator.

/**
 * Client options for dialing a peer agent. Frames are sent with a zero mask: masking defends
 * browser-proxied traffic against cache poisoning, and agent-to-agent links carry no browser
 * traffic; a zero mask is a valid frame that both ends copy without XOR-ing every byte.
 * No per-message deflate: buffer data does not compress enough to pay for deflating it (the
 * agent's server never accepts it either). ws turns Nagle off on its sockets.
 */
export const PEER_CLIENT_OPTIONS = { generateMask: (mask: Buffer) => void mask.fill(0), perMessageDeflate: false } as const;

type Waiter = { resolve: (b: Uint8Array) => void };

export class PeerLink {
  private inbox = new Map<string, Uint8Array>();
  private waiters = new Map<string, Waiter>();
  onMessage: (m: PeerMessage) => void = () => {};
  onClose: (reason: string) => void = () => {};
  private closed = false;

  constructor(
    readonly host: string,
    readonly socket: WebSocket,
    /** Bytes per second cap on sends (0 = none), to make a fast loopback look like a slower network. */
    public rate = 0,
  ) {
    socket.binaryType = 'nodebuffer';
    socket.on('message', (data, isBinary) => {
      if (isBinary) this.receiveFrame(data as Buffer);
      else {
        const parsed = parseMessage<PeerMessage>(String(data), ['barrier', 'release', 'abort']);
        if (!parsed.ok) {
          socket.close(4002, parsed.reason);
          return;
        }
        this.onMessage(parsed.message);
      }
    });
    socket.on('close', (code, reason) => {
      if (this.closed) return;
      this.closed = true;
      this.onClose(reason.toString() || `connection closed (${code})`);
    });
    socket.on('error', () => {});
  }

  send(m: PeerMessage): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(m));
  }

  /**
   * Sends one buffer's bytes for an iteration: a small header frame (u32 iteration, u16 key
   * length, key) then the payload frame, written straight from the slot without a copy.
   * Resolves once handed to the socket (and the rate cap allows).
   */
  async sendFrame(key: string, iteration: number, payload: Uint8Array): Promise<void> {
    const started = performance.now();
    const keyBytes = Buffer.from(key, 'utf8');
    const header = Buffer.allocUnsafe(6 + keyBytes.length);
    header.writeUInt32LE(iteration, 0);
    header.writeUInt16LE(keyBytes.length, 4);
    keyBytes.copy(header, 6);
    this.socket.send(header, { binary: true });
    const body = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    await new Promise<void>((resolve, reject) => this.socket.send(body, { binary: true }, (e) => (e ? reject(e) : resolve())));
    if (this.rate > 0) {
      const due = (payload.byteLength / this.rate) * 1000 - (performance.now() - started);
      if (due > 0) await new Promise((r) => setTimeout(r, due));
    }
  }

  /** The bytes of `key` for `iteration`, waiting for them if they have not arrived. */
  take(key: string, iteration: number): Promise<Uint8Array> {
    const k = `${key}#${iteration}`;
    const ready = this.inbox.get(k);
    if (ready) {
      this.inbox.delete(k);
      return Promise.resolve(ready);
    }
    return new Promise((resolve) => this.waiters.set(k, { resolve }));
  }

  private header: { key: string; iteration: number } | null = null;

  private receiveFrame(data: Buffer): void {
    if (!this.header) {
      if (data.length < 6 || data.length > 6 + 0xffff) {
        this.socket.close(4002, 'malformed frame: expected a transfer header');
        return;
      }
      this.header = { iteration: data.readUInt32LE(0), key: data.toString('utf8', 6, 6 + data.readUInt16LE(4)) };
      return;
    }
    const k = `${this.header.key}#${this.header.iteration}`;
    this.header = null;
    const w = this.waiters.get(k);
    if (w) {
      this.waiters.delete(k);
      w.resolve(data);
    } else this.inbox.set(k, data);
  }

  close(reason = 'run over'): void {
    this.closed = true;
    this.inbox.clear();
    this.waiters.clear();
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) this.socket.close(1000, reason);
  }
}
