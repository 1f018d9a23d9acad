import { FEATURES, LATTICE, LATTICE_SIGMA, LEVELS, LOW_CONTRAST, levelSize, pyramidLayout } from './spec.js';
// (The series' shape constants live with the specs: core reads ports' sizes from them without loading the generator.)
export { FEATURES, LATTICE, LATTICE_SIGMA, LEVELS, LOW_CONTRAST, levelSize, pyramidLayout };
// The synthetic image series of reg2d (after Copik's thesis §2.2: a crystal lattice
// seen by a drifting microscope). Pure and seeded: the same (params, index) gives the same
// frame anywhere, and the drift that moved it is known, so tests have the ground truth.
//
// World: a lattice of Gaussian blobs (spacing LATTICE px, sigma LATTICE_SIGMA, the lattice
// turned by a seeded angle) plus FEATURES larger seeded Gaussian blobs at random places, which
// break the lattice's periodicity so registration has one answer. Frame i sees the world
// through the drift D_i: pixel x shows world point D_i(x) = R(theta_i)(x - c) + c + t_i, c the
// image centre; (theta_i, t_i) is a seeded random walk from D_0 = identity, each step Gaussian
// with standard deviations `rotation` (rad) and `drift` (px, per axis). Seeded uniform noise of
// amplitude `noise` (integer hash of seed, frame, pixel) is added; with `low_contrast` k > 0,
// every k-th frame (i mod k = k - 1) has its signal scaled by LOW_CONTRAST before the noise.

/** A rigid transform of the plane: x -> R(theta)(x - c) + c + (tx, ty), c the image centre; pixels of the full-size frame. */
export interface Rigid {
  theta: number;
  tx: number;
  ty: number;
}

export const IDENTITY: Rigid = { theta: 0, tx: 0, ty: 0 };

export interface SeriesParams {
  width: number;
  height: number;
  seed: number;
  drift: number;
  rotation: number;
  noise: number;
  lowContrast: number;
}

/** A 32-bit integer hash (lowbias32): the noise and the walk's draws, so nothing depends on call order. */
export function hash32(x: number): number {
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/** Uniform [0, 1) from (seed, a, b, c). */
function uniform(seed: number, a: number, b: number, c: number): number {
  return hash32(hash32(hash32(hash32(seed >>> 0) ^ a) ^ Math.imul(b, 0x9e3779b1)) ^ Math.imul(c, 0x85ebca6b)) / 4294967296;
}

/** A standard normal draw (Box-Muller) from two hashed uniforms. */
function normal(seed: number, frame: number, axis: number): number {
  const u = Math.max(uniform(seed, 1, frame, 2 * axis), 1e-12);
  const v = uniform(seed, 1, frame, 2 * axis + 1);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** D_i: the drift of frames 0..n-1 (D_0 = identity; step k moves D_k to D_{k+1}). */
export function driftWalk(p: Pick<SeriesParams, 'seed' | 'drift' | 'rotation'>, n: number): Rigid[] {
  const out: Rigid[] = [{ ...IDENTITY }];
  for (let k = 1; k < n; k++) {
    const d = out[k - 1];
    out.push({ theta: d.theta + p.rotation * normal(p.seed, k, 0), tx: d.tx + p.drift * normal(p.seed, k, 1), ty: d.ty + p.drift * normal(p.seed, k, 2) });
  }
  return out;
}

/** Image centre of a W x H frame (pixel centres at integers). */
export const centre = (width: number, height: number): [number, number] => [(width - 1) / 2, (height - 1) / 2];

/** phi(x) for a point of the full-size frame. */
export function applyRigid(phi: Rigid, x: number, y: number, width: number, height: number): [number, number] {
  const [cx, cy] = centre(width, height);
  const c = Math.cos(phi.theta);
  const s = Math.sin(phi.theta);
  const dx = x - cx;
  const dy = y - cy;
  return [c * dx - s * dy + cx + phi.tx, s * dx + c * dy + cy + phi.ty];
}

/** second o first (first applied first): theta adds, t = R(second.theta) first.t + second.t (rotations share the centre). */
export function composeRigid(first: Rigid, second: Rigid): Rigid {
  const c = Math.cos(second.theta);
  const s = Math.sin(second.theta);
  return { theta: first.theta + second.theta, tx: c * first.tx - s * first.ty + second.tx, ty: s * first.tx + c * first.ty + second.ty };
}

/** phi_ab = D_b^-1 o D_a: maps frame-a coordinates to frame-b's (f_b o phi_ab = f_a, noise aside). */
export function trueTransform(drift: readonly Rigid[], a: number, b: number): Rigid {
  const da = drift[a];
  const db = drift[b];
  const c = Math.cos(-db.theta);
  const s = Math.sin(-db.theta);
  const dx = da.tx - db.tx;
  const dy = da.ty - db.ty;
  return { theta: da.theta - db.theta, tx: c * dx - s * dy, ty: s * dx + c * dy };
}

/** The measure of every reg2d tolerance: the largest distance between where p and q send a corner of the frame, in pixels. */
export function cornerShift(p: Rigid, q: Rigid, width: number, height: number): number {
  let worst = 0;
  for (const [x, y] of [
    [0, 0],
    [width - 1, 0],
    [0, height - 1],
    [width - 1, height - 1],
  ]) {
    const [px, py] = applyRigid(p, x, y, width, height);
    const [qx, qy] = applyRigid(q, x, y, width, height);
    worst = Math.max(worst, Math.hypot(px - qx, py - qy));
  }
  return worst;
}

interface Blob {
  x: number;
  y: number;
  sigma: number;
  amp: number;
}

/** The world: lattice orientation and offset, and the non-periodic features (spread over the frame and the drift's reach). */
function world(p: SeriesParams): { angle: number; ox: number; oy: number; blobs: Blob[] } {
  const r = (k: number) => uniform(p.seed, 2, 0, k);
  const side = Math.min(p.width, p.height);
  const margin = side / 4;
  const blobs: Blob[] = [];
  for (let k = 0; k < FEATURES; k++)
    blobs.push({
      x: -margin + r(10 + 4 * k) * (p.width + 2 * margin),
      y: -margin + r(11 + 4 * k) * (p.height + 2 * margin),
      sigma: side * (0.05 + 0.05 * r(12 + 4 * k)),
      amp: 0.6 + 0.8 * r(13 + 4 * k),
    });
  return { angle: r(0) * Math.PI, ox: r(1) * LATTICE, oy: r(2) * LATTICE, blobs };
}

/** The world's brightness at a point (before contrast and noise). */
function scene(w: ReturnType<typeof world>, x: number, y: number, ca: number, sa: number): number {
  // Lattice coordinates: the nearest nodes' blobs (3 x 3 around) carry all but e^-12 of the sum.
  const u = ((x - w.ox) * ca + (y - w.oy) * sa) / LATTICE;
  const v = (-(x - w.ox) * sa + (y - w.oy) * ca) / LATTICE;
  const iu = Math.round(u);
  const iv = Math.round(v);
  let sum = 0;
  const k = (LATTICE * LATTICE) / (2 * LATTICE_SIGMA * LATTICE_SIGMA);
  for (let a = -1; a <= 1; a++)
    for (let b = -1; b <= 1; b++) {
      const du = u - iu - a;
      const dv = v - iv - b;
      sum += Math.exp(-k * (du * du + dv * dv));
    }
  for (const f of w.blobs) {
    const dx = x - f.x;
    const dy = y - f.y;
    const d2 = dx * dx + dy * dy;
    if (d2 < 16 * f.sigma * f.sigma) sum += f.amp * Math.exp(-d2 / (2 * f.sigma * f.sigma));
  }
  return sum;
}

/** Frame i at full size (row-major W x H), as the microscope saw it. */
export function frameImage(p: SeriesParams, index: number, drift: Rigid): Float32Array {
  const w = world(p);
  const ca = Math.cos(w.angle);
  const sa = Math.sin(w.angle);
  const out = new Float32Array(p.width * p.height);
  const contrast = p.lowContrast > 0 && index % p.lowContrast === p.lowContrast - 1 ? LOW_CONTRAST : 1;
  for (let y = 0; y < p.height; y++)
    for (let x = 0; x < p.width; x++) {
      const [wx, wy] = applyRigid(drift, x, y, p.width, p.height);
      const noise = p.noise * (uniform(p.seed, 3 + index, x, y) - 0.5);
      out[y * p.width + x] = contrast * scene(w, wx, wy, ca, sa) + noise;
    }
  return out;
}

/** Frame i as an image: frameImage scaled to [0, 1], its darkest pixel 0 and its brightest 1 (reg2d.frame). */
export function scaledFrame(p: SeriesParams, index: number, drift: Rigid): Float32Array {
  const f = frameImage(p, index, drift);
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of f) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const span = hi - lo || 1;
  for (let i = 0; i < f.length; i++) f[i] = (f[i] - lo) / span;
  return f;
}

/**
 * A frame's pyramid into `into` at `at`: level 0 the frame, level l + 1 the 2 x 2 means of
 * level l; each level then shifted and scaled to mean 0 and standard deviation 1 (NCC ignores
 * both, and centred values keep the one-pass f32 sums of the WGSL accurate).
 */
export function writePyramid(frame: Float32Array, width: number, height: number, into: Float32Array, at: number): void {
  const { offsets } = pyramidLayout(width, height);
  into.set(frame, at + offsets[0]);
  for (let l = 1; l < LEVELS; l++) {
    const [pw] = levelSize(width, height, l - 1);
    const [w, h] = levelSize(width, height, l);
    const src = at + offsets[l - 1];
    const dst = at + offsets[l];
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const i = src + 2 * y * pw + 2 * x;
        into[dst + y * w + x] = (into[i] + into[i + 1] + into[i + pw] + into[i + pw + 1]) / 4;
      }
  }
  for (let l = 0; l < LEVELS; l++) {
    const [w, h] = levelSize(width, height, l);
    const n = w * h;
    const base = at + offsets[l];
    let mean = 0;
    for (let i = 0; i < n; i++) mean += into[base + i];
    mean /= n;
    let v = 0;
    for (let i = 0; i < n; i++) v += (into[base + i] - mean) ** 2;
    const sd = Math.sqrt(v / n) || 1;
    for (let i = 0; i < n; i++) into[base + i] = (into[base + i] - mean) / sd;
  }
}

/** The whole series: `frames` pyramids back to back (what reg2d.frames emits), and the drift that made it. */
export function makeSeries(p: SeriesParams, frames: number): { data: Float32Array; drift: Rigid[] } {
  const drift = driftWalk(p, frames);
  const { words } = pyramidLayout(p.width, p.height);
  const data = new Float32Array(frames * words);
  for (let i = 0; i < frames; i++) writePyramid(frameImage(p, i, drift[i]), p.width, p.height, data, i * words);
  return { data, drift };
}
