import { LINEAR_ID, WORKGROUP } from '../gpu/pipeline.js';
import { MAX_RADIX } from './fft.js';

// WGSL of the saliency steps. Complex values are vec2<f32> (re, im), maps orientation-major.

const head = (uniforms: string) => `struct U { ${uniforms} }
@group(0) @binding(0) var<uniform> u: U;
${LINEAR_ID}
const PI = 3.14159265358979;
fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn cis(a: f32) -> vec2<f32> { return vec2<f32>(cos(a), sin(a)); }`;

const main = `@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = linear_id(gid, nwg);`;

export const HANNING = `${head('w: u32, h: u32')}
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
fn hann(n: u32, len: u32) -> f32 {
  if (len < 2u) { return 1.0; }
  return 0.5 * (1.0 - cos(2.0 * PI * f32(n) / f32(len - 1u)));
}
${main}
  if (t >= u.w * u.h) { return; }
  dst[t] = src[t] * hann(t % u.w, u.w) * hann(t / u.w, u.h);
}`;

/** Real -> complex, the FFT's first step. */
export const PACK = `${head('n: u32')}
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec2<f32>>;
${main}
  if (t >= u.n) { return; }
  dst[t] = vec2<f32>(src[t], 0.0);
}`;

/**
 * One Stockham pass of radix R over `lines` lines of length n; line l starts at
 * (l / inner) * outer_stride + (l % inner) * inner_stride, elements `stride` apart. The
 * twiddles come tabulated from the host (f64-accurate, no sin/cos per thread): tw[k R + r] =
 * cis(sign 2 pi k r / (ns R)), then the R roots cis(sign 2 pi q / R) at ns R.
 */
export const FFT_PASS = `${head('n: u32, radix: u32, ns: u32, stride: u32, lines: u32, inner: u32, outer_stride: u32, inner_stride: u32, scale: f32')}
@group(0) @binding(1) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> tw: array<vec2<f32>>;
${main}
  let m = u.n / u.radix;
  if (t >= u.lines * m) { return; }
  let l = t / m;
  let j = t % m;
  let base = (l / u.inner) * u.outer_stride + (l % u.inner) * u.inner_stride;
  let k = j % u.ns;
  let span = u.ns * u.radix;
  var v: array<vec2<f32>, ${MAX_RADIX}>;
  for (var r = 0u; r < u.radix; r++) {
    v[r] = cmul(src[base + (j + r * m) * u.stride], tw[k * u.radix + r]);
  }
  let d = (j / u.ns) * span + k;
  for (var q = 0u; q < u.radix; q++) {
    var acc = vec2<f32>(0.0, 0.0);
    var e = 0u;
    for (var r = 0u; r < u.radix; r++) {
      acc += cmul(v[r], tw[span + e]);
      e = (e + q) % u.radix;
    }
    dst[base + (d + q * u.ns) * u.stride] = acc * u.scale;
  }
}`;

/** G_ij on the fly, bank as in model.ts: f_j = 0.25 / 2^j, sigma = f_j / 2.5, theta_i = i pi / O. */
export const GABOR = `${head('w: u32, h: u32, orientations: u32, frequencies: u32')}
@group(0) @binding(1) var<storage, read> spec: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec2<f32>>;
fn bin(k: u32, n: u32) -> f32 {
  if (f32(k) < f32(n + 1u) / 2.0) { return f32(k) / f32(n); }
  return (f32(k) - f32(n)) / f32(n);
}
${main}
  let n = u.w * u.h;
  if (t >= n * u.orientations * u.frequencies) { return; }
  let m = t / n;
  let p = t % n;
  let th = f32(m / u.frequencies) * PI / f32(u.orientations);
  let f = 0.25 / exp2(f32(m % u.frequencies));
  let sigma = f / 2.5;
  let uu = bin(p % u.w, u.w);
  let vv = bin(p / u.w, u.h);
  let up = uu * cos(th) + vv * sin(th);
  let vp = vv * cos(th) - uu * sin(th);
  let g = exp(-((up - f) * (up - f) + vp * vp) / (2.0 * sigma * sigma));
  dst[t] = spec[p] * g;
}`;

export const INTERACTIONS = `${head('n: u32, orientations: u32, frequencies: u32, excite: f32, inhibit: f32')}
@group(0) @binding(1) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
fn energy(i: u32, j: u32, p: u32) -> f32 {
  let c = src[((i % u.orientations) * u.frequencies + j) * u.n + p];
  return dot(c, c);
}
${main}
  if (t >= u.n * u.orientations * u.frequencies) { return; }
  let m = t / u.n;
  let p = t % u.n;
  let i = m / u.frequencies;
  let j = m % u.frequencies;
  var s = energy(i, j, p);
  if (j > 0u) { s += u.excite * energy(i, j - 1u, p); }
  if (j + 1u < u.frequencies) { s += u.excite * energy(i, j + 1u, p); }
  if (u.orientations > 1u) { s -= u.inhibit * energy(i + u.orientations - 1u, j, p); }
  if (u.orientations > 2u) { s -= u.inhibit * energy(i + 1u, j, p); }
  dst[t] = max(s, 0.0);
}`;

/** Per-map min, max, mean: one workgroup per map, a strided loop then a tree in shared memory. */
export const STATS = `struct U { n: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> stats: array<vec4<f32>>;
var<workgroup> lo: array<f32, ${WORKGROUP}>;
var<workgroup> hi: array<f32, ${WORKGROUP}>;
var<workgroup> sum: array<f32, ${WORKGROUP}>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = wid.x;
  var a = 3.4e38;
  var b = -3.4e38;
  var s = 0.0;
  for (var p = lid; p < u.n; p += ${WORKGROUP}u) {
    let v = src[m * u.n + p];
    a = min(a, v);
    b = max(b, v);
    s += v;
  }
  lo[lid] = a;
  hi[lid] = b;
  sum[lid] = s;
  workgroupBarrier();
  for (var w = ${WORKGROUP / 2}u; w > 0u; w >>= 1u) {
    if (lid < w) {
      lo[lid] = min(lo[lid], lo[lid + w]);
      hi[lid] = max(hi[lid], hi[lid + w]);
      sum[lid] += sum[lid + w];
    }
    workgroupBarrier();
  }
  if (lid == 0u) { stats[m] = vec4<f32>(lo[0], hi[0], sum[0] / f32(u.n), 0.0); }
}`;

/** op 0: (v - min) / (max - min); op 1: v (max - mean)^2. */
export const APPLY = `${head('n: u32, maps: u32, op: u32')}
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read> stats: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;
${main}
  if (t >= u.n * u.maps) { return; }
  let st = stats[t / u.n];
  if (u.op == 0u) {
    var s = 0.0;
    if (st.y > st.x) { s = 1.0 / (st.y - st.x); }
    dst[t] = (src[t] - st.x) * s;
  } else {
    dst[t] = src[t] * (st.y - st.z) * (st.y - st.z);
  }
}`;

export const FUSE = `${head('n: u32, maps: u32, threshold: f32')}
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read> stats: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;
${main}
  if (t >= u.n) { return; }
  var top = -3.4e38;
  for (var m = 0u; m < u.maps; m++) { top = max(top, stats[m].y); }
  var s = 0.0;
  if (top > 0.0) { s = 1.0 / top; }
  var acc = 0.0;
  for (var m = 0u; m < u.maps; m++) {
    let v = src[m * u.n + t] * s;
    if (v >= u.threshold) { acc += v; }
  }
  dst[t] = acc;
}`;
