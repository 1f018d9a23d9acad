import * as Comlink from 'comlink';
import { createStore, useStore } from 'zustand';
import type { ProjectDocument } from '@pipeloom/core';
import type { CompileApi, CompileOutput } from './protocol.js';
import { projectStore } from '../store/project.js';
import { calibrationStore } from '../run/calibration.js';

// Recompiles in the worker after edits settle (debounced); results that arrive after a newer
// request was sent are dropped, so the views never show a stale compile over a fresh one.

export interface CompileState {
  status: 'idle' | 'compiling' | 'failed';
  result: CompileOutput | null;
  /** Revision of the document the result belongs to. */
  revision: number;
  error?: string;
}

export const compileStore = createStore<CompileState>()(() => ({ status: 'idle', result: null, revision: -1 }));
export const useCompile = <T,>(sel: (s: CompileState) => T) => useStore(compileStore, sel);

const DEBOUNCE_MS = 150;

let api: Comlink.Remote<CompileApi> | undefined;

/** The worker's API, for requests other than the automatic recompiles (e.g. Tidy). */
export const compilerApi = () => api;

export function startCompiler(): () => void {
  const worker = new Worker(new URL('./compile.worker.ts', import.meta.url), { type: 'module', name: 'pipeloom-compile' });
  const remote = Comlink.wrap<CompileApi>(worker);
  api = remote;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sent = 0;

  const run = async (doc: ProjectDocument, revision: number) => {
    const seq = ++sent;
    compileStore.setState({ status: 'compiling' });
    try {
      const result = await remote.compile(doc, calibrationStore.getState().calibration);
      if (seq !== sent) return;
      compileStore.setState({ status: 'idle', result, revision, error: undefined });
    } catch (e) {
      if (seq !== sent) return;
      compileStore.setState({ status: 'failed', error: e instanceof Error ? e.message : String(e) });
    }
  };

  const schedule = () => {
    clearTimeout(timer);
    const { doc, revision } = projectStore.getState();
    timer = setTimeout(() => run(doc, revision), DEBOUNCE_MS);
  };

  schedule();
  const unsub = projectStore.subscribe((s, prev) => {
    if (s.revision !== prev.revision) schedule();
  });
  // A calibration saved or opened changes the calibrated prediction.
  const unsubCalibration = calibrationStore.subscribe((s, prev) => {
    if (s.calibration !== prev.calibration) schedule();
  });
  return () => {
    unsub();
    unsubCalibration();
    clearTimeout(timer);
    worker.terminate();
  };
}
