import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { kernelManifest, listKernels, type KernelManifest } from '@pipeloom/kernels';
import { createServer as createHttps } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Devices } from '../devices/discover.js';
import { HANDSHAKE } from '../peer/handshake.js';
import { FrontDoor } from './front-door.js';
import { FrontDoorLog } from './front-door-log.js';
import { RunHost } from './runs.js';
import type { DataRoot } from '../io/roots.js';
import { DEFAULT_LIMITS, DEFAULT_ORIGINS, type Limits } from './security.js';
import { DEPLOY_LIMITS, type DeployLimits } from '../runtime/deploy-limits.js';

// The agent's server: one HTTP(S) port. Coordinators and peer agents connect by WebSocket
// through the front door (front-door.ts); their runs, one at a time, live in the run host
// (runs.ts); supervisors probe GET /healthz.

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
  /** Bounds on a deploy's sizes and counts (default DEPLOY_LIMITS, deploy-limits.ts). */
  deployLimits?: Partial<DeployLimits>;
  /** Caps host-to-host sends at this many bytes per second (0 = none). */
  linkRate?: number;
  /** Milliseconds from a new connection's TCP connect to its login (default limits.loginTimeoutMs). */
  authTimeout?: number;
  /** Milliseconds a peer agent's handshake may take, waiting for the run's deploy included (default HANDSHAKE.timeoutMs). */
  handshakeTimeout?: number;
  /** Runs `custom.wgsl` nodes (WGSL written in the document); refused unless set (--allow-wgsl). */
  allowWgsl?: boolean;
  /** Time limit of one firing in ms (default DEFAULT_KERNEL_TIMEOUT_MS; 0 = none). */
  kernelTimeoutMs?: number;
  /** The directories io nodes read and write (--data). */
  data?: readonly DataRoot[];
  /** The manifests told at login (default: every kernel registered in this process). */
  kernels?: KernelManifest[];
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

export async function startAgent(opts: AgentOptions): Promise<AgentServer> {
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  // One log for the front door and the run host: every line escaped, and rate-limited by kind.
  const log = new FrontDoorLog(opts.log ?? (() => {}), limits);
  const tls = Boolean(opts.cert && opts.key);
  const server: Server = tls ? createHttps({ cert: readFileSync(opts.cert!), key: readFileSync(opts.key!) }) : createHttp();
  const runs = new RunHost({
    devices: opts.devices,
    token: opts.token,
    limits,
    tls,
    linkRate: opts.linkRate,
    handshakeTimeout: opts.handshakeTimeout ?? HANDSHAKE.timeoutMs,
    allowWgsl: opts.allowWgsl,
    deployLimits: { ...DEPLOY_LIMITS, ...opts.deployLimits },
    kernelTimeoutMs: opts.kernelTimeoutMs,
    data: opts.data,
    onStuck: opts.onStuck,
    log,
  });
  const door = new FrontDoor({
    host: opts.devices.host,
    machine: opts.devices.machine,
    pes: opts.devices.pes,
    kernels: opts.kernels ?? listKernels().map(kernelManifest),
    token: opts.token,
    origins: opts.allowOrigins?.length ? opts.allowOrigins : DEFAULT_ORIGINS,
    limits,
    authTimeout: opts.authTimeout ?? limits.loginTimeoutMs,
    handshakeTimeout: opts.handshakeTimeout ?? HANDSHAKE.timeoutMs,
    tls,
    runs,
    log,
  });
  server.on('connection', (socket: Socket) => door.connection(socket));
  server.on('request', (req, res) => health(req, res, runs));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => door.upgrade(req, socket, head));

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
      await runs.close();
      await door.close();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * `GET /healthz`, for supervisors' probes: no token, and nothing in the answer but whether the
 * agent can take runs. Every other plain HTTP request gets 404 (agents speak WebSocket).
 */
function health(req: IncomingMessage, res: ServerResponse, runs: RunHost): void {
  const path = (req.url ?? '').split('?')[0];
  if (req.method !== 'GET' || path !== '/healthz') {
    res.writeHead(404, { 'content-type': 'text/plain', connection: 'close' }).end('not found\n');
    return;
  }
  const ok = !runs.stuck;
  res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify({ status: ok ? 'ok' : 'stuck' }));
}
