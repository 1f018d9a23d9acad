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
  if (m !== 1) throw new KernelError(kernel, `${what} ${n} has the prime factor ${m} > 13; use a size whose factors are 2, 3, 5, 7, 11 or 13 (e.g. 720 or 576)`);
  return out;
}

/**
 * One Stockham pass of radix R over `lines` lines: x -> y (interleaved re, im). Line l starts
 * at complex element baseOf(l), its elements `stride` apart. Twiddles and the R-point roots
 * are tabulated once per pass.
 */
function pass(x: Float64Array, y: Float64Array, lines: number, baseOf: (l: number) => number, stride: number, n: number, R: number, ns: number, sign: number): void {
  const m = n / R;
  const span = ns * R;
  const tw = new Float64Array(2 * span); // tw[k R + r] = cis(sign 2 pi k r / span)
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
  const vr = new Float64Array(R);
  const vi = new Float64Array(R);
  for (let l = 0; l < lines; l++) {
    const base = baseOf(l);
    for (let j = 0; j < m; j++) {
      const k = j % ns;
      for (let r = 0; r < R; r++) {
        const s = 2 * (base + (j + r * m) * stride);
        const c = tw[2 * (k * R + r)];
        const sn = tw[2 * (k * R + r) + 1];
        vr[r] = x[s] * c - x[s + 1] * sn;
        vi[r] = x[s] * sn + x[s + 1] * c;
      }
      const d = (j - k) * R + k;
      for (let q = 0; q < R; q++) {
        let ar = 0;
        let ai = 0;
        for (let r = 0, e = 0; r < R; r++, e = (e + q) % R) {
          const c = root[2 * e];
          const sn = root[2 * e + 1];
          ar += vr[r] * c - vi[r] * sn;
          ai += vr[r] * sn + vi[r] * c;
        }
        const t = 2 * (base + (d + q * ns) * stride);
        y[t] = ar;
        y[t + 1] = ai;
      }
    }
  }
}

/**
 * In-place 2D FFT of `count` complex h x w planes (interleaved re, im), rows then columns.
 * sign -1: forward; +1: inverse, scaled by 1/(h w).
 */
export function fft2d(data: Float64Array, count: number, h: number, w: number, sign: -1 | 1, kernel = 'saliency.fft'): void {
  const rw = radices(w, kernel, 'width');
  const rh = radices(h, kernel, 'height');
  let a: Float64Array = data;
  let b: Float64Array = new Float64Array(data.length);
  const run = (rs: number[], n: number, lines: number, baseOf: (l: number) => number, stride: number) => {
    let ns = 1;
    for (const R of rs) {
      pass(a, b, lines, baseOf, stride, n, R, ns, sign);
      [a, b] = [b, a];
      ns *= R;
    }
  };
  run(rw, w, count * h, (l) => l * w, 1);
  run(rh, h, count * w, (l) => Math.floor(l / w) * h * w + (l % w), w);
  if (a !== data) data.set(a);
  if (sign === 1) {
    const s = 1 / (h * w);
    for (let i = 0; i < data.length; i++) data[i] *= s;
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
