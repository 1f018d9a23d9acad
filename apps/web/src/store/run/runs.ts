import {
  analyze,
  calibrationFrom,
  checkAgentKernels,
  measuredTimes,
  type BagCounts,
  type BagGraph,
  type Calibration,
  type DeployOptions,
  type Diagnostic,
  type ImplementationGraph,
  type MeasuredTimes,
  type ProjectDocument,
  type RunHandle,
  type RunOptions,
  type RunResult,
} from '@pipeloom/core';
import { CALIBRATE_ITERATIONS, freshness, type BagStartOptions, type RunContext } from './state.js';
import type { TraceSlice } from './trace.js';

// A Run view's runs: Deploy (the check against what the agents serve), a static or task-bag
// run followed to its end, Calibrate, Stop.

/** Deploy, start, calibrate and stop of a Run view's store; `publishMs` between published live numbers. */
export function runsSlice(ctx: RunContext, trace: TraceSlice, publishMs: number) {
  const { store } = ctx;

  /** A run's deploy options: the setting's cap, and each host's step into the state as it is reported. */
  const deployOptions = (): DeployOptions => {
    const { deployTimeout } = store.getState();
    return {
      ...(deployTimeout > 0 ? { deployTimeout: deployTimeout * 1000, deployTimeoutName: 'deploy time limit (Run settings)' } : {}),
      onDeploy: (deploy) => store.setState({ deploy }),
    };
  };

  /** Publishes the run's numbers while it goes and its outcome when it ends (static and task-bag runs alike). */
  const follow = async (h: RunHandle): Promise<RunResult> => {
    ctx.timer = setInterval(trace.publish, publishMs);
    const result = await h.done;
    clearInterval(ctx.timer);
    ctx.handle = null;
    const stopped = store.getState().status === 'stopping';
    // A load cleared this run while it stopped: nothing of it is shown.
    if (!store.getState().ran) {
      store.setState({ status: 'idle', streaming: false });
      trace.reset();
      return result;
    }
    if (result.seconds > 0 && ctx.progress)
      ctx.progress = { ...ctx.progress, elapsed: result.seconds, iterationsPerSecond: ctx.progress.cycle / result.seconds };
    // The bag's final counts: a last onBag may not have come (a run refused before it started).
    if (result.bag && ctx.bagNow) ctx.bagNow = { ...ctx.bagNow, ...pickCounts(result.bag) };
    store.setState({
      status: result.ok ? 'done' : stopped ? 'stopped' : 'failed',
      streaming: false,
      failure: result.failure,
      result: {
        ok: result.ok,
        seconds: result.seconds,
        cycles: result.cycles,
        reports: result.reports,
        dropped: result.dropped,
        ...(result.bag ? { bag: result.bag } : {}),
        ...(result.writes?.length ? { writes: result.writes } : {}),
      },
    });
    trace.publish();
    return result;
  };

  const slice = {
    /** Checks the plan against what the connected agents serve: hosts, PEs, memory. */
    deploy(ig: ImplementationGraph): boolean {
      if (!ctx.coordinator || store.getState().lost) {
        store.setState({ problems: [notConnected(store.getState().lost)] });
        return false;
      }
      // Kernels an agent lacks or has in another major version are refused here too.
      const problems = [...ctx.coordinator.check(ig), ...checkAgentKernels(ig, ctx.coordinator.agents)];
      const ok = !problems.some((d) => d.severity === 'error');
      // A run of an earlier revision is not this one's: its check and trace go with the deploy of the new one.
      if (freshness(store.getState()) === 'modified') {
        trace.reset();
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
      if (!ctx.coordinator || store.getState().lost) {
        store.setState({ problems: [notConnected(store.getState().lost)] });
        return false;
      }
      const problems = ctx.coordinator.checkBag(graph);
      const ok = !problems.some((d) => d.severity === 'error');
      if (freshness(store.getState()) === 'modified') {
        trace.reset();
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
      if (ctx.handle || !slice.deploy(ig)) return null;
      const c = ctx.coordinator!;
      trace.reset();
      ctx.runIg = ig;
      store.setState({ status: 'running', streaming: true, failure: undefined, result: undefined, deploy: undefined });
      const { iterations, emulateLinks, sync } = store.getState();
      ctx.runIterations = iterations;
      ctx.handle = c.run(ig, {
        iterations,
        ...deployOptions(),
        emulateLinks,
        emulateDevices: extra.emulateDevices,
        sync: sync ?? 'self-timed',
        keepEvents: false,
        onEvents: (ev) => trace.ingest(ev),
        onProgress: (p) => trace.progress(p),
      });
      return follow(ctx.handle);
    },

    /**
     * The task-bag counterpart of `start`: checks the pool (deployBag), then hands the graph's
     * tasks to the agents' PEs at run time (core runBag) and streams the trace, the progress and
     * the bag's numbers; resolves when it ends. Iterations default to the store's.
     */
    async startBag(graph: BagGraph, opts: BagStartOptions = {}): Promise<RunResult | null> {
      if (ctx.handle || !slice.deployBag(graph)) return null;
      const c = ctx.coordinator!;
      trace.reset();
      const iterations = opts.iterations ?? store.getState().iterations;
      ctx.runIterations = iterations;
      ctx.bagNow = { tasks: iterations * graph.nodes.length, committed: 0, requeued: 0, discarded: 0, recomputed: 0, depth: 0, inFlight: 0 };
      store.setState({ status: 'running', streaming: true, failure: undefined, result: undefined, bag: ctx.bagNow, deploy: undefined });
      ctx.handle = c.runBag(graph, {
        iterations,
        ...deployOptions(),
        window: opts.window,
        prefetch: opts.prefetch,
        emulateDevices: opts.emulateDevices,
        keepEvents: false,
        onEvents: (ev) => trace.ingest(ev),
        onProgress: (p) => trace.progress(p),
        onBag: (b) => (ctx.bagNow = b),
      });
      return follow(ctx.handle);
    },

    /**
     * Measures the connected agents as `pipeloom calibrate` does: each strategy of the document
     * runs its fill plus CALIBRATE_ITERATIONS steady cycles in barrier mode (each firing and copy
     * waited for on its own), and the steady cycles' mean firing and transfer times become the
     * calibration. Resolves with it, or null when a run fails or the agents refuse the plan.
     */
    async calibrate(
      doc: ProjectDocument,
      compiled: { overlap: ImplementationGraph; noOverlap: ImplementationGraph },
      now = () => new Date(),
    ): Promise<Calibration | null> {
      if (ctx.handle || !slice.deploy(compiled.noOverlap)) return null;
      const { model } = analyze(doc);
      if (!model) return null;
      const c = ctx.coordinator!;
      const runs: { ig: ImplementationGraph; measured: MeasuredTimes }[] = [];
      const adapters: Record<string, string> = {};
      for (const ig of [compiled.noOverlap, compiled.overlap]) {
        const total = ig.fillCycles + CALIBRATE_ITERATIONS;
        store.setState({ status: 'calibrating', calibration: { strategy: ig.overlap ? 'overlap' : 'no overlap' } });
        store.setState({ deploy: undefined });
        ctx.handle = c.run(ig, { iterations: total, ...deployOptions(), sync: 'barrier', keepEvents: true });
        const r = await ctx.handle.done;
        ctx.handle = null;
        if (!r.ok) {
          const f = r.failure;
          const where = f
            ? `host ${f.host}${f.node ? `, node ${f.node}` : ''}${f.iteration !== undefined ? `, iteration ${f.iteration}` : ''}: ${f.message}`
            : 'the run did not finish';
          store.setState({ status: 'idle', calibration: { error: `calibrating ${ig.overlap ? 'with' : 'without'} overlap failed on ${where}` } });
          return null;
        }
        Object.assign(adapters, r.adapters);
        runs.push({ ig, measured: measuredTimes(r.events.filter((e) => e.cycle >= ig.fillCycles && e.cycle < total)) });
      }
      const agents = store
        .getState()
        .agents.map((a) => a.host)
        .join(', ');
      const cal = calibrationFrom(model, runs, {
        machine: { hostname: agents || 'agents', cpu: 'measured by the designer on the connected agents', adapters },
        date: now().toISOString(),
        iterations: CALIBRATE_ITERATIONS,
      });
      store.setState({ status: 'idle', calibration: undefined });
      return cal;
    },

    stop(): void {
      if (!ctx.handle) return;
      store.setState({ status: 'stopping' });
      ctx.handle.stop('stopped by the user');
    },
  };
  return slice;
}

const notConnected = (lost?: string[]): Diagnostic =>
  lost
    ? { path: 'run', message: `reconnecting to ${lost.join(', ')}`, hint: 'wait until it is connected again (or press Connect)', severity: 'error' }
    : { path: 'run', message: 'not connected to any agent', hint: 'enter the agent URLs and token, then Connect', severity: 'error' };

const pickCounts = (b: BagCounts): BagCounts => ({
  tasks: b.tasks,
  committed: b.committed,
  discarded: b.discarded,
  requeued: b.requeued,
  recomputed: b.recomputed,
});
