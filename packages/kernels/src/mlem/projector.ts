import { mulberry32 } from '../random.js';

// The MLEM system matrix P on the CPU: a parallel beam rotating about z, rotate-and-sum. Detector
// bin t of slice z at angle theta sums, over the N samples s along the ray, the slice
// bilinearly interpolated at
//   X = c + (t - c) cos - (s - c) sin,   Y = c + (t - c) sin + (s - c) cos,   c = (N - 1) / 2
// (taps outside the volume are 0). P^T is that same sum read backwards, as a gather: each voxel
// visits the (at most 3 x 3) samples whose bilinear taps can reach it and recomputes their
// weights with the same expressions, so it is the exact transpose (only the order of the sums
// differs). The WGSL in index.ts follows these functions line for line.

export type Floats = Float32Array | Float64Array;

/** cos and sin of pi a / A for the given angles, rounded to f32: the CPU twin and the WGSL use the same table. */
export function trigTable(angles: number, list: readonly number[]): Float32Array {
  const out = new Float32Array(2 * list.length);
  list.forEach((a, i) => {
    out[2 * i] = Math.cos((Math.PI * a) / angles);
    out[2 * i + 1] = Math.sin((Math.PI * a) / angles);
  });
  return out;
}

/** The half-width (plus a margin for rounding) of the samples around a voxel whose taps can reach it. */
const reach = (cs: number, sn: number) => Math.abs(cs) + Math.abs(sn) + 0.01;

/**
 * Sample s of detector bin t at an angle (cs, sn) about the centre c: the cell [x0, y0] of its
 * bilinear taps and the fractions fx, fy, written into `into`. The projector and the
 * back-projector both read it, so the back-projector's weights are the projector's float
 * operations exactly (it is the adjoint); no allocation in the inner loops.
 */
export function sampleAt(t: number, s: number, c: number, cs: number, sn: number, into: Float64Array): void {
  const X = c + (t - c) * cs - (s - c) * sn;
  const Y = c + (t - c) * sn + (s - c) * cs;
  const x0 = Math.floor(X);
  const y0 = Math.floor(Y);
  into[0] = x0;
  into[1] = y0;
  into[2] = X - x0;
  into[3] = Y - y0;
}

/**
 * out[i][z][t] = (P vol) for the i-th angle of `trig` (out holds trig.length / 2 angles).
 * Sums in f64.
 */
export function project(n: number, trig: Float32Array, vol: Floats, out: Floats): void {
  const c = (n - 1) / 2;
  const at = new Float64Array(4);
  const m = trig.length / 2;
  for (let i = 0; i < m; i++) {
    const cs = trig[2 * i];
    const sn = trig[2 * i + 1];
    for (let z = 0; z < n; z++) {
      const slice = z * n * n;
      for (let t = 0; t < n; t++) {
        let acc = 0;
        for (let s = 0; s < n; s++) {
          sampleAt(t, s, c, cs, sn, at);
          const [x0, y0, fx, fy] = at;
          for (let dy = 0; dy < 2; dy++) {
            const y = y0 + dy;
            if (y < 0 || y >= n) continue;
            const wy = dy === 0 ? 1 - fy : fy;
            for (let dx = 0; dx < 2; dx++) {
              const x = x0 + dx;
              if (x < 0 || x >= n) continue;
              const wx = dx === 0 ? 1 - fx : fx;
              acc += wx * wy * vol[slice + y * n + x];
            }
          }
        }
        out[(i * n + z) * n + t] = acc;
      }
    }
  }
}

/** out = P^T sino over the angles of `trig` (sino holds trig.length / 2 angles), as a gather per voxel. Sums in f64. */
export function backproject(n: number, trig: Float32Array, sino: Floats, out: Floats): void {
  const c = (n - 1) / 2;
  const at = new Float64Array(4);
  const m = trig.length / 2;
  for (let z = 0; z < n; z++)
    for (let y = 0; y < n; y++)
      for (let x = 0; x < n; x++) {
        let acc = 0;
        for (let i = 0; i < m; i++) {
          const cs = trig[2 * i];
          const sn = trig[2 * i + 1];
          const row = (i * n + z) * n;
          // Where the voxel sits in (t, s): the samples within `reach` of it are the only ones whose taps touch it.
          const tc = c + (x - c) * cs + (y - c) * sn;
          const sc = c - (x - c) * sn + (y - c) * cs;
          const w = reach(cs, sn);
          const t1 = Math.min(n - 1, Math.floor(tc + w));
          const s0 = Math.max(0, Math.ceil(sc - w));
          const s1 = Math.min(n - 1, Math.floor(sc + w));
          for (let t = Math.max(0, Math.ceil(tc - w)); t <= t1; t++) {
            const r = sino[row + t];
            for (let s = s0; s <= s1; s++) {
              sampleAt(t, s, c, cs, sn, at);
              const [x0, y0, fx, fy] = at;
              const wx = x === x0 ? 1 - fx : x === x0 + 1 ? fx : 0;
              const wy = y === y0 ? 1 - fy : y === y0 + 1 ? fy : 0;
              acc += wx * wy * r;
            }
          }
        }
        out[(z * n + y) * n + x] = acc;
      }
}

/** r = n / p where p > 0, else 0, in place over p (the share's bins: angle list[i] of the full sinogram n). */
export function ratio(n: number, list: readonly number[], counts: Floats, p: Floats): void {
  const bins = n * n;
  list.forEach((a, i) => {
    for (let k = 0; k < bins; k++) {
      const d = i * bins + k;
      p[d] = p[d] > 0 ? counts[a * bins + k] / p[d] : 0;
    }
  });
}

/** lambda <- lambda / s * bp, 0 where s = 0. */
export function update(est: Floats, bp: Floats, sens: Floats, out: Floats): void {
  for (let b = 0; b < out.length; b++) out[b] = sens[b] > 0 ? (est[b] / sens[b]) * bp[b] : 0;
}

export interface Sphere {
  x: number;
  y: number;
  z: number;
  r: number;
  activity: number;
}

/**
 * The seeded phantom: a body sphere (radius 0.42 N about the centre, activity `background`)
 * holding up to `count` non-overlapping spheres of radius 0.06 N .. 0.14 N (at least 1 voxel)
 * and activity 0 (cold) or 2..8, placed by bounded rejection. A voxel is inside a sphere when
 * its centre is.
 */
export function phantom(n: number, count: number, background: number, seed: number): { volume: Float32Array; spheres: Sphere[] } {
  const rnd = mulberry32(seed);
  const c = (n - 1) / 2;
  const body = 0.42 * n;
  const spheres: Sphere[] = [];
  for (let tries = 0; tries < 200 * count && spheres.length < count; tries++) {
    const r = Math.max(1, 0.06 * n + rnd() * 0.08 * n);
    const room = body - r - 1;
    if (room <= 0) continue;
    const x = c + (2 * rnd() - 1) * room;
    const y = c + (2 * rnd() - 1) * room;
    const z = c + (2 * rnd() - 1) * room;
    const activity = rnd() < 0.2 ? 0 : 2 + Math.floor(rnd() * 7);
    if (Math.hypot(x - c, y - c, z - c) > room) continue;
    if (spheres.some((o) => Math.hypot(o.x - x, o.y - y, o.z - z) < o.r + r + 1)) continue;
    spheres.push({ x, y, z, r, activity });
  }
  const volume = new Float32Array(n * n * n);
  for (let z = 0; z < n; z++)
    for (let y = 0; y < n; y++)
      for (let x = 0; x < n; x++) {
        let v = Math.hypot(x - c, y - c, z - c) <= body ? background : 0;
        for (const s of spheres) if (Math.hypot(x - s.x, y - s.y, z - s.z) <= s.r) v = s.activity;
        volume[(z * n + y) * n + x] = v;
      }
  return { volume, spheres };
}

/**
 * Seeded Poisson counts with expected values mean[d] * scale. Exact: a Poisson of mean m is the
 * sum of Poissons of means <= 16 (Knuth's product method each), so the work is about the total
 * count (bounded by the counts param).
 */
export function poisson(mean: Floats, scale: number, seed: number, out: Floats): void {
  const rnd = mulberry32(seed ^ 0x5bd1e995);
  for (let d = 0; d < mean.length; d++) {
    let m = Math.max(0, mean[d] * scale);
    let k = 0;
    while (m > 0) {
      const part = Math.min(m, 16);
      m -= part;
      const limit = Math.exp(-part);
      let p = rnd();
      while (p > limit) {
        k++;
        p *= rnd();
      }
    }
    out[d] = k;
  }
}
