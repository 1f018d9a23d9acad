// The two ends of one bench:link measurement, for each transport: the agent link as agents
// use it (an upgrade on the agent's /peer path, the agent's own framing, PeerLink at each end,
// the receiving lane naming the destination before the bytes arrive) and a raw TCP socket
// moving the same bytes into a destination buffer. Both sides' sockets have Nagle off, as the
// agent's peer sockets do, so the two transports differ only in what the agent adds.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { acceptUpgrade, dialUpgrade, FrameSocket, PEER_PATH } from '../src/peer/frames.js';
import { PeerLink } from '../src/peer/link.js';

export type Transport = 'link' | 'tcp';

const LIMITS = { maxFrame: 1 << 30, maxText: 16 << 20 };
const KEY = 'bn_4->bn_5';

// Source and destination buffers, one of each per size, made and touched once: as an agent's
// slots are allocated before a run, no measurement pays for first touching fresh pages.
const buffers = new Map<number, { payload: Uint8Array; dst: Uint8Array }>();
const buffersOf = (size: number) => {
  let b = buffers.get(size);
  if (!b) buffers.set(size, (b = { payload: new Uint8Array(size).fill(7), dst: new Uint8Array(size).fill(1) }));
  return b;
};

/** A receiving end, listening on loopback: `done` resolves once `count` messages of `size` bytes are in. */
export interface Receiver {
  port: number;
  done: Promise<void>;
}

export async function receive(transport: Transport, size: number, count: number): Promise<Receiver> {
  const { dst } = buffersOf(size);
  if (transport === 'link') {
    const server = createServer();
    const done = new Promise<void>((resolve) =>
      server.once('upgrade', async (req, socket: Duplex, head: Buffer) => {
        if (!acceptUpgrade(req, socket)) return;
        const link = new PeerLink('h1', new FrameSocket(socket, head, 'server', LIMITS));
        // As a receiving lane does, the destination is given before the bytes arrive.
        await Promise.all(Array.from({ length: count }, (_, i) => link.receive(KEY, i, dst)));
        link.close();
        server.closeAllConnections();
        server.close();
        resolve();
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { port: (server.address() as AddressInfo).port, done };
  }
  let got = 0;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const server = net.createServer({ noDelay: true }, (s) => {
    let filled = 0;
    s.on('data', (chunk: Buffer) => {
      // Copy into the destination buffer, as the agent does into a slot.
      let off = 0;
      while (off < chunk.length) {
        const n = Math.min(size - filled, chunk.length - off);
        dst.set(chunk.subarray(off, off + n), filled);
        filled += n;
        off += n;
        if (filled === size) {
          filled = 0;
          if (++got === count) {
            s.destroy();
            server.close();
            finish();
          }
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, done };
}

/** A sending end: connects to `port`, then `start` sends `count` messages of `size` bytes, each once the socket has taken the one before. */
export async function sender(transport: Transport, port: number, size: number, count: number): Promise<{ start: () => Promise<void>; close: () => void }> {
  const { payload } = buffersOf(size);
  if (transport === 'link') {
    const up = await dialUpgrade(`ws://127.0.0.1:${port}${PEER_PATH}`);
    const link = new PeerLink('h0', new FrameSocket(up.socket, up.head, 'client', LIMITS));
    return {
      start: async () => {
        for (let i = 0; i < count; i++) await link.sendFrame(KEY, i, payload);
      },
      close: () => {
        link.close();
        up.socket.destroy();
      },
    };
  }
  const sock = net.connect({ port, host: '127.0.0.1', noDelay: true });
  await new Promise((r) => sock.once('connect', r));
  const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  return {
    start: async () => {
      for (let i = 0; i < count; i++) await new Promise<void>((r, j) => sock.write(bytes, (e) => (e ? j(e) : r())));
    },
    close: () => sock.destroy(),
  };
}
