import type { TraceColumns } from '@pipeloom/core';

// Counters over a trace, as step functions: at times t[k] the value becomes v[k]. Built from
// the column store in one pass plus a sort, and cached by the store's version.

export interface Steps {
  t: Float64Array;
  v: Int32Array;
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
    const v = new Int32Array(n);
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
