import { KernelError } from '../types.js';

// Mixed-radix Stockham FFT (self-sorting, no bit reversal) for any length whose prime factors
// are at most 13: 512 = 4^4 x 2, 720 = 4^2 x 3^2 x 5, 576 = 4^3 x 3^2. Each pass does
// butterflies of one radix; the WGSL version (./wgsl.ts) runs the same passes, one dispatch
// each, so both sides compute the same sums. Lengths with a larger prime factor are refused
// rather than padded to a different transform.

export const MAX_RADIX = 16;

/** The radices of `n`, 4s first; throws a KernelError naming `what` if n has a prime factor > 13. */
export function radices(n: number, kernel: string, what: string): number[] {
  if (!Number.isInteger(n) || n < 1) throw new KernelError(kernel, `${what} must be a positive integer, not ${n}`);
  const out: number[] = [];
  let m = n;
  while (m % 4 === 0) {
    out.push(4);
    m /= 4;
  }
  for (const p of [2, 3, 5, 7, 11, 13]) {
    while (m % p === 0) {
      out.push(p);
      m /= p;
    }
  }
  if (m !== 1)
    throw new KernelError(kernel, `${what} ${n} has the prime factor ${m} > 13; use a size whose factors are 2, 3, 5, 7, 11 or 13 (e.g. 720 or 576)`);
  return out;
}

export interface Pass {
  R: number;
  ns: number;
  /** tw[2 (k R + r)]: cis(sign 2 pi k r / (ns R)). */
  tw: Float64Array;
  /** root[2 q]: cis(sign 2 pi q / R). */
  root: Float64Array;
}

export function plan(n: number, sign: number, kernel: string, what: string): Pass[] {
  // the tables are what the WGSL passes read too (see twiddleTable)
  const passes: Pass[] = [];
  let ns = 1;
  for (const R of radices(n, kernel, what)) {
    const span = ns * R;
    const tw = new Float64Array(2 * span);
    for (let k = 0; k < ns; k++)
      for (let r = 0; r < R; r++) {
        const a = (sign * 2 * Math.PI * ((k * r) % span)) / span;
        tw[2 * (k * R + r)] = Math.cos(a);
        tw[2 * (k * R + r) + 1] = Math.sin(a);
      }
    const root = new Float64Array(2 * R);
    for (let q = 0; q < R; q++) {
      root[2 * q] = Math.cos((sign * 2 * Math.PI * q) / R);
      root[2 * q + 1] = Math.sin((sign * 2 * Math.PI * q) / R);
    }
    passes.push({ R, ns, tw, root });
    ns *= R;
  }
  return passes;
}

/** A pass's twiddles then roots as f32 pairs: the WGSL pass's `tw` buffer. */
export function twiddleTable(p: Pass): Float32Array {
  const out = new Float32Array(p.tw.length + p.root.length);
  out.set(p.tw);
  out.set(p.root, p.tw.length);
  return out;
}

/** One Stockham pass over a contiguous line of n complex values: x -> y. */
function pass(x: Float64Array, y: Float64Array, n: number, { R, ns, tw, root }: Pass, sign: number, vr: Float64Array, vi: Float64Array): void {
  const m = n / R;
  for (let j = 0; j < m; j++) {
    const k = j % ns;
    for (let r = 0; r < R; r++) {
      const s = 2 * (j + r * m);
      const c = tw[2 * (k * R + r)];
      const sn = tw[2 * (k * R + r) + 1];
      vr[r] = x[s] * c - x[s + 1] * sn;
      vi[r] = x[s] * sn + x[s + 1] * c;
    }
    const d = 2 * ((j - k) * R + k);
    const step = 2 * ns;
    if (R === 2) {
      y[d] = vr[0] + vr[1];
      y[d + 1] = vi[0] + vi[1];
      y[d + step] = vr[0] - vr[1];
      y[d + step + 1] = vi[0] - vi[1];
    } else if (R === 4) {
      // w = cis(sign pi / 2) = sign i: (sign i)(a + ib) = sign (-b + ia)
      const ar = vr[0] + vr[2],
        ai = vi[0] + vi[2],
        br = vr[0] - vr[2],
        bi = vi[0] - vi[2];
      const cr = vr[1] + vr[3],
        ci = vi[1] + vi[3],
        dr = -sign * (vi[1] - vi[3]),
        di = sign * (vr[1] - vr[3]);
      y[d] = ar + cr;
      y[d + 1] = ai + ci;
      y[d + step] = br + dr;
      y[d + step + 1] = bi + di;
      y[d + 2 * step] = ar - cr;
      y[d + 2 * step + 1] = ai - ci;
      y[d + 3 * step] = br - dr;
      y[d + 3 * step + 1] = bi - di;
    } else {
      for (let q = 0; q < R; q++) {
        let ar = 0;
        let ai = 0;
        for (let r = 0, e = 0; r < R; r++, e = (e + q) % R) {
          const c = root[2 * e];
          const sn = root[2 * e + 1];
          ar += vr[r] * c - vi[r] * sn;
          ai += vr[r] * sn + vi[r] * c;
        }
        y[d + q * step] = ar;
        y[d + q * step + 1] = ai;
      }
    }
  }
}

/**
 * In-place 2D FFT of `count` complex h x w planes (interleaved re, im), rows then columns;
 * each line is gathered into a contiguous buffer, transformed by all its passes, scattered back.
 * sign -1: forward; +1: inverse, scaled by 1/(h w).
 */
export function fft2d(data: Float64Array, count: number, h: number, w: number, sign: -1 | 1, kernel = 'saliency.fft'): void {
  const pw = plan(w, sign, kernel, 'width');
  const ph = plan(h, sign, kernel, 'height');
  const big = Math.max(w, h);
  const bufA = new Float64Array(2 * big);
  const bufB = new Float64Array(2 * big);
  const vr = new Float64Array(MAX_RADIX);
  const vi = new Float64Array(MAX_RADIX);
  const line = (passes: Pass[], n: number, start: number, stride: number, scale: number) => {
    for (let i = 0; i < n; i++) {
      bufA[2 * i] = data[2 * (start + i * stride)];
      bufA[2 * i + 1] = data[2 * (start + i * stride) + 1];
    }
    let x = bufA;
    let y = bufB;
    for (const ps of passes) {
      pass(x, y, n, ps, sign, vr, vi);
      [x, y] = [y, x];
    }
    for (let i = 0; i < n; i++) {
      data[2 * (start + i * stride)] = x[2 * i] * scale;
      data[2 * (start + i * stride) + 1] = x[2 * i + 1] * scale;
    }
  };
  const scale = sign === 1 ? 1 / (h * w) : 1;
  for (let c = 0; c < count; c++) {
    for (let y = 0; y < h; y++) line(pw, w, c * h * w + y * w, 1, 1);
    for (let x = 0; x < w; x++) line(ph, h, c * h * w + x, w, scale);
  }
}

/** The 2D DFT by its definition, O((hw)^2): the reference the FFT is tested against. */
export function naiveDft2d(re: ArrayLike<number>, im: ArrayLike<number>, h: number, w: number, sign: -1 | 1): Float64Array {
  const out = new Float64Array(2 * h * w);
  for (let v = 0; v < h; v++)
    for (let u = 0; u < w; u++) {
      let sr = 0;
      let si = 0;
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++) {
          const a = sign * 2 * Math.PI * ((u * x) / w + (v * y) / h);
          const c = Math.cos(a);
          const s = Math.sin(a);
          const i = y * w + x;
          sr += re[i] * c - im[i] * s;
          si += re[i] * s + im[i] * c;
        }
      const scale = sign === 1 ? 1 / (h * w) : 1;
      out[2 * (v * w + u)] = sr * scale;
      out[2 * (v * w + u) + 1] = si * scale;
    }
  return out;
}
