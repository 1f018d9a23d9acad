import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CLOSE, parseMessage, PROTOCOL_VERSION } from '@pipeloom/core';
import { closeReason, PEER_PATH } from '../peer/frames.js';
import { clientFrame, closeFrame, cpuDevices, exchange, fuzzCase, login, runCase, statusLine, upgradeRequest } from '../testing/front-door-fuzz.js';
import { root } from '../testing/fixtures.js';
import { BagClient } from '../testing/bag-client.js';
import { runFuzzCase, runRunCase } from '../testing/run-fuzz.js';
import { LoginThrottle } from './security.js';
import { FrontDoorLog } from './front-door-log.js';
import { startAgent, type AgentServer } from './server.js';
import { selfSignedCert } from '../testing/tls.js';

// The front door before login, each against a real agent on
// loopback, and a fuzz of it from raw sockets. Tests that need an address of their own (the
// caps and the throttle count per address) connect from another loopback address, 127.0.0.N.

const TOKEN = 'front-door-token-0123456789';
const auth = (token = TOKEN) => JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token });
const LIMIT = 64 << 10;

let agent: AgentServer;
const lines: string[] = [];
beforeAll(async () => {
  agent = await startAgent({
    devices: cpuDevices('h9'),
    token: TOKEN,
    port: 0,
    limits: { maxMessage: 1 << 20, loginTimeoutMs: 2000, maxPendingPerAddress: 6, maxPending: 12, loginFailuresFree: 3, loginBackoffMs: 60_000 },
    log: (l) => lines.push(l),
  });
});
afterAll(() => agent?.close());

/** A ws client's view of one connection: sends `messages` once open, resolves with the close. */
function closeOf(
  messages: (string | Buffer)[],
  opts: { headers?: Record<string, string>; path?: string; localAddress?: string } = {},
): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(agent.url + (opts.path ?? ''), { headers: opts.headers, localAddress: opts.localAddress, maxPayload: 1 << 20 });
    ws.on('open', () => messages.forEach((m) => ws.send(m)));
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    ws.on('error', () => {});
  });
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('1: close reasons are bounded and never carry what the sender wrote', () => {
  it('a 200-character Origin is refused with a fixed reason, and the agent lives on', async () => {
    // Fails on the old agent: the reason repeated the origin and ws threw (the process died).
    const evil = `https://${'e'.repeat(200)}.example`;
    expect(await closeOf([auth()], { headers: { Origin: evil } })).toEqual({
      code: CLOSE.origin,
      reason: 'origin not allowed: start the agent with --allow-origin and this origin',
    });
    expect(await login(agent.url, TOKEN)).toMatchObject({ type: 'welcome' });
  });

  it('a long type or version in the first message, or a long type after login, closes 4002 quoting at most 24 characters', async () => {
    const A = 'A'.repeat(300);
    const cases = [
      [JSON.stringify({ type: A })],
      [JSON.stringify({ type: 'auth', version: A, token: 'x' })],
      [JSON.stringify({ type: 'auth', version: [A, A], token: 'x' })],
      [auth(), JSON.stringify({ type: A })],
      [auth(), JSON.stringify({ type: '\u00e9'.repeat(300) })],
    ];
    for (const messages of cases) {
      const r = await closeOf(messages);
      expect(r.code).toBe(CLOSE.protocol);
      expect(bytes(r.reason)).toBeLessThanOrEqual(123);
      expect(r.reason).not.toMatch(/A{25}|\u00e9{25}/);
    }
    expect((await closeOf([JSON.stringify({ type: A })])).reason).toBe('malformed message: unknown type "AAAAAAAAAAAAAAAAAAAAAAAA..."');
    expect(await login(agent.url, TOKEN)).toMatchObject({ type: 'welcome' });
  });

  it("the validator names the field and never returns more than a few dozen of the sender's characters", () => {
    for (const raw of [
      { type: 'x'.repeat(1e5) },
      { type: 'auth', version: 'v'.repeat(1e5), token: 't' },
      { type: { deep: 'y'.repeat(1e5) } },
      { type: ['z'.repeat(1e5)] },
    ]) {
      const r = parseMessage(JSON.stringify(raw));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason.length).toBeLessThan(100);
    }
  });

  it('close reasons are cut to 123 bytes on a UTF-8 character boundary', () => {
    expect(closeReason('short')).toBe('short');
    for (const ch of ['a', '\u00e9', '\u4e2d', '\u{1F600}']) {
      const cut = closeReason(ch.repeat(200));
      expect(bytes(cut)).toBeLessThanOrEqual(123);
      expect(bytes(cut)).toBeGreaterThan(123 - bytes(ch));
      expect(cut).toBe(ch.repeat(cut.length / ch.length));
    }
  });
});

describe('2: a malformed request path is answered 400', () => {
  it('//[ and //a:99999, on the coordinator path and on /peer, get 400 and the agent lives on', async () => {
    // Fails on the old agent: `new URL` threw in the upgrade handler and the process died.
    for (const path of ['//[', '//a:99999', '//[/peer', '//a:99999/peer', 'http://agent/peer', `/${'p'.repeat(5000)}`]) {
      const r = await exchange(agent.port, [upgradeRequest(path)]);
      expect(statusLine(r.received), path).toBe('HTTP/1.1 400 Bad Request');
      expect(r.closed).toBe(true);
    }
    expect(await login(agent.url, TOKEN)).toMatchObject({ type: 'welcome' });
  });
});

describe('3: before login, messages are refused at the frame header beyond 64 KiB', () => {
  it('a frame announcing 300 MiB is refused before its bytes come, on both paths', async () => {
    // Fails on the old agent: ws took messages up to 1 GiB before login (maxPayload = maxFrame), and
    // /peer text up to 16 MiB; it waited for the bytes and closed only at the login timeout (4001).
    const huge = clientFrame({ opcode: 1, payload: Buffer.alloc(1024, 0x41), announced: 300 << 20 });
    const coordinator = await exchange(agent.port, [upgradeRequest('/'), huge], { keepOpen: true });
    expect(closeFrame(coordinator.received)?.code).toBe(1009);
    const oneMiB = clientFrame({ opcode: 1, payload: Buffer.alloc(1024, 0x41), announced: 1 << 20 });
    const peer = await exchange(agent.port, [upgradeRequest(PEER_PATH), oneMiB], { keepOpen: true });
    expect(closeFrame(peer.received)).toEqual({
      code: 1009,
      reason: `text message of ${1 << 20} bytes exceeds the limit of ${LIMIT}`,
      reasonBytes: expect.any(Number),
    });
  });

  it('a 65 KiB first message is refused; after login the configured limit holds', async () => {
    expect((await closeOf([JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token: 'x'.repeat(LIMIT) })])).code).toBe(1009);
    // After login: a 512 KiB ping is taken (limit 1 MiB here), 1 MiB + 1 is not.
    const pong = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(agent.url);
      ws.on('open', () => {
        ws.send(auth());
        ws.send(JSON.stringify({ type: 'ping', id: 1, t: 0, pad: 'p'.repeat(512 << 10) }));
      });
      ws.on('message', (d) => {
        const m = JSON.parse(String(d));
        if (m.type === 'pong') {
          resolve(m.type);
          ws.close();
        }
      });
      ws.on('close', (code) => reject(new Error(`closed ${code}`)));
    });
    expect(pong).toBe('pong');
    expect((await closeOf([auth(), 'x'.repeat((1 << 20) + 1)])).code).toBe(1009);
  });
});

describe('4: connections that have not logged in are capped and timed out', () => {
  it('beyond the per-address cap the agent answers 503; the others are closed at the login timeout; other addresses log in meanwhile', async () => {
    // Fails on the old agent: no cap (every connection was taken) and half-open requests stayed for minutes.
    const from = '127.0.0.40';
    const held = Array.from({ length: 6 }, () => exchange(agent.port, [Buffer.from('GET / HTTP/1.1\r\nHost: a\r\n')], { localAddress: from, keepOpen: true }));
    // The connections are counted from the TCP connect: wait until the cap shows.
    let over = await exchange(agent.port, [], { localAddress: from, keepOpen: true });
    expect(statusLine(over.received)).toBe('HTTP/1.1 503 Service Unavailable');
    expect(await login(agent.url, TOKEN, '127.0.0.41')).toMatchObject({ type: 'welcome' });
    const ends = await Promise.all(held);
    expect(ends.every((e) => e.closed && e.received.length === 0)).toBe(true);
    expect(await login(agent.url, TOKEN, from)).toMatchObject({ type: 'welcome' });
    // And in total: 12 from two addresses, then a third is refused too.
    const many = [...Array.from({ length: 6 }, () => '127.0.0.42'), ...Array.from({ length: 6 }, () => '127.0.0.43')].map((a) =>
      exchange(agent.port, [Buffer.from('GET')], { localAddress: a, keepOpen: true }),
    );
    over = await exchange(agent.port, [], { localAddress: '127.0.0.44', keepOpen: true });
    expect(statusLine(over.received)).toBe('HTTP/1.1 503 Service Unavailable');
    await Promise.all(many);
    expect(await login(agent.url, TOKEN, '127.0.0.44')).toMatchObject({ type: 'welcome' });
  });

  it('on a TLS port, a connection that never starts TLS is closed at the login timeout, and a logged-in one outlives it', async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'pipeloom-tls-'));
    const { cert, key } = selfSignedCert(dir);
    const tls = await startAgent({ devices: cpuDevices('h4'), token: TOKEN, port: 0, cert, key, limits: { loginTimeoutMs: 500 } });
    try {
      const ws = new WebSocket(tls.url, { ca: readFileSync(cert) });
      const replies: string[] = [];
      let wake = () => {};
      ws.on('message', (d) => (replies.push(JSON.parse(String(d)).type), wake()));
      const reply = (type: string) => new Promise<void>((r) => ((wake = () => replies.includes(type) && r()), wake()));
      ws.on('open', () => ws.send(auth()));
      await reply('welcome');
      // A raw TCP connection, no TLS: closed at the deadline, after which the wss login still answers.
      expect((await exchange(tls.port, [], { keepOpen: true })).closed).toBe(true);
      ws.send(JSON.stringify({ type: 'ping', id: 1, t: 0 }));
      await reply('pong');
      ws.close();
    } finally {
      await tls.close();
    }
  });

  it('an upgraded connection that never logs in is closed at the login timeout with the reason', async () => {
    expect(await closeOf([], { localAddress: '127.0.0.45' })).toEqual({ code: CLOSE.auth, reason: 'no token: the first message must authenticate' });
    expect(await closeOf([], { localAddress: '127.0.0.45', path: PEER_PATH })).toEqual({
      code: CLOSE.auth,
      reason: 'no hello: the first message must be "peer-hello"',
    });
  });
});

describe('5: failed logins slow their address down; the token is long and need not be on the command line', () => {
  it('after 3 free failures and one more, an address waits before any token is checked; other addresses do not', async () => {
    // Fails on the old agent: every token was checked at once (2,000 tries in 1.9 s).
    const from = '127.0.0.50';
    for (let i = 0; i < 4; i++)
      expect(await closeOf([auth(`wrong-token-${i}-0123456789`)], { localAddress: from })).toEqual({ code: CLOSE.auth, reason: 'invalid token' });
    const r = await closeOf([auth()], { localAddress: from });
    expect(r.code).toBe(CLOSE.rate);
    expect(r.reason).toMatch(/^too many failed logins from this address: try again in \d+ s$/);
    expect(await login(agent.url, TOKEN, '127.0.0.51')).toMatchObject({ type: 'welcome' });
  });

  it('the wait doubles per failure up to the maximum, and a success forgets the address', () => {
    const t = new LoginThrottle({ loginFailuresFree: 2, loginBackoffMs: 100, loginBackoffMaxMs: 1000 });
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      t.failed('a', 0);
      waits.push(t.wait('a', 0));
    }
    expect(waits).toEqual([0, 0, 100, 200, 400, 800, 1000, 1000]);
    expect(t.wait('b', 0)).toBe(0);
    t.succeeded('a');
    expect(t.wait('a', 0)).toBe(0);
  });

  const BIN = fileURLToPath(new URL('../../bin/pipeloom.js', import.meta.url));
  const agentCli = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; stderr: string; url?: string; kill: () => void }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'agent', '--name', 'h7', '--port', '0', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PIPELOOM_TOKEN: '', ...env },
      });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      createInterface({ input: child.stdout! }).on('line', (l) => {
        const m = /^listening (\S+)/.exec(l);
        if (m) resolve({ code: null, stderr, url: m[1], kill: () => child.kill('SIGTERM') });
      });
      child.once('exit', (code) => resolve({ code, stderr, kill: () => {} }));
    });

  it('pipeloom agent refuses a token under 16 characters, from the flag, the file or the environment, saying how to make one', async () => {
    // Fails on the old agent, which served with any token.
    const dir = mkdtempSync(join(os.tmpdir(), 'pipeloom-token-'));
    writeFileSync(join(dir, 'short'), 'abc\n', { mode: 0o600 });
    for (const [args, env, from] of [
      [['--token', 'short'], {}, '--token'],
      [['--token-file', join(dir, 'short')], {}, `--token-file ${join(dir, 'short')}`],
      [[], { PIPELOOM_TOKEN: 'short' }, 'PIPELOOM_TOKEN'],
    ] as const) {
      const r = await agentCli([...args], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`the token from ${from} has`);
      expect(r.stderr).toContain('it needs at least 16 (make one with: openssl rand -hex 16)');
    }
  });

  it('pipeloom agent --token-file serves with the token in the file, which is not on its command line', async () => {
    // Fails on the old agent: --token-file was an unknown option.
    const dir = mkdtempSync(join(os.tmpdir(), 'pipeloom-token-'));
    const file = join(dir, 'token');
    writeFileSync(file, 'file-token-0123456789abcdef\n');
    chmodSync(file, 0o600);
    const r = await agentCli(['--token-file', file]);
    try {
      expect(r.url, r.stderr).toBeDefined();
      expect(await login(r.url!, 'file-token-0123456789abcdef')).toMatchObject({ type: 'welcome', host: 'h7' });
    } finally {
      r.kill();
    }
  });
});

describe('11: the front door logs logins and refusals with time and level, at a bounded rate', () => {
  it('logs a login, an origin refusal and a malformed close; a flood of one kind is summed up', async () => {
    // Fails on the old agent: it logged only invalid tokens, without time or level, one line each.
    const got: string[] = [];
    let wake = () => {};
    const quiet = await startAgent({
      devices: cpuDevices('h6'),
      token: TOKEN,
      port: 0,
      limits: { logBurst: 3, logWindowMs: 300 },
      log: (l) => (got.push(l), wake()),
    });
    const until = (ok: () => boolean) => new Promise<void>((r) => ((wake = () => ok() && r()), wake()));
    try {
      await login(quiet.url, TOKEN);
      const ws = new WebSocket(quiet.url, { headers: { Origin: 'https://evil.example/"quoted"' } });
      ws.on('error', () => {});
      await new Promise((r) => ws.on('close', r));
      for (let i = 0; i < 10; i++) {
        const bad = new WebSocket(quiet.url);
        bad.on('open', () => bad.send('not json'));
        bad.on('error', () => {});
        await new Promise((r) => bad.on('close', r));
      }
      // Ten closes in all: logged, or counted in a window's summing-up line (on a loaded machine they may span several 0.3 s windows).
      const notJson = () => got.filter((l) => l.includes('before login: malformed message: not JSON')).length;
      const leftOut = () => got.reduce((n, l) => n + Number(/ warn (\d+) more "malformed" lines left out in 0.3 s$/.exec(l)?.[1] ?? 0), 0);
      await until(() => notJson() + leftOut() === 10);
      const stamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (info|warn|error) /;
      expect(
        got.every((l) => stamp.test(l)),
        got.join('\n'),
      ).toBe(true);
      expect(got.some((l) => /info coordinator logged in from 127\.0\.0\.1$/.test(l))).toBe(true);
      expect(
        got.some((l) =>
          l.includes('warn refused a browser connection from 127.0.0.1 to the coordinator path: origin "https://evil.example/\\"quoted\\"" is not allowed'),
        ),
      ).toBe(true);
      expect(leftOut()).toBeGreaterThan(0);
      // At most the burst (3) per window: each window that left lines out summed them up in one line.
      expect(notJson()).toBeLessThanOrEqual(3 * (got.filter((l) => l.includes('more "malformed" lines left out')).length + 1));
    } finally {
      await quiet.close();
    }
  });

  it('the log keeps at most the burst per window and counts the rest', () => {
    const out: string[] = [];
    let now = 0;
    const log = new FrontDoorLog(
      (l) => out.push(l),
      { logBurst: 2, logWindowMs: 1000 },
      () => now,
    );
    for (let i = 0; i < 5; i++) log.line('warn', 'x', `x${i}`);
    log.line('info', 'y', 'y0');
    now = 1500;
    log.line('warn', 'x', 'x5');
    expect(out.map((l) => l.slice(25))).toEqual(['warn x0', 'warn x1', 'info y0', 'warn 3 more "x" lines left out in 1 s', 'warn x5']);
    expect(out[0].slice(0, 24)).toBe('1970-01-01T00:00:00.000Z');
  });

  it('docs/agents.md names the protocol version the code speaks', () => {
    // Fails on the old docs: "Protocol (version 1)" while the code spoke 2.
    const docs = readFileSync(`${root}docs/agents.md`, 'utf8');
    expect(/## Protocol \(version (\d+)\)/.exec(docs)?.[1]).toBe(String(PROTOCOL_VERSION));
  });
});

describe('12: every log line is escaped and rate-limited; pings are bounded', () => {
  const printable = /^[\x20-\x7e]*$/;
  const stamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (info|warn|error) /;
  const nodes = [{ id: 'phantom', kernel: 'mlem.phantom', params: { size: 8, angles: 4 } }];
  /** An agent of its own, its log lines kept; `until` waits for a line that matches. */
  async function logged(host: string, limits: { logBurst: number; logWindowMs: number }) {
    const got: string[] = [];
    let wake = () => {};
    const a = await startAgent({ devices: cpuDevices(host), token: TOKEN, port: 0, limits, log: (l) => (got.push(l), wake()) });
    const until = (ok: () => boolean) => new Promise<void>((r) => ((wake = () => ok() && r()), wake()));
    return { a, got, until };
  }

  it('a run id or stop reason with a line break, NUL or bidi override is escaped: one line each, printable ASCII only', async () => {
    // Fails on the old agent: "run <id> ended" wrote the run id raw, so its line break forged a login line and its NUL reached the log.
    const { a, got, until } = await logged('h7', { logBurst: 10, logWindowMs: 60_000 });
    try {
      const forged = 'r1\n2026-01-01T00:00:00.000Z info logged in from 6.6.6.6\u0000\u202e';
      const c = await BagClient.connect(a.url, TOKEN);
      c.send({ type: 'bag-deploy', runId: forged, secret: '0123456789abcdef0123', hosts: [{ id: 'h7', url: a.url }], nodes });
      await c.next((m) => m.type === 'deployed');
      c.send({ type: 'stop', runId: forged, reason: 'over\r\nforged\u0000' });
      await c.next((m) => m.type === 'stopped');
      c.close();
      await until(() => got.some((l) => l.includes(' ended: ')));
      const ended = got.find((l) => l.includes(' ended: '))!;
      expect(ended).toMatch(stamp);
      expect(ended).toContain('info run "r1\\n2026-01-01T00:00:00.000Z info logged in from 6.6.6.6\\u0000\\u202e" ended: over\\u000d\\u000aforged\\u0000');
      for (const l of got) {
        expect(l).toMatch(stamp);
        expect(l).toMatch(printable);
      }
      expect(got.filter((l) => l.includes('6.6.6.6'))).toHaveLength(1);
    } finally {
      await a.close();
    }
  });

  it("run lines are rate-limited like the door's: a flood of forged run ids logs the burst and sums up the rest", async () => {
    // Fails on the old agent: the run host wrote its lines straight to the log, one per replaced deploy.
    const { a, got, until } = await logged('h8', { logBurst: 3, logWindowMs: 300 });
    try {
      const c = await BagClient.connect(a.url, TOKEN);
      for (let i = 0; i < 10; i++) {
        c.send({ type: 'bag-deploy', runId: `r${i}\n${'forged '.repeat(i)}`, secret: '0123456789abcdef0123', hosts: [{ id: 'h8', url: a.url }], nodes });
        await c.next((m) => m.type === 'deployed');
      }
      // A stop naming no run of this coordinator is answered without the sender's string when it is longer than a run id may be.
      c.send({ type: 'stop', runId: 'Q'.repeat(300), reason: 'over' });
      expect(await c.next((m) => m.type === 'stopped')).toEqual({ type: 'stopped', runId: '', freed: false });
      c.send({ type: 'stop', runId: 'r9\nforged forged forged forged forged forged forged forged forged ', reason: 'over' });
      await c.next((m) => m.type === 'stopped');
      c.close();
      // Ten runs ended (nine replaced, one stopped): each logged, or counted in a window's summing-up line.
      const ended = () => got.filter((l) => / ended: /.test(l)).length;
      const summaries = () => got.filter((l) => l.includes('more "run-ended" lines left out'));
      const leftOut = () => summaries().reduce((n, l) => n + Number(/ info (\d+) more "run-ended" lines left out in 0.3 s$/.exec(l)?.[1] ?? 0), 0);
      await until(() => ended() + leftOut() === 10);
      expect(leftOut()).toBeGreaterThan(0);
      expect(ended()).toBeLessThanOrEqual(3 * (summaries().length + 1));
      for (const l of got) expect(l).toMatch(printable);
    } finally {
      await a.close();
    }
  });

  it('a 15 MiB ping is refused with a short reason, never echoed; a good ping is answered with its own id and t', async () => {
    // Fails on the old agent: it answered a pong carrying the 15 MiB id back.
    const { a } = await logged('h4', { logBurst: 10, logWindowMs: 1000 });
    try {
      const c = await BagClient.connect(a.url, TOKEN);
      c.send({ type: 'ping', id: 3, t: 1.25 });
      expect(await c.next((m) => m.type === 'pong')).toMatchObject({ type: 'pong', id: 3, t: 1.25 });
      c.send({ type: 'ping', id: 'x'.repeat(15 << 20), t: 0 });
      const closed = await c.whenClosed(60_000);
      expect(closed.code).toBe(CLOSE.protocol);
      expect(closed.reason).toBe('malformed message: "ping" id must be a safe integer, not "xxxxxxxxxxxxxxxxxxxxxxxx..."');
      expect(c.all.filter((m) => m.type === 'pong')).toHaveLength(1);
      const d = await BagClient.connect(a.url, TOKEN);
      d.send({ type: 'ping', id: 4, t: 'y'.repeat(15 << 20) });
      expect((await d.whenClosed(60_000)).reason).toBe('malformed message: "ping" t must be a finite number, not "yyyyyyyyyyyyyyyyyyyyyyyy..."');
      expect(d.all.some((m) => m.type === 'pong')).toBe(false);
    } finally {
      await a.close();
    }
  }, 120_000);
});

describe('front-door fuzz', () => {
  it('after any request, frames and splits a stranger sends, the agent closes that connection with a bounded reason and welcomes a correct login', async () => {
    // A new seed each run; `npm run bench:fuzz` sweeps 10,000 cases and more.
    const runs = Number(process.env.FUZZ_RUNS ?? 1500);
    // An agent of its own with the login throttle off: wrong tokens are among the cases, and each case is followed by a correct login.
    const fuzzed = await startAgent({
      devices: cpuDevices('h5'),
      token: TOKEN,
      port: 0,
      limits: { loginFailuresFree: Number.MAX_SAFE_INTEGER, loginTimeoutMs: 2000 },
      handshakeTimeout: 1000,
    });
    const t0 = performance.now();
    try {
      await fc.assert(
        fc.asyncProperty(fuzzCase(TOKEN, LIMIT), (c) => runCase(fuzzed.url, fuzzed.port, TOKEN, c, 5000)),
        { numRuns: runs, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
      );
    } finally {
      await fuzzed.close();
    }
    console.log(`front-door fuzz: ${runs} cases in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }, 300_000);

  it('after login, deploy and start of a real run, its messages mutated (drops, type swaps, huge numbers, long strings, replays, other run ids, binary frames) never crash or hang the agent', async () => {
    const runs = Number(process.env.FUZZ_RUN_CASES ?? 6);
    const fuzzed = await startAgent({ devices: cpuDevices('h3'), token: TOKEN, port: 0, limits: { messagesPerSecond: 100_000 } });
    const answers: Record<string, number> = {};
    try {
      await fc.assert(
        fc.asyncProperty(runFuzzCase('run'), async (rc) => {
          // Each case ends with a fresh login and /healthz answered while the run goes (runRunCase).
          const r = await runRunCase({ url: fuzzed.url, port: fuzzed.port, token: TOKEN, host: 'h3' }, rc);
          for (const [k, n] of Object.entries({ ...r.answers, [r.end]: 1 })) answers[k] = (answers[k] ?? 0) + n;
        }),
        { numRuns: runs, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 11, endOnFailure: true },
      );
    } finally {
      await fuzzed.close();
    }
    console.log(`run fuzz after start: ${runs} cases; ${JSON.stringify(answers)}`);
    // The runs fired under the garbage: each case saw trace batches.
    expect(answers.trace).toBeGreaterThanOrEqual(runs);
  }, 300_000);
});
