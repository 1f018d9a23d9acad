import { TRACE_KINDS, type TraceColumns } from '@pipeloom/core';
import { ownStarts } from './inflight.js';

// A scan's measured speedup from a run's trace, in the model's terms: the operator's mean cost
// per application c (the scan's fires' busy time over the applications the model counts at
// that p) makes the serial scan take (N - 1) c; the run took the span of its fires (first start
// to last end) each iteration. Speedup = (N - 1) c / span, the median over the iterations.
// A fire's busy time counts from when the one before it on its PE ended (inflight.ts): a GPU
// PE's fires of one batch overlap, and counting each in full would overstate c.

const FIRE = TRACE_KINDS.indexOf('fire');
/** Most iterations read (a long run's first ones say as much), and fires kept. */
const MAX_ITERATIONS = 10_000;
const MAX_FIRES = 1 << 20;

export interface MeasuredScan {
  /** Workers: one more than the highest `.w<i>` among the fires. */
  p: number;
  speedup: number;
  iterations: number;
}

/** The measured point of scan node `id` (its fires `id/...`), given the model's work at p; null without fires of it. */
export function measuredScan(c: TraceColumns, id: string, N: number, work: (p: number) => number | undefined): MeasuredScan | null {
  const prefix = `${id}/`;
  // Per interned name: its worker, -1 for a name not of this scan (each name tested once).
  const workerOf = new Map<number, number>();
  const perIteration = new Map<number, { start: number; end: number; busy: number }>();
  const mine: number[] = [];
  let p = 0;
  for (let i = 0; i < c.length && mine.length < MAX_FIRES; i++) {
    if (c.kind[i] !== FIRE || c.node[i] < 0) continue;
    const name = c.node[i];
    let w = workerOf.get(name);
    if (w === undefined) {
      const s = c.names[name];
      const m = s.startsWith(prefix) ? /\.w(\d+)$/.exec(s) : null;
      w = m ? Number(m[1]) : -1;
      workerOf.set(name, w);
    }
    if (w < 0) continue;
    p = Math.max(p, w + 1);
    const it = c.iteration[i];
    let acc = perIteration.get(it);
    if (!acc) {
      if (perIteration.size >= MAX_ITERATIONS) continue;
      perIteration.set(it, (acc = { start: Infinity, end: -Infinity, busy: 0 }));
    }
    acc.start = Math.min(acc.start, c.start[i]);
    acc.end = Math.max(acc.end, c.end[i]);
    mine.push(i);
  }
  const from = ownStarts(c, mine);
  mine.forEach((i, k) => (perIteration.get(c.iteration[i])!.busy += c.end[i] - from[k]));
  const w = p ? work(p) : undefined;
  if (!p || !w || N < 2) return null;
  const speedups = [...perIteration.values()].filter((a) => a.end > a.start).map((a) => ((N - 1) * (a.busy / w)) / (a.end - a.start));
  if (!speedups.length) return null;
  speedups.sort((a, b) => a - b);
  return { p, speedup: speedups[Math.floor(speedups.length / 2)], iterations: speedups.length };
}
