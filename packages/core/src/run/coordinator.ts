/**
 * The coordinator: runs an implementation graph on agents. Transport-agnostic (no Node or DOM
 * imports): the caller passes a socket factory and a clock, so the CLI uses `ws` and the
 * browser its native WebSocket.
 *
 *   const c = await Coordinator.connect(['ws://127.0.0.1:7070'], {
 *     token, connect: (url) => new WebSocket(url), clock: { now: () => performance.timeOrigin + performance.now(), setTimeout, clearTimeout },
 *   });
 *   c.agents;                        // [{ url, host, pes }] as the agents reported them
 *   c.check(ig);                     // Diagnostic[]: missing host or PE, buffers too big for a PE
 *   const run = c.run(ig, { iterations: 100, onProgress, onEvents });
 *   run.stop('user pressed stop');   // optional
 *   const result = await run.done;   // RunResult: ok | failure (host, node, why), trace, per-thread stats
 *   c.close();
 *
 * Failures never throw out of `run.done`: they come back as `result.failure`. `connect`
 * rejects with a ConnectError whose message names the agent and why (e.g. invalid token).
 */
import { findKernel, type KernelManifest } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../diagnostics.js';
import { allPrograms, lastStartCycle, programBytes, programHosts } from '../compile/decode.js';
import type { ImplementationGraph, PeProgram } from '../compile/types.js';
import type { TraceEvent } from '../trace/event.js';
import type { SyncMode } from '../document/types.js';
import { planForHosts, selfTimedPlan } from '../compile/contract.js';
import type { Deploy } from './deploy-check.js';
import { parseMessage, PROTOCOL_VERSION, type FailureReport, type FromAgent, type MachineIdentity, type PeReport, type ProcessMemory, type ToAgent } from './protocol.js';
import { boundedCapabilities, failingClause, reported } from '../document/requires.js';
import { igContextCopies } from '../compile/scan-context.js';
import { contextOverBinding, contextOverMemory } from '../document/scan-context.js';
import { taskBagPolicy } from './policy.js';
import { kernelMajor, TaskBag, type BagCommand, type BagCounts, type BagPe } from './taskbag/bag.js';
import type { BagGraph } from './taskbag/graph.js';
import { later, cancel, type Clock } from './timers.js';
import { DeployWatch, type DeployOptions } from './deploy-watch.js';
import { secureRandomBytes } from '../util/random.js';

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

export interface Progress {
  cycle: number;
  cycles: number;
  /** Cycles completed per second so far (one iteration completes per cycle in steady state). */
  iterationsPerSecond: number;
  /** Seconds since start. */
  elapsed: number;
  /** What `cycle` counts: cycles of a static run (default), or iterations committed of a task-bag run (it has no cycles). */
  unit?: 'cycle' | 'iteration';
}

export interface RunOptions extends DeployOptions {
  iterations: number;
  onProgress?: (p: Progress) => void;
  /** Trace events as they stream in, on the coordinator's time axis (µs since the run's start). */
  onEvents?: (events: TraceEvent[]) => void;
  /** Cap on host-to-host sends, bytes per second (benchmarks). */
  linkRate?: number;
  /**
   * Link emulation: every transfer lasts at least what the document's link would take
   * (latency + bytes / bandwidth), so a run on fast local hardware shows the timing of the
   * cluster the document describes (and bench:overlap sets Th and Tib).
   */
  emulateLinks?: boolean;
  /**
   * Device emulation: each firing of these nodes (the GPU ones; core `deviceTimes` gives their
   * calibrated or cost-hint seconds) lasts at least that long. The kernel still runs and is
   * checked; the rest is waited out on a timer, so on a machine whose GPUs are its own cores
   * (llvmpipe) the firings leave the cores free, as real GPUs would.
   */
  emulateDevices?: Record<string, number>;
  /** A labelled emulation of slower PEs: PE id -> factor s; after each firing the PE sleeps (s - 1) x its time, using no core. */
  slow?: Record<string, number>;
  /** Keep every event in the result (default true); long runs can stream them through onEvents only. */
  keepEvents?: boolean;
  /** How the agents synchronise (docs/contract.md): 'self-timed' (default, as the document's options.sync) or 'barrier'. */
  sync?: SyncMode;
  /** Milliseconds of silence from an agent during a run before it is declared lost. Default 120 000: a kernel can hold an agent's event loop for seconds; a killed agent is caught at once by its socket closing. */
  heartbeat?: number;
}

export interface RunResult {
  ok: boolean;
  runId: string;
  iterations: number;
  cycles: number;
  /** Wall seconds from start to the last agent's `done` (or the failure). */
  seconds: number;
  events: TraceEvent[];
  /** Microseconds per cycle each host spent between its last local arrival and the barrier's release. */
  barrierPerCycle: Record<string, number>;
  reports: { host: string; node: string; iteration: number; values: Record<string, number | number[] | string> }[];
  /** Which adapter each GPU PE got. */
  adapters: Record<string, string>;
  dropped: number;
  /** Events received (kept or not). */
  eventCount: number;
  /** Each agent process's memory after deploy and at the end of the run. */
  memory: Record<string, { start?: ProcessMemory; end?: ProcessMemory }>;
  failure?: FailureReport;
  /** Task-bag runs: what the bag did (commits, discarded late results, requeues, recomputes) and how many tasks each PE ran. */
  bag?: BagCounts & { perPe: Record<string, number>; heartbeat: number };
}

/** A task-bag run's options (run/taskbag/): the bag's window and the policy's prefetch besides what every run takes. */
export interface BagRunOptions extends Pick<RunOptions, 'iterations' | 'onProgress' | 'onEvents' | 'keepEvents' | 'emulateDevices' | keyof DeployOptions> {
  /** Most iterations in flight (default 2). */
  window?: number;
  /** Most tasks a PE holds given and not done (default 2); 'unbounded': the paper's literal reading. */
  prefetch?: number | 'unbounded';
  /** Milliseconds of silence after which an agent leaves the pool (default 2000): its tasks are requeued. */
  heartbeat?: number;
  /** A labelled emulation of slower PEs: PE id -> factor s (the agent sleeps (s - 1) x each task's run time after it). */
  slow?: Record<string, number>;
  /** Tries of one task before the run fails (default 3). */
  attempts?: number;
  /** Only these PEs form the pool (default: every PE of every connected agent). */
  pes?: readonly string[];
  /** The bag's counts after every event (commits, requeues, discarded results): live numbers for a UI, and what fault tests wait for. */
  onBag?: (counts: BagCounts & { depth: number; inFlight: number }) => void;
}

export interface RunHandle {
  runId: string;
  done: Promise<RunResult>;
  stop(reason?: string): void;
}

export class ConnectError extends Error {
  override name = 'ConnectError';
}

type Listener = (m: FromAgent) => void;

class AgentConn {
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

let runCounter = 0;

/** What a run's deploy says besides the graph: `Deploy`'s fields that are the same for every host. */
export type DeploySettings = Pick<Deploy, 'runId' | 'secret' | 'hosts' | 'iterations' | 'cycles' | 'linkRate' | 'emulateLinks' | 'emulateDevices' | 'slow' | 'progressMs'> & { sync: SyncMode };

/**
 * The deploy message of each host of `settings.hosts`, keyed by host id. Every PE's program is
 * read from the IG once and grouped by host (one `hostPrograms` per host would read all of it
 * per host), and the self-timed plan is made once and shared out with `planForHosts`.
 */
export function deployMessages(ig: ImplementationGraph, settings: DeploySettings): Map<string, Deploy> {
  const { runId, secret, hosts, iterations, cycles, linkRate, emulateLinks, emulateDevices, slow, sync, progressMs } = settings;
  const pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }> = {};
  for (const p of ig.programs.pes) pes[p.pe] = { host: p.host, kind: p.kind };
  const buffers: Record<string, { element: 'f32' | 'u32' | 'i32' | 'u8'; bytes: number }> = {};
  const { id, type, types, bytes } = ig.buffers;
  for (let k = 0; k < ig.buffers.count; k++) buffers[id[k]] = { element: types[type[k]].element, bytes: bytes[k] };
  const programs = Object.values(allPrograms(ig));
  const byHost = new Map<string, PeProgram[]>(hosts.map((h) => [h.id, []]));
  for (const p of programs) byHost.get(p.host)?.push(p);
  // Self-timed: the plan needs every PE's program; each agent gets its host's part.
  const plan = sync === 'self-timed' ? selfTimedPlan(programs, pes) : undefined;
  // The versions the graph was compiled against, where this registry knows the kernel (a
  // browser's main thread may not know a package's): each agent checks its own against them.
  const versions: Record<string, string> = {};
  for (const p of programs) {
    for (const phase of p.phases) {
      for (const a of phase.actions) {
        if (a.op !== 'fire' || a.kernel in versions) continue;
        const v = findKernel(a.kernel)?.version;
        if (v) versions[a.kernel] = v;
      }
    }
  }
  const kernels = Object.keys(versions).length ? versions : undefined;
  const out = new Map<string, Deploy>();
  for (const { id: host } of hosts) {
    out.set(host, { type: 'deploy', runId, secret, programs: byHost.get(host)!, hosts, iterations, cycles, pes, buffers, linkRate, emulateLinks, emulateDevices, slow, kernels, sync, plan: plan && planForHosts(plan, programs, [host]), progressMs });
  }
  return out;
}

/**
 * Each deploy as `JSON.stringify` writes it, byte for byte, with what every host's message
 * shares (the same `hosts`, `pes`, `buffers` and plan `counters` objects) serialised once: they
 * grow with the graph, and stringifying them once per host made setup O(hosts x graph).
 */
export function deployTexts(deploys: ReadonlyMap<string, Deploy>): Map<string, string> {
  const cache = new Map<unknown, string>();
  const once = (x: unknown) => {
    let s = cache.get(x);
    if (s === undefined) cache.set(x, (s = JSON.stringify(x)));
    return s;
  };
  // An object's JSON from its fields' JSON, in its key order; undefined fields are left out, as
  // JSON.stringify does. Joined with +, which links the shared strings rather than copying them.
  const object = (o: object, field: (key: string, value: unknown) => string | undefined) => {
    let text = '{';
    for (const [key, value] of Object.entries(o)) {
      const s = field(key, value);
      if (s !== undefined) text += (text.length > 1 ? ',' : '') + JSON.stringify(key) + ':' + s;
    }
    return text + '}';
  };
  const out = new Map<string, string>();
  for (const [host, m] of deploys) {
    out.set(
      host,
      object(m, (key, value) => {
        if (value === undefined) return undefined;
        if (key === 'hosts' || key === 'pes' || key === 'buffers' || key === 'kernels') return once(value);
        if (key === 'plan' && value !== null && typeof value === 'object') return object(value, (k, v) => (k === 'counters' ? once(v) : JSON.stringify(v)));
        return JSON.stringify(value);
      }),
    );
  }
  return out;
}

/**
 * After a failure or a stop, how long the coordinator waits at most for the agents still up to
 * answer `stopped` (their last trace batches come before it). Freeing a run takes well under
 * this; an agent that does not answer leaves its events out rather than holding the result.
 */
export const STOP_WAIT_MS = 2000;

/**
 * A run's secret: 128 random bits from the platform's CSPRNG (Web Crypto, in browsers, workers
 * and Node alike). Peer links of the run prove it, so the shared token alone cannot join them.
 */
function runSecret(): string {
  const bytes = secureRandomBytes(16);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}


export class Coordinator {
  private constructor(
    private readonly conns: AgentConn[],
    private readonly opts: CoordinatorOptions,
  ) {}

  get agents(): AgentInfo[] {
    return this.conns.map((c) => c.info);
  }

  /** Connects to every agent, authenticates, estimates clock offsets. */
  static async connect(urls: string[], opts: CoordinatorOptions): Promise<Coordinator> {
    const settled = await Promise.allSettled(urls.map((url) => Coordinator.open(url, opts)));
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
    return new Coordinator(conns, opts);
  }

  private static open(url: string, opts: CoordinatorOptions): Promise<AgentConn> {
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
      const timer = later(clock, () => {
        socket.close(1000, 'timeout');
        reject(new ConnectError(`agent at ${url} did not answer within ${timeout / 1000} s`));
      }, timeout);
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

  /** Checks the graph against what the agents serve: every host has an agent, every PE exists and can hold its buffers. */
  check(ig: ImplementationGraph): Diagnostic[] {
    const out: Diagnostic[] = [];
    const byHost = new Map(this.conns.map((c) => [c.info.host, c.info]));
    const served = [...byHost.keys()].join(', ') || 'none';
    const missingHosts = new Set<string>();
    for (const [p, program] of ig.programs.pes.entries()) {
      const agent = byHost.get(program.host);
      if (!agent) {
        if (missingHosts.has(program.host)) continue;
        missingHosts.add(program.host);
        out.push(error(`arch.hosts.${program.host}`, `no agent serves host ${program.host} (connected agents serve: ${served})`, `start \`pipeloom agent --name ${program.host}\` on that host and add its URL to --agents`));
        continue;
      }
      const pe = agent.pes.find((p) => p.id === program.pe);
      if (!pe) {
        out.push(
          error(
            `mapping.${program.pe}`,
            `agent ${program.host} (${agent.url}) has no PE ${program.pe}; it serves ${agent.pes.map((p) => p.id).join(', ')}`,
            program.kind === 'gpu' ? 'map the nodes onto a GPU the agent reports, or start the agent with --emulate-gpus N' : 'map the nodes onto a PE the agent reports',
          ),
        );
        continue;
      }
      const { total, largest } = programBytes(ig, p);
      // A scan's replicated context is named by its scan, port and worker (document/scan-context.ts).
      const context = total > pe.memory || (pe.limits && largest > pe.limits.maxStorageBufferBindingSize) ? igContextCopies(ig, p) : undefined;
      if (total > pe.memory) {
        if (context?.groups.length) for (const g of context.groups) out.push(contextOverMemory(g, program.pe, pe.memory, total, `as agent ${program.host} reports`, context.workers.get(g[0].scan) ?? 1));
        else out.push(error(`mapping.${program.pe}`, `buffers on ${program.pe} need ${total} bytes; agent ${program.host} offers ${pe.memory}`, 'map fewer nodes there or shrink the data'));
      }
      const tooBig = pe.limits ? context?.groups.flat().filter((c) => c.bytes > pe.limits!.maxStorageBufferBindingSize) : undefined;
      if (pe.limits && largest > pe.limits.maxBufferSize && !tooBig?.length) out.push(error(`mapping.${program.pe}`, `a buffer of ${largest} bytes on ${program.pe} exceeds the adapter's maxBufferSize (${pe.limits!.maxBufferSize})`, 'shrink the data'));
      // Kernels bind whole buffers: each must fit one storage binding too.
      else if (tooBig?.length) for (const c of tooBig) out.push(contextOverBinding(c, program.pe, pe.limits!.maxStorageBufferBindingSize, context!.workers.get(c.scan) ?? 1));
      else if (pe.limits && largest > pe.limits.maxStorageBufferBindingSize) out.push(error(`mapping.${program.pe}`, `a buffer of ${largest} bytes on ${program.pe} exceeds the adapter's maxStorageBufferBindingSize (${pe.limits.maxStorageBufferBindingSize})`, 'shrink the data, or map its nodes onto a PE with a larger binding limit'));
      out.push(...requirementProblems(ig, p, pe, agent));
    }
    out.push(...sharedAdapters(this.conns.map((c) => c.info)));
    return out;
  }

  /** Deploys and starts a run. Check first: a run of a graph that fails `check` is refused as a failure. */
  run(ig: ImplementationGraph, opts: RunOptions): RunHandle {
    return this.handle('run', (runId, onStoppable) => this.execute(runId, ig, opts, onStoppable));
  }

  /** A run's handle: its id, its result, and a stop that works before the run can be stopped too (it waits until it can). */
  private handle(prefix: string, start: (runId: string, onStoppable: (stop: (reason: string) => void) => void) => Promise<RunResult>): RunHandle {
    const runId = `${prefix}-${Math.floor(this.opts.clock.now()).toString(36)}-${++runCounter}`;
    let stopRequested: string | null = null;
    let stopNow: (reason: string) => void = (r) => (stopRequested = r);
    const done = start(runId, (fn) => {
      stopNow = fn;
      if (stopRequested) fn(stopRequested);
    });
    return { runId, done, stop: (reason = 'stopped by the user') => stopNow(reason) };
  }

  private async execute(runId: string, ig: ImplementationGraph, opts: RunOptions, onStoppable: (stop: (reason: string) => void) => void): Promise<RunResult> {
    const { clock } = this.opts;
    const hostIds = programHosts(ig);
    const byHost = new Map(this.conns.map((c) => [c.info.host, c]));
    const cycles = lastStartCycle(ig) + opts.iterations;
    // Records keyed by host or PE ids (the document's words) have no prototype: a host named
    // "__proto__" or "constructor" is a host like any other.
    const byId = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;
    const result: RunResult = { ok: false, runId, iterations: opts.iterations, cycles, seconds: 0, events: [], barrierPerCycle: byId(), reports: [], adapters: byId(), dropped: 0, eventCount: 0, memory: byId() };
    const problems = this.check(ig).filter((d) => d.severity === 'error');
    if (problems.length) {
      result.failure = { host: problems[0].path, message: problems.map((d) => d.message).join('; ') };
      return result;
    }
    const involved = hostIds.map((h) => byHost.get(h)!);

    let startMs = 0;
    const agentCycle = new Map<string, number>();
    const doneHosts = new Set<string>();
    const { finish, finished } = ending();
    onStoppable((reason) => finish({ host: 'coordinator', message: reason }));
    const watch = this.watchDeploy(involved, opts, finish);

    const cleanups: (() => void)[] = [];
    for (const c of involved) {
      const offsetUs = c.info.offset * 1000;
      const listener: Listener = (m) => {
        if ('runId' in m && m.runId !== runId) return;
        switch (m.type) {
          case 'trace': {
            relayTrace(m, startMs * 1000 + offsetUs, result, opts);
            agentCycle.set(c.info.host, m.cycle);
            if (opts.onProgress && startMs) {
              const cycle = Math.min(...involved.map((k) => agentCycle.get(k.info.host) ?? 0));
              const elapsed = (clock.now() - startMs) / 1000;
              opts.onProgress({ cycle, cycles, elapsed, iterationsPerSecond: elapsed > 0 ? cycle / elapsed : 0 });
            }
            break;
          }
          case 'deploy-progress':
            watch.progress(c.info.host, m.steps);
            break;
          case 'deployed':
            watch.deployed(c.info.host);
            break;
          case 'done':
            result.barrierPerCycle[c.info.host] = m.barrierPerCycle;
            for (const r of m.reports) result.reports.push({ host: c.info.host, ...r });
            (result.memory[c.info.host] ??= {}).end = m.memory;
            doneHosts.add(c.info.host);
            if (doneHosts.size === involved.length) finish();
            break;
          case 'failed':
            finish(watch.during(m.failure));
            break;
          case 'error':
            finish({ host: c.info.host, message: m.message });
            break;
          default:
            break;
        }
      };
      cleanups.push(attach(c, listener, (reason) => finish(watch.during({ host: c.info.host, message: `agent ${c.info.host} (${c.url}) disconnected: ${reason}` }))));
    }

    // Deploy everywhere, then start everywhere. The deploy waits as long as every agent reports
    // progress; it fails on an agent's silence, or past the optional cap (deploy-watch.ts).
    const waitAll = (type: 'deployed' | 'started') => answered(involved, runId, type, result, finished);
    const hosts = involved.map((c) => ({ id: c.info.host, url: c.url }));
    const deploys = deployTexts(deployMessages(ig, { runId, secret: runSecret(), hosts, iterations: opts.iterations, cycles, sync: opts.sync ?? 'self-timed', linkRate: opts.linkRate, emulateLinks: opts.emulateLinks, emulateDevices: opts.emulateDevices, slow: opts.slow, progressMs: watch.progressMs }));
    for (const c of involved) c.sendText(deploys.get(c.info.host)!);
    const deployed = await waitAll('deployed');
    watch.stop();
    let heartbeat: unknown;
    if (deployed) {
      startMs = clock.now();
      for (const c of involved) c.send({ type: 'start', runId });
      const limit = opts.heartbeat ?? 120_000;
      const beat = () => {
        const now = clock.now();
        for (const c of involved) {
          if (now - Math.max(c.lastHeard, startMs) > limit) finish({ host: c.info.host, message: `agent ${c.info.host} (${c.url}) silent for ${limit / 1000} s` });
          else c.send({ type: 'ping', id: -1, t: now });
        }
        heartbeat = later(clock, beat, Math.min(1000, limit / 2));
      };
      heartbeat = later(clock, beat, Math.min(1000, limit / 2));
    }
    const failure = await finished;
    if (heartbeat !== undefined) cancel(clock, heartbeat as never);
    result.seconds = startMs ? (clock.now() - startMs) / 1000 : 0;
    // Stop everywhere: frees memory and closes peer links (also after success).
    for (const c of involved) c.send({ type: 'stop', runId, reason: failure ? `run failed: ${failure.message}` : 'run complete' });
    // A run that fails or is stopped keeps its trace: the agents still up send the events they
    // held (their PE threads' last batches) before answering `stopped`, so the trace listeners
    // stay until then. After a success every agent has flushed before `done`.
    if (failure) await this.stopped(involved, runId);
    for (const f of cleanups) f();
    result.events.sort((a, b) => a.start - b.start);
    result.ok = !failure;
    if (failure) result.failure = failure;
    return result;
  }

  /**
   * The pool of a task-bag run: every PE of every connected agent, and each node that no PE of
   * it can run, with each PE's first failing clause (the run is refused before it starts).
   */
  checkBag(graph: BagGraph, only?: readonly string[]): Diagnostic[] {
    const pool = this.pool(only);
    const unknown = only?.filter((id) => !this.conns.some((c) => c.info.pes.some((p) => p.id === id))) ?? [];
    if (unknown.length) return [error('run.pes', `no connected agent serves PE ${unknown.join(', ')}`, `name PEs the agents report: ${this.pool().map((p) => p.id).join(', ')}`)];
    const bag = new TaskBag(graph, pool, { iterations: 1, policy: taskBagPolicy() });
    return bag.unplaceable().map(({ node }) => {
      const why = pool.map((pe) => {
        const failing = pe.capabilities && node.requires?.length ? failingClause(pe.capabilities, node.requires) : undefined;
        const lacks = pe.kernels && node.version && !pe.kernels.has(kernelMajor(node.kernel, node.version));
        return `${pe.id} on ${pe.host}: ${lacks ? `its agent lacks kernel ${node.kernel} ${node.version} (or has another major version; load it with --kernels)` : failing ? `fails ${failing.text} (${reported(pe.capabilities!, failing)})` : pe.capabilities ? 'its buffers do not fit (memory or binding limits), or the kernel has no WGSL for a GPU' : 'reports no capabilities'}`;
      });
      const clauses = node.requires?.map((c) => c.text).join(',') ?? '';
      return error(`app.nodes.${node.id}`, `node "${node.id}" has no PE to run on among the connected agents: ${why.join('; ') || 'none connected'}`, clauses ? `connect an agent with a PE that meets ${clauses} (\`pipeloom agents --match "${clauses}"\` lists them), or relax the requirement` : 'connect an agent whose PEs can hold its buffers, or shrink the data');
    });
  }

  private pool(only?: readonly string[]): BagPe[] {
    const pool = this.conns
      .filter((c) => !c.closed)
      .flatMap((c) => {
        const kernels = c.info.kernels && new Set(c.info.kernels.filter((k) => typeof k?.id === 'string' && typeof k.version === 'string').map((k) => kernelMajor(k.id, k.version)));
        return c.info.pes.map((pe) => ({ id: pe.id, host: c.info.host, capabilities: pe.capabilities, kernels }));
      });
    return only ? pool.filter((pe) => only.includes(pe.id)) : pool;
  }

  /**
   * Runs `graph` in task-bag mode on every connected agent: tasks go to idle, else least-loaded,
   * capable PEs as they become ready (run/taskbag/bag.ts, run/policy.ts). The agents pull inputs
   * from one another; nothing but tasks and their receipts passes through here.
   */
  runBag(graph: BagGraph, opts: BagRunOptions): RunHandle {
    return this.handle('bag', (runId, onStoppable) => this.executeBag(runId, graph, opts, onStoppable));
  }

  private async executeBag(runId: string, graph: BagGraph, opts: BagRunOptions, onStoppable: (stop: (reason: string) => void) => void): Promise<RunResult> {
    const { clock } = this.opts;
    const byId = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;
    const result: RunResult = { ok: false, runId, iterations: opts.iterations, cycles: opts.iterations, seconds: 0, events: [], barrierPerCycle: byId(), reports: [], adapters: byId(), dropped: 0, eventCount: 0, memory: byId() };
    const heartbeatMs = opts.heartbeat ?? 2000;
    const problems = this.checkBag(graph, opts.pes);
    if (problems.length) {
      result.failure = { host: problems[0].path, message: problems.map((d) => d.message).join('; ') };
      return result;
    }
    const involved = this.conns.filter((c) => !c.closed);
    const bag = new TaskBag(graph, this.pool(opts.pes), { iterations: opts.iterations, window: opts.window, policy: taskBagPolicy({ prefetch: opts.prefetch }), attempts: opts.attempts });
    const perPe: Record<string, number> = byId();
    result.bag = { ...bag.counts, perPe, heartbeat: heartbeatMs };
    let startMs = 0;
    const { finish, finished } = ending(() => bag.end());
    onStoppable((reason) => finish({ host: 'coordinator', message: reason }));
    const byHost = new Map(involved.map((c) => [c.info.host, c]));
    const gone = new Set<string>();
    const watch = this.watchDeploy(involved, opts, finish);

    // The bag's depth and tasks in flight as counter events, whenever they change.
    let lastDepth = -1;
    let lastFlight = -1;
    const counters = () => {
      if (!startMs) return;
      const depth = bag.depth;
      const flight = bag.inFlight;
      if (depth === lastDepth && flight === lastFlight) return;
      const t = (clock.now() - startMs) * 1000;
      const events: TraceEvent[] = [];
      const counter = (name: string, value: number): TraceEvent => ({ host: 'coordinator', pe: 'bag', thread: 'bag', kind: 'counter', name, value, start: t, end: t, iteration: -1, cycle: -1 });
      if (depth !== lastDepth) events.push(counter('bag depth', depth));
      if (flight !== lastFlight) events.push(counter('in flight', flight));
      lastDepth = depth;
      lastFlight = flight;
      result.eventCount += events.length;
      if (opts.keepEvents !== false) result.events.push(...events);
      opts.onEvents?.(events);
    };
    const take = (cmds: BagCommand[]) => {
      for (const cmd of cmds) {
        if (cmd.type === 'task') byHost.get(cmd.host)?.send({ type: 'task', runId, ...cmd.task });
        else if (cmd.type === 'free') byHost.get(cmd.host)?.send({ type: 'free', runId, keys: cmd.keys });
        else if (cmd.type === 'finished') finish();
        else finish(cmd.failure);
      }
      Object.assign(result.bag!, bag.counts);
      counters();
      opts.onBag?.({ ...bag.counts, depth: bag.depth, inFlight: bag.inFlight });
      if (opts.onProgress && startMs) {
        const elapsed = (clock.now() - startMs) / 1000;
        const cycle = Math.floor(bag.counts.committed / Math.max(1, graph.nodes.length));
        opts.onProgress({ cycle, cycles: opts.iterations, elapsed, iterationsPerSecond: elapsed > 0 ? cycle / elapsed : 0, unit: 'iteration' });
      }
    };
    const leave = (c: AgentConn, reason: string) => {
      if (gone.has(c.info.host)) return;
      gone.add(c.info.host);
      if (startMs) take(bag.leave(c.info.host, reason));
      else finish(watch.during({ host: c.info.host, message: `agent ${c.info.host} (${c.url}) ${reason} before the run started` }));
    };

    const cleanups: (() => void)[] = [];
    for (const c of involved) {
      const offsetUs = c.info.offset * 1000;
      const host = c.info.host;
      const listener: Listener = (m) => {
        if ('runId' in m && m.runId !== runId) return;
        switch (m.type) {
          case 'trace':
            relayTrace(m, startMs * 1000 + offsetUs, result, opts);
            break;
          case 'task-done': {
            const before = bag.counts.committed;
            take(bag.done(host, m));
            if (bag.counts.committed > before) {
              perPe[m.pe] = (perPe[m.pe] ?? 0) + 1;
              const at = m.id.lastIndexOf('@');
              if (m.values && typeof m.values === 'object') result.reports.push({ host, node: m.id.slice(0, at), iteration: Number(m.id.slice(at + 1)), values: m.values });
            }
            break;
          }
          case 'deploy-progress':
            watch.progress(host, m.steps);
            break;
          case 'deployed':
            watch.deployed(host);
            break;
          case 'task-failed':
            take(bag.failed(host, { ...m, lost: typeof m.lost === 'string' && byHost.has(m.lost) ? m.lost : undefined }));
            break;
          case 'failed':
            leave(c, `failed: ${m.failure?.message ?? 'unknown'}`);
            break;
          case 'error':
            leave(c, `reported an error: ${m.message}`);
            break;
          default:
            break;
        }
      };
      cleanups.push(attach(c, listener, (reason) => leave(c, `disconnected: ${reason}`)));
    }

    const hosts = involved.map((c) => ({ id: c.info.host, url: c.url }));
    const kernels: Record<string, string> = {};
    for (const n of graph.nodes) {
      const v = findKernel(n.kernel)?.version;
      if (v) kernels[n.kernel] = v;
    }
    const deploy = JSON.stringify({ type: 'bag-deploy', runId, secret: runSecret(), hosts, nodes: graph.nodes.map((n) => ({ id: n.id, kernel: n.kernel, params: n.params })), kernels, emulateDevices: opts.emulateDevices, slow: opts.slow, progressMs: watch.progressMs } satisfies ToAgent);
    for (const c of involved) c.sendText(deploy);
    const deployed = await answered(involved, runId, 'deployed', result, finished);
    watch.stop();
    let heartbeat: unknown;
    if (deployed) {
      startMs = clock.now();
      for (const c of involved) c.send({ type: 'start', runId });
      // Heartbeats: a ping every quarter of the limit; an agent silent past it leaves the pool.
      const beat = () => {
        const now = clock.now();
        for (const c of involved) {
          if (gone.has(c.info.host) || c.closed) continue;
          if (now - Math.max(c.lastHeard, startMs) > heartbeatMs) leave(c, `silent for ${heartbeatMs / 1000} s`);
          else c.send({ type: 'ping', id: -1, t: now });
        }
        heartbeat = later(clock, beat, heartbeatMs / 4);
      };
      heartbeat = later(clock, beat, heartbeatMs / 4);
      take(bag.start());
    }
    const failure = await finished;
    if (heartbeat !== undefined) cancel(clock, heartbeat as never);
    result.seconds = startMs ? (clock.now() - startMs) / 1000 : 0;
    for (const c of involved) c.send({ type: 'stop', runId, reason: failure ? `run failed: ${failure.message}` : 'run complete' });
    // Every agent flushes its last trace batches before `stopped` (after a success too: tasks
    // report done before their trace batch goes out).
    await this.stopped(involved, runId);
    for (const f of cleanups) f();
    Object.assign(result.bag!, bag.counts);
    result.events.sort((a, b) => a.start - b.start);
    result.ok = !failure;
    if (failure) result.failure = failure;
    return result;
  }

  /** A deploy's watch over `conns` (their progress reports and silence), failing the run through `finish`. */
  private watchDeploy(conns: AgentConn[], opts: DeployOptions, finish: (f: FailureReport) => void): DeployWatch {
    const byHost = new Map(conns.map((c) => [c.info.host, c]));
    return new DeployWatch(
      conns.map((c) => c.info.host),
      this.opts.clock,
      opts,
      (host) => byHost.get(host)?.lastHeard ?? 0,
      finish,
    );
  }

  /** Resolves once each of `conns` has answered `stopped` for the run or closed, or after STOP_WAIT_MS. */
  private stopped(conns: AgentConn[], runId: string): Promise<void> {
    const { clock } = this.opts;
    const waiting = new Set(conns.filter((c) => !c.closed));
    if (!waiting.size) return Promise.resolve();
    return new Promise((resolve) => {
      const undo: (() => void)[] = [];
      const end = () => {
        cancel(clock, timer as never);
        for (const f of undo) f();
        resolve();
      };
      const timer = later(clock, end, STOP_WAIT_MS);
      for (const c of waiting) {
        const settled = () => {
          waiting.delete(c);
          if (!waiting.size) end();
        };
        const l: Listener = (m) => m.type === 'stopped' && m.runId === runId && settled();
        c.listeners.add(l);
        c.closeListeners.add(settled);
        undo.push(() => {
          c.listeners.delete(l);
          c.closeListeners.delete(settled);
        });
      }
    });
  }

  close(): void {
    for (const c of this.conns) if (!c.closed) c.socket.close(1000, 'coordinator done');
  }
}

/** Listens to an agent for one run (a connection already closed is said at once); returns the undo. */
function attach(c: AgentConn, listener: Listener, onClose: (reason: string) => void): () => void {
  c.listeners.add(listener);
  c.closeListeners.add(onClose);
  if (c.closed) onClose(c.closed);
  return () => {
    c.listeners.delete(listener);
    c.closeListeners.delete(onClose);
  };
}

/** A run's end, once: the first `finish` (a failure, or none for success) settles `finished`; later ones do nothing. */
function ending(onEnd?: () => void): { finish: (failure?: FailureReport) => void; finished: Promise<FailureReport | undefined> } {
  let finish!: (failure?: FailureReport) => void;
  const finished = new Promise<FailureReport | undefined>((resolve) => {
    let over = false;
    finish = (failure) => {
      if (over) return;
      over = true;
      onEnd?.();
      resolve(failure);
    };
  });
  return { finish, finished };
}

/** A trace batch onto the coordinator's time axis (`base`: the agent's clock at the run's start, µs), into the result and the listener. */
function relayTrace(m: Extract<FromAgent, { type: 'trace' }>, base: number, result: RunResult, opts: Pick<RunOptions, 'keepEvents' | 'onEvents'>): void {
  const events = m.events.map((e) => ({ ...e, start: e.start - base, end: e.end - base }));
  result.eventCount += events.length;
  if (opts.keepEvents !== false) for (const e of events) result.events.push(e);
  result.dropped += m.dropped ?? 0;
  opts.onEvents?.(events);
}

/** Resolves true once every one of `conns` answered `type` for the run (deploys record adapters and memory), false if the run ends first. */
function answered(conns: AgentConn[], runId: string, type: 'deployed' | 'started', result: RunResult, finished: Promise<unknown>): Promise<boolean> {
  return Promise.race([
    Promise.all(
      conns.map(
        (c) =>
          new Promise<void>((resolve) => {
            const l: Listener = (m) => {
              if (m.type === type && m.runId === runId) {
                c.listeners.delete(l);
                if (m.type === 'deployed') {
                  Object.assign(result.adapters, m.adapters);
                  (result.memory[c.info.host] ??= {}).start = m.memory;
                }
                resolve();
              }
            };
            c.listeners.add(l);
          }),
      ),
    ).then(() => true),
    finished.then(() => false),
  ]);
}

/** Each firing mapped onto `pe` whose node's `requires` the PE fails, with the first failing clause and what the PE reports. */
function requirementProblems(ig: ImplementationGraph, p: number, pe: PeReport, agent: AgentInfo): Diagnostic[] {
  const out: Diagnostic[] = [];
  const { fire, start, list, pes } = ig.programs;
  const phases = ig.phases.length;
  for (let i = start[p * phases]; i < start[(p + 1) * phases]; i++) {
    if (list[i] >= 0) continue;
    const s = -list[i] - 1;
    const clauses = fire.requires[s];
    if (!clauses?.length) continue;
    const node = ig.order[s];
    if (!pe.capabilities) {
      out.push(error(`mapping.${node}`, `node "${node}" requires ${clauses.map((c) => c.text).join(', ')}, but agent ${agent.host} (${agent.url}) reports no capabilities for ${pes[p].pe}`, 'update the agent: its version predates capability reports'));
      continue;
    }
    const failing = failingClause(pe.capabilities, clauses);
    if (failing) out.push(error(`mapping.${node}`, `node "${node}" requires ${failing.text}, but ${pes[p].pe} on agent ${agent.host} fails it: ${reported(pe.capabilities, failing)}`, `map "${node}" onto a PE that meets its requires (\`pipeloom agents --match "${clauses.map((c) => c.text).join(',')}"\` lists them), or relax the requirement`));
  }
  return out;
}

/** Two agents on one machine that both serve one hardware adapter (software adapters are shared freely): a refusal naming both. */
export function sharedAdapters(agents: readonly AgentInfo[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const claimed = new Map<string, AgentInfo>();
  for (const a of agents) {
    if (!a.machine) continue;
    const own = new Set<string>();
    for (const pe of a.pes) {
      const c = pe.capabilities;
      if (!c || c.kind !== 'gpu' || c.software !== false) continue;
      const key = `${a.machine.id}|${c.vendor}|${c.architecture}|${c.device}|${c.description}|${pe.adapter ?? 0}`;
      if (own.has(key)) continue;
      own.add(key);
      const other = claimed.get(key);
      if (other && other !== a) out.push(error(`arch.hosts.${a.host}`, `agents ${other.host} (${other.url}) and ${a.host} (${a.url}) run on one machine (${a.machine.hostname}) and both claim its adapter ${c.description ?? c.device ?? '?'}`, 'give each agent its own adapters on that machine (one agent per machine serves all of its GPUs)'));
      else claimed.set(key, a);
    }
  }
  return out;
}
