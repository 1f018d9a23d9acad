import type { TraceEvent } from '@pipeloom/core';
import type { ThreadStats } from '@pipeloom/core/run/protocol';

// Trace events of every thread, sent in batches while the run goes on. Times are this
// agent's clock in microseconds since the epoch; the coordinator maps them onto its own axis.

/** Events held back at most; beyond this (a coordinator that stopped reading) new events are counted as dropped. */
const MAX_PENDING = 1_000_000;

export class TraceRecorder {
  private pending: TraceEvent[] = [];
  private dropped = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stats = new Map<string, ThreadStats>();
  /** Per thread, the end of the busy time counted so far: concurrent events count once. */
  private coveredUntil = new Map<ThreadStats, number>();

  constructor(
    readonly sink: (events: TraceEvent[], dropped: number) => void,
    readonly intervalUs: number,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => this.flush(), Math.max(1, this.intervalUs / 1000));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  add(e: TraceEvent): void {
    const key = `${e.pe}\u0000${e.thread}`;
    let s = this.stats.get(key);
    if (!s) this.stats.set(key, (s = { pe: e.pe, thread: e.thread, busy: 0, waiting: 0 }));
    if (e.kind === 'fire' || e.kind === 'transfer') {
      // Events arrive as they end, so a streaming union is exact for one event at a time and
      // never over 100% for concurrent ones (core's traceStats gives the exact union).
      const covered = this.coveredUntil.get(s) ?? -Infinity;
      s.busy += Math.max(0, e.end - Math.max(e.start, covered));
      this.coveredUntil.set(s, Math.max(covered, e.end));
    }
    else s.waiting += e.end - e.start;
    if (this.pending.length >= MAX_PENDING) this.dropped++;
    else this.pending.push(e);
  }

  flush(): void {
    if (!this.pending.length && !this.dropped) return;
    const events = this.pending;
    this.pending = [];
    this.sink(events, this.dropped);
    this.dropped = 0;
  }

  threadStats(): ThreadStats[] {
    return [...this.stats.values()];
  }
}
