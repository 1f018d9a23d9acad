import type { TraceEvent, TraceKind } from './event.js';
import { compareLanes } from './lanes.js';

// Trace events stored column-wise (Perfetto's way): one typed array per field instead of one
// object per event, so a million events take tens of megabytes and a time-window query is a
// binary search. Events are kept in arrival order; each lane (host / PE / thread) keeps its
// own index sorted by start plus a running maximum of end times, which is what makes a
// window query exact even when a long event started before the window.

export const TRACE_KINDS: readonly TraceKind[] = ['fire', 'transfer', 'wait', 'barrier', 'counter'];
const KIND_CODE: Record<TraceKind, number> = { fire: 0, transfer: 1, wait: 2, barrier: 3, counter: 4 };
/** The kind code of `counter` events: samples, not slices (no duration, no busy time). */
export const TRACE_COUNTER = KIND_CODE.counter;

export interface Lane {
  index: number;
  host: string;
  pe: string;
  thread: string;
}

/** Growable typed array helpers: capacity doubles, contents are copied once per doubling. */
function grow<T extends Float64Array | Uint32Array | Int32Array | Uint8Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  let cap = Math.max(16, a.length);
  while (cap < need) cap *= 2;
  const b = new (a.constructor as new (n: number) => T)(cap);
  b.set(a);
  return b;
}

class LaneIndex {
  /** Event numbers of this lane, sorted by start. */
  order = new Uint32Array(64);
  /** Their starts and kinds, contiguous: the timeline's searches and merged boxes stay in cache instead of striding the global columns. */
  start = new Float64Array(64);
  kind = new Uint8Array(64);
  /** maxEnd[k] = max end over order[0..k]: non-decreasing, so it can be binary searched. */
  maxEnd = new Float64Array(64);
  /** Longest event in the lane (microseconds). */
  longest = 0;
  /** Counter samples among its events: a lane of samples only is a counter lane, not a slice lane. */
  counters = 0;
  length = 0;
  constructor(readonly lane: Lane) {}
}

export class TraceColumns {
  start = new Float64Array(1024);
  end = new Float64Array(1024);
  lane = new Uint32Array(1024);
  kind = new Uint8Array(1024);
  name = new Uint32Array(1024);
  iteration = new Int32Array(1024);
  cycle = new Int32Array(1024);
  /** Bytes moved (transfers); 0 when not applicable. */
  bytes = new Float64Array(1024);
  /** The event's node, buffer and source buffer as interned names; -1 where the event has none. Kept apart from `name`, which is a label (a staged transfer's names its route). */
  node = new Int32Array(1024);
  buffer = new Int32Array(1024);
  from = new Int32Array(1024);
  /** A counter's sampled value; NaN for the other kinds. */
  value = new Float64Array(1024);
  /** Task-bag fires: the task id interned (-1: not a task), its share (-1: none) and attempt (0: not a task). */
  task = new Int32Array(1024);
  share = new Int32Array(1024);
  attempt = new Int32Array(1024);
  length = 0;
  /** Interned names: `name[i]` indexes this table. */
  readonly names: string[] = [];
  /** Earliest start and latest end seen (Infinity / -Infinity when empty). */
  minStart = Infinity;
  maxEnd = -Infinity;
  /** The same over slices alone (counters left out): the span analysis measures busy and idle time against. */
  sliceStart = Infinity;
  sliceEnd = -Infinity;
  /** Bumped on every change, so views know when to redraw. */
  version = 0;

  private readonly nameIds = new Map<string, number>();
  private readonly laneIndex: LaneIndex[] = [];
  private readonly laneIds = new Map<string, Map<string, Map<string, number>>>();
  private sortedLanes: Lane[] | null = null;
  // Consecutive events usually come from the same thread: skip the map lookups then.
  private lastHost = '';
  private lastPe = '';
  private lastThread = '';
  private lastLane = -1;

  get laneCount(): number {
    return this.laneIndex.length;
  }

  /** Lanes ordered by host, PE, then thread ('main' first), as the timeline draws them. */
  lanes(): Lane[] {
    if (!this.sortedLanes) {
      this.sortedLanes = this.laneIndex.map((l) => l.lane).sort(compareLanes);
    }
    return this.sortedLanes;
  }

  /** The lane's number, created when first seen. */
  laneOf(host: string, pe: string, thread: string): number {
    if (this.lastLane >= 0 && host === this.lastHost && pe === this.lastPe && thread === this.lastThread) return this.lastLane;
    let byPe = this.laneIds.get(host);
    if (!byPe) this.laneIds.set(host, (byPe = new Map()));
    let byThread = byPe.get(pe);
    if (!byThread) byPe.set(pe, (byThread = new Map()));
    let id = byThread.get(thread);
    if (id === undefined) {
      id = this.laneIndex.length;
      byThread.set(thread, id);
      this.laneIndex.push(new LaneIndex({ index: id, host, pe, thread }));
      this.sortedLanes = null;
    }
    this.lastHost = host;
    this.lastPe = pe;
    this.lastThread = thread;
    this.lastLane = id;
    return id;
  }

  /** Lane number for a key without creating it; -1 when absent. */
  findLane(host: string, pe: string, thread: string): number {
    return this.laneIds.get(host)?.get(pe)?.get(thread) ?? -1;
  }

  intern(name: string): number {
    let id = this.nameIds.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(name);
      this.nameIds.set(name, id);
    }
    return id;
  }

  /** Appends a batch of events (any order); returns the number stored. */
  append(events: readonly TraceEvent[]): number {
    this.reserve(this.length + events.length);
    const id = (s: string | undefined) => (s === undefined ? -1 : this.intern(s));
    for (const e of events) {
      const i = this.push(
        this.laneOf(e.host, e.pe, e.thread),
        KIND_CODE[e.kind],
        this.intern(e.name),
        e.iteration,
        e.cycle,
        e.start,
        e.end,
        e.bytes ?? 0,
        id(e.node),
        id(e.buffer),
        id(e.from),
      );
      if (e.value !== undefined) this.value[i] = e.value;
      if (e.task) this.setTask(i, this.intern(e.task.id), e.task.share ?? -1, e.task.attempt);
    }
    return events.length;
  }

  /** Ensures room for `n` events without further copying. */
  reserve(n: number): void {
    if (n <= this.start.length) return;
    this.start = grow(this.start, n);
    this.end = grow(this.end, n);
    this.lane = grow(this.lane, n);
    this.kind = grow(this.kind, n);
    this.name = grow(this.name, n);
    this.iteration = grow(this.iteration, n);
    this.cycle = grow(this.cycle, n);
    this.bytes = grow(this.bytes, n);
    this.node = grow(this.node, n);
    this.buffer = grow(this.buffer, n);
    this.from = grow(this.from, n);
    this.value = grow(this.value, n);
    this.task = grow(this.task, n);
    this.share = grow(this.share, n);
    this.attempt = grow(this.attempt, n);
  }

  /**
   * Appends one event from its fields (lane from `laneOf`, kind code from `TRACE_KINDS`, names from
   * `intern`, -1 for no node / buffer / source); `value` is a counter's sample (NaN: none).
   * A task-bag fire's task is set after, with `setTask`.
   */
  push(
    lane: number,
    kind: number,
    name: number,
    iteration: number,
    cycle: number,
    start: number,
    end: number,
    bytes: number,
    node = -1,
    buffer = -1,
    from = -1,
    value = NaN,
  ): number {
    const i = this.length;
    if (i >= this.start.length) this.reserve(i + 1);
    this.start[i] = start;
    this.end[i] = end;
    this.lane[i] = lane;
    this.kind[i] = kind;
    this.name[i] = name;
    this.iteration[i] = iteration;
    this.cycle[i] = cycle;
    this.bytes[i] = bytes;
    this.node[i] = node;
    this.buffer[i] = buffer;
    this.from[i] = from;
    this.value[i] = value;
    this.task[i] = -1;
    this.share[i] = -1;
    this.attempt[i] = 0;
    this.length = i + 1;
    if (start < this.minStart) this.minStart = start;
    if (end > this.maxEnd) this.maxEnd = end;
    if (kind === TRACE_COUNTER) this.laneIndex[lane].counters++;
    else {
      if (start < this.sliceStart) this.sliceStart = start;
      if (end > this.sliceEnd) this.sliceEnd = end;
    }
    this.index(this.laneIndex[lane], i);
    this.version++;
    return i;
  }

  /** Marks event i as a task's: its id (interned), share (-1: none) and attempt (1 the first). */
  setTask(i: number, id: number, share: number, attempt: number): void {
    this.task[i] = id;
    this.share[i] = share;
    this.attempt[i] = attempt;
    this.version++;
  }

  /** Whether the lane holds counter samples only (the task bag's `coordinator / bag` lane): a counter track draws it, not a slice track. */
  isCounterLane(lane: number): boolean {
    const li = this.laneIndex[lane];
    return !!li && li.length > 0 && li.counters === li.length;
  }

  private index(li: LaneIndex, i: number): void {
    const n = li.length;
    if (n >= li.order.length) {
      li.order = grow(li.order, n + 1);
      li.start = grow(li.start, n + 1);
      li.kind = grow(li.kind, n + 1);
      li.maxEnd = grow(li.maxEnd, n + 1);
    }
    const s = this.start[i];
    const e = this.end[i];
    if (e - s > li.longest) li.longest = e - s;
    const order = li.order;
    // Events of one thread arrive in order; a late one (another agent's batch) is inserted.
    let k = n;
    if (n > 0 && li.start[n - 1] > s) {
      k = upperBound(li.start, 0, n, s);
      order.copyWithin(k + 1, k, n);
      li.start.copyWithin(k + 1, k, n);
      li.kind.copyWithin(k + 1, k, n);
    }
    order[k] = i;
    li.start[k] = s;
    li.kind[k] = this.kind[i];
    li.length = n + 1;
    const maxEnd = li.maxEnd;
    let m = k > 0 ? maxEnd[k - 1] : -Infinity;
    for (let j = k; j <= n; j++) {
      const ej = this.end[order[j]];
      if (ej > m) m = ej;
      maxEnd[j] = m;
    }
  }

  /** Number of events in a lane. */
  laneLength(lane: number): number {
    return this.laneIndex[lane]?.length ?? 0;
  }

  /** The lane's event numbers sorted by start (valid up to `laneLength`; do not mutate). */
  laneOrder(lane: number): Uint32Array {
    return this.laneIndex[lane].order;
  }

  /** The lane's starts, parallel to `laneOrder` (sorted). */
  laneStarts(lane: number): Float64Array {
    return this.laneIndex[lane].start;
  }

  /** The lane's kind codes, parallel to `laneOrder`. */
  laneKinds(lane: number): Uint8Array {
    return this.laneIndex[lane].kind;
  }

  /** The lane's running maximum of end times, parallel to `laneOrder`. */
  laneMaxEnd(lane: number): Float64Array {
    return this.laneIndex[lane].maxEnd;
  }

  /**
   * Positions [from, to) in `laneOrder(lane)` holding every event that intersects [t0, t1]:
   * from the first whose running max end reaches t0 to the last that starts by t1. Events of
   * one thread do not overlap, so at most a few in the range end before t0 (nested ones
   * behind a long event); callers skip those with `end < t0`.
   */
  window(lane: number, t0: number, t1: number): [number, number] {
    const li = this.laneIndex[lane];
    if (!li || li.length === 0) return [0, 0];
    let lo = 0;
    let hi = li.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (li.maxEnd[mid] < t0) lo = mid + 1;
      else hi = mid;
    }
    const from = lo;
    const to = upperBound(li.start, from, li.length, t1);
    return [from, to];
  }

  /**
   * First position in `laneOrder(lane)` at or after `from` whose event starts at or after t.
   * Gallops from `from` first: the timeline seeks the next pixel's first event, usually near.
   */
  seek(lane: number, from: number, t: number): number {
    const li = this.laneIndex[lane];
    const starts = li.start;
    const n = li.length;
    if (from >= n || starts[from] >= t) return from;
    let lo = from + 1;
    let step = 1;
    while (lo < n && starts[lo] < t) {
      from = lo;
      step *= 2;
      lo = from + step;
    }
    let hi = Math.min(lo, n);
    lo = from + 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The event of `lane` under time t (within `slack` µs), the shortest one when several overlap; -1 if none. */
  hit(lane: number, t: number, slack = 0): number {
    const [from, to] = this.window(lane, t - slack, t + slack);
    const li = this.laneIndex[lane];
    let best = -1;
    let bestDur = Infinity;
    for (let k = from; k < to; k++) {
      const i = li.order[k];
      if (this.start[i] - slack <= t && this.end[i] + slack >= t) {
        const d = this.end[i] - this.start[i];
        if (d < bestDur) {
          bestDur = d;
          best = i;
        }
      }
    }
    return best;
  }

  /** Rebuilds event i as an object (tooltips, export): the fields it was appended with. */
  event(i: number): TraceEvent {
    const l = this.laneIndex[this.lane[i]].lane;
    const e: TraceEvent = {
      host: l.host,
      pe: l.pe,
      thread: l.thread,
      kind: TRACE_KINDS[this.kind[i]],
      name: this.names[this.name[i]],
      iteration: this.iteration[i],
      cycle: this.cycle[i],
      start: this.start[i],
      end: this.end[i],
    };
    if (this.node[i] >= 0) e.node = this.names[this.node[i]];
    if (this.buffer[i] >= 0) e.buffer = this.names[this.buffer[i]];
    if (this.from[i] >= 0) e.from = this.names[this.from[i]];
    if (this.bytes[i]) e.bytes = this.bytes[i];
    if (this.task[i] >= 0)
      e.task =
        this.share[i] >= 0
          ? { id: this.names[this.task[i]], share: this.share[i], attempt: this.attempt[i] }
          : { id: this.names[this.task[i]], attempt: this.attempt[i] };
    if (!Number.isNaN(this.value[i])) e.value = this.value[i];
    return e;
  }

  /** All events as objects, sorted by start. */
  toEvents(): TraceEvent[] {
    const out: TraceEvent[] = new Array(this.length);
    for (let i = 0; i < this.length; i++) out[i] = this.event(i);
    return out.sort((a, b) => a.start - b.start);
  }
}

/** First position in [lo, hi) of sorted `starts` greater than t. */
function upperBound(starts: Float64Array, lo: number, hi: number, t: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
