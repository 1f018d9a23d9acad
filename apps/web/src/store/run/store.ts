import { createStore, useStore } from 'zustand';
import type { RunOptions, SocketLike } from '@pipeloom/core';
import { initialRunState, runContext, type DocumentRevision, type RunState } from './state.js';
import { connectionSlice } from './connection.js';
import { traceSlice } from './trace.js';
import { runsSlice } from './runs.js';

// A Run view's store, made of slices that share one context (state.ts): its connections
// (connection.ts), its measured trace and live numbers (trace.ts), its runs (runs.ts), and here
// the settings and the document revision it follows.

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
  const store = createStore<RunState>()(initialRunState);
  const ctx = runContext(store);
  const connection = connectionSlice(ctx, connect);
  const trace = traceSlice(ctx);
  const runs = runsSlice(ctx, trace, publishMs);
  let seeded: object | null = null;

  return {
    store,
    ...trace,
    ...connection,
    ...runs,

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
      ctx.handle?.stop('another project was opened');
      trace.reset();
      store.setState({ status: ctx.handle ? 'stopping' : 'idle', problems: [], failure: undefined, result: undefined, ran: undefined, calibration: undefined });
    },

    dispose(): void {
      clearInterval(ctx.timer);
      connection.disconnect();
    },
  };
}

export type RunStore = ReturnType<typeof createRunStore>;

/** The designer's Run view state; it outlives the tab so a run keeps going while you edit. */
export const appRun = createRunStore();

export const useRun = <T>(run: RunStore, sel: (s: RunState) => T) => useStore(run.store, sel);
