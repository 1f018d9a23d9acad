import { TraceColumns } from '../trace/columns.js';
import type { TraceEvent } from '../trace/event.js';

// Trace analysis, once: what a predicted or measured timeline says about the run. The CLI's
// summary, the benchmarks, the web app's live numbers and `pipeloom calibrate` all read it
// here. It works on the column store (one pass over typed arrays, so the web app can re-run it
// on a million streaming events a few times a second); an event array is first put into one.

/** A timeline: the column store where the caller has one, else its events. */
export type Trace = TraceColumns | readonly TraceEvent[];

function columnsOf(t: Trace): TraceColumns {
  if (t instanceof TraceColumns) return t;
  const c = new TraceColumns();
  c.append(t);
  return c;
}

export interface AnalysisOptions {
  /** The implementation graph's fill: cycles 0 .. fillCycles - 1 are left out of the cycle time (default 0). */
  fillCycles?: number;
  /** Iterations of the run: the drain (cycles from `iterations` on, where early nodes no longer fire) is left out too. */
  iterations?: number;
  /** The last cycle known complete (a live trace's later cycles are still arriving); default the last cycle seen. */
  lastCycle?: number;
  /** The predicted cycle time in seconds, for `ratio`. */
  predictedCycleTime?: number;
}

/** One lane (host / PE / thread): seconds in each kind of slice, and their shares of the trace's span. */
export interface LaneAnalysis {
  host: string;
  pe: string;
  thread: string;
  /** Seconds in fires and transfers (their union: concurrent events count once). */
  busy: number;
  /** Seconds in cluster-wide barriers. */
  barrier: number;
  /** Seconds waiting for data or credits. */
  wait: number;
  /** busy / span, at most 1. */
  utilisation: number;
  barrierShare: number;
  waitShare: number;
}

export interface TraceAnalysis {
  /** Seconds from the first start to the last end. */
  span: number;
  /** Cycles seen (the largest cycle number + 1). */
  cycles: number;
  /**
   * Seconds per cycle in steady state: the mean of the cycle lengths over `steady`. A cycle's
   * end is the last end of its events (its last barrier's release in barrier mode), so this
   * holds for both sync modes and for predicted timelines. Where the trace has no steady
   * cycle (iterations <= fill, or too few cycles), the mean over every cycle seen.
   */
  cycleTime: number;
  /** The cycles measured, inclusive; null when `cycleTime` is the whole trace's mean. */
  steady: { from: number; to: number } | null;
  /** Spread of the steady cycles' lengths, seconds. */
  cycleSpread: { count: number; p50: number; p95: number; max: number };
  /** Iterations per second in steady state (one iteration completes per cycle). */
  throughput: number;
  /** cycleTime / options.predictedCycleTime, when given. */
  ratio?: number;
  /** Lanes ordered host, PE, main thread first (as the timeline draws them). */
  lanes: LaneAnalysis[];
  /** Shares of all lanes' time (lanes x span) spent busy, in barriers and waiting; the rest is idle. */
  busyShare: number;
  barrierShare: number;
  waitShare: number;
}

// Kind codes of trace/columns.ts KINDS.
const FIRE = 0;
const TRANSFER = 1;
const BARRIER = 3;

/** Cycle time, utilisation, barrier and wait shares and throughput of a timeline. */
export function analyseTrace(trace: Trace, opts: AnalysisOptions = {}): TraceAnalysis {
  const c = columnsOf(trace);
  const n = c.length;
  const span = n ? (c.maxEnd - c.minStart) / 1e6 : 0;

  // Each cycle's end: the last end among its events.
  const cycle = c.cycle;
  const ends = c.end;
  let done = new Float64Array(64).fill(-Infinity);
  let last = -1;
  for (let i = 0; i < n; i++) {
    const k = cycle[i];
    if (k < 0) continue;
    if (k > last) {
      last = k;
      if (k >= done.length) {
        const grown = new Float64Array(Math.max(k + 1, done.length * 2)).fill(-Infinity);
        grown.set(done);
        done = grown;
      }
    }
    if (ends[i] > done[k]) done[k] = ends[i];
  }
  const cycles = last + 1;
  // Steady state: every action runs (the fill is over, the drain not begun). Cycle k lasts
  // from cycle k - 1's end to its own; cycle fill - 1 exists, so the first steady cycle has a start.
  const fill = Math.max(0, opts.fillCycles ?? 0);
  let to = Math.min(last, opts.lastCycle ?? last);
  if (opts.iterations !== undefined) to = Math.min(to, opts.iterations - 1);
  const from = Math.max(fill, 1);
  const gaps: number[] = [];
  let steady: TraceAnalysis['steady'] = null;
  let cycleTime = 0;
  if (to >= from && done[from - 1] > -Infinity && done[to] > -Infinity) {
    steady = { from, to };
    cycleTime = (done[to] - done[from - 1]) / 1e6 / (to - from + 1);
    for (let k = from, prev = done[from - 1]; k <= to; k++) {
      if (done[k] === -Infinity) continue;
      gaps.push((done[k] - prev) / 1e6);
      prev = done[k];
    }
  } else if (cycles > 0) cycleTime = span / cycles;
  gaps.sort((a, b) => a - b);
  const pct = (q: number) => (gaps.length ? gaps[Math.min(gaps.length - 1, Math.ceil(q * gaps.length) - 1)] : cycleTime);

  // Per lane, one walk in start order with a running union per kind of slice.
  const lanes: LaneAnalysis[] = [];
  let busyAll = 0;
  let barrierAll = 0;
  let waitAll = 0;
  for (const lane of c.lanes()) {
    const order = c.laneOrder(lane.index);
    const kinds = c.laneKinds(lane.index);
    const starts = c.laneStarts(lane.index);
    const len = c.laneLength(lane.index);
    const end = c.end;
    // Three running unions (busy, barrier, wait), inlined: this loop runs over every event.
    let bSum = 0, bFrom = 0, bTo = -Infinity;
    let rSum = 0, rFrom = 0, rTo = -Infinity;
    let wSum = 0, wFrom = 0, wTo = -Infinity;
    for (let k = 0; k < len; k++) {
      const kind = kinds[k];
      const s = starts[k];
      const e = end[order[k]];
      if (kind === FIRE || kind === TRANSFER) {
        if (s > bTo) {
          if (bTo > bFrom) bSum += bTo - bFrom;
          bFrom = s;
          bTo = e;
        } else if (e > bTo) bTo = e;
      } else if (kind === BARRIER) {
        if (s > rTo) {
          if (rTo > rFrom) rSum += rTo - rFrom;
          rFrom = s;
          rTo = e;
        } else if (e > rTo) rTo = e;
      } else if (s > wTo) {
        if (wTo > wFrom) wSum += wTo - wFrom;
        wFrom = s;
        wTo = e;
      } else if (e > wTo) wTo = e;
    }
    const busy = (bTo > bFrom ? bSum + bTo - bFrom : bSum) / 1e6;
    const barrier = (rTo > rFrom ? rSum + rTo - rFrom : rSum) / 1e6;
    const wait = (wTo > wFrom ? wSum + wTo - wFrom : wSum) / 1e6;
    busyAll += busy;
    barrierAll += barrier;
    waitAll += wait;
    const share = (x: number) => (span > 0 ? Math.min(1, x / span) : 0);
    lanes.push({ host: lane.host, pe: lane.pe, thread: lane.thread, busy, barrier, wait, utilisation: share(busy), barrierShare: share(barrier), waitShare: share(wait) });
  }
  const laneTime = span * lanes.length;
  const of = (x: number) => (laneTime > 0 ? x / laneTime : 0);
  return {
    span,
    cycles,
    cycleTime,
    steady,
    cycleSpread: { count: gaps.length, p50: pct(0.5), p95: pct(0.95), max: gaps.length ? gaps[gaps.length - 1] : cycleTime },
    throughput: cycleTime > 0 ? 1 / cycleTime : 0,
    ratio: opts.predictedCycleTime ? cycleTime / opts.predictedCycleTime : undefined,
    lanes,
    busyShare: of(busyAll),
    barrierShare: of(barrierAll),
    waitShare: of(waitAll),
  };
}

/**
 * Measured costs, the predictor's `nodeTimes` and `transferTimes` (seconds) from a run's
 * trace: what calibration stores and what `pipeloom run`'s "calibrated" prediction uses.
 * - nodeTimes[node]: the mean duration of the node's firings.
 * - transferTimes[`<from buffer>-><to buffer>`]: the mean, per cycle in which the transfer ran,
 *   of its events' durations summed: a host-to-host transfer is the sender's send plus the
 *   receiver's copy into the slot, a staged GPU-to-GPU one the read-back plus the upload.
 * Waits and barriers are not costs: they are left out.
 */
export function measuredTimes(trace: Trace): { nodeTimes: Record<string, number>; transferTimes: Record<string, number> } {
  const c = columnsOf(trace);
  const fires = new Map<number, { sum: number; n: number }>();
  const transfers = new Map<string, { sum: number; cycles: Set<number> }>();
  for (let i = 0; i < c.length; i++) {
    const d = (c.end[i] - c.start[i]) / 1e6;
    if (c.kind[i] === FIRE && c.node[i] >= 0) {
      const f = fires.get(c.node[i]);
      if (f) {
        f.sum += d;
        f.n++;
      } else fires.set(c.node[i], { sum: d, n: 1 });
    } else if (c.kind[i] === TRANSFER && c.buffer[i] >= 0 && c.from[i] >= 0) {
      const key = `${c.names[c.from[i]]}->${c.names[c.buffer[i]]}`;
      let t = transfers.get(key);
      if (!t) transfers.set(key, (t = { sum: 0, cycles: new Set() }));
      t.sum += d;
      t.cycles.add(c.cycle[i]);
    }
  }
  return {
    nodeTimes: Object.fromEntries([...fires].map(([k, f]) => [c.names[k], f.sum / f.n])),
    transferTimes: Object.fromEntries([...transfers].map(([k, t]) => [k, t.sum / t.cycles.size])),
  };
}
