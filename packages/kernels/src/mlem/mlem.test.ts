import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKernel } from '../registry.js';
import { GpuRunner, runCpu, type TypedArray } from '../gpu/harness.js';
import { readBuffer, uploadBuffer } from '../gpu/pipeline.js';
import { createTestDevice, type TestDevice } from '../gpu/node-device.js';
import { mulberry32 } from '../random.js';
import { GpuProjector, anglesOf, backproject, phantom, project, shareAngles, trigTable, update, type Floats } from './index.js';

// MLEM's known answers (Eq. 1), on the CPU twin and on the WGSL (llvmpipe). Tolerances, and why:
// - adjoint <Px, y> = <x, P^T y>: P^T recomputes P's weights with the same expressions, so only
//   the order of the sums differs: 1e-12 relative in f64, 1e-6 with f32 outputs (CPU), 1e-5 on
//   the GPU (f32 throughout).
// - K shares summed in share order vs the unsplit kernel: each angle's contribution is the same
//   computation, only the grouping of the f32 sum over angles differs: 1e-6 of the largest
//   value (CPU), 1e-5 (GPU).
// - sum(s * lambda) = sum(n) after every iteration, and lambda_true a fixed point: 1e-5 relative
//   (CPU), 1e-4 (GPU: f32 sums over 16^3 voxels).
// - the Poisson log-likelihood never decreases: each step may lose at most 1e-7 of |L| (CPU) or
//   1e-6 (GPU) to rounding; the increases early on are orders of magnitude larger.

const N = 16;
const A = 36;
const volume = { size: N, angles: A };

const dot = (a: Floats, b: Floats) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
const sum = (a: Floats) => dot(a, new Float64Array(a.length).fill(1));
const maxAbs = (a: Floats) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
};
const maxDiff = (a: Floats, b: Floats) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};
const seeded = (n: number, seed: number, lo = 0, hi = 1) => {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => lo + r() * (hi - lo));
};
const relError = (x: Floats, truth: Floats) => {
  let e = 0;
  for (let i = 0; i < x.length; i++) e += (x[i] - truth[i]) ** 2;
  return Math.sqrt(e / dot(truth, truth));
};

/** The Poisson log-likelihood sum_d n_d log (P lambda)_d - (P lambda)_d (in f64; n_d log 0 with n_d = 0 taken as 0). */
function logLikelihood(n: number, angles: number, est: Floats, counts: Floats): number {
  const p = new Float64Array(angles * n * n);
  project(n, trigTable(angles, shareAngles(angles, 1, 0)), Float64Array.from(est), p);
  let l = 0;
  for (let d = 0; d < p.length; d++) l += (counts[d] > 0 ? counts[d] * Math.log(p[d]) : 0) - p[d];
  return l;
}

const source = (params: Record<string, number> = {}) =>
  runCpu(getKernel('mlem.phantom'), { ...volume, ...params }, {}).outputs as Record<'truth' | 'sinogram' | 'sensitivity', Float32Array>;

/** One MLEM iteration on the CPU twin. */
function cpuStep(est: Float32Array, counts: Float32Array, sens: Float32Array, params: Record<string, number> = volume): Float32Array {
  const bp = runCpu(getKernel('mlem.projbp'), params, { estimate: est, sinogram: counts }).outputs.backprojection;
  return runCpu(getKernel('mlem.update'), { size: params.size }, { previous: est, backprojection: bp, sensitivity: sens }).outputs.estimate as Float32Array;
}

describe('the MLEM projector and phantom (CPU)', () => {
  it('P^T is the adjoint of P: <Px, y> = <x, P^T y> in f64 and in f32, odd sizes and all angles', () => {
    for (const [n, angles] of [
      [13, 7],
      [16, 36],
    ]) {
      const trig = trigTable(angles, shareAngles(angles, 1, 0));
      const x = seeded(n ** 3, 1);
      const y = seeded(angles * n * n, 2);
      const px = new Float64Array(angles * n * n);
      const pty = new Float64Array(n ** 3);
      project(n, trig, Float64Array.from(x), px);
      backproject(n, trig, Float64Array.from(y), pty);
      const lhs = dot(px, y);
      expect(Math.abs(lhs - dot(x, pty)) / lhs).toBeLessThan(1e-12);
      const px32 = new Float32Array(angles * n * n);
      const pty32 = new Float32Array(n ** 3);
      project(n, trig, x, px32);
      backproject(n, trig, y, pty32);
      expect(Math.abs(dot(px32, y) - dot(x, pty32)) / lhs).toBeLessThan(1e-6);
    }
  });

  it('places seeded spheres of known activity inside the body, the same for the same seed', () => {
    const a = phantom(32, 6, 1, 7);
    expect(a.spheres.length).toBe(6);
    expect(phantom(32, 6, 1, 7).volume).toEqual(a.volume);
    expect(phantom(32, 6, 1, 8).volume).not.toEqual(a.volume);
    for (const s of a.spheres) {
      expect([0, 2, 3, 4, 5, 6, 7, 8]).toContain(s.activity);
      expect(a.volume[(Math.round(s.z) * 32 + Math.round(s.y)) * 32 + Math.round(s.x)]).toBe(s.activity);
    }
    // Outside the body sphere (a corner) the activity is 0.
    expect(a.volume[0]).toBe(0);
  });

  it('the source gives n = P lambda_true without noise, seeded Poisson counts of the asked total with it, and s = P^T 1 > 0 everywhere', () => {
    const clean = source();
    const px = new Float32Array(A * N * N);
    project(N, trigTable(A, shareAngles(A, 1, 0)), clean.truth, px);
    expect(clean.sinogram).toEqual(px);
    expect(Math.min(...clean.sensitivity)).toBeGreaterThan(0);
    const noisy = source({ counts: 1e5 });
    expect(noisy.sinogram.every((v) => Number.isInteger(v) && v >= 0)).toBe(true);
    expect(Math.abs(sum(noisy.sinogram) - 1e5)).toBeLessThan(5 * Math.sqrt(1e5));
    expect(source({ counts: 1e5 }).sinogram).toEqual(noisy.sinogram);
  });
});

describe('MLEM on the CPU twin', () => {
  const { truth, sinogram, sensitivity } = source();

  it('lambda_true is a fixed point on noiseless data', () => {
    const next = cpuStep(truth, sinogram, sensitivity);
    expect(maxDiff(next, truth) / maxAbs(truth)).toBeLessThan(1e-5);
  });

  it('keeps sum(s * lambda) = sum(n) after every iteration', () => {
    const total = sum(sinogram);
    let est: Float32Array = new Float32Array(N ** 3).fill(1);
    for (let k = 0; k < 10; k++) {
      est = cpuStep(est, sinogram, sensitivity);
      expect(Math.abs(dot(sensitivity, est) - total) / total, `iteration ${k}`).toBeLessThan(1e-5);
    }
  });

  it('never decreases the Poisson log-likelihood (seeded Poisson counts)', () => {
    const noisy = source({ counts: 2e5 });
    let est: Float32Array = new Float32Array(N ** 3).fill(1);
    let before = logLikelihood(N, A, est, noisy.sinogram);
    for (let k = 0; k < 30; k++) {
      est = cpuStep(est, noisy.sinogram, noisy.sensitivity);
      const l = logLikelihood(N, A, est, noisy.sinogram);
      expect(l, `iteration ${k}`).toBeGreaterThanOrEqual(before - 1e-7 * Math.abs(before));
      before = l;
    }
  });

  it('noiseless 16^3: after 100 iterations the error to the phantom is within 1% of a float64 reference', () => {
    const trig = trigTable(A, shareAngles(A, 1, 0));
    // The float64 reference: the same algorithm on Float64Arrays.
    const n64 = new Float64Array(A * N * N);
    project(N, trig, Float64Array.from(truth), n64);
    const s64 = new Float64Array(N ** 3);
    backproject(N, trig, new Float64Array(A * N * N).fill(1), s64);
    let ref = new Float64Array(N ** 3).fill(1);
    let est: Float32Array = new Float32Array(N ** 3).fill(1);
    for (let k = 0; k < 100; k++) {
      const p = new Float64Array(A * N * N);
      project(N, trig, ref, p);
      for (let d = 0; d < p.length; d++) p[d] = p[d] > 0 ? n64[d] / p[d] : 0;
      const bp = new Float64Array(N ** 3);
      backproject(N, trig, p, bp);
      const next = new Float64Array(N ** 3);
      update(ref, bp, s64, next);
      ref = next;
      est = cpuStep(est, sinogram, sensitivity);
    }
    const threshold = 1.01 * relError(ref, truth);
    expect(relError(est, truth)).toBeLessThan(threshold);
    // And it got somewhere: 100 iterations cut the error of the flat start by more than 5.
    expect(threshold).toBeLessThan(relError(new Float32Array(N ** 3).fill(1), truth) / 5);
  });

  it('K interleaved shares cover every angle once, and their outputs summed in share order give the unsplit back-projection', () => {
    const est = seeded(N ** 3, 3, 0.5, 2);
    const whole = runCpu(getKernel('mlem.projbp'), volume, { estimate: est, sinogram }).outputs.backprojection as Float32Array;
    for (const K of [2, 5, 12, 36]) {
      const seen = Array.from({ length: K }, (_, j) => anglesOf({ ...volume, shares: K, share: j })).flat();
      expect(seen.sort((a, b) => a - b)).toEqual(shareAngles(A, 1, 0));
      const total = new Float32Array(N ** 3);
      for (let j = 0; j < K; j++) {
        const part = runCpu(getKernel('mlem.projbp'), { ...volume, shares: K, share: j }, { estimate: est, sinogram }).outputs.backprojection;
        for (let b = 0; b < total.length; b++) total[b] += part[b];
      }
      expect(maxDiff(total, whole) / maxAbs(whole), `K = ${K}`).toBeLessThan(1e-6);
    }
  });

  it('mlem.error reports the relative L2 error, the total activity and the bound, and fails a reconstruction above it', () => {
    const check = (estimate: Float32Array, params: Record<string, number> = {}, iteration = 0) =>
      runCpu(getKernel('mlem.error'), { size: N, ...params }, { estimate, truth }, iteration).report!;
    const flat = new Float32Array(N ** 3).fill(1);
    const r = check(flat);
    expect(r.values!.error).toBeCloseTo(relError(flat, truth), 12);
    expect(r.values!.activity).toBe(N ** 3);
    expect(check(truth)).toMatchObject({ ok: true, values: { error: 0 } });
    // The derived bound: a flat image at the phantom's mean activity is on it; one MLEM step from a flat start is below.
    const mean = sum(truth) / truth.length;
    const bound = relError(new Float32Array(N ** 3).fill(mean), truth);
    expect(check(new Float32Array(N ** 3).fill(mean)).values!.bound).toBeCloseTo(bound, 5);
    const { sinogram, sensitivity } = source();
    const step = cpuStep(flat, sinogram, sensitivity);
    expect(check(step).ok).toBe(true);
    // Wrong: an estimate of noise fails, naming the iteration, the error and the bound.
    const noise = check(seeded(N ** 3, 8, 0.5, 2), {}, 7);
    expect(noise.ok).toBe(false);
    expect(noise.message).toMatch(
      new RegExp(
        `^iteration 7: the reconstruction's relative error ${(noise.values!.error as number).toPrecision(4)} is above the bound ${bound.toPrecision(4)} \\(the error of a flat image`,
      ),
    );
    // max_error overrides it: one step is not within 1%.
    const tight = check(step, { max_error: 0.01 }, 3);
    expect(tight.ok).toBe(false);
    expect(tight.message).toMatch(/^iteration 3: the reconstruction's relative error 0\.\d+ is above the bound 0\.01000 \(max_error\)$/);
    expect(check(seeded(N ** 3, 8, 0.5, 2), { max_error: 100 }).ok).toBe(true);
  });

  it('refuses a share outside its split, naming the kernel and the fix', () => {
    expect(() => anglesOf({ ...volume, angles: 180, shares: 200, share: 0 })).toThrow(/mlem.projbp.*shares 200 > angles 180.*lower shares to 180/);
    expect(() => anglesOf({ ...volume, shares: 4, share: 4 })).toThrow(/share 4 is not below shares 4/);
  });

  it('zeroes lambda where s = 0 and the ratio where P lambda = 0', () => {
    const out = new Float32Array(3);
    update(Float32Array.of(2, 2, 2), Float32Array.of(4, 4, 4), Float32Array.of(2, 0, 1), out);
    expect([...out]).toEqual([4, 0, 8]);
    const bp = runCpu(getKernel('mlem.projbp'), volume, { estimate: new Float32Array(N ** 3), sinogram }).outputs.backprojection;
    expect(bp.every((v) => v === 0)).toBe(true);
  });
});

describe('MLEM in WGSL on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  const { truth, sinogram, sensitivity } = source();
  const read = async (buf: GPUBuffer, n: number) => new Float32Array(await readBuffer(t.device, buf, n * 4));

  it('the phantom on a GPU PE gives what the CPU twin gives, noise included', async () => {
    const run = await GpuRunner.create(t.device, getKernel('mlem.phantom'), { ...volume, counts: 1e5 });
    expect((await run.fire({})).outputs).toEqual(runCpu(getKernel('mlem.phantom'), { ...volume, counts: 1e5 }, {}).outputs);
    run.destroy();
  });

  it('P and P^T on the device: <Px, y> = <x, P^T y>, and each matches the CPU twin', async () => {
    for (const [n, angles] of [
      [13, 7],
      [16, 36],
    ]) {
      const g = await GpuProjector.create(t.device, { size: n, angles });
      const x = seeded(n ** 3, 4);
      const y = seeded(angles * n * n, 5);
      const xb = uploadBuffer(t.device, x);
      const out = uploadBuffer(t.device, new Float32Array(n ** 3));
      let enc = t.device.createCommandEncoder();
      g.encodeProject(enc, xb);
      t.device.queue.submit([enc.finish()]);
      const px = await read(g.scratch, angles * n * n);
      t.device.queue.writeBuffer(g.scratch, 0, y);
      enc = t.device.createCommandEncoder();
      g.encodeBackproject(enc, out);
      t.device.queue.submit([enc.finish()]);
      const pty = await read(out, n ** 3);
      const lhs = dot(px, y);
      expect(Math.abs(lhs - dot(x, pty)) / lhs).toBeLessThan(1e-5);
      const trig = trigTable(angles, shareAngles(angles, 1, 0));
      const cpx = new Float32Array(angles * n * n);
      const cpty = new Float32Array(n ** 3);
      project(n, trig, x, cpx);
      backproject(n, trig, y, cpty);
      expect(maxDiff(px, cpx) / maxAbs(cpx)).toBeLessThan(1e-5);
      expect(maxDiff(pty, cpty) / maxAbs(cpty)).toBeLessThan(1e-5);
      for (const b of [xb, out]) b.destroy();
      g.destroy();
    }
  });

  async function gpuMlem(
    counts: Float32Array,
    sens: Float32Array,
    iterations: number,
    each: (est: Float32Array, k: number) => void,
    start?: Float32Array,
    shares = 1,
  ): Promise<Float32Array> {
    const projbp = await Promise.all(
      Array.from({ length: shares }, (_, j) => GpuRunner.create(t.device, getKernel('mlem.projbp'), { ...volume, shares, share: j })),
    );
    const upd = await GpuRunner.create(t.device, getKernel('mlem.update'), { size: N });
    let est: Float32Array = start ?? new Float32Array(N ** 3).fill(1);
    for (let k = 0; k < iterations; k++) {
      const bp = new Float32Array(N ** 3);
      for (const r of projbp) {
        const part = (await r.fire({ estimate: est, sinogram: counts })).outputs.backprojection;
        for (let b = 0; b < bp.length; b++) bp[b] += part[b];
      }
      est = (await upd.fire({ previous: est, backprojection: bp, sensitivity: sens })).outputs.estimate as Float32Array;
      each(est, k);
    }
    for (const r of [...projbp, upd]) r.destroy();
    return est;
  }

  it('mlem.error on the device reports what the CPU twin reports (f32 sums: 1e-5 relative)', async () => {
    const est = seeded(N ** 3, 8, 0.5, 2);
    const run = await GpuRunner.create(t.device, getKernel('mlem.error'), { size: N });
    const got = (await run.fire({ estimate: est, truth })).report!;
    const want = runCpu(getKernel('mlem.error'), { size: N }, { estimate: est, truth }).report!;
    // Noise is no reconstruction: both fail it, with the same bound.
    expect(got.ok).toBe(false);
    expect(want.ok).toBe(false);
    expect(got.message).toMatch(/^iteration 0: the reconstruction's relative error [0-9.]+ is above the bound/);
    for (const key of ['error', 'activity', 'bound'])
      expect(Math.abs(Number(got.values![key]) - Number(want.values![key])) / Number(want.values![key]), key).toBeLessThan(1e-5);
    run.destroy();
  });

  it('projbp and update match the CPU twin', async () => {
    const est = seeded(N ** 3, 6, 0.5, 2);
    const run = await GpuRunner.create(t.device, getKernel('mlem.projbp'), volume);
    const got = (await run.fire({ estimate: est, sinogram })).outputs.backprojection as Float32Array;
    const want = runCpu(getKernel('mlem.projbp'), volume, { estimate: est, sinogram }).outputs.backprojection as Float32Array;
    expect(maxDiff(got, want) / maxAbs(want)).toBeLessThan(1e-5);
    run.destroy();
    const upd = await GpuRunner.create(t.device, getKernel('mlem.update'), { size: N });
    const inputs: Record<string, TypedArray> = {
      previous: est,
      backprojection: want,
      sensitivity: Float32Array.from(sensitivity, (v, i) => (i % 7 === 0 ? 0 : v)),
    };
    const u = (await upd.fire(inputs)).outputs.estimate as Float32Array;
    const cu = runCpu(getKernel('mlem.update'), { size: N }, inputs).outputs.estimate as Float32Array;
    expect(maxDiff(u, cu) / maxAbs(cu)).toBeLessThan(1e-6);
    expect(u.filter((_, i) => i % 7 === 0).every((v) => v === 0)).toBe(true);
    upd.destroy();
  });

  it('lambda_true is a fixed point on noiseless data', async () => {
    const next = await gpuMlem(sinogram, sensitivity, 1, () => {}, truth);
    expect(maxDiff(next, truth) / maxAbs(truth)).toBeLessThan(1e-4);
  });

  it('keeps sum(s * lambda) = sum(n) after every iteration, and the log-likelihood never decreases', async () => {
    const noisy = source({ counts: 2e5 });
    const total = sum(noisy.sinogram);
    let before = logLikelihood(N, A, new Float32Array(N ** 3).fill(1), noisy.sinogram);
    await gpuMlem(noisy.sinogram, noisy.sensitivity, 15, (est, k) => {
      expect(Math.abs(dot(noisy.sensitivity, est) - total) / total, `iteration ${k}`).toBeLessThan(1e-4);
      const l = logLikelihood(N, A, est, noisy.sinogram);
      expect(l, `iteration ${k}`).toBeGreaterThanOrEqual(before - 1e-6 * Math.abs(before));
      before = l;
    });
  });

  it('K = 1, 4 and 36 shares give the same estimates as the CPU twin over 5 iterations', async () => {
    let cpu: Float32Array = new Float32Array(N ** 3).fill(1);
    for (let k = 0; k < 5; k++) cpu = cpuStep(cpu, sinogram, sensitivity);
    for (const K of [1, 4, 36]) {
      const got = await gpuMlem(sinogram, sensitivity, 5, () => {}, undefined, K);
      expect(maxDiff(got, cpu) / maxAbs(cpu), `K = ${K}`).toBeLessThan(1e-4);
    }
  });
});
