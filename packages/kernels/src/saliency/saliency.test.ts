import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKernel } from '../registry.js';
import { GpuRunner, runCpu, type TypedArray } from '../gpu/harness.js';
import { createTestDevice, type TestDevice } from '../gpu/node-device.js';
import { readBuffer } from '../gpu/pipeline.js';
import { KernelError } from '../types.js';
import { fft2d, naiveDft2d } from './fft.js';
import { sceneTarget } from './model.js';
import { SALIENCY_PATHWAY } from './index.js';

/** Largest |a - b| relative to the largest |b|: the tolerance measure of the GPU checks. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let err = 0;
  let top = 0;
  for (let i = 0; i < b.length; i++) {
    err = Math.max(err, Math.abs(a[i] - b[i]));
    top = Math.max(top, Math.abs(b[i]));
  }
  return top > 0 ? err / top : err;
}

function runPathwayCpu(p: Record<string, number | string>): Record<string, TypedArray> {
  const out: Record<string, TypedArray> = { 'saliency.image': runCpu(getKernel('saliency.image'), p, {}).outputs.out };
  let prev = out['saliency.image'];
  for (const id of SALIENCY_PATHWAY) {
    prev = runCpu(getKernel(id), p, { in: prev }).outputs.out;
    out[id] = prev;
  }
  return out;
}

const argmax = (a: ArrayLike<number>) => {
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i] > a[best]) best = i;
  return best;
};

describe('saliency FFT on the CPU', () => {
  it('matches the DFT by its definition on odd and mixed sizes', () => {
    for (const [h, w] of [
      [9, 15],
      [7, 11],
      [12, 10],
      [5, 13],
      [8, 6],
    ]) {
      const re = Array.from({ length: h * w }, (_, i) => Math.sin(i * 1.7) + (i % 3));
      const im = Array.from({ length: h * w }, (_, i) => Math.cos(i * 0.3));
      const d = new Float64Array(2 * h * w);
      re.forEach((v, i) => ((d[2 * i] = v), (d[2 * i + 1] = im[i])));
      fft2d(d, 1, h, w, -1);
      expect(relErr(d, naiveDft2d(re, im, h, w, -1)), `${h}x${w}`).toBeLessThan(1e-12);
      fft2d(d, 1, h, w, 1);
      expect(
        relErr(
          d.filter((_, i) => i % 2 === 0),
          re,
        ),
        `${h}x${w} round trip`,
      ).toBeLessThan(1e-12);
    }
  });

  it('handles 720 x 576 exactly (no padding): a pure tone lands in its bin', () => {
    const [w, h] = [720, 576];
    const img = new Float32Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) img[y * w + x] = Math.cos((2 * Math.PI * (7 * x)) / w + (2 * Math.PI * (5 * y)) / h);
    const spec = runCpu(getKernel('saliency.fft'), { width: w, height: h }, { in: img }).outputs.out as Float32Array;
    const mag = (u: number, v: number) => Math.hypot(spec[2 * (v * w + u)], spec[2 * (v * w + u) + 1]);
    expect(mag(7, 5)).toBeCloseTo((w * h) / 2, -1);
    expect(mag(w - 7, h - 5)).toBeCloseTo((w * h) / 2, -1);
    expect(mag(8, 5)).toBeLessThan(1);
  });

  it('refuses a size with a prime factor above 13, naming the kernel and the param', () => {
    expect(() => runCpu(getKernel('saliency.fft'), { width: 34, height: 8 }, { in: new Float32Array(34 * 8) })).toThrow(KernelError);
    expect(() => runCpu(getKernel('saliency.fft'), { width: 34, height: 8 }, { in: new Float32Array(34 * 8) })).toThrow(
      /saliency.fft.*width 34 has the prime factor 17/,
    );
    // the cost hint still answers, so the predictor can show the node before the run refuses it
    expect(getKernel('saliency.fft').cost({ width: 34, height: 8 }).flops).toBeGreaterThan(0);
  });
});

describe('the saliency pathway on the CPU', () => {
  it('puts the peak of the saliency map on the odd blob', () => {
    for (const [w, h, seed] of [
      [64, 48, 1],
      [45, 75, 2],
      [60, 60, 3],
    ]) {
      const out = runPathwayCpu({ width: w, height: h, seed, scene: 'blob' });
      const peak = argmax(out['saliency.fuse']);
      const t = sceneTarget(w, h, seed);
      const dist = Math.hypot((peak % w) - t.x, Math.floor(peak / w) - t.y);
      expect(dist, `${w}x${h} seed ${seed}`).toBeLessThanOrEqual(t.radius);
    }
  });
});

describe('saliency in WGSL on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  // f32 on the GPU against the CPU twin (f64 inside the FFT): every step within 1e-4 of the
  // output's largest magnitude, the FFT passes (log-depth sums of products) within 2e-5 each.
  it('every step matches the CPU twin on odd sizes', async () => {
    for (const [w, h] of [
      [15, 9],
      [20, 12],
    ]) {
      const p = { width: w, height: h, seed: 4, scene: 'blob' };
      const cpu = runPathwayCpu(p);
      let prev: TypedArray = cpu['saliency.image'];
      const img = await GpuRunner.create(t.device, getKernel('saliency.image'), p);
      expect((await img.fire({})).outputs.out).toEqual(prev);
      img.destroy();
      for (const id of SALIENCY_PATHWAY) {
        const run = await GpuRunner.create(t.device, getKernel(id), p);
        const got = (await run.fire({ in: prev })).outputs.out;
        run.destroy();
        // each step from the CPU's input, so errors do not compound across steps
        const want = runCpu(getKernel(id), p, { in: prev }).outputs.out;
        expect(relErr(got, want), `${id} ${w}x${h}`).toBeLessThan(1e-4);
        prev = cpu[id];
      }
    }
  });

  it('the FFT matches the CPU twin at 720 x 576', async () => {
    const p = { width: 720, height: 576, seed: 2, scene: 'noise' };
    const img = runCpu(getKernel('saliency.image'), p, {}).outputs.out;
    const run = await GpuRunner.create(t.device, getKernel('saliency.fft'), p);
    const got = (await run.fire({ in: img })).outputs.out;
    run.destroy();
    expect(relErr(got, runCpu(getKernel('saliency.fft'), p, { in: img }).outputs.out)).toBeLessThan(1e-4);
  });

  it('the whole pathway on the GPU puts the peak on the odd blob', async () => {
    const p = { width: 48, height: 40, seed: 6, scene: 'blob' };
    const runs = [await GpuRunner.create(t.device, getKernel('saliency.image'), p)];
    for (const id of SALIENCY_PATHWAY) runs.push(await GpuRunner.create(t.device, getKernel(id), p));
    let prev: GPUBuffer | undefined;
    for (const r of runs) {
      await r.fireBuffers(prev ? { in: prev } : {});
      prev = r.outputBuffers.out;
    }
    const sal = new Float32Array(await readBuffer(t.device, prev!, p.width * p.height * 4));
    expect(relErr(sal, runPathwayCpu(p)['saliency.fuse'])).toBeLessThan(1e-3);
    const peak = argmax(sal);
    const tg = sceneTarget(p.width, p.height, p.seed);
    expect(Math.hypot((peak % p.width) - tg.x, Math.floor(peak / p.width) - tg.y)).toBeLessThanOrEqual(tg.radius);
    for (const r of runs) r.destroy();
  });
});
