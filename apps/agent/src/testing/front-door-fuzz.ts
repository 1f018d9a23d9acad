import { randomBytes } from 'node:crypto';
import os from 'node:os';
import net from 'node:net';
import fc from 'fast-check';
import WebSocket from 'ws';
import { PROTOCOL_VERSION } from '@pipeloom/core';
import type { Devices } from '../devices/discover.js';

// The agent's front door seen from a stranger's raw TCP socket: arbitrary HTTP upgrade
// requests and WebSocket frames, split anywhere. Shared by the front-door tests and the
// fuzz (front-door.test.ts) and its bench (bench/fuzz.bench.ts); what comes after a login
// and a deploy is fuzzed by run-fuzz.ts.

/** A CPU-only host: the front door needs no GPU. */
export function cpuDevices(host: string): Devices {
  return { host, pes: [{ id: `cpu@${host}`, kind: 'cpu', name: 'cpu', vendor: os.arch(), memory: 1 << 30 }], gpus: new Map() } as Devices;
}

export const WS_KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

/** An HTTP upgrade request's bytes, headers as given (names and values unchecked). */
export function upgradeRequest(path: string, headers: [string, string][] = [], method = 'GET'): Buffer {
  const base: [string, string][] = [
    ['Host', 'agent'],
    ['Upgrade', 'websocket'],
    ['Connection', 'Upgrade'],
    ['Sec-WebSocket-Key', WS_KEY],
    ['Sec-WebSocket-Version', '13'],
  ];
  const lines = [`${method} ${path} HTTP/1.1`, ...[...base, ...headers].map(([k, v]) => `${k}: ${v}`)];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

export interface FrameSpec {
  opcode: number;
  payload: Buffer;
  fin?: boolean;
  rsv?: number;
  /** Mask key (4 bytes); null sends the frame unmasked (a protocol error from a client). */
  mask?: Buffer | null;
  /** Length announced in the header, when it is to differ from the payload's. */
  announced?: number;
}

/** A client frame's bytes (RFC 6455). */
export function clientFrame(f: FrameSpec): Buffer {
  const length = f.announced ?? f.payload.length;
  const mask = f.mask === undefined ? randomBytes(4) : f.mask;
  const ext = length < 126 ? 0 : length < 65536 ? 2 : 8;
  const h = Buffer.alloc(2 + ext + (mask ? 4 : 0));
  h[0] = ((f.fin ?? true) ? 0x80 : 0) | ((f.rsv ?? 0) << 4) | f.opcode;
  h[1] = (mask ? 0x80 : 0) | (ext === 0 ? length : ext === 2 ? 126 : 127);
  if (ext === 2) h.writeUInt16BE(length, 2);
  if (ext === 8) {
    h.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    h.writeUInt32BE(length >>> 0, 6);
  }
  const body = Buffer.from(f.payload);
  if (mask) {
    mask.copy(h, 2 + ext);
    for (let i = 0; i < body.length; i++) body[i] ^= mask[i & 3];
  }
  return Buffer.concat([h, body]);
}

export interface Exchange {
  /** Every byte the agent sent back. */
  received: Buffer;
  /** The agent closed (or reset) the connection within the wait. */
  closed: boolean;
}

/**
 * Connects to `port`, writes `chunks` one by one (letting the agent read between them, so
 * each is a read of its own), half-closes unless `keepOpen`, and resolves once the agent has
 * closed the connection, or after `waitMs` with closed: false.
 */
export function exchange(port: number, chunks: Buffer[], opts: { localAddress?: string; waitMs?: number; keepOpen?: boolean } = {}): Promise<Exchange> {
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    const s = net.connect({ port, host: '127.0.0.1', localAddress: opts.localAddress });
    s.setNoDelay(true);
    const done = (closed: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve({ received: Buffer.concat(got), closed });
    };
    const timer = setTimeout(() => done(false), opts.waitMs ?? 10_000);
    s.on('data', (d) => got.push(d));
    s.on('error', () => {});
    s.on('close', () => done(true));
    s.on('connect', async () => {
      for (const c of chunks) {
        if (s.destroyed) return;
        await new Promise<void>((r) => s.write(c, () => r()));
        await new Promise<void>((r) => setImmediate(r));
      }
      if (!opts.keepOpen && !s.destroyed) s.end();
    });
  });
}

/** The status line of an HTTP answer (`HTTP/1.1 400 Bad Request`), or '' when none came. */
export function statusLine(received: Buffer): string {
  const end = received.indexOf('\r\n');
  return end < 0 ? '' : received.subarray(0, end).toString('latin1');
}

/** The close frame among the agent's frames after its 101 answer: code and reason, or null. */
export function closeFrame(received: Buffer): { code: number; reason: string; reasonBytes: number } | null {
  const start = received.indexOf('\r\n\r\n');
  if (start < 0 || !statusLine(received).includes(' 101 ')) return null;
  let at = start + 4;
  while (at + 2 <= received.length) {
    const opcode = received[at] & 0x0f;
    let len = received[at + 1] & 0x7f;
    let p = at + 2;
    if (len === 126) {
      len = received.readUInt16BE(p);
      p += 2;
    } else if (len === 127) {
      len = Number(received.readBigUInt64BE(p));
      p += 8;
    }
    if (p + len > received.length) return null;
    if (opcode === 0x8) {
      const body = received.subarray(p, p + len);
      return { code: body.length >= 2 ? body.readUInt16BE(0) : 1005, reason: body.subarray(2).toString('utf8'), reasonBytes: Math.max(0, body.length - 2) };
    }
    at = p + len;
  }
  return null;
}

/** Logs in on a fresh connection; resolves with the agent's welcome, rejects with the close code and reason. */
export function login(url: string, token: string, localAddress?: string, headers?: Record<string, string>): Promise<{ type: string; host: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { localAddress, headers });
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token })));
    ws.on('message', (d) => {
      resolve(JSON.parse(String(d)));
      ws.close();
    });
    ws.on('close', (code, reason) => reject(new Error(`closed ${code} ${String(reason)}`)));
    ws.on('error', (e) => reject(e));
  });
}

// --- the fuzz: one case is a request, frames after it, and where the byte stream is split ---

export interface FuzzCase {
  request: Buffer;
  frames: Buffer;
  /** Cut points into request + frames, as fractions of its length. */
  splits: number[];
  /** A correct login precedes the frames (the door after login). */
  authFirst: boolean;
}

const header = fc.tuple(
  fc.oneof(
    fc.constantFrom(
      'Origin',
      'Upgrade',
      'Connection',
      'Sec-WebSocket-Key',
      'Sec-WebSocket-Version',
      'Sec-WebSocket-Extensions',
      'Sec-WebSocket-Protocol',
      'Content-Length',
      'Transfer-Encoding',
      'Host',
    ),
    fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,40}$/),
  ),
  fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.constantFrom('websocket', '13', 'Upgrade', 'permessage-deflate', 'chunked', '0', '-1', '99999999999'),
    fc.nat(3000).map((n) => 'A'.repeat(n)),
    fc.string({ unit: 'binary', maxLength: 40 }),
  ),
);

const origin = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('http://localhost:5173', 'http://127.0.0.1:8080', 'https://evil.example', 'null', ''),
  fc.nat(600).map((n) => `https://${'e'.repeat(n)}.example`),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.webUrl(),
);

const path = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('/', '/peer', '/peer?x=1', '/?a=b') },
  {
    weight: 3,
    arbitrary: fc.constantFrom('//[', '//a:99999', '//[/peer', '//a:99999/peer', 'http://agent/peer', '*', '/peer#x', '/%00', '/%', '/peer/..', '/\u00e9', ''),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 80 }).map((s) => `/${s}`) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
  { weight: 1, arbitrary: fc.nat(10_000).map((n) => `/${'p'.repeat(n)}`) },
);

const longString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.nat(70_000).map((n) => 'A'.repeat(n)),
  fc.nat(30_000).map((n) => '\u00e9\u4e2d'.repeat(n)),
  fc.string({ unit: 'binary', maxLength: 300 }),
);
const wrongType = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}), longString);

/** First messages a stranger might send: right shapes with wrong values, wrong shapes, deep nesting, sizes around the limit. */
function firstMessage(token: string, limit: number): fc.Arbitrary<{ opcode: number; payload: Buffer }> {
  const text = (s: fc.Arbitrary<string>) => s.map((t) => ({ opcode: 1, payload: Buffer.from(t, 'utf8') }));
  const json = (v: fc.Arbitrary<unknown>) => text(v.map((x) => JSON.stringify(x) ?? 'null'));
  const types = fc.oneof(
    fc.constantFrom(
      'auth',
      'peer-hello',
      'peer-auth',
      'peer-challenge',
      'ping',
      'deploy',
      'start',
      'stop',
      'welcome',
      'constructor',
      '__proto__',
      'toString',
      'hasOwnProperty',
    ),
    longString,
  );
  return fc.oneof(
    json(
      fc.record(
        {
          type: fc.constant('auth'),
          version: fc.oneof(fc.constant(PROTOCOL_VERSION), wrongType),
          token: fc.oneof(wrongType, fc.constant(token.slice(1)), fc.constant(`${token}x`)),
        },
        { requiredKeys: [] },
      ),
    ),
    json(
      fc.record(
        {
          type: fc.constant('peer-hello'),
          version: fc.oneof(fc.constant(PROTOCOL_VERSION), wrongType),
          host: wrongType,
          runId: wrongType,
          nonce: fc.oneof(wrongType, fc.constant('ab'.repeat(16))),
        },
        { requiredKeys: [] },
      ),
    ),
    json(
      fc.record({ type: types, version: wrongType, token: wrongType, host: wrongType, runId: wrongType, id: wrongType, t: wrongType }, { requiredKeys: [] }),
    ),
    json(fc.jsonValue({ maxDepth: 6 })),
    text(fc.string({ maxLength: 200 })),
    fc
      .tuple(fc.nat(Math.floor(limit / 2)), fc.constantFrom('[', '{"a":', '[{"type":'))
      .map(([n, open]) => ({ opcode: 1, payload: Buffer.from(open.repeat(Math.max(1, Math.floor(n / open.length))), 'utf8') })),
    fc.nat(Math.floor(limit / 2)).map((n) => ({ opcode: 1, payload: Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`) })),
    fc
      .integer({ min: limit - 64, max: limit + 64 })
      .map((n) => ({ opcode: 1, payload: Buffer.from(JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token: 'x'.repeat(Math.max(0, n - 50)) })) })),
    fc.uint8Array({ maxLength: 300 }).map((b) => ({ opcode: 2, payload: Buffer.from(b) })),
    fc.integer({ min: limit - 16, max: limit + 16 }).map((n) => ({ opcode: 2, payload: Buffer.alloc(Math.max(0, n), 7) })),
    fc.uint8Array({ maxLength: 300 }).map((b) => ({ opcode: 1, payload: Buffer.from(b) })),
  );
}

/** Messages after a correct login (deploys left out: their contents are the run host's, not the door's). */
function afterLogin(): fc.Arbitrary<{ opcode: number; payload: Buffer }> {
  const json = (v: fc.Arbitrary<unknown>) => v.map((x) => ({ opcode: 1, payload: Buffer.from(JSON.stringify(x) ?? 'null') }));
  return fc.oneof(
    json(
      fc.record(
        {
          type: fc.oneof(fc.constantFrom('ping', 'start', 'stop', 'auth', 'peer-hello', 'constructor'), longString),
          id: wrongType,
          t: wrongType,
          runId: wrongType,
          reason: wrongType,
          version: wrongType,
        },
        { requiredKeys: ['type'] },
      ),
    ),
    json(fc.jsonValue({ maxDepth: 4 })),
    fc.uint8Array({ maxLength: 100 }).map((b) => ({ opcode: 2, payload: Buffer.from(b) })),
  );
}

const frameSpec = (message: fc.Arbitrary<{ opcode: number; payload: Buffer }>) =>
  fc
    .record({
      message,
      opcode: fc.oneof({ weight: 8, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 15 }) }),
      fin: fc.oneof({ weight: 8, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      rsv: fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 7 }) }),
      mask: fc.oneof(
        { weight: 8, arbitrary: fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b): Buffer | null => Buffer.from(b)) },
        { weight: 1, arbitrary: fc.constant(null) },
      ),
      announced: fc.oneof(
        { weight: 8, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.oneof(fc.nat(200), fc.constantFrom(126, 65535, 65536, 300 << 20, 2 ** 40)) },
      ),
    })
    .map((f) =>
      clientFrame({
        opcode: f.opcode < 0 ? f.message.opcode : f.opcode,
        payload: f.message.payload,
        fin: f.fin,
        rsv: f.rsv,
        mask: f.mask,
        announced: f.announced,
      }),
    );

/** One case: a request (mostly a well-formed upgrade), frames, random splits. */
export function fuzzCase(token: string, limit: number): fc.Arbitrary<FuzzCase> {
  const request = fc.oneof(
    {
      weight: 10,
      arbitrary: fc
        .record({
          path,
          origin,
          headers: fc.array(header, { maxLength: 4 }),
          method: fc.oneof(
            { weight: 9, arbitrary: fc.constant('GET') },
            { weight: 1, arbitrary: fc.constantFrom('POST', 'PUT', 'get', 'CONNECT', 'G\u00e9T') },
          ),
        })
        .map((r) => upgradeRequest(r.path, [...(r.origin === undefined ? [] : [['Origin', r.origin] as [string, string]]), ...r.headers], r.method)),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 300 }).map((s) => Buffer.from(s, 'utf8')) },
  );
  return fc
    .record({
      request,
      authFirst: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      first: fc.array(frameSpec(firstMessage(token, limit)), { minLength: 0, maxLength: 3 }),
      later: fc.array(frameSpec(afterLogin()), { maxLength: 3 }),
      splits: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
    })
    .map((c) => {
      const auth = clientFrame({ opcode: 1, payload: Buffer.from(JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token })) });
      const frames = Buffer.concat(c.authFirst ? [auth, ...c.later] : c.first);
      return { request: c.request, frames, splits: c.splits, authFirst: c.authFirst };
    });
}

/** The case's bytes cut at its split points. */
export function chunksOf(c: FuzzCase): Buffer[] {
  const all = Buffer.concat([c.request, c.frames]);
  const cuts = [...new Set(c.splits.map((f) => Math.floor(f * all.length)))].filter((n) => n > 0 && n < all.length).sort((a, b) => a - b);
  const out: Buffer[] = [];
  let at = 0;
  for (const cut of [...cuts, all.length]) {
    out.push(all.subarray(at, cut));
    at = cut;
  }
  return out.filter((b) => b.length);
}

/**
 * Runs one case against the agent at `port`. Throws naming what went wrong: no close after
 * the stranger's half-close, or an oversized or invalid close reason.
 */
export async function runStranger(port: number, c: FuzzCase, closeWithinMs: number): Promise<void> {
  const r = await exchange(port, chunksOf(c), { waitMs: closeWithinMs });
  if (!r.closed) throw new Error(`the agent kept the connection ${closeWithinMs} ms after the stranger's half-close`);
  const close = closeFrame(r.received);
  if (close && close.reasonBytes > 123) throw new Error(`close reason of ${close.reasonBytes} bytes`);
  if (close && Buffer.from(close.reason, 'utf8').length !== close.reasonBytes) throw new Error('close reason is not valid UTF-8');
}

/** Runs one case (`runStranger`), then checks the agent still welcomes a correct login. */
export async function runCase(url: string, port: number, token: string, c: FuzzCase, closeWithinMs: number): Promise<void> {
  await runStranger(port, c, closeWithinMs);
  const welcome = await login(url, token);
  if (welcome.type !== 'welcome') throw new Error(`answered a correct login with ${welcome.type}`);
}
