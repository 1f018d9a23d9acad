import type { TraceEvent } from '@pipeloom/core';

// Trace events of every thread, sent in batches while the run goes on. Times are this
// agent's clock in microseconds since the epoch; the coordinator maps them onto its own axis.
// Recording only: what the events say (utilisation, waits) is core's trace analysis.

/** Events held back at most; beyond this (a coordinator that stopped reading) new events are counted as dropped. */
const MAX_PENDING = 1_000_000;

export class TraceRecorder {
  private pending: TraceEvent[] = [];
  private dropped = 0;
  private timer: ReturnType<typeof setInterval> | undefined;

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
}
