import type { Limits } from './security.js';

// The front door's log: rate-limited lines, and how a sender's value may appear in one.

export type LogLevel = 'info' | 'warn' | 'error';

/** One kind's lines in the current window. */
interface Window {
  start: number;
  lines: number;
  dropped: number;
  /** The level of the window's first line, for the line that sums up the rest. */
  level: LogLevel;
  timer: NodeJS.Timeout | null;
}

/**
 * The front door's log: `<ISO time> <level> <message>`, at most `logBurst` lines of one kind
 * per window, so a flood of refusals cannot fill the disk or hide other lines; what was left
 * out is summed up in one line when the window ends.
 */
export class FrontDoorLog {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly sink: (line: string) => void,
    private readonly limits: Pick<Limits, 'logBurst' | 'logWindowMs'>,
    private readonly now: () => number = Date.now,
  ) {}

  line(level: LogLevel, kind: string, message: string): void {
    const t = this.now();
    let w = this.windows.get(kind);
    if (!w || t - w.start >= this.limits.logWindowMs) {
      if (w) this.flush(kind, w);
      w = { start: t, lines: 0, dropped: 0, level, timer: null };
      this.windows.set(kind, w);
    }
    if (w.lines < this.limits.logBurst) {
      w.lines++;
      this.write(level, message, t);
      return;
    }
    w.dropped++;
    if (!w.timer) {
      const win = w;
      win.timer = setTimeout(() => this.flush(kind, win), Math.max(0, win.start + this.limits.logWindowMs - t));
      win.timer.unref();
    }
  }

  private flush(kind: string, w: Window): void {
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
    if (w.dropped) this.write(w.level, `${w.dropped} more "${kind}" lines left out in ${this.limits.logWindowMs / 1000} s`, this.now());
    w.dropped = 0;
  }

  private write(level: LogLevel, message: string, t: number): void {
    this.sink(`${new Date(t).toISOString()} ${level} ${message}`);
  }

  /** Writes what is left out so far and stops the timers (agent shutdown). */
  close(): void {
    for (const [kind, w] of this.windows) this.flush(kind, w);
  }
}

/**
 * A sender's value for a log line: JSON-quoted (control characters escaped, so it cannot
 * forge lines) and cut to `max` characters.
 */
export function excerpt(value: unknown, max = 64): string {
  const s = typeof value === 'string' ? value : String(value);
  const cut = s.length > max ? `${s.slice(0, max)}...` : s;
  return JSON.stringify(cut);
}
