/**
 * The coordinator's connections: one socket per agent, opened, authenticated and timed
 * (clock offset) at connect. Runs of either mode (static.ts, taskbag.ts) listen on them.
 */
import type { KernelManifest } from '@pipeloom/kernels/specs';
import { parseMessage, PROTOCOL_VERSION, type FromAgent, type MachineIdentity, type PeReport, type ToAgent } from '../protocol.js';
import { boundedCapabilities } from '../../document/requires.js';
import { later, cancel, type Clock } from '../timers.js';

/** The part of a WebSocket the coordinator uses; both `ws` and the browser's WebSocket fit. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: never) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: never) => void) | null;
}

export type { Clock };

export interface CoordinatorOptions {
  token: string;
  connect: (url: string) => SocketLike;
  clock: Clock;
  /** Milliseconds to wait for an agent to answer at connect. Default 20 000. (A deploy waits on progress: RunOptions.deploySilence, deployTimeout.) */
  timeout?: number;
}

export interface AgentInfo {
  url: string;
  host: string;
  pes: PeReport[];
  /** Agent clock minus coordinator clock, milliseconds (estimated at connect). */
  offset: number;
  /** Round trip of the best clock sample, milliseconds. */
  rtt: number;
  /** The agent package's version, where the agent says it (traces carry it). */
  agentVersion?: string;
  /** The kernels the agent runs, as it reported them at login (checkAgentKernels compares them). */
  kernels?: KernelManifest[];
  /** The machine it runs on, as it said at login. */
  machine?: MachineIdentity;
}

export class ConnectError extends Error {
  override name = 'ConnectError';
}

/** What listens to an agent's messages during a run. */
export type Listener = (m: FromAgent) => void;

/** One agent's socket, what it said at login, and who listens to it (a run attaches its listeners: lifecycle.ts). */
export class AgentConn {
  info!: AgentInfo;
  listeners = new Set<Listener>();
  closeListeners = new Set<(reason: string) => void>();
  closed: string | null = null;
  lastHeard = 0;
  constructor(
    readonly url: string,
    readonly socket: SocketLike,
  ) {}
  send(m: ToAgent): void {
    this.sendText(JSON.stringify(m));
  }
  /** A message already serialised (deploys: see `deployTexts`). */
  sendText(text: string): void {
    if (!this.closed) this.socket.send(text);
  }
}

/** Connects to every agent, authenticates, estimates clock offsets; refuses two agents serving one host. */
export async function connectAgents(urls: string[], opts: CoordinatorOptions): Promise<AgentConn[]> {
  const settled = await Promise.allSettled(urls.map((url) => openAgent(url, opts)));
  const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed.length) {
    for (const s of settled) if (s.status === 'fulfilled') s.value.socket.close(1000, 'another agent refused');
    throw new ConnectError(failed.map((f) => (f.reason instanceof Error ? f.reason.message : String(f.reason))).join('; '));
  }
  const conns = settled.map((s) => (s as PromiseFulfilledResult<AgentConn>).value);
  const hosts = new Map<string, string>();
  for (const c of conns) {
    const prev = hosts.get(c.info.host);
    if (prev) {
      for (const k of conns) k.socket.close(1000, 'duplicate host');
      throw new ConnectError(`agents at ${prev} and ${c.url} both serve host "${c.info.host}"; start each with its own --name`);
    }
    hosts.set(c.info.host, c.url);
  }
  return conns;
}

/** One agent: the socket opened, the token sent, the welcome read (bounded), five clock samples taken. */
function openAgent(url: string, opts: CoordinatorOptions): Promise<AgentConn> {
  const { clock } = opts;
  const timeout = opts.timeout ?? 20_000;
  return new Promise((resolve, reject) => {
    let socket: SocketLike;
    try {
      socket = opts.connect(url);
    } catch (e) {
      reject(new ConnectError(`cannot connect to agent at ${url}: ${e instanceof Error ? e.message : String(e)}`));
      return;
    }
    const conn = new AgentConn(url, socket);
    let welcomed = false;
    const timer = later(
      clock,
      () => {
        socket.close(1000, 'timeout');
        reject(new ConnectError(`agent at ${url} did not answer within ${timeout / 1000} s`));
      },
      timeout,
    );
    const samples: { offset: number; rtt: number }[] = [];
    let pes: PeReport[] = [];
    let agentVersion: string | undefined;
    let kernels: KernelManifest[] | undefined;
    let machine: MachineIdentity | undefined;
    let host = '';
    const ping = (id: number) => conn.send({ type: 'ping', id, t: clock.now() });
    socket.onopen = () => conn.send({ type: 'auth', version: PROTOCOL_VERSION, token: opts.token });
    socket.onerror = () => {};
    socket.onclose = (ev) => {
      conn.closed = ev.reason || `connection closed (${ev.code})`;
      if (!welcomed || samples.length < 5) {
        cancel(clock, timer as never);
        const why = ev.code === 1006 && !ev.reason ? 'unreachable or closed without a reason' : conn.closed;
        reject(new ConnectError(`agent at ${url} refused the connection: ${why}`));
      }
      for (const l of conn.closeListeners) l(conn.closed);
    };
    socket.onmessage = (ev) => {
      conn.lastHeard = clock.now();
      const parsed = parseMessage<FromAgent>(String(ev.data));
      if (!parsed.ok) {
        socket.close(4002, parsed.reason);
        return;
      }
      const m = parsed.message;
      if (m.type === 'welcome' && !welcomed) {
        welcomed = true;
        host = m.host;
        // What `requires` is checked against, kept bounded and typed.
        pes = Array.isArray(m.pes) ? m.pes.slice(0, 4096).map((p) => ({ ...p, capabilities: boundedCapabilities(p?.capabilities) })) : [];
        const mi = m.machine as Partial<MachineIdentity> | undefined;
        machine = typeof mi?.hostname === 'string' && typeof mi.id === 'string' ? { hostname: mi.hostname.slice(0, 256), id: mi.id.slice(0, 64) } : undefined;
        agentVersion = typeof m.agentVersion === 'string' ? m.agentVersion.slice(0, 64) : undefined;
        kernels = Array.isArray(m.kernels) ? m.kernels : undefined;
        ping(0);
      } else if (m.type === 'pong' && samples.length < 5) {
        const t1 = clock.now();
        samples.push({ rtt: t1 - m.t, offset: m.agent - (m.t + t1) / 2 });
        if (samples.length < 5) ping(samples.length);
        else {
          cancel(clock, timer as never);
          const best = samples.reduce((a, b) => (b.rtt < a.rtt ? b : a));
          conn.info = { url, host, pes, offset: best.offset, rtt: best.rtt, agentVersion, kernels, machine };
          resolve(conn);
        }
      } else for (const l of conn.listeners) l(m);
    };
  });
}
