import type { Limits } from './security.js';

// The agent's log (front door and run host): rate-limited lines, and how a sender's value may
// appear in one.

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

/** The most characters of a message in one line (after escaping); the rest is cut. */
export const MAX_LOG_MESSAGE = 1000;

/**
 * The agent's log: `<ISO time> <level> <message>`, at most `logBurst` lines of one kind per
 * window, so a flood of refusals cannot fill the disk or hide other lines; what was left out
 * is summed up in one line when the window ends. Every message is escaped (`escapeLog`) and
 * cut to MAX_LOG_MESSAGE, so no value in it can forge or break a line.
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
    // Cut before escaping too: a message may carry a long value, and escaping can grow it six-fold.
    const safe = escapeLog(message.length > MAX_LOG_MESSAGE ? message.slice(0, MAX_LOG_MESSAGE) : message);
    this.sink(`${new Date(t).toISOString()} ${level} ${safe.length > MAX_LOG_MESSAGE ? `${safe.slice(0, MAX_LOG_MESSAGE)}...` : safe}`);
  }

  /** Writes what is left out so far and stops the timers (agent shutdown). */
  close(): void {
    for (const [kind, w] of this.windows) this.flush(kind, w);
  }
}

/**
 * Text as it may appear in a log line: every character outside printable ASCII (line breaks,
 * NUL, escapes, C1 controls, bidi overrides, anything a terminal or a log reader might act on)
 * written as `\uXXXX`.
 */
export function escapeLog(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A sender's value for a log line: JSON-quoted, cut to `max` characters, and escaped
 * (`escapeLog`). Values that are not strings are named by their kind, never converted (an
 * object's own `toString` may be anything).
 */
export function excerpt(value: unknown, max = 64): string {
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  if (typeof value !== 'string') return Array.isArray(value) ? 'a list' : 'an object';
  const cut = value.length > max ? `${value.slice(0, max)}...` : value;
  return escapeLog(JSON.stringify(cut));
}
