import { TRACE_COUNTER, type TraceColumns } from '@pipeloom/core';

// Counters over a trace, as step functions: at times t[k] the value becomes v[k]. Transfers in
// flight are derived from transfer slices (one pass plus a sort, cached by the store's
// version); the trace's own counters (the task bag's depth) are its samples, read per lane.

export interface Steps {
  t: Float64Array;
  v: Float64Array;
  max: number;
}

const TRANSFER = 1;

/** Transfers in flight on each host (started, not yet ended), from its transfer slices. */
export function transfersInFlight(c: TraceColumns): Map<string, Steps> {
  const hostOf = c.lanes().reduce((m, l) => m.set(l.index, l.host), new Map<number, string>());
  const edges = new Map<string, number[]>();
  for (let i = 0; i < c.length; i++) {
    if (c.kind[i] !== TRANSFER) continue;
    const h = hostOf.get(c.lane[i])!;
    let list = edges.get(h);
    if (!list) edges.set(h, (list = []));
    // Ends sort before starts at the same time: back-to-back transfers are not two in flight.
    list.push(c.start[i], 1, c.end[i], -1);
  }
  const out = new Map<string, Steps>();
  for (const [h, list] of edges) {
    const n = list.length / 2;
    const idx = Array.from({ length: n }, (_, k) => k);
    idx.sort((a, b) => list[2 * a] - list[2 * b] || list[2 * a + 1] - list[2 * b + 1]);
    const t = new Float64Array(n);
    const v = new Float64Array(n);
    let cur = 0;
    let max = 0;
    for (let k = 0; k < n; k++) {
      cur += list[2 * idx[k] + 1];
      t[k] = list[2 * idx[k]];
      v[k] = cur;
      if (cur > max) max = cur;
    }
    out.set(h, { t, v, max });
  }
  return out;
}

/** The largest value of `s` over [t0, t1) (the value holding at t0 included). */
export function maxOver(s: Steps, t0: number, t1: number): number {
  let lo = 0;
  let hi = s.t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (s.t[mid] <= t0) lo = mid + 1;
    else hi = mid;
  }
  let m = lo > 0 ? s.v[lo - 1] : 0;
  for (let k = lo; k < s.t.length && s.t[k] < t1; k++) if (s.v[k] > m) m = s.v[k];
  return m;
}

/** The lowest and highest value of `s` over [t0, t1) (the value holding at t0 included); null before its first step. */
export function rangeOver(s: Steps, t0: number, t1: number): { lo: number; hi: number } | null {
  const n = s.t.length;
  let k = upperBound(s.t, t0);
  if (k === 0) {
    if (!n || s.t[0] >= t1) return null;
    k = 1;
  }
  let lo = s.v[k - 1];
  let hi = lo;
  for (; k < n && s.t[k] < t1; k++) {
    if (s.v[k] < lo) lo = s.v[k];
    if (s.v[k] > hi) hi = s.v[k];
  }
  return { lo, hi };
}

/** The value of `s` at t (the last step at or before it); null before its first step. */
export function valueAt(s: Steps, t: number): number | null {
  const k = upperBound(s.t, t);
  return k ? s.v[k - 1] : null;
}

/** The value of `s` just before t (the last step before it); null when none is. */
export function valueBefore(s: Steps, t: number): number | null {
  let lo = 0;
  let hi = s.t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (s.t[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo ? s.v[lo - 1] : null;
}

function upperBound(t: Float64Array, x: number): number {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One counter of a trace: its lane (a lane of samples only), its name, its steps. */
export interface CounterSeries {
  lane: number;
  host: string;
  pe: string;
  thread: string;
  name: string;
  steps: Steps;
}

// Per store and lane: the samples read so far, so a live run re-reads a counter lane only when it grew.
const seriesCache = new WeakMap<TraceColumns, Map<number, { length: number; series: CounterSeries[] }>>();

/** The trace's counters (samples of kind counter on lanes of their own), a series per lane and name, in lane order then first sample. */
export function counterSeries(c: TraceColumns): CounterSeries[] {
  let byLane = seriesCache.get(c);
  if (!byLane) seriesCache.set(c, (byLane = new Map()));
  const out: CounterSeries[] = [];
  for (const l of c.lanes()) {
    if (!c.isCounterLane(l.index)) continue;
    const len = c.laneLength(l.index);
    let hit = byLane.get(l.index);
    if (!hit || hit.length !== len) {
      const order = c.laneOrder(l.index);
      const starts = c.laneStarts(l.index);
      const samples = new Map<number, { t: number[]; v: number[] }>();
      for (let k = 0; k < len; k++) {
        const i = order[k];
        if (c.kind[i] !== TRACE_COUNTER) continue;
        let s = samples.get(c.name[i]);
        if (!s) samples.set(c.name[i], (s = { t: [], v: [] }));
        s.t.push(starts[k]);
        s.v.push(c.value[i]);
      }
      const series = [...samples].map(([name, s]): CounterSeries => {
        const v = Float64Array.from(s.v);
        return {
          lane: l.index,
          host: l.host,
          pe: l.pe,
          thread: l.thread,
          name: c.names[name],
          steps: { t: Float64Array.from(s.t), v, max: v.reduce((m, x) => Math.max(m, x), 0) },
        };
      });
      byLane.set(l.index, (hit = { length: len, series }));
    }
    out.push(...hit.series);
  }
  return out;
}
