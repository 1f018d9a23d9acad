import { createStore, useStore } from 'zustand';
import { checkAgentKernels, Coordinator, type AgentInfo, type Progress, type RunHandle, type RunOptions, type RunResult, type SocketLike, type FailureReport, type ImplementationGraph, type Diagnostic, type TraceEvent, TraceColumns, TraceAccumulator } from '@pipeloom/core';

// The Run view's state: connections, the run in progress and its live numbers. The measured
// trace lives in a column store outside React state (it grows by thousands of events a
// second); the store only carries its version so views know to redraw, and the numbers are
// published a few times a second rather than per batch, each from the events that arrived
// since the last (core's TraceAccumulator), not from the whole trace again.

export type ConnectionStatus = 'disconnected' | 'connecting' | 'connected' | 'failed';
export type RunStatus = 'idle' | 'checked' | 'running' | 'stopping' | 'done' | 'failed' | 'stopped';

export interface LiveNumbers {
  cycle: number;
  cycles: number;
  iterationsPerSecond: number;
  /** Seconds per cycle in steady state so far (core's trace analysis of the cycles complete; before the fill is over, the mean since the start). */
  cycleTime: number;
  elapsed: number;
  events: number;
  /** Busy fraction of each lane (fire + transfer time over the trace's span, trace analysis), keyed host/pe/thread. */
  utilisation: { key: string; value: number }[];
}

export interface RunState {
  urls: string;
  token: string;
  connection: ConnectionStatus;
  connectError?: string;
  agents: AgentInfo[];
  overlap: boolean;
  iterations: number;
  /** Transfers last at least their link's time in the document (link emulation). */
  emulateLinks: boolean;
  /** How the agents synchronise: the document's options.sync (self-timed when unset). */
  sync?: RunOptions['sync'];
  status: RunStatus;
  /** Problems between the plan and what the agents serve (from Deploy / Start). */
  problems: Diagnostic[];
  failure?: FailureReport;
  /** Per-node reports from checking kernels, and whether the run's checks passed. */
  result?: { ok: boolean; seconds: number; cycles: number; reports: RunResult['reports']; dropped: number };
  live: LiveNumbers;
  /** Version of the measured trace (bumped when batches arrive). */
  traceVersion: number;
  /** Events are streaming in (a run, or the timeline benchmark): the timeline polls every frame. */
  streaming: boolean;
}

const emptyLive = (): LiveNumbers => ({ cycle: 0, cycles: 0, iterationsPerSecond: 0, cycleTime: 0, elapsed: 0, events: 0, utilisation: [] });

export const browserClock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
  clearTimeout: (h: never) => clearTimeout(h),
};

export interface RunDeps {
  /** Opens a socket to an agent (the browser's WebSocket by default). */
  connect?: (url: string) => SocketLike;
  /** Milliseconds between published live numbers. */
  publishMs?: number;
}

/** A Run view's store, its measured trace and its coordinator. */
export function createRunStore(deps: RunDeps = {}) {
  const connect = deps.connect ?? ((url: string) => new WebSocket(url) as unknown as SocketLike);
  const publishMs = deps.publishMs ?? 250;
  let coordinator: Coordinator | null = null;
  let handle: RunHandle | null = null;
  // The graph of the current (or last) run: the trace export draws its flows from it.
  let runIg: ImplementationGraph | null = null;
  let runIterations: number | undefined;
  // The measured trace and its analysis so far.
  let measured = new TraceAccumulator();
  let progress: Progress | null = null;
  let timer: ReturnType<typeof setInterval> | undefined;
  let seeded: object | null = null;

  const store = createStore<RunState>()(() => ({
    urls: '',
    token: '',
    connection: 'disconnected',
    agents: [],
    overlap: true,
    iterations: 50,
    emulateLinks: false,
    status: 'idle',
    problems: [],
    live: emptyLive(),
    traceVersion: 0,
    streaming: false,
  }));

  const numbers = (): LiveNumbers => {
    const p = progress;
    // Cycles below the agents' slowest reported cycle are complete; later ones are still arriving.
    const a = measured.analyse({ fillCycles: runIg?.fillCycles, lastCycle: p ? p.cycle - 1 : undefined, iterations: runIterations });
    const utilisation = a.lanes.map((l) => ({ key: `${l.host}/${l.pe}/${l.thread}`, value: l.utilisation }));
    let cycleTime = a.cycleTime;
    if (!cycleTime && p && p.cycle > 0) cycleTime = p.elapsed / p.cycle;
    return { cycle: p?.cycle ?? 0, cycles: p?.cycles ?? 0, iterationsPerSecond: p?.iterationsPerSecond ?? 0, cycleTime, elapsed: p?.elapsed ?? 0, events: measured.columns.length, utilisation };
  };
  const publish = () => store.setState({ live: numbers(), traceVersion: measured.columns.version });

  const api = {
    store,
    /** The measured trace of the current (or last) run. */
    measured: (): TraceColumns => measured.columns,
    /** The implementation graph the current (or last) run executed. */
    runGraph: () => runIg,

    /** Appends a batch of live events (the coordinator's onEvents). */
    ingest(events: readonly TraceEvent[]): void {
      measured.append(events);
    },

    /** Starts a new, empty measured trace. */
    reset(): void {
      runIg = null;
      runIterations = undefined;
      measured = new TraceAccumulator();
      progress = null;
      store.setState({ live: emptyLive(), traceVersion: 0 });
    },

    /** Publishes the live numbers now (they are otherwise published every `publishMs` while running). */
    publish,

    setStreaming(streaming: boolean): void {
      store.setState({ streaming });
    },

    progress(p: Progress): void {
      progress = p;
    },

    setFields(patch: Partial<Pick<RunState, 'urls' | 'token' | 'overlap' | 'iterations' | 'emulateLinks'>>): void {
      store.setState(patch);
    },

    /** Takes strategy and iterations from a document's run options when they differ from the last seen; true if it did. */
    seed(options: { overlap: boolean; iterations: number; sync?: RunOptions['sync'] }): boolean {
      if (options === seeded) return false;
      seeded = options;
      store.setState({ overlap: options.overlap, iterations: options.iterations, sync: options.sync });
      return true;
    },

    async connect(): Promise<void> {
      const { urls, token } = store.getState();
      const list = urls.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);
      if (!list.length) {
        store.setState({ connection: 'failed', connectError: 'enter at least one agent URL, e.g. ws://127.0.0.1:7070' });
        return;
      }
      api.disconnect();
      store.setState({ connection: 'connecting', connectError: undefined });
      try {
        coordinator = await Coordinator.connect(list, { token, connect, clock: browserClock, timeout: 10_000 });
        store.setState({ connection: 'connected', agents: coordinator.agents });
      } catch (e) {
        coordinator = null;
        store.setState({ connection: 'failed', agents: [], connectError: e instanceof Error ? e.message : String(e) });
      }
    },

    disconnect(): void {
      handle?.stop('disconnected by the user');
      coordinator?.close();
      coordinator = null;
      store.setState({ connection: 'disconnected', agents: [] });
    },

    /** Checks the plan against what the connected agents serve: hosts, PEs, memory. */
    deploy(ig: ImplementationGraph): boolean {
      if (!coordinator) {
        store.setState({ problems: [{ path: 'run', message: 'not connected to any agent', hint: 'enter the agent URLs and token, then Connect', severity: 'error' }] });
        return false;
      }
      // Kernels an agent lacks or has in another major version are refused here too (issue 19).
      const problems = [...coordinator.check(ig), ...checkAgentKernels(ig, coordinator.agents)];
      const ok = !problems.some((d) => d.severity === 'error');
      store.setState({ problems, status: ok ? 'checked' : 'idle' });
      return ok;
    },

    /**
     * Deploys the programs, starts the run and streams its trace; resolves when it ends.
     * `emulateDevices`: seconds some nodes' firings last at least (generic.work stand-ins).
     */
    async start(ig: ImplementationGraph, extra: Pick<RunOptions, 'emulateDevices'> = {}): Promise<RunResult | null> {
      if (handle || !api.deploy(ig)) return null;
      const c = coordinator!;
      api.reset();
      runIg = ig;
      store.setState({ status: 'running', streaming: true, failure: undefined, result: undefined });
      const { iterations, emulateLinks, sync } = store.getState();
      runIterations = iterations;
      handle = c.run(ig, { iterations, emulateLinks, emulateDevices: extra.emulateDevices, sync: sync ?? 'self-timed', keepEvents: false, onEvents: (ev) => api.ingest(ev), onProgress: (p) => api.progress(p) });
      timer = setInterval(publish, publishMs);
      const result = await handle.done;
      clearInterval(timer);
      handle = null;
      const stopped = store.getState().status === 'stopping';
      if (result.seconds > 0 && progress) progress = { ...progress, elapsed: result.seconds, iterationsPerSecond: progress.cycle / result.seconds };
      store.setState({
        status: result.ok ? 'done' : stopped ? 'stopped' : 'failed',
        streaming: false,
        failure: result.failure,
        result: { ok: result.ok, seconds: result.seconds, cycles: result.cycles, reports: result.reports, dropped: result.dropped },
      });
      publish();
      return result;
    },

    stop(): void {
      if (!handle) return;
      store.setState({ status: 'stopping' });
      handle.stop('stopped by the user');
    },

    dispose(): void {
      clearInterval(timer);
      api.disconnect();
    },
  };
  return api;
}

export type RunStore = ReturnType<typeof createRunStore>;

/** The designer's Run view state; it outlives the tab so a run keeps going while you edit. */
export const appRun = createRunStore();

export const useRun = <T,>(run: RunStore, sel: (s: RunState) => T) => useStore(run.store, sel);
