// The visible time window of a timeline and the moves on it (zoom about a point, pan, follow
// the live edge). Pure numbers, so it is tested without a canvas. Times are microseconds.

export interface Window {
  t0: number;
  t1: number;
}

/** Narrowest window: a tenth of a microsecond across the whole width. */
export const MIN_SPAN = 0.1;

export function zoom(w: Window, factor: number, anchor: number): Window {
  const span = Math.max(MIN_SPAN, (w.t1 - w.t0) * factor);
  const f = w.t1 > w.t0 ? (anchor - w.t0) / (w.t1 - w.t0) : 0.5;
  const t0 = anchor - f * span;
  return { t0, t1: t0 + span };
}

export function pan(w: Window, dt: number): Window {
  return { t0: w.t0 + dt, t1: w.t1 + dt };
}

/** The whole trace with a small margin; a default span when there is nothing yet. */
export function fit(min: number, max: number, fallback = 1000): Window {
  if (!(max > min)) return { t0: 0, t1: fallback };
  const pad = (max - min) * 0.02;
  return { t0: Math.min(0, min) - pad, t1: max + pad };
}

/** Ruler ticks: a 1-2-5 step giving about `px` pixels between ticks. */
export function ticks(w: Window, width: number, px = 110): { step: number; times: number[] } {
  const span = w.t1 - w.t0;
  if (!(span > 0) || width <= 0) return { step: 1, times: [] };
  const raw = (span * px) / width;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
  const times: number[] = [];
  for (let t = Math.ceil(w.t0 / step) * step; t <= w.t1 && times.length < 1000; t += step) times.push(t);
  return { step, times };
}

/** A time in microseconds as the ruler shows it, with precision matching the tick step. */
export function formatTime(us: number, step = us): string {
  const a = Math.abs(step);
  const m = Math.max(a, Math.abs(us));
  if (m >= 1e6) return `${trim(us / 1e6, a / 1e6)} s`;
  if (m >= 1e3) return `${trim(us / 1e3, a / 1e3)} ms`;
  return `${trim(us, a)} µs`;
}

function trim(v: number, step: number): string {
  const digits = step >= 1 ? 0 : Math.min(6, Math.ceil(-Math.log10(step)));
  return v.toFixed(digits);
}

/** Durations in tooltips: µs below a millisecond, ms below a second. */
export function formatDuration(us: number): string {
  if (us < 1000) return `${us.toFixed(us < 10 ? 2 : 1)} µs`;
  if (us < 1e6) return `${(us / 1e3).toFixed(3)} ms`;
  return `${(us / 1e6).toFixed(3)} s`;
}
