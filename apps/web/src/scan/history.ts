import { createStore, useStore } from 'zustand';
import { scanModel, type ScanExecution, type ScanNetwork, type ScanOutput, type ScanStrategy, type TraceColumns, type WrittenDocument } from '@pipeloom/core';
import type { RunStore } from '../store/run/store.js';
import { freshness, type RunState } from '../store/run/state.js';
import { measuredScan, type MeasuredScan } from './measured.js';
import { modelled, scanInstances } from './instances.js';

// The measured speedup of every run, kept per scan node and what its model depends on (N,
// network, strategy, output, execution): the chart draws them all at their p, so runs at
// p = 1, 2, 4 make the measured curve beside the model's. A run is recorded when it ends with
// its checks passed and the document is still as it ran; editing keeps the points (they are
// keyed by the settings they ran with), opening another project clears them with its run.

export interface MeasuredPoint extends MeasuredScan {
  /** The run it came from (1, 2, … in this session). */
  run: number;
}

/** Runs kept per key (the oldest dropped), and keys kept (the least recently recorded dropped). */
export const MAX_POINTS = 64;
export const MAX_KEYS = 256;

export interface ScanHistoryState {
  /** Points per historyKey, oldest first. */
  points: Record<string, MeasuredPoint[]>;
  /** Runs started so far (the number of the current or last one). */
  runs: number;
}

export const scanHistory = createStore<ScanHistoryState>()(() => ({ points: {}, runs: 0 }));
export const useScanHistory = <T>(sel: (s: ScanHistoryState) => T) => useStore(scanHistory, sel);

export function historyKey(
  flatId: string,
  m: { N: number; network: ScanNetwork; strategy: ScanStrategy; output: ScanOutput; execution: ScanExecution },
): string {
  return `${flatId}|${m.N}|${m.network}|${m.strategy}|${m.output}|${m.execution}`;
}

/** Adds a run's point under `key`, replacing one of the same run. */
export function addPoint(key: string, point: MeasuredPoint): void {
  const { points } = scanHistory.getState();
  const list = [...(points[key] ?? []).filter((q) => q.run !== point.run), point].slice(-MAX_POINTS);
  const next: Record<string, MeasuredPoint[]> = { ...points };
  delete next[key];
  next[key] = list;
  const keys = Object.keys(next);
  for (const k of keys.slice(0, Math.max(0, keys.length - MAX_KEYS))) delete next[k];
  scanHistory.setState({ points: next });
}

/** Records run `run`'s measured point of every scan node of `doc` that fired in its trace; returns how many. */
export function recordRun(doc: WrittenDocument, trace: TraceColumns, run: number): number {
  let n = 0;
  for (const s of scanInstances(doc)) {
    const m = modelled(s);
    if (!m) continue;
    const point = measuredScan(trace, s.flatId, m.N, (q) => (q <= m.N ? scanModel(m.N, q, m.network, m.strategy, m.output, m.execution).work : undefined));
    if (!point) continue;
    addPoint(historyKey(s.flatId, m), { ...point, run });
    n++;
  }
  return n;
}

export function clearScanHistory(): void {
  scanHistory.setState({ points: {} });
}

/**
 * Follows a run store: counts each run as it starts and records its points when it ends done
 * and of the document as it is (`doc()`); a run of an earlier revision is not recorded (its
 * settings may not be the document's now). Returns the unsubscribe.
 */
export function followRuns(run: RunStore, doc: () => WrittenDocument): () => void {
  return run.store.subscribe((s: RunState, prev: RunState) => {
    if (s.status === 'running' && prev.status !== 'running') scanHistory.setState({ runs: scanHistory.getState().runs + 1 });
    if (s.status === 'done' && prev.status !== 'done' && s.mode === 'static' && freshness(s) === 'current')
      recordRun(doc(), run.measured(), scanHistory.getState().runs);
    if (s.seen.loads !== prev.seen.loads) clearScanHistory();
  });
}
