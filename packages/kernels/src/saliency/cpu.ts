import { fft2d } from './fft.js';
import { bank, binFrequency, gabor, hanning, interactionWeights, mapStats } from './model.js';

// CPU twins of the saliency steps, shared by the kernels and the whole-pathway helper.

export interface BankParams {
  width: number;
  height: number;
  orientations: number;
  frequencies: number;
}

export function hanningCpu(src: Float32Array, dst: Float32Array, w: number, h: number): void {
  for (let y = 0; y < h; y++) {
    const hy = hanning(y, h);
    for (let x = 0; x < w; x++) dst[y * w + x] = src[y * w + x] * hanning(x, w) * hy;
  }
}

/** Real image -> complex spectrum (interleaved). */
export function fftCpu(src: Float32Array, dst: Float32Array, w: number, h: number): void {
  const d = new Float64Array(2 * w * h);
  for (let i = 0; i < w * h; i++) d[2 * i] = src[i];
  fft2d(d, 1, h, w, -1, 'saliency.fft');
  dst.set(d);
}

let lastBank: { key: string; g: Float32Array } | undefined;

/** The filter bank's transfer function: M x h x w values (the last one is kept for the next firing). */
export function gaborBank(p: BankParams): Float32Array {
  const key = `${p.width}x${p.height}x${p.orientations}x${p.frequencies}`;
  if (lastBank?.key === key) return lastBank.g;
  const { theta, f, sigma } = bank(p.orientations, p.frequencies);
  const { width: w, height: h } = p;
  const g = new Float32Array(theta.length * f.length * w * h);
  let m = 0;
  for (const th of theta)
    for (let j = 0; j < f.length; j++, m++)
      for (let y = 0; y < h; y++) {
        const v = binFrequency(y, h);
        for (let x = 0; x < w; x++) g[(m * h + y) * w + x] = gabor(binFrequency(x, w), v, th, f[j], sigma[j]);
      }
  lastBank = { key, g };
  return g;
}

export function gaborCpu(spec: Float32Array, dst: Float32Array, p: BankParams): void {
  const n = p.width * p.height;
  const g = gaborBank(p);
  for (let m = 0; m < g.length / n; m++)
    for (let i = 0; i < n; i++) {
      const k = m * n + i;
      dst[2 * k] = spec[2 * i] * g[k];
      dst[2 * k + 1] = spec[2 * i + 1] * g[k];
    }
}

export function ifftCpu(src: Float32Array, dst: Float32Array, p: BankParams): void {
  const d = Float64Array.from(src);
  fft2d(d, p.orientations * p.frequencies, p.height, p.width, 1, 'saliency.ifft');
  dst.set(d);
}

export function interactionsCpu(src: Float32Array, dst: Float32Array, p: BankParams, excite: number, inhibit: number): void {
  const n = p.width * p.height;
  const rows = interactionWeights(p.orientations, p.frequencies, excite, inhibit);
  const e = new Float32Array(rows.length * n);
  for (let k = 0; k < e.length; k++) e[k] = src[2 * k] * src[2 * k] + src[2 * k + 1] * src[2 * k + 1];
  const acc = new Float64Array(n);
  rows.forEach((row, m) => {
    acc.fill(0);
    for (const [k, wgt] of row) for (let i = 0, o = k * n; i < n; i++) acc[i] += wgt * e[o + i];
    for (let i = 0; i < n; i++) dst[m * n + i] = Math.max(0, acc[i]);
  });
}

/** Each map to [0, 1]: (m - min) / (max - min); a flat map becomes 0. */
export function normalizeCpu(src: Float32Array, dst: Float32Array, maps: number, n: number): void {
  for (let m = 0; m < maps; m++) {
    const { min, max } = mapStats(src, m * n, n);
    const s = max > min ? 1 / (max - min) : 0;
    for (let i = m * n; i < (m + 1) * n; i++) dst[i] = (src[i] - min) * s;
  }
}

/** Itti's method: each map times (max - mean)^2, promoting maps with one strong peak. */
export function ittiCpu(src: Float32Array, dst: Float32Array, maps: number, n: number): void {
  for (let m = 0; m < maps; m++) {
    const { max, mean } = mapStats(src, m * n, n);
    const k = (max - mean) ** 2;
    for (let i = m * n; i < (m + 1) * n; i++) dst[i] = src[i] * k;
  }
}

/**
 * Normalize and fuse: each map is divided by the largest value over all maps, values under
 * `threshold` are suppressed, and the maps are summed into the saliency map.
 */
export function fuseCpu(src: Float32Array, dst: Float32Array, maps: number, n: number, threshold: number): void {
  const { max } = mapStats(src, 0, maps * n);
  const s = max > 0 ? 1 / max : 0;
  dst.fill(0);
  for (let m = 0; m < maps; m++)
    for (let i = 0; i < n; i++) {
      const v = src[m * n + i] * s;
      if (v >= threshold) dst[i] += v;
    }
}
