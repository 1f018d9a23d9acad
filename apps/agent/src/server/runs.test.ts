import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Coordinator, type SocketLike, PROTOCOL_VERSION, type FromAgent, type ToAgent } from '@pipeloom/core';
import { nodeClock } from '../cli/agents.js';
import { spawnLocalAgents } from '../local/spawn.js';
import { acceptUpgrade, FrameSocket } from '../peer/frames.js';
import { compileOrThrow, connect, piic } from '../testing/fixtures.js';
import { startAgent, type AgentServer } from './server.js';
import { selfSignedCert } from '../testing/tls.js';

// Who may touch a run: its coordinator's connection, and peer agents that prove the run's keys.

const longRun = () => compileOrThrow(piic({ iterations: 1_000_000, size: 32 }), true);

/** A raw, authenticated coordinator connection: send messages, read the next one of a type. */
async function rawCoordinator(url: string, token: string) {
  const ws = new WebSocket(url);
  const inbox: FromAgent[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (d) => {
    inbox.push(JSON.parse(String(d)) as FromAgent);
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = async <T extends FromAgent['type']>(type: T): Promise<Extract<FromAgent, { type: T }>> => {
    for (;;) {
      const i = inbox.findIndex((m) => m.type === type);
      if (i >= 0) return inbox.splice(i, 1)[0] as Extract<FromAgent, { type: T }>;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const send = (m: ToAgent) => ws.send(JSON.stringify(m));
  send({ type: 'auth', version: PROTOCOL_VERSION, token });
  await next('welcome');
  return { send, next, close: () => ws.close() };
}

describe('a run belongs to the coordinator that deployed it', () => {
  it('another coordinator with the token can neither stop, start nor replace it, and is not told its id', async () => {
    const local = await spawnLocalAgents(['h0', 'h1']);
    try {
      const owner = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      let cycle = 0;
      let progressed: (() => void) | null = null;
      const handle = owner.run(longRun(), {
        iterations: 1_000_000,
        onProgress: (p) => {
          cycle = p.cycle;
          progressed?.();
        },
      });
      const until = (c: number) => new Promise<void>((resolve) => (progressed = () => cycle > c && resolve()));
      await until(5);

      const other = await rawCoordinator(local.agents[0].url, local.token);
      other.send({ type: 'stop', runId: handle.runId, reason: 'hijack' });
      expect(await other.next('stopped')).toMatchObject({ freed: false });
      other.send({ type: 'start', runId: handle.runId });
      expect((await other.next('error')).message).toBe('no run of this coordinator is deployed on h0');
      other.send({
        type: 'deploy',
        runId: 'mine',
        secret: 'x'.repeat(32),
        programs: [],
        hosts: [{ id: 'h0', url: local.agents[0].url }],
        iterations: 1,
        cycles: 1,
        pes: {},
        buffers: {},
      });
      const busy = (await other.next('error')).message;
      expect(busy).toContain('busy with another coordinator');
      expect(busy).not.toContain(handle.runId);
      other.close();

      // The owner's run goes on, and its own stop is what ends it.
      const at = cycle;
      await until(at + 10);
      handle.stop('done watching');
      const r = await handle.done;
      owner.close();
      expect(r.failure?.message).toBe('done watching');
    } finally {
      await local.stop();
    }
  });
});

describe('peer links', () => {
  const TOKEN = 'runs-test-token-0123456789';
  let agent: AgentServer;
  let fake: Server;
  let fakeUrl = '';
  /** What the fake peer received, and how it answers a hello. */
  let received = Buffer.alloc(0);
  let answer: (frames: FrameSocket, hello: { nonce: string }) => void = () => {};

  beforeAll(async () => {
    agent = await startAgent({
      devices: { host: 'h0', pes: [{ id: 'cpu@h0', kind: 'cpu', name: 'cpu', vendor: os.arch(), memory: 1 << 30 }], gpus: new Map() },
      token: TOKEN,
      port: 0,
      handshakeTimeout: 1000,
    });
    // An impostor at the address a coordinator names for h1: it records every byte it is sent.
    fake = createServer();
    fake.on('upgrade', (req, socket, head) => {
      if (!acceptUpgrade(req, socket)) return;
      socket.on('data', (d: Buffer) => (received = Buffer.concat([received, d])));
      const frames = new FrameSocket(socket, head, 'server', { maxFrame: 1 << 20, maxText: 1 << 16 });
      frames.handlers = { ...frames.handlers, text: (t) => answer(frames, JSON.parse(t)) };
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', () => r()));
    fakeUrl = `ws://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await agent?.close();
    fake?.closeAllConnections();
    await new Promise<void>((r) => fake?.close(() => r()));
  });

  /** Deploys a run of hosts h0 (the agent) and h1 (at `url`) and returns the agent's error. */
  async function deployWithPeer(url: string): Promise<string> {
    received = Buffer.alloc(0);
    const c = await rawCoordinator(agent.url, TOKEN);
    try {
      c.send({
        type: 'deploy',
        runId: 'r1',
        secret: 's'.repeat(32),
        programs: [],
        hosts: [
          { id: 'h0', url: agent.url },
          { id: 'h1', url },
        ],
        iterations: 1,
        cycles: 1,
        pes: {},
        buffers: {},
      });
      return (await c.next('error')).message;
    } finally {
      c.close();
    }
  }

  it("an agent never sends the token to the peer it dials, and refuses one that cannot prove the run's keys", async () => {
    answer = (frames, hello) =>
      frames.sendText(JSON.stringify({ type: 'peer-challenge', host: 'h1', nonce: 'cd'.repeat(16), proof: 'ef'.repeat(32), echo: hello.nonce }));
    const error = await deployWithPeer(fakeUrl);
    expect(error).toContain('cannot reach peer agent h1');
    expect(error).toContain('invalid proof');
    // On the old agent the first bytes it sent a peer carried the token in clear.
    expect(received.length).toBeGreaterThan(0);
    expect(received.includes(Buffer.from(TOKEN))).toBe(false);
  });

  it('refuses a peer whose name is not the host it was dialled for', async () => {
    answer = (frames) => frames.sendText(JSON.stringify({ type: 'peer-challenge', host: 'h7', nonce: 'cd'.repeat(16), proof: 'ef'.repeat(32) }));
    expect(await deployWithPeer(fakeUrl)).toContain('the agent at this address is not host h1');
  });

  it('takes only small messages from the peer it dials until that peer has proved itself', async () => {
    answer = (frames) => frames.sendText('x'.repeat(1 << 20));
    expect(await deployWithPeer(fakeUrl)).toContain('exceeds the limit of 65536');
  });

  it("gives up on a peer that never answers, within the handshake's time", async () => {
    answer = () => {};
    expect(await deployWithPeer(fakeUrl)).toContain('no answer to the peer handshake');
  });

  it('dials only ws:// and wss:// addresses', async () => {
    expect(await deployWithPeer('http://127.0.0.1:9/x')).toContain('peer URLs are ws:// or wss://');
    expect(await deployWithPeer('not a url')).toContain('not a URL');
  });

  it('answers again after all of that', async () => {
    const c = await rawCoordinator(agent.url, TOKEN);
    c.send({ type: 'ping', id: 1, t: 0 });
    expect(await c.next('pong')).toMatchObject({ id: 1 });
    c.close();
  });
});

describe('peer heartbeat', () => {
  it('a peer agent that freezes mid-run (its socket still open) fails the run naming it, from the side that never dialled too', async () => {
    let failedAt = 0;
    const local = await spawnLocalAgents(['h0', 'h1'], {
      log: (host, line) => host === 'h1' && line.includes('ended: run failed') && (failedAt ||= performance.now()),
    });
    const frozen = local.agents[0].process;
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      let frozeAt = 0;
      const handle = c.run(longRun(), {
        iterations: 1_000_000,
        onProgress: (p) => {
          if (p.cycle > 5 && !frozeAt) {
            frozeAt = performance.now();
            // h0 dialled h1: h1 is the accepting side, which the old agent never told about a dead link.
            frozen.kill('SIGSTOP');
          }
        },
      });
      const r = await handle.done;
      c.close();
      expect(r.ok).toBe(false);
      expect(r.failure?.host).toBe('h0');
      expect(r.failure?.message).toMatch(/lost the link from h1 to host h0 \(no heartbeat for 1\.5 s\)/);
      console.log(`peer heartbeat: h1 failed the run ${Math.round(failedAt - frozeAt)} ms after h0 froze`);
    } finally {
      frozen.kill('SIGCONT');
      await local.stop();
    }
  });
});

describe('peer links between agents that serve TLS', () => {
  it('a two-host run goes over wss between the agents, values exact', async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'pipeloom-peer-tls-'));
    const { cert, key } = selfSignedCert(dir);
    // Each agent trusts the other's certificate as an operator's private CA would be trusted.
    const local = await spawnLocalAgents(['h0', 'h1'], { args: ['--cert', cert, '--key', key], env: { NODE_EXTRA_CA_CERTS: cert } });
    try {
      expect(local.agents.every((a) => a.url.startsWith('wss://'))).toBe(true);
      const ca = readFileSync(cert);
      const c = await Coordinator.connect(
        local.agents.map((a) => a.url),
        { token: local.token, connect: (u) => new WebSocket(u, { ca, maxPayload: 1 << 30 }) as unknown as SocketLike, clock: nodeClock },
      );
      const r = await c.run(compileOrThrow(piic({ iterations: 8 }), true), { iterations: 8 }).done;
      c.close();
      expect(r.failure).toBeUndefined();
      expect(r.ok).toBe(true);
      expect(r.events.some((e) => e.kind === 'transfer' && e.host === 'h1')).toBe(true);
    } finally {
      await local.stop();
    }
  });
});
