import { createStore, useStore } from 'zustand';
import { analyze, calibrationFrom, checkAgentKernels, Coordinator, measuredTimes, type AgentInfo, type BagCounts, type BagGraph, type BagRunOptions, type Calibration, type DeployOptions, type DeployProgress, type MeasuredTimes, type ProjectDocument, type Progress, type RunHandle, type RunOptions, type RunResult, type SocketLike, type FailureReport, type ImplementationGraph, type Diagnostic, type TraceEvent, type TraceMetadata, TraceColumns, TraceAccumulator, readChromeTrace, TRACE_FILE_LIMITS } from '@pipeloom/core';

// The Run view's state: connections, the run in progress and its live numbers. The measured
// trace lives in a column store outside React state (it grows by thousands of events a
// second); the store only carries its version so views know to redraw, and the numbers are
// published a few times a second rather than per batch, each from the events that arrived
// since the last (core's TraceAccumulator), not from the whole trace again.

/** 'reconnecting': a connection closed without being asked to (an agent restarted); the store logs in again on its own. */
export type ConnectionStatus = 'disconnected' | 'connecting' | 'connected' | 'reconnecting' | 'failed';
export type RunStatus = 'idle' | 'checked' | 'running' | 'stopping' | 'done' | 'failed' | 'stopped' | 'calibrating';

/** A document revision as the designer counts them: every edit the compiler sees bumps `revision`, every load bumps `loads`. */
export interface DocumentRevision {
  revision: number;
  loads: number;
}

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

/** A task-bag run's bag as it goes (core's onBag): tasks committed of all, requeued, late results discarded, recomputed, ready and not given (depth), given and not done (in flight). */
export type BagNumbers = BagCounts & { depth: number; inFlight: number };

/** What a task-bag run is started with besides its task graph (the document's run options). */
export type BagStartOptions = Pick<BagRunOptions, 'window' | 'prefetch' | 'emulateDevices'> & { iterations?: number };

export interface RunState {
  urls: string;
  token: string;
  connection: ConnectionStatus;
  connectError?: string;
  /** While reconnecting: the hosts whose connection closed. */
  lost?: string[];
  agents: AgentInfo[];
  iterations: number;
  /** Transfers last at least their link's time in the document (link emulation). */
  emulateLinks: boolean;
  /** How the agents synchronise: the document's options.sync (self-timed when unset). */
  sync?: RunOptions['sync'];
  /** A hard cap on a deploy, seconds; 0: none (the default: a deploy fails only when an agent goes silent). */
  deployTimeout: number;
  /** The run's deploy as the agents report it: each host's step, until all have deployed. */
  deploy?: DeployProgress;
  status: RunStatus;
  /** Problems between the plan and what the agents serve (from Deploy / Start). */
  problems: Diagnostic[];
  failure?: FailureReport;
  /** Per-node reports from checking kernels, and whether the run's checks passed; a task-bag run's bag counts and tasks per PE. */
  result?: { ok: boolean; seconds: number; cycles: number; reports: RunResult['reports']; dropped: number; bag?: RunResult['bag'] };
  /** The mode of the run (or check) shown: the compiled programs on the mapping, or the task bag. */
  mode: 'static' | 'taskbag';
  /** A task-bag run's live bag numbers (published with the other live numbers), kept after it ends. */
  bag?: BagNumbers;
  live: LiveNumbers;
  /** Version of the measured trace (bumped when batches arrive). */
  traceVersion: number;
  /** Events are streaming in (a run, or the timeline benchmark): the timeline polls every frame. */
  streaming: boolean;
  /** The document's revision now (the designer reports each edit and load). */
  seen: DocumentRevision;
  /** The revision the last Deploy or run was of: its check and results belong to it. */
  ran?: DocumentRevision;
  /** The calibration run in progress: which strategy, and why the last one failed. */
  calibration?: { strategy?: 'overlap' | 'no overlap'; error?: string };
  /** A saved trace opened in place of a run's (Open trace…): its file, what its metadata says it is. */
  opened?: { file: string; events: number; metadata?: TraceMetadata };
  /** Why the last trace file opened was not taken (the trace shown is kept). */
  traceProblems: Diagnostic[];
}

/** Whether the deploy check and results shown are of the document as it is ('current'), of an earlier revision ('modified'), or there are none. */
export function freshness(s: Pick<RunState, 'seen' | 'ran'>): 'none' | 'current' | 'modified' {
  if (!s.ran) return 'none';
  return s.ran.revision === s.seen.revision && s.ran.loads === s.seen.loads ? 'current' : 'modified';
}

/** Steady cycles measured per strategy by Calibrate (as `pipeloom calibrate`'s default). */
export const CALIBRATE_ITERATIONS = 10;

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

/**
 * Milliseconds before each try to log in again after a connection closed: an agent restarted
 * by its supervisor listens again within a second or two; one down for longer is tried every
 * few seconds, never given up on (Disconnect stops it).
 */
export const RECONNECT_MS = [500, 1000, 2000, 4000, 8000];

/**
 * The coordinator's view of a socket, telling `closed` too when it closes (the coordinator
 * keeps the socket's own handlers).
 */
function watched(socket: SocketLike, closed: () => void): SocketLike {
  const w: SocketLike = {
    get readyState() {
      return socket.readyState;
    },
    send: (data) => socket.send(data),
    close: (code, reason) => socket.close(code, reason),
    onopen: null,
    onmessage: null,
    onclose: null,
    onerror: null,
  };
  socket.onopen = (ev) => w.onopen?.(ev);
  socket.onmessage = (ev) => w.onmessage?.(ev);
  socket.onerror = (ev) => w.onerror?.(ev);
  socket.onclose = (ev) => {
    w.onclose?.(ev);
    closed();
  };
  return w;
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
  // The bag's latest counts (onBag fires per task event; published with the live numbers).
  let bagNow: BagNumbers | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let seeded: object | null = null;
  // Logins are numbered; `live` is the one the coordinator in use came from. A socket of another
  // login closing is one we closed (or a login that failed): only the live one's are losses.
  let logins = 0;
  let live = 0;
  // The agents and token of the live login, to log in to again after a loss.
  let target: { list: string[]; token: string } | null = null;
  // The reconnect in progress (cleared to cancel it) and its wait.
  let retry: object | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;

  /** Logs in to `list` with sockets that report a close to `lostConnection`. */
  const login = (list: string[], token: string) => {
    const n = ++logins;
    const open = (url: string) => watched(connect(url), () => lostConnection(n, url));
    return { n, connecting: Coordinator.connect(list, { token, connect: open, clock: browserClock, timeout: 10_000 }) };
  };

  const cancelRetry = () => {
    retry = null;
    clearTimeout(retryTimer);
  };

  const lostConnection = (n: number, url: string) => {
    if (n !== live) return;
    const host = coordinator?.agents.find((a) => a.url === url)?.host ?? url;
    const lost = store.getState().lost ?? [];
    store.setState({ connection: 'reconnecting', lost: lost.includes(host) ? lost : [...lost, host], connectError: undefined });
    if (!retry) void reconnect();
  };

  /** Logs in to the same agents again, after the run the loss ended (if any) is over; tries until it works or is cancelled. */
  const reconnect = async () => {
    const mine = {};
    retry = mine;
    // The run on the lost agent fails on its own, naming the host; its coordinator goes after it.
    while (handle) await handle.done;
    if (retry !== mine || !target) return;
    live = 0;
    coordinator?.close();
    coordinator = null;
    const { list, token } = target;
    for (let attempt = 0; ; attempt++) {
      const wait = RECONNECT_MS[Math.min(attempt, RECONNECT_MS.length - 1)];
      await new Promise((resolve) => (retryTimer = setTimeout(resolve, wait)));
      if (retry !== mine) return;
      const { n, connecting } = login(list, token);
      try {
        const c = await connecting;
        if (retry !== mine) {
          c.close();
          return;
        }
        retry = null;
        coordinator = c;
        live = n;
        store.setState({ connection: 'connected', agents: c.agents, lost: undefined, connectError: undefined });
        return;
      } catch (e) {
        if (retry !== mine) return;
        const next = RECONNECT_MS[Math.min(attempt + 1, RECONNECT_MS.length - 1)] / 1000;
        store.setState({ connectError: `${e instanceof Error ? e.message : String(e)} (trying again in ${next} s)` });
      }
    }
  };

  const store = createStore<RunState>()(() => ({
    urls: '',
    token: '',
    connection: 'disconnected',
    agents: [],
    iterations: 50,
    emulateLinks: false,
    deployTimeout: 0,
    status: 'idle',
    mode: 'static',
    problems: [],
    live: emptyLive(),
    traceVersion: 0,
    streaming: false,
    seen: { revision: 0, loads: 0 },
    traceProblems: [],
  }));

  const numbers = (): LiveNumbers => {
    const p = progress;
    // Cycles below the agents' slowest reported cycle are complete; later ones are still arriving.
    const a = measured.analyse({ fillCycles: runIg?.fillCycles, lastCycle: p ? p.cycle - 1 : undefined, iterations: runIterations });
    const utilisation = a.lanes.map((l) => ({ key: `${l.host}/${l.pe}/${l.thread}`, value: l.utilisation }));
    // A task-bag run has no cycles: its iterations overlap as the window allows, so its time
    // per iteration is the elapsed time over the iterations complete.
    let cycleTime = bagNow ? 0 : a.cycleTime;
    if (!cycleTime && p && p.cycle > 0) cycleTime = p.elapsed / p.cycle;
    return { cycle: p?.cycle ?? 0, cycles: p?.cycles ?? 0, iterationsPerSecond: p?.iterationsPerSecond ?? 0, cycleTime, elapsed: p?.elapsed ?? 0, events: measured.columns.length, utilisation };
  };
  /** A run's deploy options: the setting's cap, and each host's step into the state as it is reported. */
  const deployOptions = (): DeployOptions => {
    const { deployTimeout } = store.getState();
    return { ...(deployTimeout > 0 ? { deployTimeout: deployTimeout * 1000, deployTimeoutName: 'deploy time limit (Run settings)' } : {}), onDeploy: (deploy) => store.setState({ deploy }) };
  };
  const publish = () => store.setState({ live: numbers(), traceVersion: measured.columns.version, ...(bagNow ? { bag: bagNow } : {}) });

  /** Publishes the run's numbers while it goes and its outcome when it ends (static and task-bag runs alike). */
  const follow = async (h: RunHandle): Promise<RunResult> => {
    timer = setInterval(publish, publishMs);
    const result = await h.done;
    clearInterval(timer);
    handle = null;
    const stopped = store.getState().status === 'stopping';
    // A load cleared this run while it stopped: nothing of it is shown.
    if (!store.getState().ran) {
      store.setState({ status: 'idle', streaming: false });
      api.reset();
      return result;
    }
    if (result.seconds > 0 && progress) progress = { ...progress, elapsed: result.seconds, iterationsPerSecond: progress.cycle / result.seconds };
    // The bag's final counts: a last onBag may not have come (a run refused before it started).
    if (result.bag && bagNow) bagNow = { ...bagNow, ...pickCounts(result.bag) };
    store.setState({
      status: result.ok ? 'done' : stopped ? 'stopped' : 'failed',
      streaming: false,
      failure: result.failure,
      result: { ok: result.ok, seconds: result.seconds, cycles: result.cycles, reports: result.reports, dropped: result.dropped, ...(result.bag ? { bag: result.bag } : {}) },
    });
    publish();
    return result;
  };

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
      bagNow = undefined;
      store.setState({ live: emptyLive(), traceVersion: 0, opened: undefined, bag: undefined });
    },

    /**
     * Shows a saved trace (a Chrome trace JSON the Run view exported or `pipeloom run --trace`
     * wrote; `size` its bytes, checked before reading) in place of the last run's. A file that
     * is not one, or a run in progress, leaves the trace shown as it is and says why.
     */
    openTrace(text: string | null, file: string, size = text?.length ?? 0): boolean {
      const refuse = (message: string, hint: string) => {
        store.setState({ traceProblems: [{ path: file, message, hint, severity: 'error' }] });
        return false;
      };
      const { status } = store.getState();
      if (status === 'running' || status === 'stopping' || status === 'calibrating') return refuse('a run is in progress', 'stop it, or wait for it to end, before opening a trace');
      if (size > TRACE_FILE_LIMITS.maxChars || text === null) return refuse(`is ${(size / 2 ** 20).toFixed(0)} MiB, more than the ${TRACE_FILE_LIMITS.maxChars / 2 ** 20} MiB a trace may have`, 'export a shorter run (fewer iterations)');
      const r = readChromeTrace(text);
      if (!r.ok) {
        store.setState({ traceProblems: r.diagnostics.map((d) => ({ ...d, path: d.path === 'trace' ? file : `${file}: ${d.path}` })) });
        return false;
      }
      api.reset();
      measured.append(r.events);
      store.setState({ status: 'idle', problems: [], failure: undefined, result: undefined, ran: undefined, traceProblems: [], opened: { file, events: r.events.length, metadata: r.metadata } });
      publish();
      return true;
    },

    /** Publishes the live numbers now (they are otherwise published every `publishMs` while running). */
    publish,

    setStreaming(streaming: boolean): void {
      store.setState({ streaming });
    },

    progress(p: Progress): void {
      progress = p;
    },

    setFields(patch: Partial<Pick<RunState, 'urls' | 'token' | 'iterations' | 'emulateLinks' | 'deployTimeout'>>): void {
      store.setState(patch);
    },

    /**
     * Takes iterations and sync mode from a document's run options when they differ from the last
     * seen; true if it did. The strategy is never copied: it is the document's `options.overlap`.
     */
    seed(options: { iterations: number; sync?: RunOptions['sync'] }): boolean {
      if (options === seeded) return false;
      seeded = options;
      store.setState({ iterations: options.iterations, sync: options.sync });
      return true;
    },

    /**
     * The document's revision now. An edit leaves the results shown but marks them of an earlier
     * revision (freshness 'modified'); a load (another project) stops a run of the old one and
     * clears its check, results and trace: they belong to a document no longer open.
     */
    observe(rev: DocumentRevision): void {
      const { seen } = store.getState();
      if (rev.revision === seen.revision && rev.loads === seen.loads) return;
      store.setState({ seen: rev });
      if (rev.loads === seen.loads) return;
      handle?.stop('another project was opened');
      api.reset();
      store.setState({ status: handle ? 'stopping' : 'idle', problems: [], failure: undefined, result: undefined, ran: undefined, calibration: undefined });
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
      const { n, connecting } = login(list, token);
      try {
        coordinator = await connecting;
        live = n;
        target = { list, token };
        store.setState({ connection: 'connected', agents: coordinator.agents });
      } catch (e) {
        coordinator = null;
        store.setState({ connection: 'failed', agents: [], connectError: e instanceof Error ? e.message : String(e) });
      }
    },

    disconnect(): void {
      cancelRetry();
      live = 0;
      target = null;
      handle?.stop('disconnected by the user');
      coordinator?.close();
      coordinator = null;
      store.setState({ connection: 'disconnected', agents: [], lost: undefined });
    },

    /** Checks the plan against what the connected agents serve: hosts, PEs, memory. */
    deploy(ig: ImplementationGraph): boolean {
      if (!coordinator || store.getState().lost) {
        store.setState({ problems: [notConnected(store.getState().lost)] });
        return false;
      }
      // Kernels an agent lacks or has in another major version are refused here too (issue 19).
      const problems = [...coordinator.check(ig), ...checkAgentKernels(ig, coordinator.agents)];
      const ok = !problems.some((d) => d.severity === 'error');
      // A run of an earlier revision is not this one's: its check and trace go with the deploy of the new one.
      if (freshness(store.getState()) === 'modified') {
        api.reset();
        store.setState({ result: undefined, failure: undefined });
      }
      store.setState({ problems, status: ok ? 'checked' : 'idle', mode: 'static', ran: store.getState().seen });
      return ok;
    },

    /**
     * Deploy in task-bag mode: checks that some PE of the connected agents can run each node of
     * the task graph (core checkBag: its kernel, its requires, its buffers); each node no PE can
     * run is a problem listing every PE with why, and the fix.
     */
    deployBag(graph: BagGraph): boolean {
      if (!coordinator || store.getState().lost) {
        store.setState({ problems: [notConnected(store.getState().lost)] });
        return false;
      }
      const problems = coordinator.checkBag(graph);
      const ok = !problems.some((d) => d.severity === 'error');
      if (freshness(store.getState()) === 'modified') {
        api.reset();
        store.setState({ result: undefined, failure: undefined });
      }
      store.setState({ problems, status: ok ? 'checked' : 'idle', mode: 'taskbag', ran: store.getState().seen });
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
      store.setState({ status: 'running', streaming: true, failure: undefined, result: undefined, deploy: undefined });
      const { iterations, emulateLinks, sync } = store.getState();
      runIterations = iterations;
      handle = c.run(ig, { iterations, ...deployOptions(), emulateLinks, emulateDevices: extra.emulateDevices, sync: sync ?? 'self-timed', keepEvents: false, onEvents: (ev) => api.ingest(ev), onProgress: (p) => api.progress(p) });
      return follow(handle);
    },

    /**
     * The task-bag counterpart of `start`: checks the pool (deployBag), then hands the graph's
     * tasks to the agents' PEs at run time (core runBag) and streams the trace, the progress and
     * the bag's numbers; resolves when it ends. Iterations default to the store's.
     */
    async startBag(graph: BagGraph, opts: BagStartOptions = {}): Promise<RunResult | null> {
      if (handle || !api.deployBag(graph)) return null;
      const c = coordinator!;
      api.reset();
      const iterations = opts.iterations ?? store.getState().iterations;
      runIterations = iterations;
      bagNow = { tasks: iterations * graph.nodes.length, committed: 0, requeued: 0, discarded: 0, recomputed: 0, depth: 0, inFlight: 0 };
      store.setState({ status: 'running', streaming: true, failure: undefined, result: undefined, bag: bagNow, deploy: undefined });
      handle = c.runBag(graph, {
        iterations,
        ...deployOptions(),
        window: opts.window,
        prefetch: opts.prefetch,
        emulateDevices: opts.emulateDevices,
        keepEvents: false,
        onEvents: (ev) => api.ingest(ev),
        onProgress: (p) => api.progress(p),
        onBag: (b) => (bagNow = b),
      });
      return follow(handle);
    },

    /**
     * Measures the connected agents as `pipeloom calibrate` does: each strategy of the document
     * runs its fill plus CALIBRATE_ITERATIONS steady cycles in barrier mode (each firing and copy
     * waited for on its own), and the steady cycles' mean firing and transfer times become the
     * calibration. Resolves with it, or null when a run fails or the agents refuse the plan.
     */
    async calibrate(doc: ProjectDocument, compiled: { overlap: ImplementationGraph; noOverlap: ImplementationGraph }, now = () => new Date()): Promise<Calibration | null> {
      if (handle || !api.deploy(compiled.noOverlap)) return null;
      const { model } = analyze(doc);
      if (!model) return null;
      const c = coordinator!;
      const runs: { ig: ImplementationGraph; measured: MeasuredTimes }[] = [];
      const adapters: Record<string, string> = {};
      for (const ig of [compiled.noOverlap, compiled.overlap]) {
        const total = ig.fillCycles + CALIBRATE_ITERATIONS;
        store.setState({ status: 'calibrating', calibration: { strategy: ig.overlap ? 'overlap' : 'no overlap' } });
        store.setState({ deploy: undefined });
        handle = c.run(ig, { iterations: total, ...deployOptions(), sync: 'barrier', keepEvents: true });
        const r = await handle.done;
        handle = null;
        if (!r.ok) {
          const f = r.failure;
          const where = f ? `host ${f.host}${f.node ? `, node ${f.node}` : ''}${f.iteration !== undefined ? `, iteration ${f.iteration}` : ''}: ${f.message}` : 'the run did not finish';
          store.setState({ status: 'idle', calibration: { error: `calibrating ${ig.overlap ? 'with' : 'without'} overlap failed on ${where}` } });
          return null;
        }
        Object.assign(adapters, r.adapters);
        runs.push({ ig, measured: measuredTimes(r.events.filter((e) => e.cycle >= ig.fillCycles && e.cycle < total)) });
      }
      const agents = store.getState().agents.map((a) => a.host).join(', ');
      const cal = calibrationFrom(model, runs, { machine: { hostname: agents || 'agents', cpu: 'measured by the designer on the connected agents', adapters }, date: now().toISOString(), iterations: CALIBRATE_ITERATIONS });
      store.setState({ status: 'idle', calibration: undefined });
      return cal;
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

const notConnected = (lost?: string[]): Diagnostic =>
  lost
    ? { path: 'run', message: `reconnecting to ${lost.join(', ')}`, hint: 'wait until it is connected again (or press Connect)', severity: 'error' }
    : { path: 'run', message: 'not connected to any agent', hint: 'enter the agent URLs and token, then Connect', severity: 'error' };

const pickCounts = (b: BagCounts): BagCounts => ({ tasks: b.tasks, committed: b.committed, discarded: b.discarded, requeued: b.requeued, recomputed: b.recomputed });

/** The designer's Run view state; it outlives the tab so a run keeps going while you edit. */
export const appRun = createRunStore();

export const useRun = <T,>(run: RunStore, sel: (s: RunState) => T) => useStore(run.store, sel);
