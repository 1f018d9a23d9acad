import { createServer as createHttp, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { CLOSE, parseMessage, PROTOCOL_VERSION, type FromAgent, type PeerMessage, type ToAgent } from '@pipeloom/core/coordinator/protocol';
import type { Devices } from '../devices/discover.js';
import { acceptUpgrade, dialUpgrade, FrameSocket, PEER_PATH } from '../peer/frames.js';
import { PeerLink } from '../peer/link.js';
import { processMemory, Run } from '../runtime/run.js';
import { DEFAULT_LIMITS, DEFAULT_ORIGINS, originAllowed, RateLimit, tokenMatches, type Limits } from './security.js';
import { customWgslRefusal } from './wgsl-policy.js';

// The agent's WebSocket server: coordinators and peer agents connect here. One run at a time.

export interface AgentOptions {
  devices: Devices;
  token: string;
  port: number;
  /** Interface to bind; 127.0.0.1 unless told otherwise. */
  bind?: string;
  /** TLS (wss): PEM file paths. */
  cert?: string;
  key?: string;
  allowOrigins?: string[];
  limits?: Partial<Limits>;
  /** Caps host-to-host sends at this many bytes per second (0 = none). */
  linkRate?: number;
  /** Milliseconds a new connection has to authenticate. */
  authTimeout?: number;
  /** Runs `custom.wgsl` nodes (WGSL written in the document); refused unless set (--allow-wgsl). */
  allowWgsl?: boolean;
  /** Time limit of one firing in ms (default DEFAULT_KERNEL_TIMEOUT_MS; 0 = none). */
  kernelTimeoutMs?: number;
  /**
   * A firing overran the limit and its PE thread is held by the kernel: only a new process
   * gets that PE back. Called once the run is freed; the CLI exits so a supervisor restarts
   * it. Until then (or without it) this agent refuses new runs, saying why.
   */
  onStuck?: (reason: string) => void;
  log?: (line: string) => void;
}

export interface AgentServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

type Deploy = Extract<ToAgent, { type: 'deploy' }>;

interface Active {
  runId: string;
  coordinator: WebSocket;
  run?: Run;
  links: Map<string, PeerLink>;
  finished: boolean;
}

export async function startAgent(opts: AgentOptions): Promise<AgentServer> {
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  const origins = opts.allowOrigins?.length ? opts.allowOrigins : DEFAULT_ORIGINS;
  const log = opts.log ?? (() => {});
  const host = opts.devices.host;
  const tls = Boolean(opts.cert && opts.key);
  const server: Server = tls ? createHttps({ cert: readFileSync(opts.cert!), key: readFileSync(opts.key!) }) : createHttp();
  // No per-message deflate (ws's server default, stated): buffer data does not pay for deflating.
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxFrame, perMessageDeflate: false });
  // Peer agents dial PEER_PATH and get the agent's own framing (peer/frames.ts); the rest is ws.
  const peerSockets = new Set<FrameSocket>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(req.url ?? '/', 'http://agent').pathname === PEER_PATH) acceptPeer(req, socket, head);
    else wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  let active: Active | null = null;
  /** Why this agent takes no more runs: a PE thread is held by a kernel that overran. */
  let stuck: string | null = null;

  /**
   * Runs being freed. A deploy allocates only once they are released, so two runs' GPU memory
   * never has to fit at once, and `stop` and `close` answer only once the memory is free.
   */
  let freeing: Promise<void> = Promise.resolve();

  /** Frees a run's memory and threads; a PE thread stuck in a kernel puts the agent out of service. */
  function release(run: Run): Promise<void> {
    const done = releaseNow(run);
    freeing = Promise.all([freeing, done.catch(() => {})]).then(() => undefined);
    return done;
  }
  async function releaseNow(run: Run): Promise<void> {
    await run.free();
    const pes = run.stuck;
    if (!pes.length || stuck) return;
    stuck = `${pes.join(', ')} ${pes.length > 1 ? 'are' : 'is'} held by a kernel that ran past the time limit`;
    if (opts.onStuck) opts.onStuck(stuck);
    else log(`${stuck}: new runs are refused until the agent restarts`);
  }
  /** Peer links that arrived before their run's deploy, by run id. */
  const early = new Map<string, Map<string, PeerLink>>();
  const linkWaiters = new Map<string, () => void>();

  const sendTo = (ws: WebSocket, m: FromAgent) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(m));
  };

  const endRun = (reason: string) => {
    const a = active;
    if (!a) return;
    active = null;
    a.run?.abort(reason);
    if (a.run) void release(a.run);
    for (const l of a.links.values()) l.close(reason);
    early.delete(a.runId);
    log(`run ${a.runId} ended: ${reason}`);
  };

  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    const origin = req.headers.origin;
    if (!originAllowed(origin, origins)) {
      ws.close(CLOSE.origin, `origin ${origin} is not allowed (start the agent with --allow-origin ${origin})`);
      return;
    }
    const rate = new RateLimit(limits.messagesPerSecond);
    let role: 'none' | 'coordinator' = 'none';
    const timer = setTimeout(() => role === 'none' && ws.close(CLOSE.auth, 'no token: the first message must authenticate'), opts.authTimeout ?? 5000);
    ws.on('error', () => {});
    ws.on('close', () => {
      clearTimeout(timer);
      if (role === 'coordinator' && active?.coordinator === ws) endRun('the coordinator disconnected');
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        ws.close(CLOSE.protocol, `binary frames are for peer links only (${PEER_PATH})`);
        return;
      }
      const text = String(data);
      if (text.length > limits.maxMessage) {
        ws.close(CLOSE.tooBig, `message of ${text.length} bytes exceeds the limit of ${limits.maxMessage}`);
        return;
      }
      if (!rate.take(Date.now())) {
        ws.close(CLOSE.rate, `more than ${limits.messagesPerSecond} messages per second`);
        return;
      }
      if (role === 'none') {
        if (!firstMessage(text, 'auth', (code, reason) => ws.close(code, reason), req.socket.remoteAddress)) return;
        clearTimeout(timer);
        role = 'coordinator';
        sendTo(ws, { type: 'welcome', version: PROTOCOL_VERSION, host, pes: opts.devices.pes });
        return;
      }
      const parsed = parseMessage<ToAgent>(text, ['ping', 'deploy', 'start', 'stop']);
      if (!parsed.ok) {
        ws.close(CLOSE.protocol, parsed.reason);
        return;
      }
      void handle(ws, parsed.message).catch((e) => sendTo(ws, { type: 'error', message: e instanceof Error ? e.message : String(e) }));
    });
  });

  /** The first message of a connection: `type` with the right token, or null once the connection is closed saying why. */
  function firstMessage<T extends { token: string }>(text: string, type: 'auth' | 'peer-auth', close: (code: number, reason: string) => void, from: string | undefined): T | null {
    const parsed = parseMessage<ToAgent | PeerMessage>(text, [type]);
    if (!parsed.ok) {
      const unexpected = parsed.reason.startsWith('unexpected');
      close(unexpected ? CLOSE.auth : CLOSE.protocol, unexpected ? `not authenticated: the first message must be "${type}"` : parsed.reason);
      return null;
    }
    const m = parsed.message as unknown as T;
    if (!tokenMatches(opts.token, m.token)) {
      log(`refused a ${type === 'auth' ? 'connection' : 'peer link'} from ${from}: invalid token`);
      close(CLOSE.auth, 'invalid token');
      return null;
    }
    return m;
  }

  /** A peer agent's link: the handshake, then its first message must be `peer-auth` with the token. */
  function acceptPeer(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const origin = req.headers.origin;
    if (!originAllowed(origin, origins)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      return;
    }
    if (!acceptUpgrade(req, socket)) return;
    const frames = new FrameSocket(socket, head, 'server', { maxFrame: limits.maxFrame, maxText: limits.maxMessage });
    peerSockets.add(frames);
    socket.once('close', () => peerSockets.delete(frames));
    const timer = setTimeout(() => frames.close(CLOSE.auth, 'no token: the first message must authenticate'), opts.authTimeout ?? 5000);
    frames.handlers = {
      ...frames.handlers,
      binaryStart: () => frames.close(CLOSE.auth, 'not authenticated: the first message must be "peer-auth"'),
      close: () => clearTimeout(timer),
      text: (text) => {
        clearTimeout(timer);
        const m = firstMessage<Extract<PeerMessage, { type: 'peer-auth' }>>(text, 'peer-auth', (code, reason) => frames.close(code, reason), req.socket.remoteAddress);
        if (!m) return;
        const link = new PeerLink(m.host, frames, opts.linkRate ?? 0);
        let links = active?.runId === m.runId ? active.links : early.get(m.runId);
        if (!links) early.set(m.runId, (links = new Map()));
        links.set(m.host, link);
        link.send({ type: 'peer-ready', host });
        linkWaiters.get(m.runId)?.();
      },
    };
  }

  async function handle(ws: WebSocket, m: ToAgent): Promise<void> {
    switch (m.type) {
      case 'ping':
        sendTo(ws, { type: 'pong', id: m.id, t: m.t, agent: performance.timeOrigin + performance.now() });
        return;
      case 'deploy':
        return deploy(ws, m);
      case 'start': {
        const a = active;
        if (!a || a.runId !== m.runId || !a.run) throw new Error(`run ${m.runId} is not deployed on ${host}`);
        sendTo(ws, { type: 'started', runId: m.runId });
        const run = a.run;
        await run.execute();
        a.finished = true;
        void release(run);
        return;
      }
      case 'stop': {
        if (active?.runId === m.runId) {
          endRun(m.reason);
          await freeing;
          sendTo(ws, { type: 'stopped', runId: m.runId, freed: true });
        } else sendTo(ws, { type: 'stopped', runId: m.runId, freed: false });
        return;
      }
      default:
        return;
    }
  }

  async function deploy(ws: WebSocket, m: Deploy): Promise<void> {
    if (stuck) throw new Error(`agent ${host} cannot take runs until it restarts: ${stuck}`);
    if (active && active.coordinator !== ws) throw new Error(`agent ${host} is busy with run ${active.runId}`);
    if (active) endRun('replaced by a new deploy');
    if (!Array.isArray(m.programs) || !Array.isArray(m.hosts)) throw new Error('malformed deploy: programs and hosts must be lists');
    const links = early.get(m.runId) ?? new Map<string, PeerLink>();
    early.delete(m.runId);
    const a: Active = { runId: m.runId, coordinator: ws, links, finished: false };
    active = a;
    try {
      const me = m.hosts.findIndex((h) => h.id === host);
      if (me < 0) throw new Error(`agent ${host} is not among the run's hosts (${m.hosts.map((h) => h.id).join(', ')})`);
      // Before any link or device work: a refused run costs nothing and the agent stays free.
      const refusal = customWgslRefusal(host, m.programs, opts.allowWgsl ?? false);
      if (refusal) {
        log(refusal);
        throw new Error(refusal);
      }
      // Lower index dials higher: each pair gets one link.
      await Promise.all(m.hosts.slice(me + 1).map(async (h) => a.links.set(h.id, await dial(h.id, h.url, m.runId))));
      const expected = m.hosts.slice(0, me).map((h) => h.id);
      await waitFor(() => expected.every((h) => a.links.has(h)), m.runId, 15_000, () => `peer agents ${expected.filter((h) => !a.links.has(h)).join(', ')} did not connect to ${host}`);
      await freeing;
      if (active !== a) throw new Error('run replaced while deploying');
      const run = await Run.prepare(m, opts.devices, a.links, (msg) => sendTo(ws, msg), { kernelTimeoutMs: opts.kernelTimeoutMs });
      if (active !== a) {
        void release(run);
        throw new Error('run stopped while deploying');
      }
      a.run = run;
      for (const [peer, link] of a.links) {
        link.rate = m.linkRate ?? opts.linkRate ?? 0;
        link.onMessage = (pm) => {
          if (pm.type === 'barrier') run.barrier.token(pm.seq, pm.round);
          else if (pm.type === 'abort') run.abort(pm.message);
        };
        link.onClose = (reason) => {
          if (active === a && !a.finished) run.fail({ host: peer, message: `lost the link from ${host} to host ${peer} (${reason})` });
        };
      }
      sendTo(ws, { type: 'deployed', runId: m.runId, adapters: run.adapters, allocated: run.allocated(), memory: { ...processMemory(), peHeaps: run.peHeaps.start } });
    } catch (e) {
      if (active === a) endRun('deploy failed');
      throw new Error(`deploy on ${host}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  async function dial(peer: string, url: string, runId: string): Promise<PeerLink> {
    const fail = (why: string) => new Error(`cannot reach peer agent ${peer} at ${url}: ${why}`);
    let up: Awaited<ReturnType<typeof dialUpgrade>>;
    try {
      up = await dialUpgrade(new URL(PEER_PATH, url).toString());
    } catch (e) {
      throw fail(e instanceof Error ? e.message : String(e));
    }
    const frames = new FrameSocket(up.socket, up.head, 'client', { maxFrame: limits.maxFrame, maxText: limits.maxMessage });
    peerSockets.add(frames);
    up.socket.once('close', () => peerSockets.delete(frames));
    return new Promise((resolve, reject) => {
      frames.handlers = {
        ...frames.handlers,
        close: (code, reason) => reject(fail(reason || `closed (${code})`)),
        text: (text) => {
          const parsed = parseMessage<PeerMessage>(text, ['peer-ready']);
          if (!parsed.ok) {
            frames.close(CLOSE.protocol, parsed.reason);
            return;
          }
          resolve(new PeerLink(peer, frames, opts.linkRate ?? 0));
        },
      };
      frames.sendText(JSON.stringify({ type: 'peer-auth', version: PROTOCOL_VERSION, token: opts.token, host, runId }));
    });
  }

  function waitFor(ok: () => boolean, runId: string, ms: number, why: () => string): Promise<void> {
    if (ok()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        linkWaiters.delete(runId);
        reject(new Error(why()));
      }, ms);
      linkWaiters.set(runId, () => {
        // A link for this run arrived: move early links in (the deploy may have started first).
        const e = early.get(runId);
        if (e && active?.runId === runId) {
          for (const [h, l] of e) active.links.set(h, l);
          early.delete(runId);
        }
        if (ok()) {
          clearTimeout(t);
          linkWaiters.delete(runId);
          resolve();
        }
      });
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.bind ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const bindHost = opts.bind ?? '127.0.0.1';
  const url = `${tls ? 'wss' : 'ws'}://${bindHost.includes(':') ? `[${bindHost}]` : bindHost}:${port}`;
  return {
    url,
    port,
    close: async () => {
      endRun('agent shutting down');
      // Leaving with PE threads still freeing their devices would abort the process (pe-worker.ts).
      await freeing;
      for (const c of wss.clients) c.terminate();
      for (const f of peerSockets) f.socket.destroy();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
