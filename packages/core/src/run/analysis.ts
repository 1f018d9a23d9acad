import { TRACE_COUNTER, TraceColumns } from '../trace/columns.js';
import type { TraceEvent } from '../trace/event.js';

// Trace analysis, once: what a predicted or measured timeline says about the run. The CLI's
// summary, the benchmarks, the web app's live numbers and `pipeloom calibrate` all read it
// here. It works on the column store (one pass over typed arrays); an event array is first put
// into one. A live trace keeps a `TraceAccumulator`, which reads only the events that arrived
// since its last answer.

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

// Kind codes of trace/columns.ts TRACE_KINDS.
const FIRE = 0;
const TRANSFER = 1;
const BARRIER = 3;

/** Cycle time, utilisation, barrier and wait shares and throughput of a timeline. */
export function analyseTrace(trace: Trace, opts: AnalysisOptions = {}): TraceAnalysis {
  return new TraceAccumulator(columnsOf(trace)).analyse(opts);
}

/** One lane's sweep in start order: a running union per kind of slice, and how far it got. */
interface LaneSweep {
  /** Positions of `laneOrder` swept, and the event at the last of them (to notice a late event inserted before it). */
  swept: number;
  lastEvent: number;
  bSum: number;
  bFrom: number;
  bTo: number;
  rSum: number;
  rFrom: number;
  rTo: number;
  wSum: number;
  wFrom: number;
  wTo: number;
}

const sweepStart = (): LaneSweep => ({
  swept: 0,
  lastEvent: -1,
  bSum: 0,
  bFrom: 0,
  bTo: -Infinity,
  rSum: 0,
  rFrom: 0,
  rTo: -Infinity,
  wSum: 0,
  wFrom: 0,
  wTo: -Infinity,
});

/**
 * `analyseTrace` of a growing trace, reading only what arrived since the last answer: a live
 * run's numbers are asked for a few times a second while its trace grows to millions of events.
 * Each cycle's end is a running maximum; each lane's unions continue from where the last sweep
 * stopped (a late event inserted before that point, which another agent's batch can bring,
 * re-sweeps that lane alone). What stays per answer is O(lanes + cycles). `analyseTrace` is
 * this over a whole trace at once, so both give the same numbers by construction.
 */
export class TraceAccumulator {
  /** Events read so far (indices into the column store). */
  private seen = 0;
  /** done[k]: the last end among cycle k's events. */
  private done = new Float64Array(64).fill(-Infinity);
  private last = -1;
  private readonly sweeps: LaneSweep[] = [];
  private gaps = new Float64Array(64);

  constructor(readonly columns: TraceColumns = new TraceColumns()) {}

  /** Appends a batch of events to the column store (events appended to it directly count too). */
  append(events: readonly TraceEvent[]): void {
    this.columns.append(events);
  }

  /** The analysis of every event in the column store: the numbers `analyseTrace` gives for it. */
  analyse(opts: AnalysisOptions = {}): TraceAnalysis {
    const c = this.columns;
    this.catchUp();
    const n = c.length;
    // Counter samples (the task bag's depth) are not time spent: the span is the slices'.
    const span = n && c.sliceEnd > c.sliceStart ? (c.sliceEnd - c.sliceStart) / 1e6 : 0;
    const done = this.done;
    const last = this.last;
    const cycles = last + 1;
    // Steady state: every action runs (the fill is over, the drain not begun). Cycle k lasts
    // from cycle k - 1's end to its own; cycle fill - 1 exists, so the first steady cycle has a start.
    const fill = Math.max(0, opts.fillCycles ?? 0);
    let to = Math.min(last, opts.lastCycle ?? last);
    if (opts.iterations !== undefined) to = Math.min(to, opts.iterations - 1);
    const from = Math.max(fill, 1);
    // The steady cycles' lengths, in a scratch array reused between answers.
    if (this.gaps.length < cycles) this.gaps = new Float64Array(Math.max(cycles, 2 * this.gaps.length));
    const gaps = this.gaps;
    let count = 0;
    let max = -Infinity;
    let steady: TraceAnalysis['steady'] = null;
    let cycleTime = 0;
    if (to >= from && done[from - 1] > -Infinity && done[to] > -Infinity) {
      steady = { from, to };
      cycleTime = (done[to] - done[from - 1]) / 1e6 / (to - from + 1);
      for (let k = from, prev = done[from - 1]; k <= to; k++) {
        if (done[k] === -Infinity) continue;
        const gap = (done[k] - prev) / 1e6;
        gaps[count++] = gap;
        if (gap > max) max = gap;
        prev = done[k];
      }
    } else if (cycles > 0) cycleTime = span / cycles;
    // Percentiles by selection, not sorting: a live trace asks for them a few times a second
    // over tens of thousands of cycles. p95 is selected among the values at or above p50.
    const rank = (q: number) => Math.min(count - 1, Math.ceil(q * count) - 1);
    const p50 = count ? select(gaps, 0, count, rank(0.5)) : cycleTime;
    const p95 = count ? select(gaps, rank(0.5), count, rank(0.95)) : cycleTime;

    const lanes: LaneAnalysis[] = [];
    let busyAll = 0;
    let barrierAll = 0;
    let waitAll = 0;
    for (const lane of c.lanes()) {
      // A lane of counter samples has no busy or idle time: it is not a lane of the run's threads.
      if (c.isCounterLane(lane.index)) continue;
      const w = this.sweeps[lane.index];
      const busy = (w.bTo > w.bFrom ? w.bSum + w.bTo - w.bFrom : w.bSum) / 1e6;
      const barrier = (w.rTo > w.rFrom ? w.rSum + w.rTo - w.rFrom : w.rSum) / 1e6;
      const wait = (w.wTo > w.wFrom ? w.wSum + w.wTo - w.wFrom : w.wSum) / 1e6;
      busyAll += busy;
      barrierAll += barrier;
      waitAll += wait;
      const share = (x: number) => (span > 0 ? Math.min(1, x / span) : 0);
      lanes.push({
        host: lane.host,
        pe: lane.pe,
        thread: lane.thread,
        busy,
        barrier,
        wait,
        utilisation: share(busy),
        barrierShare: share(barrier),
        waitShare: share(wait),
      });
    }
    const laneTime = span * lanes.length;
    const of = (x: number) => (laneTime > 0 ? x / laneTime : 0);
    return {
      span,
      cycles,
      cycleTime,
      steady,
      cycleSpread: { count, p50, p95, max: count ? max : cycleTime },
      throughput: cycleTime > 0 ? 1 / cycleTime : 0,
      ratio: opts.predictedCycleTime ? cycleTime / opts.predictedCycleTime : undefined,
      lanes,
      busyShare: of(busyAll),
      barrierShare: of(barrierAll),
      waitShare: of(waitAll),
    };
  }

  /** Reads the events that arrived since the last call: cycle ends, then each lane's new positions. */
  private catchUp(): void {
    const c = this.columns;
    const n = c.length;
    // Each cycle's end: the last end among its events.
    const cycle = c.cycle;
    const ends = c.end;
    const kinds = c.kind;
    for (let i = this.seen; i < n; i++) {
      const k = cycle[i];
      if (k < 0 || kinds[i] === TRACE_COUNTER) continue;
      if (k > this.last) {
        this.last = k;
        if (k >= this.done.length) {
          const grown = new Float64Array(Math.max(k + 1, this.done.length * 2)).fill(-Infinity);
          grown.set(this.done);
          this.done = grown;
        }
      }
      if (ends[i] > this.done[k]) this.done[k] = ends[i];
    }
    this.seen = n;

    // Per lane, one walk in start order with a running union per kind of slice.
    for (let l = 0; l < c.laneCount; l++) {
      const len = c.laneLength(l);
      const order = c.laneOrder(l);
      let w = this.sweeps[l];
      // Events only ever get inserted into a lane's order, so the event last swept still sits
      // at its position exactly when nothing was inserted before it.
      if (!w || (w.swept > 0 && order[w.swept - 1] !== w.lastEvent)) this.sweeps[l] = w = sweepStart();
      if (w.swept === len) continue;
      const kinds = c.laneKinds(l);
      const starts = c.laneStarts(l);
      const end = c.end;
      // Three running unions (busy, barrier, wait), inlined: this loop runs over every event.
      let { bSum, bFrom, bTo, rSum, rFrom, rTo, wSum, wFrom, wTo } = w;
      for (let k = w.swept; k < len; k++) {
        const kind = kinds[k];
        const s = starts[k];
        const e = end[order[k]];
        if (kind === TRACE_COUNTER) continue;
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
      Object.assign(w, { swept: len, lastEvent: order[len - 1], bSum, bFrom, bTo, rSum, rFrom, rTo, wSum, wFrom, wTo });
    }
  }
}

/**
 * The k-th smallest (0-based) of xs[lo, hi), with k in [lo, hi): Hoare's selection, O(hi - lo)
 * on average. Reorders the range so that what precedes k is <= xs[k] and what follows is >= it.
 */
function select(xs: Float64Array, lo: number, hi: number, k: number): number {
  let l = lo;
  let h = hi - 1;
  while (l < h) {
    const pivot = xs[(l + h) >>> 1];
    let i = l;
    let j = h;
    while (i <= j) {
      while (xs[i] < pivot) i++;
      while (xs[j] > pivot) j--;
      if (i <= j) {
        const t = xs[i];
        xs[i++] = xs[j];
        xs[j--] = t;
      }
    }
    if (k <= j) h = j;
    else if (k >= i) l = i;
    else break;
  }
  return xs[k];
}

/**
 * Measured costs, the predictor's `nodeTimes` and `transferTimes` (seconds) from a run's
 * trace: what calibration stores and what `pipeloom run`'s "calibrated" prediction uses.
 * - nodeTimes[node]: the mean duration of the node's firings.
 * - transferTimes[`<from buffer>-><to buffer>`]: the mean, per cycle in which the transfer ran,
 *   of its span, from its events' first start to their last end: a host-to-host transfer from
 *   the sender's first byte out to the receiver's copy into the slot done, a staged
 *   GPU-to-GPU one from the read-back's start to the upload's end (the wait between them is
 *   not an event of kind transfer, but lies within the span).
 * - barrier (barrier-mode runs only): the mean seconds one cluster barrier costs, per cycle
 *   and barrier the shortest slice of any thread (the last to arrive waited for nothing else).
 * Waits are not costs, and a barrier's wait for the slowest thread is not: they are left out.
 */
export function measuredTimes(trace: Trace): { nodeTimes: Record<string, number>; transferTimes: Record<string, number>; barrier?: number } {
  const c = columnsOf(trace);
  const fires = new Map<number, { sum: number; n: number }>();
  // Per cycle and barrier name, the shortest barrier slice: the last thread to arrive waited
  // only for the barrier itself (gathering, the cluster round, the release).
  const barriers = new Map<string, number>();
  // Per transfer and cycle: its first start and last end over both halves. A host-to-host
  // transfer's send and receive overlap in time (the receiver copies while bytes arrive), so
  // their sum over-counted it (piic: 24.9 + 29.2 ms against a 31 ms span); the span is what the
  // predictor's transfer time means (latency + bytes / bandwidth).
  const transfers = new Map<string, Map<number, { start: number; end: number }>>();
  for (let i = 0; i < c.length; i++) {
    if (c.kind[i] === FIRE && c.node[i] >= 0) {
      const d = (c.end[i] - c.start[i]) / 1e6;
      const f = fires.get(c.node[i]);
      if (f) {
        f.sum += d;
        f.n++;
      } else fires.set(c.node[i], { sum: d, n: 1 });
    } else if (c.kind[i] === BARRIER) {
      const key = `${c.cycle[i]} ${c.name[i]}`;
      const d = (c.end[i] - c.start[i]) / 1e6;
      const least = barriers.get(key);
      if (least === undefined || d < least) barriers.set(key, d);
    } else if (c.kind[i] === TRANSFER && c.buffer[i] >= 0 && c.from[i] >= 0) {
      const key = `${c.names[c.from[i]]}->${c.names[c.buffer[i]]}`;
      let cycles = transfers.get(key);
      if (!cycles) transfers.set(key, (cycles = new Map()));
      const span = cycles.get(c.cycle[i]);
      if (!span) cycles.set(c.cycle[i], { start: c.start[i], end: c.end[i] });
      else {
        span.start = Math.min(span.start, c.start[i]);
        span.end = Math.max(span.end, c.end[i]);
      }
    }
  }
  const meanSpan = (cycles: Map<number, { start: number; end: number }>) => {
    let sum = 0;
    for (const s of cycles.values()) sum += (s.end - s.start) / 1e6;
    return sum / cycles.size;
  };
  let barrierSum = 0;
  for (const d of barriers.values()) barrierSum += d;
  return {
    nodeTimes: Object.fromEntries([...fires].map(([k, f]) => [c.names[k], f.sum / f.n])),
    transferTimes: Object.fromEntries([...transfers].map(([k, t]) => [k, meanSpan(t)])),
    ...(barriers.size ? { barrier: barrierSum / barriers.size } : {}),
  };
}
