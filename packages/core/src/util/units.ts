// Human units for reports: bytes in binary units, durations in s/ms/µs.

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const text = u === 0 ? String(v) : v >= 100 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1);
  return `${text} ${units[u]}`;
}

export function formatSeconds(s: number): string {
  if (s === 0) return '0 s';
  if (s >= 1) return `${+s.toFixed(3)} s`;
  if (s >= 1e-3) return `${+(s * 1e3).toFixed(3)} ms`;
  return `${+(s * 1e6).toFixed(3)} µs`;
}

/** Whole nanoseconds nearest to a time in microseconds (trace exports compare and print these). */
export const nanoseconds = (us: number): number => Math.round(us * 1000);

/** Nanoseconds as decimal seconds with nine places, never in exponent notation: `-0.000001500`. */
export function secondsText(ns: number): string {
  const a = Math.abs(ns);
  const whole = Math.floor(a / 1e9);
  return `${ns < 0 ? '-' : ''}${whole}.${String(a - whole * 1e9).padStart(9, '0')}`;
}
