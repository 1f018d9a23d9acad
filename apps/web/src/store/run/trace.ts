import { readChromeTrace, TraceAccumulator, TRACE_FILE_LIMITS, type Progress, type TraceColumns, type TraceEvent } from '@pipeloom/core';
import { emptyLive, type LiveNumbers, type RunContext } from './state.js';

// A Run view's measured trace: the events as they arrive, the live numbers published from
// them, and a saved trace opened in place of a run's.

/** The measured trace of a Run view's store and the numbers it publishes. */
export function traceSlice(ctx: RunContext) {
  const { store } = ctx;

  const numbers = (): LiveNumbers => {
    const p = ctx.progress;
    const runIg = ctx.runIg;
    // Cycles below the agents' slowest reported cycle are complete; later ones are still arriving.
    const a = ctx.measured.analyse({ fillCycles: runIg?.fillCycles, lastCycle: p ? p.cycle - 1 : undefined, iterations: ctx.runIterations });
    const utilisation = a.lanes.map((l) => ({ key: `${l.host}/${l.pe}/${l.thread}`, value: l.utilisation }));
    // A task-bag run has no cycles: its iterations overlap as the window allows, so its time
    // per iteration is the elapsed time over the iterations complete.
    let cycleTime = ctx.bagNow ? 0 : a.cycleTime;
    if (!cycleTime && p && p.cycle > 0) cycleTime = p.elapsed / p.cycle;
    return {
      cycle: p?.cycle ?? 0,
      cycles: p?.cycles ?? 0,
      iterationsPerSecond: p?.iterationsPerSecond ?? 0,
      cycleTime,
      elapsed: p?.elapsed ?? 0,
      events: ctx.measured.columns.length,
      utilisation,
    };
  };

  const slice = {
    /** The measured trace of the current (or last) run. */
    measured: (): TraceColumns => ctx.measured.columns,
    /** The implementation graph the current (or last) run executed. */
    runGraph: () => ctx.runIg,

    /** Appends a batch of live events (the coordinator's onEvents). */
    ingest(events: readonly TraceEvent[]): void {
      ctx.measured.append(events);
    },

    /** Starts a new, empty measured trace. */
    reset(): void {
      ctx.runIg = null;
      ctx.runIterations = undefined;
      ctx.measured = new TraceAccumulator();
      ctx.progress = null;
      ctx.bagNow = undefined;
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
      if (status === 'running' || status === 'stopping' || status === 'calibrating')
        return refuse('a run is in progress', 'stop it, or wait for it to end, before opening a trace');
      if (size > TRACE_FILE_LIMITS.maxChars || text === null)
        return refuse(
          `is ${(size / 2 ** 20).toFixed(0)} MiB, more than the ${TRACE_FILE_LIMITS.maxChars / 2 ** 20} MiB a trace may have`,
          'export a shorter run (fewer iterations)',
        );
      const r = readChromeTrace(text);
      if (!r.ok) {
        store.setState({ traceProblems: r.diagnostics.map((d) => ({ ...d, path: d.path === 'trace' ? file : `${file}: ${d.path}` })) });
        return false;
      }
      slice.reset();
      ctx.measured.append(r.events);
      store.setState({
        status: 'idle',
        problems: [],
        failure: undefined,
        result: undefined,
        ran: undefined,
        traceProblems: [],
        opened: { file, events: r.events.length, metadata: r.metadata },
      });
      slice.publish();
      return true;
    },

    /** Publishes the live numbers now (they are otherwise published every `publishMs` while running). */
    publish(): void {
      store.setState({ live: numbers(), traceVersion: ctx.measured.columns.version, ...(ctx.bagNow ? { bag: ctx.bagNow } : {}) });
    },

    setStreaming(streaming: boolean): void {
      store.setState({ streaming });
    },

    progress(p: Progress): void {
      ctx.progress = p;
    },
  };
  return slice;
}

export type TraceSlice = ReturnType<typeof traceSlice>;
