/**
 * What a run of either mode (static.ts, taskbag.ts) shares: its options, result and handle; its
 * end, settled once; its listeners on the agents; the trace relay onto the coordinator's time
 * axis; the deploy's watch; and the wait for the agents' `stopped` after it.
 */
import type { TraceEvent } from '../../trace/event.js';
import type { SyncMode } from '../../document/types.js';
import { secureRandomBytes } from '../../util/random.js';
import { DeployWatch, type DeployOptions } from '../deploy-watch.js';
import type { FailureReport, FromAgent, ProcessMemory, SinkWrite } from '../protocol.js';
import type { BagCounts } from '../taskbag/bag.js';
import { later, cancel, type Clock } from '../timers.js';
import type { AgentConn, Listener } from './connection.js';

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
  /** What each sink (io.write node) wrote, as its agent reported it. */
  writes: SinkWrite[];
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

export interface RunHandle {
  runId: string;
  done: Promise<RunResult>;
  stop(reason?: string): void;
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
export function runSecret(): string {
  const bytes = secureRandomBytes(16);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

let runCounter = 0;

/** How a run says it can be stopped now: `runHandle` calls `stop` at once where a stop was asked before. */
export type OnStoppable = (stop: (reason: string) => void) => void;

/** A run's handle: its id, its result, and a stop that works before the run can be stopped too (it waits until it can). */
export function runHandle(clock: Clock, prefix: string, start: (runId: string, onStoppable: OnStoppable) => Promise<RunResult>): RunHandle {
  const runId = `${prefix}-${Math.floor(clock.now()).toString(36)}-${++runCounter}`;
  let stopRequested: string | null = null;
  let stopNow: (reason: string) => void = (r) => (stopRequested = r);
  const done = start(runId, (fn) => {
    stopNow = fn;
    if (stopRequested) fn(stopRequested);
  });
  return { runId, done, stop: (reason = 'stopped by the user') => stopNow(reason) };
}

/**
 * A record keyed by host or PE ids (the document's words), with no prototype: a host named
 * "__proto__" or "constructor" is a host like any other.
 */
export const byId = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/** A run's result before anything happened. */
export function emptyResult(runId: string, iterations: number, cycles: number): RunResult {
  return {
    ok: false,
    runId,
    iterations,
    cycles,
    seconds: 0,
    events: [],
    barrierPerCycle: byId(),
    reports: [],
    writes: [],
    adapters: byId(),
    dropped: 0,
    eventCount: 0,
    memory: byId(),
  };
}

/** A deploy's watch over `conns` (their progress reports and silence), failing the run through `finish`. */
export function watchDeploy(conns: AgentConn[], clock: Clock, opts: DeployOptions, finish: (f: FailureReport) => void): DeployWatch {
  const byHost = new Map(conns.map((c) => [c.info.host, c]));
  return new DeployWatch(
    conns.map((c) => c.info.host),
    clock,
    opts,
    (host) => byHost.get(host)?.lastHeard ?? 0,
    finish,
  );
}

/** Resolves once each of `conns` has answered `stopped` for the run or closed, or after STOP_WAIT_MS. */
export function stopped(conns: AgentConn[], runId: string, clock: Clock): Promise<void> {
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

/** Listens to an agent for one run (a connection already closed is said at once); returns the undo. */
export function attach(c: AgentConn, listener: Listener, onClose: (reason: string) => void): () => void {
  c.listeners.add(listener);
  c.closeListeners.add(onClose);
  if (c.closed) onClose(c.closed);
  return () => {
    c.listeners.delete(listener);
    c.closeListeners.delete(onClose);
  };
}

/** A run's end, once: the first `finish` (a failure, or none for success) settles `finished`; later ones do nothing. */
export function ending(onEnd?: () => void): { finish: (failure?: FailureReport) => void; finished: Promise<FailureReport | undefined> } {
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
export function relayTrace(m: Extract<FromAgent, { type: 'trace' }>, base: number, result: RunResult, opts: Pick<RunOptions, 'keepEvents' | 'onEvents'>): void {
  const events = m.events.map((e) => ({ ...e, start: e.start - base, end: e.end - base }));
  result.eventCount += events.length;
  if (opts.keepEvents !== false) for (const e of events) result.events.push(e);
  result.dropped += m.dropped ?? 0;
  opts.onEvents?.(events);
}

/** Resolves true once every one of `conns` answered `type` for the run (deploys record adapters and memory), false if the run ends first. */
export function answered(conns: AgentConn[], runId: string, type: 'deployed' | 'started', result: RunResult, finished: Promise<unknown>): Promise<boolean> {
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
