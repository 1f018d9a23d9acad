import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CLOSE, PROTOCOL_VERSION } from '@pipeloom/core';
import { connect } from '../testing/fixtures.js';
import { originAllowed, RateLimit, tokenMatches } from './security.js';
import { startAgent, type AgentServer } from './server.js';
import { selfSignedCert } from '../testing/tls.js';

describe('token and origin checks', () => {
  it('matches only the exact token, whatever the lengths', () => {
    expect(tokenMatches('secret', 'secret')).toBe(true);
    expect(tokenMatches('secret', 'secreT')).toBe(false);
    expect(tokenMatches('secret', 'secret-and-more')).toBe(false);
    expect(tokenMatches('secret', '')).toBe(false);
    expect(tokenMatches('secret', 42)).toBe(false);
  });

  it('allows loopback browser origins on any port by default patterns, and no other', () => {
    const d = ['http://127.0.0.1:*', 'http://localhost:*'];
    expect(originAllowed('http://localhost:5173', d)).toBe(true);
    expect(originAllowed('http://127.0.0.1:8080', d)).toBe(true);
    expect(originAllowed('http://localhost.evil.example:80', d)).toBe(false);
    expect(originAllowed('https://evil.example', d)).toBe(false);
    expect(originAllowed(undefined, d)).toBe(true);
    expect(originAllowed('https://app.example', ['https://app.example'])).toBe(true);
  });

  it('counts messages per second', () => {
    const r = new RateLimit(3);
    expect([r.take(0), r.take(10), r.take(20), r.take(30)]).toEqual([true, true, true, false]);
    expect(r.take(1100)).toBe(true);
  });
});

// An in-process agent serving only a CPU: the front door needs no GPU.
let agent: AgentServer;
const TOKEN = 'front-door-token';
beforeAll(async () => {
  agent = await startAgent({
    devices: { host: 'h9', pes: [{ id: 'cpu@h9', kind: 'cpu', name: 'cpu', vendor: os.arch(), memory: 1 << 30 }], gpus: new Map() },
    token: TOKEN,
    port: 0,
    limits: { maxMessage: 4096, messagesPerSecond: 50 },
    authTimeout: 500,
    handshakeTimeout: 500,
  });
});
afterAll(() => agent?.close());

/** Opens a raw socket, sends `messages`, resolves with the close code and reason. */
function closeOf(messages: (string | Buffer)[], headers?: Record<string, string>, path = ''): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(agent.url + path, { headers });
    ws.on('open', () => messages.forEach((m) => ws.send(m)));
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    ws.on('error', () => {});
  });
}
const auth = JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token: TOKEN });

describe('agent front door', () => {
  it('binds loopback unless told otherwise', () => {
    expect(agent.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses a wrong token with a clear reason', async () => {
    expect(await closeOf([JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token: 'nope' })])).toEqual({ code: CLOSE.auth, reason: 'invalid token' });
  });

  it('refuses a connection that never authenticates', async () => {
    expect(await closeOf([])).toEqual({ code: CLOSE.auth, reason: 'no token: the first message must authenticate' });
  });

  it('refuses a browser origin outside the allow-list, naming the flag', async () => {
    const r = await closeOf([auth], { Origin: 'https://evil.example' });
    // The reason is a fixed text (never the sender's bytes); the agent's log names the origin.
    expect(r).toEqual({ code: CLOSE.origin, reason: 'origin not allowed: start the agent with --allow-origin and this origin' });
  });

  it('a malformed message closes only that connection, with a reason', async () => {
    const c = await connect([agent.url], TOKEN);
    try {
      expect(await closeOf([auth, '{"type": "deploy"'])).toEqual({ code: CLOSE.protocol, reason: 'malformed message: not JSON' });
      expect(await closeOf([auth, JSON.stringify({ type: 'launch-missiles' })])).toEqual({
        code: CLOSE.protocol,
        reason: 'malformed message: unknown type "launch-missiles"',
      });
      expect(await closeOf([auth, JSON.stringify({ type: 'deploy', runId: 'x' })])).toMatchObject({
        code: CLOSE.protocol,
        reason: expect.stringContaining('lacks'),
      });
      // The other connection still works.
      expect(c.agents[0].host).toBe('h9');
      const again = await connect([agent.url], TOKEN);
      again.close();
    } finally {
      c.close();
    }
  });

  it('enforces the message size and rate limits per socket', async () => {
    // Refused by the transport at the frame header (ws maxPayload): WebSocket's own "too big".
    expect((await closeOf([auth, 'x'.repeat(5000)])).code).toBe(1009);
    const ping = JSON.stringify({ type: 'ping', id: 1, t: 0 });
    expect(await closeOf([auth, ...Array.from({ length: 80 }, () => ping)])).toEqual({ code: CLOSE.rate, reason: 'more than 50 messages per second' });
  });
});

describe('TLS', () => {
  it('serves wss:// with --cert/--key and authenticates over it', async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'pipeloom-tls-'));
    const { cert, key } = selfSignedCert(dir);
    const tls = await startAgent({
      devices: { host: 'h8', pes: [{ id: 'cpu@h8', kind: 'cpu', name: 'cpu', vendor: os.arch(), memory: 1 << 30 }], gpus: new Map() },
      token: TOKEN,
      port: 0,
      cert,
      key,
    });
    try {
      expect(tls.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/);
      const welcome = await new Promise<string>((resolve, reject) => {
        const ws = new WebSocket(tls.url, { ca: readFileSync(cert) });
        ws.on('open', () => ws.send(auth));
        ws.on('message', (d) => {
          resolve(String(d));
          ws.close();
        });
        ws.on('error', reject);
      });
      expect(JSON.parse(welcome)).toMatchObject({ type: 'welcome', host: 'h8' });
      // A client that does not trust the certificate cannot connect.
      await expect(
        new Promise((resolve, reject) => {
          const ws = new WebSocket(tls.url);
          ws.on('open', resolve);
          ws.on('error', reject);
        }),
      ).rejects.toThrow(/self[- ]signed/);
    } finally {
      await tls.close();
    }
  });
});

describe("peer links (/peer, the agent's own framing)", () => {
  const hello = (runId = 'r1') => JSON.stringify({ type: 'peer-hello', version: PROTOCOL_VERSION, host: 'h1', runId, nonce: 'ab'.repeat(16) });
  const peer = (messages: (string | Buffer)[], headers?: Record<string, string>) => closeOf(messages, headers, '/peer');
  const notHello = { code: CLOSE.auth, reason: 'not authenticated: the first message must be "peer-hello"' };

  it('refuse no hello, and any first message but peer-hello, with the reason', async () => {
    expect(await peer([])).toEqual({ code: CLOSE.auth, reason: 'no hello: the first message must be "peer-hello"' });
    expect(await peer([auth])).toEqual(notHello);
    expect(await peer([Buffer.from([1, 2, 3])])).toEqual(notHello);
    // The token is never what a peer sends: the old token-in-clear login is refused.
    expect(await peer([JSON.stringify({ type: 'peer-auth', version: PROTOCOL_VERSION, token: TOKEN, host: 'h1', runId: 'r1' })])).toEqual(notHello);
    expect(await peer([JSON.stringify({ type: 'peer-hello', version: PROTOCOL_VERSION, host: 'h1', runId: 'r1', nonce: 'short' })])).toEqual({
      code: CLOSE.protocol,
      reason: 'malformed peer-hello',
    });
    // And the coordinator path takes no peer messages.
    expect(await closeOf([hello()])).toEqual({ code: CLOSE.auth, reason: 'not authenticated: the first message must be "auth"' });
  });

  it('refuse a browser origin at the handshake', async () => {
    const refused = await new Promise<string>((resolve) => {
      const ws = new WebSocket(`${agent.url}/peer`, { headers: { Origin: 'https://evil.example' } });
      ws.on('error', (e) => resolve(e.message));
      ws.on('open', () => resolve('opened'));
    });
    expect(refused).toMatch(/403/);
  });

  it('close a hello for a run this agent never gets, once the handshake time is up', async () => {
    // Fails on the old agent, which kept such links forever (a socket leaked per login).
    expect(await peer([hello('no-such-run')])).toEqual({ code: CLOSE.auth, reason: 'no such run on this agent' });
  });
});
