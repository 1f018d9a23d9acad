import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import fc from 'fast-check';
import WebSocket, { WebSocketServer } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { acceptUpgrade, dialUpgrade, FrameSocket, PEER_PATH, WS_CLOSE } from './frames.js';
import { PeerLink } from './link.js';

// The peer links' own WebSocket framing. Interoperating with `ws` both ways is the proof that
// it is a real WebSocket on the wire; the property test splits a stream of transfers at random
// points, as TCP may, and every transfer must land intact in its destination.

const LIMITS = { maxFrame: 1 << 20, maxText: 4096 };
const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** An HTTP server whose upgrades get a FrameSocket. */
async function frameServer(): Promise<{ url: string; next: Promise<FrameSocket> }> {
  const server = createServer();
  servers.push(server);
  const next = new Promise<FrameSocket>((resolve) =>
    server.once('upgrade', (req, socket: Duplex, head: Buffer) => {
      if (acceptUpgrade(req, socket)) resolve(new FrameSocket(socket, head, 'server', LIMITS));
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}${PEER_PATH}`, next };
}

/** Collects what a FrameSocket hands over. */
function collect(f: FrameSocket) {
  const got = { texts: [] as string[], binaries: [] as Buffer[], closed: null as null | { code: number; reason: string } };
  let parts: Buffer[] = [];
  f.handlers = {
    text: (s) => got.texts.push(s),
    binaryStart: () => (parts = []),
    chunk: (b, start, end) => parts.push(Buffer.from(b.subarray(start, end))),
    binaryEnd: () => got.binaries.push(Buffer.concat(parts)),
    close: (code, reason) => (got.closed = { code, reason }),
  };
  return got;
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(ok()).toBe(true);
};

describe('peer framing interoperates with ws', () => {
  it('a ws client (random masks, a ping) and this server exchange text, binary and a close with its reason', async () => {
    const { url, next } = await frameServer();
    const client = new WebSocket(url);
    const fromServer: (string | Buffer)[] = [];
    let pong = false;
    client.on('message', (d, binary) => fromServer.push(binary ? (d as Buffer) : String(d)));
    client.on('pong', () => (pong = true));
    await new Promise((r) => client.once('open', r));
    const server = await next;
    const got = collect(server);
    const big = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) & 255));
    client.send('{"type":"barrier","seq":3}');
    client.send(big);
    client.ping();
    await until(() => got.binaries.length === 1 && pong);
    expect(got.texts).toEqual(['{"type":"barrier","seq":3}']);
    expect(got.binaries[0].equals(big)).toBe(true);
    server.sendText('hello');
    await server.sendBinary(new Uint8Array([3, 4, 5]), 2, (head, at) => head.set([1, 2], at));
    await until(() => fromServer.length === 2);
    expect(fromServer[0]).toBe('hello');
    expect([...(fromServer[1] as Buffer)]).toEqual([1, 2, 3, 4, 5]);
    client.close(4001, 'invalid token');
    await until(() => got.closed !== null);
    expect(got.closed).toEqual({ code: 4001, reason: 'invalid token' });
  });

  it('this client (zero mask) and a ws server exchange text, binary and a close with its reason', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((r) => wss.once('listening', r));
    const accepted = new Promise<WebSocket>((r) => wss.once('connection', r));
    const up = await dialUpgrade(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}${PEER_PATH}`);
    const client = new FrameSocket(up.socket, up.head, 'client', LIMITS);
    const got = collect(client);
    const server = await accepted;
    const atServer: (string | Buffer)[] = [];
    let closedWith: [number, string] | null = null;
    server.on('message', (d, binary) => atServer.push(binary ? (d as Buffer) : String(d)));
    server.on('close', (code, reason) => (closedWith = [code, String(reason)]));
    const payload = new Uint8Array(200_000).map((_, i) => i % 251);
    client.sendText('héllo');
    await client.sendBinary(payload, 3, (head, at) => head.write('key', at));
    await until(() => atServer.length === 2);
    expect(atServer[0]).toBe('héllo');
    expect((atServer[1] as Buffer).equals(Buffer.concat([Buffer.from('key'), payload]))).toBe(true);
    server.send(Buffer.from([9, 8, 7]));
    server.send('text back');
    await until(() => got.texts.length === 1);
    expect([...got.binaries[0]]).toEqual([9, 8, 7]);
    expect(got.texts).toEqual(['text back']);
    client.close(WS_CLOSE.normal, 'run over');
    await until(() => closedWith !== null);
    expect(closedWith).toEqual([1000, 'run over']);
    wss.close();
  });
});

describe('peer framing refuses what peer links do not use, with a reason', () => {
  const raw = async (bytes: number[]) => {
    const { url, next } = await frameServer();
    const up = await dialUpgrade(url);
    const server = await next;
    const got = collect(server);
    up.socket.write(Buffer.from(bytes));
    await until(() => got.closed !== null);
    up.socket.destroy();
    return got.closed;
  };
  it('an unmasked client frame, a fragment, a text over the limit', async () => {
    expect(await raw([0x81, 0x01, 0x41])).toEqual({ code: WS_CLOSE.protocol, reason: 'a client frame must be masked' });
    expect(await raw([0x01, 0x81, 0, 0, 0, 0, 0x41])).toEqual({ code: WS_CLOSE.unsupported, reason: 'fragmented messages are not used on peer links' });
    expect(await raw([0x81, 0xfe, 0x20, 0x00, 0, 0, 0, 0])).toEqual({ code: WS_CLOSE.tooBig, reason: 'text message of 8192 bytes exceeds the limit of 4096' });
  });
});

/** A stream end whose writes are collected, and one that is fed by hand: real Node streams. */
function wire() {
  const written: Buffer[] = [];
  const out = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      written.push(Buffer.from(chunk));
      cb();
    },
  });
  const into = new Duplex({
    read() {},
    write(_c, _e, cb) {
      cb();
    },
  });
  return { written, out, into };
}

describe('PeerLink transfers', () => {
  it('land intact in their destinations however TCP splits them, asked for before or after they arrive', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom('bn_1->bn_2', 'bn_3->bn_9', 'é->ü'), size: fc.integer({ min: 0, max: 3000 }), early: fc.boolean() }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.array(fc.integer({ min: 1, max: 4000 }), { minLength: 1, maxLength: 20 }),
        fc.integer(),
        async (transfers, cuts, seed) => {
          const w = wire();
          const sender = new PeerLink('h0', new FrameSocket(w.out, Buffer.alloc(0), 'client', LIMITS));
          const receiver = new PeerLink('h1', new FrameSocket(w.into, Buffer.alloc(0), 'server', LIMITS));
          let failure = '';
          receiver.onClose = (r) => (failure = r);
          const payloads = transfers.map((t, i) => new Uint8Array(t.size).map((_, j) => (j * 31 + i + seed) & 255));
          for (const [i, t] of transfers.entries()) await sender.sendFrame(t.key, i, payloads[i]);
          const dst = transfers.map((t) => new Uint8Array(t.size + 4));
          const done: Promise<number>[] = [];
          transfers.forEach((t, i) => t.early && done.push(receiver.receive(t.key, i, dst[i])));
          const stream = Buffer.concat(w.written);
          let at = 0;
          for (const c of cuts) {
            if (at >= stream.length) break;
            w.into.push(stream.subarray(at, at + c));
            at += c;
          }
          if (at < stream.length) w.into.push(stream.subarray(at));
          await new Promise((r) => setImmediate(r));
          transfers.forEach((t, i) => !t.early && done.push(receiver.receive(t.key, i, dst[i])));
          await Promise.all(done);
          expect(failure).toBe('');
          transfers.forEach((t, i) => expect(dst[i].subarray(0, t.size)).toEqual(payloads[i]));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a transfer larger than its slot, or shorter than its header, closes the link with the reason', async () => {
    const check = async (send: (f: FrameSocket) => Promise<void>, expectReason: string) => {
      const w = wire();
      const out = new FrameSocket(w.out, Buffer.alloc(0), 'client', LIMITS);
      const receiver = new PeerLink('h1', new FrameSocket(w.into, Buffer.alloc(0), 'server', LIMITS));
      let reason = '';
      receiver.onClose = (r) => (reason = r);
      void receiver.receive('k', 0, new Uint8Array(4));
      await send(out);
      w.into.push(Buffer.concat(w.written));
      await until(() => reason !== '');
      expect(reason).toBe(expectReason);
    };
    await check((f) => new PeerLink('h0', f).sendFrame('k', 0, new Uint8Array(10)), 'transfer k of 10 bytes does not fit its slot of 4');
    await check((f) => f.sendBinary(new Uint8Array([0, 0])), 'malformed transfer: a binary message shorter than its header');
  });
});

describe('a task-bag PeerLink (onlyAsked)', () => {
  it('takes answers to its pulls, split as TCP may; a late answer to an abandoned pull is read and dropped, and the link stays open', async () => {
    const w = wire();
    // Each side's link is named after the other side: the receiver's peer is h0.
    const sender = new PeerLink('h1', new FrameSocket(w.out, Buffer.alloc(0), 'client', LIMITS));
    const receiver = new PeerLink('h0', new FrameSocket(w.into, Buffer.alloc(0), 'server', LIMITS));
    receiver.onlyAsked();
    let failure = '';
    receiver.onClose = (r) => (failure = r);
    const alloc = (n: number) => new Uint8Array(n);
    const gaveUp = receiver.pull(1, 'a', 3000, alloc);
    gaveUp.catch(() => {});
    const wanted = receiver.pull(2, 'b', 2000, alloc);
    receiver.abandon(1);
    const late = new Uint8Array(3000).fill(7);
    const payload = new Uint8Array(2000).map((_, j) => (j * 13) & 255);
    await sender.sendFrame('a', 1, late);
    await sender.sendFrame('b', 2, payload);
    const stream = Buffer.concat(w.written);
    for (let at = 0; at < stream.length; at += 777) w.into.push(stream.subarray(at, at + 777));
    expect((await wanted).bytes).toEqual(payload);
    expect(failure).toBe('');
    // Both answers are spent: the same id again answers nothing.
    w.written.length = 0;
    await sender.sendFrame('b', 2, payload);
    w.into.push(Buffer.concat(w.written));
    await until(() => failure !== '');
    expect(failure).toBe('peer h0 sent 2000 bytes that answer no pull of this agent');
  });
});

describe("a static run's PeerLink (onlyExpected)", () => {
  const run = async (sends: { key: string; iteration: number; size: number }[]) => {
    const w = wire();
    // The receiver's peer is h1.
    const sender = new PeerLink('h0', new FrameSocket(w.out, Buffer.alloc(0), 'client', LIMITS));
    const receiver = new PeerLink('h1', new FrameSocket(w.into, Buffer.alloc(0), 'server', LIMITS));
    receiver.onlyExpected();
    receiver.expect('bn_1->bn_2', 100, 2);
    let failure = '';
    receiver.onClose = (r) => (failure = r);
    for (const s of sends) await sender.sendFrame(s.key, s.iteration, new Uint8Array(s.size));
    w.into.push(Buffer.concat(w.written));
    await new Promise((r) => setImmediate(r));
    return { receiver, failure: () => failure };
  };

  it("holds a declared transfer's early messages up to its bound, then lands them in their slots", async () => {
    const { receiver, failure } = await run([0, 1].map((iteration) => ({ key: 'bn_1->bn_2', iteration, size: 100 })));
    expect(failure()).toBe('');
    for (const i of [0, 1]) await receiver.receive('bn_1->bn_2', i, new Uint8Array(100));
  });

  it('fails the link naming the peer for an undeclared key, a message over its bytes, or one more early than its bound', async () => {
    expect((await run([{ key: 'bn_7->bn_8', iteration: 0, size: 4 }])).failure()).toBe('peer h1 sent a transfer this run does not send this way');
    expect((await run([{ key: 'bn_1->bn_2', iteration: 0, size: 101 }])).failure()).toBe('peer h1 sent 101 bytes for a transfer of 100');
    expect((await run([0, 1, 2].map((iteration) => ({ key: 'bn_1->bn_2', iteration, size: 100 })))).failure()).toBe(
      'peer h1 sent transfer bn_1->bn_2 more than 2 times ahead of this agent',
    );
  });
});
