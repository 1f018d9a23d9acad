import * as Comlink from 'comlink';
import { createStore, useStore } from 'zustand';
import type { WrittenDocument } from '@pipeloom/core';
import type { CompileApi, CompileOutput } from '../worker/protocol.js';
import { projectStore } from './project.js';
import { calibrationStore } from './calibration.js';

// Recompiles in the worker after edits settle (debounced); results that arrive after a newer
// request was sent are dropped, so the views never show a stale compile over a fresh one.
// Flipping the strategy (options.overlap) compiles nothing: the worker compiled both.

/**
 * Whether `next` differs from `prev` only in options.overlap, with both strategies of `result`
 * compiled: the compile output holds for both documents. (Edits replace what they change and
 * share the rest, so comparing references is enough.)
 */
export function onlyStrategyChanged(prev: WrittenDocument, next: WrittenDocument, result: CompileOutput | null): boolean {
  if (!result?.overlap || !result.noOverlap || prev === next || prev.options.overlap === next.options.overlap) return false;
  const keys = new Set([...Object.keys(prev), ...Object.keys(next)]);
  for (const k of keys) if (k !== 'options' && prev[k as keyof WrittenDocument] !== next[k as keyof WrittenDocument]) return false;
  const opts = new Set([...Object.keys(prev.options), ...Object.keys(next.options)]);
  for (const k of opts) if (k !== 'overlap' && prev.options[k as keyof typeof prev.options] !== next.options[k as keyof typeof next.options]) return false;
  return true;
}

export interface CompileState {
  status: 'idle' | 'compiling' | 'failed';
  result: CompileOutput | null;
  /** Revision of the document the result belongs to. */
  revision: number;
  /** Compiles the worker has run (a strategy flip reuses the pair it has: no compile). */
  compiles: number;
  error?: string;
}

export const compileStore = createStore<CompileState>()(() => ({ status: 'idle', result: null, revision: -1, compiles: 0 }));
export const useCompile = <T>(sel: (s: CompileState) => T) => useStore(compileStore, sel);

const DEBOUNCE_MS = 150;

let api: Comlink.Remote<CompileApi> | undefined;

/** The worker's API, for requests other than the automatic recompiles (e.g. Tidy). */
export const compilerApi = () => api;

export function startCompiler(): () => void {
  const worker = new Worker(new URL('../worker/compile.worker.ts', import.meta.url), { type: 'module', name: 'pipeloom-compile' });
  const remote = Comlink.wrap<CompileApi>(worker);
  api = remote;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sent = 0;
  // The document the result in compileStore was compiled from.
  let compiled: WrittenDocument | null = null;

  const run = async (doc: WrittenDocument, revision: number) => {
    const seq = ++sent;
    compileStore.setState({ status: 'compiling' });
    try {
      const result = await remote.compile(doc, calibrationStore.getState().calibration);
      if (seq !== sent) return;
      compiled = doc;
      compileStore.setState({ status: 'idle', result, revision, error: undefined, compiles: compileStore.getState().compiles + 1 });
    } catch (e) {
      if (seq !== sent) return;
      compileStore.setState({ status: 'failed', error: e instanceof Error ? e.message : String(e) });
    }
  };

  const schedule = () => {
    clearTimeout(timer);
    const { doc, revision } = projectStore.getState();
    timer = setTimeout(() => {
      timer = undefined;
      void run(doc, revision);
    }, DEBOUNCE_MS);
  };

  schedule();
  const unsub = projectStore.subscribe((s, prev) => {
    if (s.revision === prev.revision) return;
    // Another project (opened, or brought back by undo): the result in hand is the previous
    // project's, which no view should show as this one's. The views say it is compiling.
    if (s.loads !== prev.loads) {
      compiled = null;
      sent++;
      compileStore.setState({ status: 'compiling', result: null, error: undefined });
    }
    const c = compileStore.getState();
    // Nothing pending and only the strategy flipped: the result holds, now for this revision.
    if (!timer && compiled && c.status === 'idle' && onlyStrategyChanged(compiled, s.doc, c.result)) {
      compiled = s.doc;
      compileStore.setState({ revision: s.revision });
      return;
    }
    schedule();
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
