import type { TraceEvent } from './event.js';
import { unionLength } from './lanes.js';

export interface ThreadStats {
  host: string;
  pe: string;
  thread: string;
  /** Microseconds spent in fire and transfer events (their union: concurrent events count once). */
  busy: number;
  /** Microseconds of the trace's span. */
  total: number;
  utilisation: number;
}

export interface TraceStats {
  /** Microseconds from the first start to the last end. */
  span: number;
  threads: ThreadStats[];
  /** Microseconds between consecutive cycle starts. */
  cycleTime: { count: number; mean: number; p50: number; p95: number };
  /** Iterations per second in steady state (one iteration completes per cycle). */
  throughput: number;
}

/** Summary of a predicted or measured timeline. */
export function traceStats(events: readonly TraceEvent[]): TraceStats {
  if (events.length === 0) return { span: 0, threads: [], cycleTime: { count: 0, mean: 0, p50: 0, p95: 0 }, throughput: 0 };
  let first = Infinity;
  let last = -Infinity;
  const threads = new Map<string, ThreadStats>();
  const cycleStart = new Map<number, number>();
  const busy = new Map<ThreadStats, { start: number; end: number }[]>();
  for (const e of events) {
    first = Math.min(first, e.start);
    last = Math.max(last, e.end);
    const key = `${e.pe}\u0000${e.thread}`;
    let t = threads.get(key);
    if (!t) threads.set(key, (t = { host: e.host, pe: e.pe, thread: e.thread, busy: 0, total: 0, utilisation: 0 }));
    if (e.kind === 'fire' || e.kind === 'transfer') {
      let list = busy.get(t);
      if (!list) busy.set(t, (list = []));
      list.push(e);
    }
    cycleStart.set(e.cycle, Math.min(cycleStart.get(e.cycle) ?? Infinity, e.start));
  }
  const span = last - first;
  for (const t of threads.values()) {
    t.busy = unionLength(busy.get(t) ?? []);
    t.total = span;
    t.utilisation = span > 0 ? t.busy / span : 0;
  }
  const starts = [...cycleStart.entries()].sort((a, b) => a[0] - b[0]);
  const gaps: number[] = [];
  for (let i = 1; i < starts.length; i++) if (starts[i][0] === starts[i - 1][0] + 1) gaps.push(starts[i][1] - starts[i - 1][1]);
  gaps.sort((a, b) => a - b);
  const mean = gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : 0;
  const pct = (q: number) => (gaps.length ? gaps[Math.min(gaps.length - 1, Math.ceil(q * gaps.length) - 1)] : 0);
  return {
    span,
    threads: [...threads.values()].sort((a, b) => (a.pe === b.pe ? a.thread.localeCompare(b.thread) : a.pe.localeCompare(b.pe))),
    cycleTime: { count: gaps.length, mean, p50: pct(0.5), p95: pct(0.95) },
    throughput: mean > 0 ? 1e6 / mean : 0,
  };
}
