import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { CLOSE, parseMessage, PROTOCOL_VERSION, type PeReport, type ToAgent } from '@pipeloom/core/coordinator/protocol';
import { acceptUpgrade, FrameSocket, PEER_PATH } from '../peer/frames.js';
import { readHello } from '../peer/handshake.js';
import type { Coordinator, RunHost } from './runs.js';
import { originAllowed, RateLimit, tokenMatches, type Limits } from './security.js';

// The agent's front door: every connection, coordinator (ws) or peer agent (`/peer`, the
// agents' own framing), until it has authenticated, then the size and rate limits on what it
// sends. Everything that arrives here before login is hostile.

export interface FrontDoorOptions {
  host: string;
  pes: PeReport[];
  token: string;
  origins: readonly string[];
  limits: Limits;
  /** Milliseconds a new connection has to authenticate. */
  authTimeout: number;
  /** Milliseconds a peer agent's handshake may take, waiting for the run's deploy included. */
  handshakeTimeout: number;
  runs: RunHost;
  log: (line: string) => void;
}

export class FrontDoor {
  // No per-message deflate (ws's server default, stated): buffer data does not pay for deflating.
  private readonly wss: WebSocketServer;
  private readonly peerSockets = new Set<FrameSocket>();

  constructor(private readonly opts: FrontDoorOptions) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: opts.limits.maxFrame, perMessageDeflate: false });
    this.wss.on('connection', (ws: WebSocket, req: IncomingMessage) => this.coordinator(ws, req));
  }

  /** An HTTP upgrade: a peer agent on PEER_PATH, a coordinator anywhere else. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (new URL(req.url ?? '/', 'http://agent').pathname === PEER_PATH) this.peer(req, socket, head);
    else this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  private coordinator(ws: WebSocket, req: IncomingMessage): void {
    const { opts } = this;
    const origin = req.headers.origin;
    if (!originAllowed(origin, opts.origins)) {
      ws.close(CLOSE.origin, `origin ${origin} is not allowed (start the agent with --allow-origin ${origin})`);
      return;
    }
    const rate = new RateLimit(opts.limits.messagesPerSecond);
    const me: Coordinator = { send: (m) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(m)) };
    let authed = false;
    const timer = setTimeout(() => !authed && ws.close(CLOSE.auth, 'no token: the first message must authenticate'), opts.authTimeout);
    ws.on('error', () => {});
    ws.on('close', () => {
      clearTimeout(timer);
      if (authed) opts.runs.coordinatorGone(me);
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        ws.close(CLOSE.protocol, `binary frames are for peer links only (${PEER_PATH})`);
        return;
      }
      const text = String(data);
      if (text.length > opts.limits.maxMessage) {
        ws.close(CLOSE.tooBig, `message of ${text.length} bytes exceeds the limit of ${opts.limits.maxMessage}`);
        return;
      }
      if (!rate.take(Date.now())) {
        ws.close(CLOSE.rate, `more than ${opts.limits.messagesPerSecond} messages per second`);
        return;
      }
      if (!authed) {
        const parsed = parseMessage<ToAgent>(text, ['auth']);
        if (!parsed.ok) {
          const unexpected = parsed.reason.startsWith('unexpected');
          ws.close(unexpected ? CLOSE.auth : CLOSE.protocol, unexpected ? 'not authenticated: the first message must be "auth"' : parsed.reason);
          return;
        }
        if (!tokenMatches(opts.token, (parsed.message as Extract<ToAgent, { type: 'auth' }>).token)) {
          opts.log(`refused a connection from ${req.socket.remoteAddress}: invalid token`);
          ws.close(CLOSE.auth, 'invalid token');
          return;
        }
        clearTimeout(timer);
        authed = true;
        me.send({ type: 'welcome', version: PROTOCOL_VERSION, host: opts.host, pes: opts.pes });
        return;
      }
      const parsed = parseMessage<ToAgent>(text, ['ping', 'deploy', 'start', 'stop']);
      if (!parsed.ok) {
        ws.close(CLOSE.protocol, parsed.reason);
        return;
      }
      void opts.runs.handle(me, parsed.message).catch((e) => me.send({ type: 'error', message: e instanceof Error ? e.message : String(e) }));
    });
  }

  /**
   * A peer agent's link: the WebSocket handshake, then its hello naming the run; the run host
   * answers it with the run's challenge once it has the run (runs.ts, peer/handshake.ts).
   */
  private peer(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { opts } = this;
    if (!originAllowed(req.headers.origin, opts.origins)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      return;
    }
    if (!acceptUpgrade(req, socket)) return;
    const frames = new FrameSocket(socket, head, 'server', { maxFrame: opts.limits.maxFrame, maxText: opts.limits.maxMessage });
    this.peerSockets.add(frames);
    socket.once('close', () => this.peerSockets.delete(frames));
    const timer = setTimeout(() => frames.close(CLOSE.auth, 'no hello: the first message must be "peer-hello"'), opts.authTimeout);
    frames.handlers = {
      ...frames.handlers,
      binaryStart: () => frames.close(CLOSE.auth, 'not authenticated: the first message must be "peer-hello"'),
      close: () => clearTimeout(timer),
      text: (text) => {
        clearTimeout(timer);
        const r = readHello(text);
        if (!r.ok) {
          frames.close(r.reason.startsWith('not authenticated') ? CLOSE.auth : CLOSE.protocol, r.reason);
          return;
        }
        frames.handlers = { ...frames.handlers, text: () => frames.close(CLOSE.protocol, 'wait for "peer-challenge"'), binaryStart: () => frames.close(CLOSE.protocol, 'wait for "peer-challenge"') };
        void opts.runs.acceptPeer(frames, r.hello, Date.now() + opts.handshakeTimeout);
      },
    };
  }

  /** Drops every connection (agent shutdown). */
  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    for (const f of this.peerSockets) f.socket.destroy();
    await new Promise<void>((r) => this.wss.close(() => r()));
  }
}
