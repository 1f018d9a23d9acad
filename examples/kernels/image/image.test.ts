import { GpuRunner, runCpu, type TypedArray } from '@pipeloom/kernels';
import { createTestDevice, type TestDevice } from '@pipeloom/kernels/gpu/node-device';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { display, magnitudeKernel, read, sobelKernel } from './index.js';

// Each kernel's WGSL against its CPU twin on the CPU WebGPU adapter (llvmpipe), at odd sizes
// (partial workgroups, odd chroma planes). Read and Sobel are exact; the magnitude's square
// root is checked within 1 ulp-ish (WGSL's sqrt is not correctly rounded).

const SIZES = [
  { width: 1, height: 1 },
  { width: 7, height: 5 },
  { width: 317, height: 203 },
];

const maxRelErr = (a: TypedArray, b: TypedArray) => Array.from(a).reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]) / Math.max(1, Math.abs(b[i]))), 0);

describe('the image package on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  for (const size of SIZES) {
    it(`${size.width}x${size.height}: read (y, u, v) and sobel (gx, gy) exact, magnitude within 1e-6, display's check passes on the GPU's results`, async () => {
      const it = 3;
      const r = await GpuRunner.create(t.device, read, size);
      const frame = await r.fire({}, it);
      const cpuFrame = runCpu(read, size, {}, it);
      for (const p of ['y', 'u', 'v']) expect(frame.outputs[p], p).toEqual(cpuFrame.outputs[p]);
      expect(frame.outputs.u.length).toBe(Math.ceil(size.width / 2) * Math.ceil(size.height / 2));

      const s = await GpuRunner.create(t.device, sobelKernel, size);
      const grad = await s.fire({ in: frame.outputs.y }, it);
      const cpuGrad = runCpu(sobelKernel, size, { in: cpuFrame.outputs.y }, it);
      expect(grad.outputs.gx).toEqual(cpuGrad.outputs.gx);
      expect(grad.outputs.gy).toEqual(cpuGrad.outputs.gy);

      const m = await GpuRunner.create(t.device, magnitudeKernel, size);
      const mag = await m.fire({ gx: grad.outputs.gx, gy: grad.outputs.gy }, it);
      const cpuMag = runCpu(magnitudeKernel, size, { gx: cpuGrad.outputs.gx, gy: cpuGrad.outputs.gy }, it);
      expect(maxRelErr(mag.outputs.out, cpuMag.outputs.out)).toBeLessThanOrEqual(1e-6);

      const sizes = `${size.width}x${size.height},${Math.ceil(size.width / 2)}x${Math.ceil(size.height / 2)},${Math.ceil(size.width / 2)}x${Math.ceil(size.height / 2)}`;
      const shown = runCpu(display, { ...size, sizes, check: 'sobel' }, { in0: mag.outputs.out, in1: frame.outputs.u, in2: frame.outputs.v }, it);
      expect(shown.report).toEqual({ ok: true });
      for (const x of [r, s, m]) x.destroy();
    });
  }

  it("display's check names iteration, port, index and values when a frame is wrong", () => {
    const size = { width: 9, height: 4 };
    const frame = runCpu(read, size, {}, 2).outputs;
    const g = runCpu(sobelKernel, size, { in: frame.y }).outputs;
    const mag = runCpu(magnitudeKernel, size, { gx: g.gx, gy: g.gy }).outputs.out;
    // u and v swapped: what a miswired document would give.
    const report = runCpu(display, { ...size, sizes: '9x4,5x2,5x2', check: 'sobel' }, { in0: mag, in1: frame.v, in2: frame.u }, 2).report;
    expect(report?.ok).toBe(false);
    expect(report?.message).toMatch(/^iteration 2: in1\[\d+\] is [\d.]+, expected [\d.]+ \(tolerance 0.000001\)$/);
  });
});
