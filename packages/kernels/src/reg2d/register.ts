import { LEVELS, centre, levelSize, pyramidLayout, type Rigid } from './series.js';

// Registration of frame a to frame b (thesis §2.3, rigid case): minimise E(phi) = 1 - NCC(f_a,
// f_b o phi) over frame a's pixels less a margin of 1/16 of each side (bilinear f_b, clamped to
// its edge: a fixed set of samples keeps E continuous, where a mask of the samples landing
// inside f_b would jump whenever a row of them crosses the edge and stall the backtracking),
// coarse to fine over the 3 pyramid levels, by gradient descent with Armijo backtracking (with
// widening: each iteration first tries twice the last step) until an accepted step changes the
// energy by less than eps, or M iterations per level. The same steps in TypeScript (f64 sums;
// the CPU twin) and in WGSL (f32; one workgroup, lanes share the pixels); `refine` and
// `registrationWgsl` must stay step for step alike.
//
// The descent runs in pixels: q = (theta r, tx, ty), r the centre-to-corner distance, so a
// unit step moves a corner by about one pixel whatever the parameter. A step is capped at one
// pixel of the current level (2^l full-size pixels), so widening never jumps across the lattice.
//
// Two rules keep the f64 twin and the f32 WGSL on the same path (the WGSL-vs-twin bound):
// - Each level starts its step at that cap. Bilinear f_b is not differentiable where samples sit
//   on its grid (the identity, where a pair starts: every sample at once), so there the gradient
//   is one-sided and Armijo may find no step; in f64 the halvings then ran down to ~1e-9 and,
//   carried over, froze every finer level at the identity (seed 2, pair 0: 0.5 px off), while
//   f32 accepted a null step (its e - sigma tau |g|^2 rounds to e) and went on.
// - A level stops on a small fall (eps) only once the accepted step is also small (STEP_TOL px
//   of the level). eps alone (1e-6, near f32's resolution of 1 - NCC over a few thousand
//   samples) stopped the two sides at different points of a shallow valley: up to 0.07 px apart.

/** Armijo's constant: accept a step when the energy falls by at least SIGMA x the predicted fall. */
export const SIGMA = 1e-3;
/** Halvings of the step before a level gives up (the step is then below 2^-30 of its start). */
export const MAX_BACKTRACK = 30;
/** A level ends on a small fall only once the accepted step also moved less than this, in pixels of the level. */
export const STEP_TOL = 0.01;
/** Sample count below which an overlap is no overlap (energy 2, the worst). */
const MIN_SAMPLES = 16;

export interface Series {
  /** The frames context: one pyramid per frame, back to back. */
  frames: Float32Array;
  width: number;
  height: number;
}

export interface Refined {
  phi: Rigid;
  /** Descent iterations over all levels (each tries at least one step). */
  iterations: number;
}

/** Pixels left out at each side of a level of this size (at least 1). */
export const margin = (size: number) => Math.max(1, size >> 4);

/** Energy and gradient (in q) at phi on one level: the sums of one pass over frame a's pixels. */
function evaluate(s: Series, fa: number, fb: number, level: number, phi: Rigid): { e: number; g: [number, number, number] } {
  const { words, offsets } = pyramidLayout(s.width, s.height);
  const [w, h] = levelSize(s.width, s.height, level);
  const scale = 2 ** level;
  const [cx0, cy0] = centre(s.width, s.height);
  const cx = (cx0 - (scale - 1) / 2) / scale;
  const cy = (cy0 - (scale - 1) / 2) / scale;
  const r = Math.hypot(cx0, cy0);
  const A = fa * words + offsets[level];
  const B = fb * words + offsets[level];
  const f = s.frames;
  const c = Math.cos(phi.theta);
  const sn = Math.sin(phi.theta);
  const tx = phi.tx / scale;
  const ty = phi.ty / scale;
  const mx = margin(w);
  const my = margin(h);
  let n = 0,
    sa = 0,
    sg = 0,
    saa = 0,
    sgg = 0,
    sag = 0;
  let j0 = 0,
    j1 = 0,
    j2 = 0,
    aj0 = 0,
    aj1 = 0,
    aj2 = 0,
    gj0 = 0,
    gj1 = 0,
    gj2 = 0;
  for (let y = my; y < h - my; y++)
    for (let x = mx; x < w - mx; x++) {
      const dx = x - cx;
      const dy = y - cy;
      const Xu = c * dx - sn * dy + cx + tx;
      const Yu = sn * dx + c * dy + cy + ty;
      // Clamped to the edge, where f_b is flat (no gradient across it).
      const X = Math.min(Math.max(Xu, 0), w - 1);
      const Y = Math.min(Math.max(Yu, 0), h - 1);
      const inX = X === Xu ? 1 : 0;
      const inY = Y === Yu ? 1 : 0;
      const x0 = Math.min(Math.floor(X), w - 2);
      const y0 = Math.min(Math.floor(Y), h - 2);
      const fx = X - x0;
      const fy = Y - y0;
      const i = B + y0 * w + x0;
      const v00 = f[i],
        v10 = f[i + 1],
        v01 = f[i + w],
        v11 = f[i + w + 1];
      const g = (1 - fy) * ((1 - fx) * v00 + fx * v10) + fy * ((1 - fx) * v01 + fx * v11);
      const gx = inX * ((1 - fy) * (v10 - v00) + fy * (v11 - v01));
      const gy = inY * ((1 - fx) * (v01 - v00) + fx * (v11 - v10));
      // d g / d q: through theta (divided by r: q0 = theta r), tx / 2^l and ty / 2^l.
      const q0 = (gx * (-sn * dx - c * dy) + gy * (c * dx - sn * dy)) / r;
      const q1 = gx / scale;
      const q2 = gy / scale;
      const a = f[A + y * w + x];
      n += 1;
      sa += a;
      sg += g;
      saa += a * a;
      sgg += g * g;
      sag += a * g;
      j0 += q0;
      j1 += q1;
      j2 += q2;
      aj0 += a * q0;
      aj1 += a * q1;
      aj2 += a * q2;
      gj0 += g * q0;
      gj1 += g * q1;
      gj2 += g * q2;
    }
  return finish([n, sa, sg, saa, sgg, sag, j0, j1, j2, aj0, aj1, aj2, gj0, gj1, gj2]);
}

/** E = 1 - NCC and its gradient from the 15 sums (means subtracted here, so one pass suffices). */
function finish(t: number[]): { e: number; g: [number, number, number] } {
  const [n, sa, sg, saa, sgg, sag] = t;
  if (n < MIN_SAMPLES) return { e: 2, g: [0, 0, 0] };
  const ma = sa / n;
  const mg = sg / n;
  const vaa = saa - n * ma * ma;
  const vgg = sgg - n * mg * mg;
  const vag = sag - n * ma * mg;
  if (!(vaa > 0 && vgg > 0)) return { e: 2, g: [0, 0, 0] };
  const d = Math.sqrt(vaa * vgg);
  const k = vag / vgg;
  const grad = (j: number, aj: number, gj: number) => -(aj - ma * j - k * (gj - mg * j)) / d;
  return { e: 1 - vag / d, g: [grad(t[6], t[9], t[12]), grad(t[7], t[10], t[13]), grad(t[8], t[11], t[14])] };
}

/** refine(f_a, f_b, phi0): the coarse-to-fine descent from phi0 (the thesis's A from the identity, B from a composed guess). */
export function refine(s: Series, fa: number, fb: number, phi0: Rigid, eps: number, maxIterations: number): Refined {
  const r = Math.hypot(...centre(s.width, s.height));
  let phi = { ...phi0 };
  let iterations = 0;
  for (let level = LEVELS - 1; level >= 0; level--) {
    const scale = 2 ** level;
    let tau = Infinity;
    let { e, g } = evaluate(s, fa, fb, level, phi);
    for (let it = 0; it < maxIterations; it++) {
      const gg = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
      if (!(gg > 0) || e >= 2) break;
      iterations++;
      tau = Math.min(2 * tau, scale / Math.sqrt(gg));
      let next: { e: number; g: [number, number, number] } | undefined;
      let cand = phi;
      for (let k = 0; k < MAX_BACKTRACK; k++) {
        cand = { theta: phi.theta - (tau * g[0]) / r, tx: phi.tx - tau * g[1], ty: phi.ty - tau * g[2] };
        const tried = evaluate(s, fa, fb, level, cand);
        if (tried.e <= e - SIGMA * tau * gg) {
          next = tried;
          break;
        }
        tau *= 0.5;
      }
      if (!next) break;
      const fall = e - next.e;
      phi = cand;
      e = next.e;
      g = next.g;
      if (fall < eps && tau * Math.sqrt(gg) < STEP_TOL * scale) break;
    }
  }
  return { phi, iterations };
}

/**
 * The same registration in WGSL for one workgroup of 64 lanes reading `frames`
 * (var<storage, read> frames: array<f32>, the context port): `rg_refine(lane, lanes)` descends
 * from rg_p between frames rg_fa and rg_fb (workgroup variables lane 0 sets before a barrier),
 * leaves the result in rg_p and the iterations in rg_iters. Lane 0 keeps the descent's state
 * and decides; every lane reads the decisions with workgroupUniformLoad, so the barriers inside
 * the loops stay in uniform control flow.
 */
export function registrationWgsl(width: number, height: number, eps: number, maxIterations: number): string {
  const { words, offsets } = pyramidLayout(width, height);
  const [cx, cy] = centre(width, height);
  const f = (x: number) => (Number.isInteger(x) ? `${x}.0` : `${x}`);
  return /* wgsl */ `
const RG_W: u32 = ${width}u;
const RG_H: u32 = ${height}u;
const RG_PYR: u32 = ${words}u;
fn rg_off(level: u32) -> u32 { return select(select(${offsets[2]}u, ${offsets[1]}u, level == 1u), 0u, level == 0u); }
const RG_C: vec2<f32> = vec2<f32>(${f(cx)}, ${f(cy)});
const RG_R: f32 = ${f(Math.hypot(cx, cy))};
const RG_EPS: f32 = ${f(eps)};
const RG_M: u32 = ${maxIterations}u;
const RG_SIGMA: f32 = ${f(SIGMA)};
const RG_STEP: f32 = ${f(STEP_TOL)};
const RG_BACK: u32 = ${MAX_BACKTRACK}u;
const RG_LANES: u32 = 64u;

var<workgroup> rg_part: array<f32, ${64 * 15}>;
var<workgroup> rg_p: vec3<f32>;
var<workgroup> rg_e: f32;
var<workgroup> rg_g: vec3<f32>;
var<workgroup> rg_fa: u32;
var<workgroup> rg_fb: u32;
var<workgroup> rg_go: u32;
var<workgroup> rg_iters: u32;

// Energy and gradient at rg_p on one level into rg_e, rg_g (lane 0 has them on return).
fn rg_eval(lane: u32, lanes: u32, level: u32) {
  let w = RG_W >> level;
  let h = RG_H >> level;
  let scale = f32(1u << level);
  let cl = (RG_C - vec2<f32>((scale - 1.0) * 0.5)) / scale;
  let p = rg_p;
  let c = cos(p.x);
  let sn = sin(p.x);
  let t = p.yz / scale;
  let A = rg_fa * RG_PYR + rg_off(level);
  let B = rg_fb * RG_PYR + rg_off(level);
  let mx = max(1u, w >> 4u);
  let my = max(1u, h >> 4u);
  let iw = w - 2u * mx;
  var acc: array<f32, 15>;
  for (var i = lane; i < iw * (h - 2u * my); i += lanes) {
    let x = mx + i % iw;
    let y = my + i / iw;
    let dx = f32(x) - cl.x;
    let dy = f32(y) - cl.y;
    let Xu = c * dx - sn * dy + cl.x + t.x;
    let Yu = sn * dx + c * dy + cl.y + t.y;
    let X = clamp(Xu, 0.0, f32(w - 1u));
    let Y = clamp(Yu, 0.0, f32(h - 1u));
    let inX = select(0.0, 1.0, X == Xu);
    let inY = select(0.0, 1.0, Y == Yu);
    let x0 = min(u32(floor(X)), w - 2u);
    let y0 = min(u32(floor(Y)), h - 2u);
    let fx = X - f32(x0);
    let fy = Y - f32(y0);
    let k = B + y0 * w + x0;
    let v00 = frames[k];
    let v10 = frames[k + 1u];
    let v01 = frames[k + w];
    let v11 = frames[k + w + 1u];
    let g = (1.0 - fy) * ((1.0 - fx) * v00 + fx * v10) + fy * ((1.0 - fx) * v01 + fx * v11);
    let gx = inX * ((1.0 - fy) * (v10 - v00) + fy * (v11 - v01));
    let gy = inY * ((1.0 - fx) * (v01 - v00) + fx * (v11 - v10));
    let q0 = (gx * (-sn * dx - c * dy) + gy * (c * dx - sn * dy)) / RG_R;
    let q1 = gx / scale;
    let q2 = gy / scale;
    let a = frames[A + y * w + x];
    acc[0] += 1.0; acc[1] += a; acc[2] += g; acc[3] += a * a; acc[4] += g * g; acc[5] += a * g;
    acc[6] += q0; acc[7] += q1; acc[8] += q2;
    acc[9] += a * q0; acc[10] += a * q1; acc[11] += a * q2;
    acc[12] += g * q0; acc[13] += g * q1; acc[14] += g * q2;
  }
  for (var k = 0u; k < 15u; k++) { rg_part[lane * 15u + k] = acc[k]; }
  workgroupBarrier();
  if (lane == 0u) {
    var tt: array<f32, 15>;
    for (var l = 0u; l < lanes; l++) { for (var k = 0u; k < 15u; k++) { tt[k] += rg_part[l * 15u + k]; } }
    let n = tt[0];
    rg_e = 2.0;
    rg_g = vec3<f32>(0.0);
    if (n >= ${MIN_SAMPLES}.0) {
      let ma = tt[1] / n;
      let mg = tt[2] / n;
      let vaa = tt[3] - n * ma * ma;
      let vgg = tt[4] - n * mg * mg;
      let vag = tt[5] - n * ma * mg;
      if (vaa > 0.0 && vgg > 0.0) {
        let d = sqrt(vaa * vgg);
        let kk = vag / vgg;
        let j = vec3<f32>(tt[6], tt[7], tt[8]);
        let aj = vec3<f32>(tt[9], tt[10], tt[11]);
        let gj = vec3<f32>(tt[12], tt[13], tt[14]);
        rg_e = 1.0 - vag / d;
        rg_g = -((aj - ma * j) - kk * (gj - mg * j)) / d;
      }
    }
  }
}

// The coarse-to-fine descent from rg_p (see register.ts: the same steps as refine()).
fn rg_refine(lane: u32, lanes: u32) {
  var p: vec3<f32>;
  var e: f32;
  var g: vec3<f32>;
  var tau: f32;
  var iters = 0u;
  var accepted = false;
  workgroupBarrier();
  for (var lv = 0u; lv < 3u; lv++) {
    let level = 2u - lv;
    let scale = f32(1u << level);
    tau = 3.0e38;
    rg_eval(lane, lanes, level);
    if (lane == 0u) { p = rg_p; e = rg_e; g = rg_g; }
    for (var it = 0u; it < RG_M; it++) {
      if (lane == 0u) {
        let gg = dot(g, g);
        rg_go = select(0u, 1u, gg > 0.0 && e < 2.0);
        if (rg_go == 1u) { iters += 1u; tau = min(2.0 * tau, scale / sqrt(gg)); }
      }
      if (workgroupUniformLoad(&rg_go) == 0u) { break; }
      for (var k = 0u; k < RG_BACK; k++) {
        if (lane == 0u) { rg_p = p - tau * vec3<f32>(g.x / RG_R, g.y, g.z); }
        workgroupBarrier();
        rg_eval(lane, lanes, level);
        if (lane == 0u) {
          accepted = rg_e <= e - RG_SIGMA * tau * dot(g, g);
          if (!accepted) { tau *= 0.5; }
          rg_go = select(0u, 1u, accepted);
        }
        if (workgroupUniformLoad(&rg_go) == 1u) { break; }
      }
      if (lane == 0u) {
        rg_go = 0u;
        if (accepted) {
          let fall = e - rg_e;
          let step = tau * sqrt(dot(g, g));
          p = rg_p;
          e = rg_e;
          g = rg_g;
          rg_go = select(0u, 1u, fall >= RG_EPS || step >= RG_STEP * scale);
        }
        accepted = false;
      }
      if (workgroupUniformLoad(&rg_go) == 0u) { break; }
    }
    if (lane == 0u) { rg_p = p; }
    workgroupBarrier();
  }
  if (lane == 0u) { rg_iters = iters; }
  workgroupBarrier();
}
`;
}
