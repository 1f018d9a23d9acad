import type { TraceColumns } from '@pipeloom/core';
import { laneKey } from './raster.js';

// Statistics of a trace over a time range (the timeline's range selection) and per cycle (the
// Run view's measured/predicted table): the same functions read measured and predicted stores.
// Busy time is the union of a lane's fire and transfer slices, so overlapping copies count once.

const FIRE = 0;
const TRANSFER = 1;

export interface LaneRangeStats {
  key: string;
  /** Busy µs inside the range. */
  busy: number;
  /** busy / the range's span. */
  share: number;
  /** Events overlapping the range. */
  events: number;
}

export interface RangeStats {
  t0: number;
  t1: number;
  events: number;
  lanes: LaneRangeStats[];
  /** Cycles whose last event ends inside the range, and the mean µs between consecutive ones (null: fewer than two). */
  cycles: number;
  meanCycle: number | null;
}

/** Union length of intervals given in start order, clipped to [lo, hi]. */
function union(starts: number[], ends: number[], lo: number, hi: number): number {
  let total = 0;
  let a = -Infinity;
  let b = -Infinity;
  for (let k = 0; k < starts.length; k++) {
    const s = Math.max(lo, starts[k]);
    const e = Math.min(hi, ends[k]);
    if (e <= s) continue;
    if (s > b) {
      if (b > a) total += b - a;
      a = s;
      b = e;
    } else if (e > b) b = e;
  }
  if (b > a) total += b - a;
  return total;
}

export function rangeStats(c: TraceColumns, t0: number, t1: number): RangeStats {
  const span = Math.max(1e-9, t1 - t0);
  let events = 0;
  const lanes: LaneRangeStats[] = [];
  for (const l of c.lanes()) {
    // Counter samples (the task bag's depth) are no lane's busy or idle time.
    if (c.isCounterLane(l.index)) continue;
    const [from, to] = c.window(l.index, t0, t1);
    const order = c.laneOrder(l.index);
    const starts: number[] = [];
    const ends: number[] = [];
    let n = 0;
    for (let k = from; k < to; k++) {
      const i = order[k];
      // Overlapping the range: touching its edge is not.
      if (c.end[i] <= t0 || c.start[i] >= t1) continue;
      n++;
      if (c.kind[i] === FIRE || c.kind[i] === TRANSFER) {
        starts.push(c.start[i]);
        ends.push(c.end[i]);
      }
    }
    events += n;
    const busy = union(starts, ends, t0, t1);
    lanes.push({ key: laneKey(l.host, l.pe, l.thread), busy, share: Math.min(1, busy / span), events: n });
  }
  // A cycle ends with its last event: one pass over the store for every cycle's end.
  let maxCycle = -1;
  for (let i = 0; i < c.length; i++) if (c.cycle[i] > maxCycle) maxCycle = c.cycle[i];
  const ends = new Float64Array(maxCycle + 1).fill(-Infinity);
  for (let i = 0; i < c.length; i++) if (c.cycle[i] >= 0 && c.end[i] > ends[c.cycle[i]]) ends[c.cycle[i]] = c.end[i];
  const inside: number[] = [];
  for (let k = 0; k <= maxCycle; k++) if (ends[k] >= t0 && ends[k] <= t1) inside.push(ends[k]);
  inside.sort((a, b) => a - b);
  const meanCycle = inside.length >= 2 ? (inside[inside.length - 1] - inside[0]) / (inside.length - 1) : null;
  return { t0, t1, events, lanes, cycles: inside.length, meanCycle };
}

/**
 * Busy µs per cycle of each lane over cycles [from, to] (fire and transfer slices of those
 * cycles, their union, over the cycle count): how a lane's share of a cycle compares between
 * a run and its plan.
 */
export function busyPerCycle(c: TraceColumns, from: number, to: number): Map<string, number> {
  const out = new Map<string, number>();
  const count = to - from + 1;
  if (count <= 0) return out;
  for (const l of c.lanes()) {
    const order = c.laneOrder(l.index);
    const starts: number[] = [];
    const ends: number[] = [];
    for (let k = 0; k < c.laneLength(l.index); k++) {
      const i = order[k];
      if ((c.kind[i] === FIRE || c.kind[i] === TRANSFER) && c.cycle[i] >= from && c.cycle[i] <= to) {
        starts.push(c.start[i]);
        ends.push(c.end[i]);
      }
    }
    if (starts.length) out.set(laneKey(l.host, l.pe, l.thread), union(starts, ends, -Infinity, Infinity) / count);
  }
  return out;
}

/** The largest cycle number in a store (-1 when empty). */
export function lastCycle(c: TraceColumns): number {
  let m = -1;
  for (let i = 0; i < c.length; i++) if (c.cycle[i] > m) m = c.cycle[i];
  return m;
}

/** The steady cycles of a trace: from the fill's end to the last iteration's start (all cycles when there are none past the fill). */
export function steadyCycles(c: TraceColumns, fill: number, iterations: number): { from: number; to: number } {
  const to = Math.min(lastCycle(c), Math.max(0, iterations - 1));
  return { from: to >= fill ? fill : 0, to };
}
