// Units as a pipeline engineer reads them.

export function formatBytes(b: number): string {
  if (!Number.isFinite(b)) return '—';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = b;
  while (Math.abs(v) >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 || i === 0 ? Math.round(v) : v.toFixed(v >= 10 ? 1 : 2)} ${u[i]}`;
}

export function formatRate(bytesPerSecond: number): string {
  return `${(bytesPerSecond / 1e9).toFixed(bytesPerSecond >= 1e10 ? 0 : 2)} GB/s`;
}

export function formatSeconds(s: number): string {
  if (s === 0) return '0';
  if (s < 1e-3) return `${+(s * 1e6).toFixed(2)} µs`;
  if (s < 1) return `${+(s * 1e3).toFixed(2)} ms`;
  return `${+s.toFixed(3)} s`;
}

export const formatMs = (ms: number) => (ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`);

/** A parameter's or a rate's value: whole numbers as they are, others to 6 significant digits. */
export const formatNumber = (v: number) => (Number.isInteger(v) ? String(v) : String(+v.toPrecision(6)));
