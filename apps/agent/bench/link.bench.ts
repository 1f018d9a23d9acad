// bench:link — agent-link throughput (WebSocket binary messages through PeerLink over the
// agent's own framing, peer/frames.ts, as agents send buffers host to host, each received
// straight into its destination) against a raw TCP socket on loopback moving the same bytes
// into a destination buffer.
// Both ends in this process, each side the same for both transports. Ratio target >= 0.9.
//   LINK_BYTES=<bytes per measurement> LINK_ROUNDS=<rounds> LINK_SIZES=<bytes,...> npm run bench:link
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { acceptUpgrade, dialUpgrade, FrameSocket, PEER_PATH } from '../src/peer/frames.js';
import { PeerLink } from '../src/peer/link.js';

const LIMITS = { maxFrame: 1 << 30, maxText: 16 << 20 };

const sizes = (process.env.LINK_SIZES ?? `${64 << 10},${1 << 20},${16 << 20}`).split(",").map(Number);
const totalBytes = Number(process.env.LINK_BYTES ?? 128 << 20);

async function agentLink(size: number, count: number): Promise<number> {
  // The agent's own path: an upgrade on PEER_PATH, its framing both ways, PeerLink at each end.
  const server = createServer();
  const accepted = new Promise<PeerLink>((resolve) =>
    server.once('upgrade', (req, socket: Duplex, head: Buffer) => {
      if (acceptUpgrade(req, socket)) resolve(new PeerLink('h1', new FrameSocket(socket, head, 'server', LIMITS)));
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const up = await dialUpgrade(`ws://127.0.0.1:${(server.address() as AddressInfo).port}${PEER_PATH}`);
  const sender = new PeerLink('h0', new FrameSocket(up.socket, up.head, 'client', LIMITS));
  const receiver = await accepted;
  const payload = new Uint8Array(size).fill(7);
  const dst = new Uint8Array(size);
  const t0 = performance.now();
  // As a receiving lane does, the destination is given before the bytes arrive.
  const recv = Promise.all(Array.from({ length: count }, (_, i) => receiver.receive('bn_4->bn_5', i, dst)));
  for (let i = 0; i < count; i++) await sender.sendFrame('bn_4->bn_5', i, payload);
  await recv;
  const seconds = (performance.now() - t0) / 1000;
  sender.close();
  receiver.close();
  up.socket.destroy();
  server.closeAllConnections();
  server.close();
  return (size * count) / seconds;
}

async function rawTcp(size: number, count: number): Promise<number> {
  const dst = new Uint8Array(size);
  let got = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const server = net.createServer((s) => {
    let filled = 0;
    s.on('data', (chunk: Buffer) => {
      // Copy into a destination buffer, as the agent does into a slot.
      let off = 0;
      while (off < chunk.length) {
        const n = Math.min(size - filled, chunk.length - off);
        dst.set(chunk.subarray(off, off + n), filled);
        filled += n;
        off += n;
        if (filled === size) {
          filled = 0;
          if (++got === count) done();
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const sock = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  const payload = Buffer.alloc(size, 7);
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await new Promise<void>((r, j) => sock.write(payload, (e) => (e ? j(e) : r())));
  await finished;
  const seconds = (performance.now() - t0) / 1000;
  sock.destroy();
  server.close();
  return (size * count) / seconds;
}

const rounds = Number(process.env.LINK_ROUNDS ?? 11);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const rows: string[][] = [];
for (const size of sizes) {
  const count = Math.max(4, Math.round(totalBytes / size));
  // Warm both with a whole measurement (the link's code must be compiled, as in a long run),
  // then interleave them, alternating which goes first: the ratio of each round, the median.
  await agentLink(size, count);
  await rawTcp(size, count);
  const ws: number[] = [];
  const tcp: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const first = r % 2 ? await agentLink(size, count) : await rawTcp(size, count);
    const second = r % 2 ? await rawTcp(size, count) : await agentLink(size, count);
    const [w, t] = r % 2 ? [first, second] : [second, first];
    ws.push(w);
    tcp.push(t);
    ratios.push(w / t);
  }
  const mb = (xs: number[]) => `${(median(xs) / 1e6).toFixed(0)} (${(Math.min(...xs) / 1e6).toFixed(0)}-${(Math.max(...xs) / 1e6).toFixed(0)})`;
  rows.push([`${size >> 10} KiB`, String(count), mb(ws), mb(tcp), `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`]);
}
const head = ['frame', 'frames', 'agent link MB/s', 'raw TCP MB/s', 'ratio (per round)'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (r: string[]) => `| ${r.map((c, i) => c.padStart(widths[i])).join(' | ')} |`;
console.log(line(head));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
console.log(`\nloopback, both ends in one process, ${totalBytes >> 20} MiB per measurement, ${rounds} rounds alternating which goes first, after a warm-up of each: median (min-max); target ratio >= 0.9`);
