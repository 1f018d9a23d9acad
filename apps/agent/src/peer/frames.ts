import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

// WebSocket framing (RFC 6455) for agent-to-agent links, on the raw socket. The coordinator
// and browsers talk to agents through `ws`; peer links carry the buffers, and ws's receiver
// gathers every message into a new buffer before handing it over, after which the agent
// copied it into its slot: two copies of every byte where raw TCP needs one (bench:link).
// Here a binary message is handed over chunk by chunk as TCP delivers it, so the link can
// write it straight into the slot that waits for it. It is a plain WebSocket on the wire (a
// ws client or server is a valid other end; the tests check both ways); what it leaves out
// is what peer links do not use: extensions, fragmented messages (refused with a reason).

/** The path peer agents dial on an agent's port. */
export const PEER_PATH = '/peer';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const acceptKey = (key: string) =>
  createHash('sha1')
    .update(key + GUID)
    .digest('base64');

/** Close codes of RFC 6455 used here (the agent's own 4xxx codes come from the protocol). */
export const WS_CLOSE = { normal: 1000, protocol: 1002, unsupported: 1003, abnormal: 1006, tooBig: 1009 } as const;

/** Server side: answers an upgrade request with 101, or 400 when it is not a WebSocket handshake. */
export function acceptUpgrade(req: IncomingMessage, socket: Duplex): boolean {
  const key = req.headers['sec-websocket-key'];
  if (req.method !== 'GET' || req.headers.upgrade?.toLowerCase() !== 'websocket' || typeof key !== 'string' || req.headers['sec-websocket-version'] !== '13') {
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    return false;
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\n\r\n`);
  return true;
}

/** Client side: the WebSocket handshake to `url` (ws: or wss:); the socket and the bytes that came after it. */
export function dialUpgrade(url: string, timeoutMs = 15_000): Promise<{ socket: Duplex; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const key = randomBytes(16).toString('base64');
    const secure = u.protocol === 'wss:' || u.protocol === 'https:';
    const req = (secure ? httpsRequest : httpRequest)({
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: u.port || (secure ? 443 : 80),
      path: u.pathname === '/' ? PEER_PATH : u.pathname,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' },
      timeout: timeoutMs,
    });
    req.once('upgrade', (res, socket: Socket, head) => {
      if (res.headers['sec-websocket-accept'] !== acceptKey(key)) {
        socket.destroy();
        reject(new Error('the server answered with a wrong Sec-WebSocket-Accept'));
        return;
      }
      // The request's timeout was for the handshake; an idle link is not an error.
      socket.setTimeout(0);
      resolve({ socket, head });
    });
    req.once('response', (res) => {
      reject(new Error(`the server refused the WebSocket upgrade (HTTP ${res.statusCode})`));
      res.resume();
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.once('error', reject);
    req.end();
  });
}

export interface FrameHandlers {
  text(message: string): void;
  /**
   * A binary message of `length` bytes begins; its bytes follow through `chunk`, in order,
   * each as a range of the socket's buffer (no view is made per piece), valid only during
   * the call.
   */
  binaryStart(length: number): void;
  chunk(data: Buffer, start: number, end: number): void;
  binaryEnd(): void;
  close(code: number, reason: string): void;
}

const HEADER_MAX = 14;

/** The most a close frame's reason may hold (RFC 6455: 125 bytes of body, 2 of them the code). */
export const MAX_CLOSE_REASON = 123;

/** `reason` cut to MAX_CLOSE_REASON bytes of UTF-8, on a character boundary. */
export function closeReason(reason: string): string {
  if (reason.length * 3 <= MAX_CLOSE_REASON) return reason;
  const b = Buffer.from(reason, 'utf8');
  if (b.length <= MAX_CLOSE_REASON) return reason;
  let end = MAX_CLOSE_REASON;
  // Back off continuation bytes (10xxxxxx): the cut falls before the character they belong to.
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--;
  return b.toString('utf8', 0, end);
}

/**
 * One WebSocket connection over an upgraded socket. `client` frames are masked, as RFC 6455
 * requires of clients, with a zero mask: the bytes go out as they are, and the server side
 * skips unmasking a zero mask (a non-zero mask, from another client, is undone in place).
 */
export class FrameSocket {
  open = true;
  private closeSent = false;
  private closed = false;
  /** No more frames are read: the closing handshake is done, or the stream is beyond repair. */
  private ended = false;
  private header = Buffer.alloc(HEADER_MAX);
  private headerLength = 0;
  /** The frame being read: opcode, bytes left, mask and its position. */
  private opcode = -1;
  private left = 0;
  private mask: Buffer | null = null;
  private maskAt = 0;
  /** Pieces of the text or control frame being read (binary frames are handed over as they come). */
  private text: Buffer[] = [];
  handlers: FrameHandlers = { text: () => {}, binaryStart: () => {}, chunk: () => {}, binaryEnd: () => {}, close: () => {} };
  /** Socket reads so far: a heartbeat sees the other side is alive when it moves (a counter, not a clock, on the data path). */
  reads = 0;

  constructor(
    readonly socket: Duplex,
    head: Buffer,
    readonly role: 'client' | 'server',
    /** Checked at each frame's header: nothing over them is read. */
    public limits: { maxFrame: number; maxText: number },
  ) {
    (socket as { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
    socket.on('data', (d: Buffer) => {
      this.reads++;
      this.read(d);
    });
    socket.on('close', () => this.finish(WS_CLOSE.abnormal, 'connection closed'));
    // The other side sent its FIN: nothing more can come, so end ours (an upgraded HTTP
    // socket is half-open capable, and would otherwise wait for the close timer).
    socket.on('end', () => socket.end());
    socket.on('error', () => {});
    if (head.length) queueMicrotask(() => this.read(head));
  }

  /** Frame header for a message of `length` bytes, with `room` spare bytes after it. */
  private frameHeader(opcode: number, length: number, room = 0): Buffer {
    const masked = this.role === 'client';
    const ext = length < 126 ? 0 : length < 65536 ? 2 : 8;
    const h = Buffer.allocUnsafe(2 + ext + (masked ? 4 : 0) + room);
    h[0] = 0x80 | opcode;
    h[1] = (masked ? 0x80 : 0) | (ext === 0 ? length : ext === 2 ? 126 : 127);
    if (ext === 2) h.writeUInt16BE(length, 2);
    else if (ext === 8) {
      h.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
      h.writeUInt32BE(length >>> 0, 6);
    }
    if (masked) h.writeUInt32BE(0, 2 + ext);
    return h;
  }

  sendText(message: string): void {
    if (!this.open) return;
    const body = Buffer.from(message, 'utf8');
    this.socket.write(Buffer.concat([this.frameHeader(0x1, body.length), body]));
  }

  /**
   * One binary message: a small prefix (`prefixLength` bytes, written by `writePrefix` into the
   * frame header's buffer at `at`) then `payload`, written from where it lies, without a copy.
   * Resolves once the socket has taken both; the caller must not change `payload` before.
   */
  sendBinary(payload: Uint8Array, prefixLength = 0, writePrefix?: (head: Buffer, at: number) => void): Promise<void> {
    if (!this.open) return Promise.reject(new Error('link closed'));
    const head = this.frameHeader(0x2, prefixLength + payload.byteLength, prefixLength);
    writePrefix?.(head, head.length - prefixLength);
    const body = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    return new Promise((resolve, reject) => {
      this.socket.cork();
      this.socket.write(head);
      this.socket.write(body, (e) => (e ? reject(e) : resolve()));
      this.socket.uncork();
    });
  }

  /** A ping frame; the other side's pong (or any bytes) moves `reads`. */
  ping(): void {
    if (this.open) this.socket.write(this.frameHeader(0x9, 0));
  }

  /** Starts the closing handshake; the socket ends when the other side answers (or in 1 s). */
  close(code: number = WS_CLOSE.normal, reason = ''): void {
    if (this.closeSent || this.closed) return;
    this.closeSent = true;
    this.open = false;
    const r = Buffer.from(closeReason(reason), 'utf8');
    const body = Buffer.alloc(2 + r.length);
    body.writeUInt16BE(code, 0);
    r.copy(body, 2);
    this.socket.write(Buffer.concat([this.frameHeader(0x8, body.length), body]));
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.finish(code, reason);
  }

  private finish(code: number, reason: string): void {
    this.open = false;
    if (this.closed) return;
    this.closed = true;
    this.handlers.close(code, reason);
  }

  /** A protocol error: close with the reason and stop reading. */
  private fail(code: number, reason: string): void {
    this.ended = true;
    this.close(code, reason);
    this.socket.removeAllListeners('data');
    this.socket.on('data', () => {});
  }

  private read(d: Buffer): void {
    let at = 0;
    // After sending a close, frames are still read (to see the answer) but no longer handed over.
    while (at < d.length && !this.ended) {
      if (this.opcode < 0) {
        at = this.readHeader(d, at);
        continue;
      }
      const n = Math.min(this.left, d.length - at);
      const start = at;
      at += n;
      this.left -= n;
      if (this.mask) this.unmask(d, start, at);
      if (this.opcode === 0x2) {
        if (n && !this.closeSent) this.handlers.chunk(d, start, at);
      } else this.text.push(Buffer.from(d.subarray(start, at)));
      if (this.left === 0 && !this.ended) this.endFrame();
    }
  }

  /** Consumes header bytes from d at `at`; returns the new position. */
  private readHeader(d: Buffer, at: number): number {
    while (this.headerLength < 2 && at < d.length) this.header[this.headerLength++] = d[at++];
    if (this.headerLength < 2) return at;
    const len7 = this.header[1] & 0x7f;
    const size = 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (this.header[1] & 0x80 ? 4 : 0);
    while (this.headerLength < size && at < d.length) this.header[this.headerLength++] = d[at++];
    if (this.headerLength < size) return at;
    const h = this.header;
    const fin = (h[0] & 0x80) !== 0;
    const opcode = h[0] & 0x0f;
    const masked = (h[1] & 0x80) !== 0;
    let length = len7;
    let p = 2;
    if (len7 === 126) {
      length = h.readUInt16BE(2);
      p = 4;
    } else if (len7 === 127) {
      // Two 32-bit halves (no BigInt per frame); beyond 2^53 it is simply too big.
      const high = h.readUInt32BE(2);
      length = high >= 0x200000 ? Infinity : high * 2 ** 32 + h.readUInt32BE(6);
      p = 10;
    }
    this.mask = masked && h.readUInt32BE(p) !== 0 ? Buffer.from(h.subarray(p, p + 4)) : null;
    this.maskAt = 0;
    this.headerLength = 0;
    if (h[0] & 0x70) return this.refuse(WS_CLOSE.protocol, 'no extensions are negotiated on peer links');
    if (masked !== (this.role === 'server'))
      return this.refuse(WS_CLOSE.protocol, this.role === 'server' ? 'a client frame must be masked' : 'a server frame must not be masked');
    if (!fin || opcode === 0x0) return this.refuse(WS_CLOSE.unsupported, 'fragmented messages are not used on peer links');
    if (opcode >= 0x8 && length > 125) return this.refuse(WS_CLOSE.protocol, 'control frame longer than 125 bytes');
    if (opcode === 0x1 && length > this.limits.maxText)
      return this.refuse(WS_CLOSE.tooBig, `text message of ${length} bytes exceeds the limit of ${this.limits.maxText}`);
    if (opcode === 0x2 && length > this.limits.maxFrame)
      return this.refuse(WS_CLOSE.tooBig, `binary message of ${length} bytes exceeds the limit of ${this.limits.maxFrame}`);
    if (opcode !== 0x1 && opcode !== 0x2 && opcode !== 0x8 && opcode !== 0x9 && opcode !== 0xa)
      return this.refuse(WS_CLOSE.protocol, `unknown opcode ${opcode}`);
    this.opcode = opcode;
    this.left = length;
    if (opcode === 0x2 && !this.closeSent) this.handlers.binaryStart(length);
    if (length === 0) this.endFrame();
    return at;
  }

  private refuse(code: number, reason: string): number {
    this.fail(code, reason);
    return Infinity;
  }

  private unmask(d: Buffer, start: number, end: number): void {
    const m = this.mask!;
    for (let i = start; i < end; i++) d[i] ^= m[(this.maskAt + i - start) & 3];
    this.maskAt = (this.maskAt + end - start) & 3;
  }

  private endFrame(): void {
    const opcode = this.opcode;
    this.opcode = -1;
    if (opcode === 0x2) {
      if (!this.closeSent) this.handlers.binaryEnd();
      return;
    }
    const body = this.text.length === 1 ? this.text[0] : Buffer.concat(this.text);
    this.text = [];
    switch (opcode) {
      case 0x1:
        if (!this.closeSent) this.handlers.text(body.toString('utf8'));
        return;
      case 0x8: {
        const code = body.length >= 2 ? body.readUInt16BE(0) : 1005;
        const reason = body.subarray(2).toString('utf8');
        // Answer the close, then end: the handshake is complete.
        if (!this.closeSent) {
          this.closeSent = true;
          const echo = body.subarray(0, 2);
          this.socket.write(Buffer.concat([this.frameHeader(0x8, echo.length), echo]));
        }
        this.socket.end();
        this.ended = true;
        this.finish(code, reason);
        return;
      }
      case 0x9:
        if (this.open) this.socket.write(Buffer.concat([this.frameHeader(0xa, body.length), body]));
        return;
      default:
        return;
    }
  }
}
