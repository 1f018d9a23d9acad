import type { KernelManifest } from '@pipeloom/kernels';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { CLOSE, parseMessage, PROTOCOL_VERSION, type MachineIdentity, type PeReport, type ToAgent } from '@pipeloom/core';
import { acceptUpgrade, closeReason, FrameSocket, PEER_PATH } from '../peer/frames.js';
import { readHello } from '../peer/handshake.js';
import type { CoordinatorConnection, RunHost } from './runs.js';
import { LoginThrottle, originAllowed, PendingConnections, RateLimit, tokenMatches, type Limits } from './security.js';
import { excerpt, type FrontDoorLog } from './front-door-log.js';
import { VERSION } from '../version.js';

/** This agent's package version, told in `welcome` so a run's trace names the agents it ran on. */

// The agent's front door: every connection, coordinator (ws) or peer agent (`/peer`, the
// agents' own framing), until it has authenticated, then the size and rate limits on what it
// sends. Everything that arrives here before login is hostile: each connection is counted from
// its TCP connect (per address and in total) and has `loginTimeoutMs` to log in; messages
// before login are refused at the frame header beyond `maxMessageBeforeLogin`; close reasons
// are fixed texts, never the sender's bytes; failed logins slow their address down.

export interface FrontDoorOptions {
  host: string;
  /** The machine the agent runs on, told at login (the coordinator refuses two agents claiming one hardware adapter). */
  machine?: MachineIdentity;
  pes: PeReport[];
  /** The kernels this agent runs, as manifests (data), told at login. */
  kernels?: KernelManifest[];
  token: string;
  origins: readonly string[];
  limits: Limits;
  /** Milliseconds from the TCP connect to a completed coordinator login (or a peer's hello). */
  authTimeout: number;
  /** Milliseconds a peer agent's handshake may take, waiting for the run's deploy included. */
  handshakeTimeout: number;
  /** The port serves TLS: a refused connection is dropped, not answered in clear HTTP. */
  tls?: boolean;
  runs: RunHost;
  /** The agent's log, shared with the run host (escaped, rate-limited lines). */
  log: FrontDoorLog;
}

/** A connection that has not logged in: counted, and closed when its time is up. */
interface Pending {
  address: string;
  timer: NodeJS.Timeout;
  /** What the deadline does: drop the socket, or once upgraded close it with a reason. */
  expire: () => void;
  done: boolean;
}

/**
 * Request targets taken on the upgrade: a plain path and query. `//host...` (which URL parsers
 * read as an authority) and absolute forms are never what a coordinator or an agent sends.
 */
const TARGET = /^\/(?!\/)[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*(\?[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*)?$/;
const MAX_TARGET = 2048;

const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';
const BUSY = 'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/**
 * Answers an upgrade request with an HTTP refusal. What the client still sends is read and
 * dropped: an upgraded socket nobody reads never sees the client's FIN, and would stay open.
 */
function refuseHttp(socket: Duplex, response: string): void {
  socket.resume();
  socket.end(response);
}

/** The largest message ws takes on this socket (its receiver's own check, at each frame header). */
function setMaxPayload(ws: WebSocket, bytes: number): void {
  const receiver = (ws as unknown as { _receiver?: { _maxPayload?: unknown } })._receiver;
  // ws keeps it per socket from the server's option; there is no public setter (ws 8).
  if (receiver && typeof receiver._maxPayload === 'number') receiver._maxPayload = bytes;
}

/** ws.close with a reason that always fits (ws throws on reasons over 123 bytes). */
function closeWs(ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState === WebSocket.CLOSED) return;
  if (ws.readyState !== WebSocket.CLOSING) ws.close(code, closeReason(reason));
  // A client that never answers the close must not hold the socket (ws waits 30 s).
  setTimeout(() => ws.terminate(), 1000).unref();
}

export class FrontDoor {
  // No per-message deflate (ws's server default, stated): buffer data does not pay for deflating.
  private readonly wss: WebSocketServer;
  private readonly peerSockets = new Set<FrameSocket>();
  private readonly pending = new Map<string, Pending>();
  private readonly counts: PendingConnections;
  private readonly throttle: LoginThrottle;
  readonly log: FrontDoorLog;

  constructor(private readonly opts: FrontDoorOptions) {
    // Before login no message may be larger than the small limit; a login raises it (setMaxPayload).
    this.wss = new WebSocketServer({ noServer: true, maxPayload: opts.limits.maxMessageBeforeLogin, perMessageDeflate: false });
    this.wss.on('connection', (ws: WebSocket, req: IncomingMessage) => this.coordinator(ws, req));
    this.counts = new PendingConnections(opts.limits);
    this.throttle = new LoginThrottle(opts.limits);
    this.log = opts.log;
  }

  /** A new TCP connection (the server's 'connection' event): counted until it logs in or closes. */
  connection(socket: Socket): void {
    const address = socket.remoteAddress;
    if (!address) {
      socket.destroy();
      return;
    }
    const admitted = this.counts.admit(address);
    if (!admitted.ok) {
      this.log.line(
        'warn',
        'over-cap',
        `refused a connection from ${address}: ${admitted.why === 'total' ? `${this.opts.limits.maxPending} connections are waiting to log in (--max-pending)` : `${this.opts.limits.maxPendingPerAddress} connections from this address are waiting to log in (--max-pending-per-address)`}`,
      );
      socket.on('error', () => {});
      if (this.opts.tls) socket.destroy();
      else socket.end(BUSY, () => socket.destroy());
      return;
    }
    const key = `${address}|${socket.remotePort}`;
    const p: Pending = {
      address,
      done: false,
      expire: () => socket.destroy(),
      timer: setTimeout(() => {
        this.log.line('info', 'login-timeout', `closed a connection from ${address}: no login within ${this.opts.authTimeout / 1000} s`);
        p.expire();
      }, this.opts.authTimeout),
    };
    this.pending.set(key, p);
    socket.on('error', () => {});
    socket.once('close', () => this.settle(key, p));
  }

  /** The connection logged in, or closed: it no longer counts against the caps. */
  private settle(key: string, p: Pending): void {
    if (p.done) return;
    p.done = true;
    clearTimeout(p.timer);
    this.counts.release(p.address);
    if (this.pending.get(key) === p) this.pending.delete(key);
  }

  /** The pending record of an upgraded request's socket (TLS sockets report the TCP socket's ends). */
  private pendingOf(req: IncomingMessage): { key: string; p: Pending } | null {
    const key = `${req.socket.remoteAddress}|${req.socket.remotePort}`;
    const p = this.pending.get(key);
    return p ? { key, p } : null;
  }

  /** An HTTP upgrade: a peer agent on PEER_PATH, a coordinator anywhere else, 400 for a malformed target. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => {});
    const target = req.url ?? '';
    if (target.length > MAX_TARGET || !TARGET.test(target)) {
      this.log.line('warn', 'malformed', `refused an upgrade from ${req.socket.remoteAddress}: malformed request path`);
      refuseHttp(socket, BAD_REQUEST);
      return;
    }
    const q = target.indexOf('?');
    if ((q < 0 ? target : target.slice(0, q)) === PEER_PATH) this.peer(req, socket, head);
    else this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  private refuseOrigin(req: IncomingMessage, path: string): void {
    this.log.line(
      'warn',
      'origin',
      `refused a browser connection from ${req.socket.remoteAddress} to ${path}: origin ${excerpt(req.headers.origin)} is not allowed (--allow-origin)`,
    );
  }

  private coordinator(ws: WebSocket, req: IncomingMessage): void {
    const { opts } = this;
    const from = req.socket.remoteAddress ?? '?';
    const pending = this.pendingOf(req);
    ws.on('error', () => {});
    if (!originAllowed(req.headers.origin, opts.origins)) {
      this.refuseOrigin(req, 'the coordinator path');
      closeWs(ws, CLOSE.origin, 'origin not allowed: start the agent with --allow-origin and this origin');
      return;
    }
    const rate = new RateLimit(opts.limits.messagesPerSecond);
    let authed = false;
    const refuse = (code: number, reason: string) => {
      this.log.line('warn', 'malformed', `closed a connection from ${from}${authed ? '' : ' before login'}: ${reason}`);
      closeWs(ws, code, reason);
    };
    const me: CoordinatorConnection = { send: (m) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(m)), close: refuse };
    if (pending) pending.p.expire = () => closeWs(ws, CLOSE.auth, 'no token: the first message must authenticate');
    else {
      // A socket the door did not count (no 'connection' event reached it): still bounded.
      const t = setTimeout(() => !authed && closeWs(ws, CLOSE.auth, 'no token: the first message must authenticate'), opts.authTimeout);
      ws.once('close', () => clearTimeout(t));
    }
    ws.on('close', () => {
      if (authed) opts.runs.coordinatorGone(me);
    });
    ws.on('message', (data, isBinary) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (isBinary) return refuse(CLOSE.protocol, `binary frames are for peer links only (${PEER_PATH})`);
      // ws refused anything larger at the frame header (maxPayload); this is its text.
      const text = String(data);
      if (!rate.take(Date.now())) return refuse(CLOSE.rate, `more than ${opts.limits.messagesPerSecond} messages per second`);
      if (!authed) {
        const parsed = parseMessage<ToAgent>(text, ['auth']);
        if (!parsed.ok) {
          const unexpected = parsed.reason.startsWith('unexpected');
          return refuse(unexpected ? CLOSE.auth : CLOSE.protocol, unexpected ? 'not authenticated: the first message must be "auth"' : parsed.reason);
        }
        const now = Date.now();
        const wait = this.throttle.wait(from, now);
        if (wait > 0) {
          this.log.line('warn', 'throttled', `refused a login from ${from} without checking it: too many failed logins`);
          closeWs(ws, CLOSE.rate, `too many failed logins from this address: try again in ${Math.ceil(wait / 1000)} s`);
          return;
        }
        if (!tokenMatches(opts.token, (parsed.message as Extract<ToAgent, { type: 'auth' }>).token)) {
          this.throttle.failed(from, now);
          this.log.line('warn', 'invalid-token', `refused a connection from ${from}: invalid token`);
          closeWs(ws, CLOSE.auth, 'invalid token');
          return;
        }
        this.throttle.succeeded(from);
        authed = true;
        if (pending) this.settle(pending.key, pending.p);
        setMaxPayload(ws, opts.limits.maxMessage);
        this.log.line('info', 'login', `coordinator logged in from ${from}`);
        me.send({
          type: 'welcome',
          version: PROTOCOL_VERSION,
          host: opts.host,
          pes: opts.pes,
          agentVersion: VERSION,
          kernels: opts.kernels,
          ...(opts.machine ? { machine: opts.machine } : {}),
        });
        return;
      }
      const parsed = parseMessage<ToAgent>(text, ['ping', 'deploy', 'start', 'stop', 'bag-deploy', 'task', 'free']);
      if (!parsed.ok) return refuse(CLOSE.protocol, parsed.reason);
      void opts.runs.handle(me, parsed.message).catch((e) => me.send({ type: 'error', message: e instanceof Error ? e.message : String(e) }));
    });
  }

  /**
   * A peer agent's link: the WebSocket handshake, then its hello naming the run; the run host
   * answers it with the run's challenge once it has the run (runs.ts, peer/handshake.ts).
   * Until the run host has accepted it, it counts as not logged in and takes only small frames.
   */
  private peer(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { opts } = this;
    const from = req.socket.remoteAddress ?? '?';
    if (!originAllowed(req.headers.origin, opts.origins)) {
      this.refuseOrigin(req, PEER_PATH);
      refuseHttp(socket, 'HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (!acceptUpgrade(req, socket)) {
      socket.resume();
      this.log.line('warn', 'malformed', `refused a peer upgrade from ${from}: not a WebSocket handshake`);
      return;
    }
    const small = opts.limits.maxMessageBeforeLogin;
    const frames = new FrameSocket(socket, head, 'server', { maxFrame: small, maxText: small });
    this.peerSockets.add(frames);
    socket.once('close', () => this.peerSockets.delete(frames));
    const pending = this.pendingOf(req);
    const noHello = () => frames.close(CLOSE.auth, 'no hello: the first message must be "peer-hello"');
    let timer: NodeJS.Timeout | null = null;
    if (pending) pending.p.expire = noHello;
    else timer = setTimeout(noHello, opts.authTimeout);
    const refuse = (code: number, reason: string) => {
      this.log.line('warn', 'malformed', `closed a peer link from ${from} before login: ${reason}`);
      frames.close(code, reason);
    };
    frames.handlers = {
      ...frames.handlers,
      binaryStart: () => refuse(CLOSE.auth, 'not authenticated: the first message must be "peer-hello"'),
      close: () => timer && clearTimeout(timer),
      text: (text) => {
        if (timer) clearTimeout(timer);
        const r = readHello(text);
        if (!r.ok) return refuse(r.reason.startsWith('not authenticated') ? CLOSE.auth : CLOSE.protocol, r.reason);
        frames.handlers = {
          ...frames.handlers,
          text: () => refuse(CLOSE.protocol, 'wait for "peer-challenge"'),
          binaryStart: () => refuse(CLOSE.protocol, 'wait for "peer-challenge"'),
        };
        if (pending) {
          // The run host now bounds the handshake (waiting for the deploy included); this deadline is the backstop.
          clearTimeout(pending.p.timer);
          pending.p.expire = () => socket.destroy();
          pending.p.timer = setTimeout(() => pending.p.expire(), opts.handshakeTimeout + 1000);
        }
        void opts.runs.acceptPeer(frames, r.hello, Date.now() + opts.handshakeTimeout).then(
          () => {
            // Accepted (still open): runs before the socket's next read, so the dialler's first buffer meets the full limits.
            if (!frames.open) return;
            frames.limits = { maxFrame: opts.limits.maxFrame, maxText: opts.limits.maxMessage };
            if (pending) this.settle(pending.key, pending.p);
            this.log.line('info', 'login', `peer agent ${excerpt(r.hello.host)} logged in from ${from}`);
          },
          () => frames.close(CLOSE.protocol, 'peer handshake failed'),
        );
      },
    };
  }

  /** Drops every connection (agent shutdown). */
  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    for (const f of this.peerSockets) f.socket.destroy();
    for (const [key, p] of this.pending) this.settle(key, p);
    this.log.close();
    await new Promise<void>((r) => this.wss.close(() => r()));
  }
}
