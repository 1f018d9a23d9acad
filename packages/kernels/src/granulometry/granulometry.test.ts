import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKernel } from '../registry.js';
import { GpuRunner, runCpu } from '../gpu/harness.js';
import { createTestDevice, type TestDevice } from '../gpu/node-device.js';
import { seededRandom } from './volume.js';

const vol = getKernel('granulometry.volume');
const opn = getKernel('granulometry.openings');
const crv = getKernel('granulometry.curve');

/** Opening by the L1 ball of radius n written out directly (outside = background). */
function referenceOpeningCount(v: Uint32Array, d: number, h: number, w: number, n: number): number {
  const offsets: number[][] = [];
  for (let z = -n; z <= n; z++)
    for (let y = -n; y <= n; y++) for (let x = -n; x <= n; x++) if (Math.abs(x) + Math.abs(y) + Math.abs(z) <= n) offsets.push([x, y, z]);
  const get = (a: Uint32Array, x: number, y: number, z: number) => (x < 0 || y < 0 || z < 0 || x >= w || y >= h || z >= d ? 0 : a[(z * h + y) * w + x]);
  const er = new Uint32Array(v.length);
  const op = new Uint32Array(v.length);
  for (let z = 0; z < d; z++)
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) er[(z * h + y) * w + x] = offsets.every(([a, b, c]) => get(v, x + a, y + b, z + c)) ? 1 : 0;
  for (let z = 0; z < d; z++)
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) op[(z * h + y) * w + x] = offsets.some(([a, b, c]) => get(er, x + a, y + b, z + c)) ? 1 : 0;
  return op.reduce((s, b) => s + b, 0);
}

function noisyVolume(d: number, h: number, w: number, seed: number): Uint32Array {
  // blobs of mixed sizes plus speckle, so every opening removes something different
  const rnd = seededRandom(seed);
  const v = new Uint32Array(d * h * w);
  for (let k = 0; k < 6; k++) {
    const cx = rnd() * w,
      cy = rnd() * h,
      cz = rnd() * d,
      r = 1 + rnd() * 4;
    for (let z = 0; z < d; z++)
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if ((x - cx) ** 2 + (y - cy) ** 2 + ((z - cz) * 1.3) ** 2 <= r * r) v[(z * h + y) * w + x] = 1;
  }
  for (let i = 0; i < v.length; i++) if (rnd() < 0.05) v[i] = 1;
  return v;
}

describe('granulometry on the CPU', () => {
  const dims = { depth: 11, height: 14, width: 13 };

  it('counts after openings 1..4 equal openings by the octahedron written out directly', () => {
    const v = noisyVolume(dims.depth, dims.height, dims.width, 7);
    const s = runCpu(opn, { ...dims, levels: 6, first: 1, last: 4 }, { in: v }).outputs.out;
    const want = [0, 1, 2, 3, 4].map((n) => (n === 0 ? v.reduce((a, b) => a + b, 0) : referenceOpeningCount(v, dims.depth, dims.height, dims.width, n)));
    expect(Array.from(s.subarray(0, 5))).toEqual(want);
    expect(s[5]).toBe(0);
  });

  it('openings 1..2 then 3..5 (the Fig 19 split) equal openings 1..5 in one stage', () => {
    const v = noisyVolume(dims.depth, dims.height, dims.width, 3);
    const p = { ...dims, levels: 6 };
    const whole = runCpu(opn, { ...p, first: 1, last: 5 }, { in: v }).outputs.out;
    const s1 = runCpu(opn, { ...p, first: 1, last: 2 }, { in: v }).outputs.out;
    const s2 = runCpu(opn, { ...p, first: 3, last: 5 }, { in: s1 }).outputs.out;
    expect(s2).toEqual(whole);
  });

  it('finds the ball radius as the predominant size of the sphere volume', () => {
    for (const radius of [3, 5]) {
      const p = { depth: 40, height: 40, width: 40, radius, spheres: 8, seed: 11, levels: 9 };
      const v = runCpu(vol, p, {}).outputs.out as Uint32Array;
      expect(v.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      const s1 = runCpu(opn, { ...p, first: 1, last: 4 }, { in: v }).outputs.out;
      const s2 = runCpu(opn, { ...p, first: 5, last: 8 }, { in: s1 }).outputs.out;
      const r = runCpu(crv, p, { in: s2 }).report!;
      expect(r.values?.predominant_size).toBe(radius);
      expect((r.values?.curve as number[])[radius + 1]).toBe(0);
    }
  });

  it('rejects a stage whose range does not fit the curve, naming the kernel', () => {
    expect(() => runCpu(opn, { ...dims, levels: 4, first: 2, last: 4 }, { in: new Uint32Array(4 + 11 * 14 * 13) })).toThrow(
      /granulometry.openings.*first <= last < levels/,
    );
  });
});

describe('granulometry in WGSL on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  it('volume, split openings and curve match the CPU twin exactly on odd sizes', async () => {
    const p = { depth: 13, height: 17, width: 15, radius: 2, spheres: 5, seed: 5, levels: 6 };
    const gv = await GpuRunner.create(t.device, vol, p);
    const vGpu = (await gv.fire({})).outputs.out;
    const vCpu = runCpu(vol, p, {}).outputs.out;
    expect(vGpu).toEqual(vCpu);
    const v = noisyVolume(p.depth, p.height, p.width, 9);
    const g1 = await GpuRunner.create(t.device, opn, { ...p, first: 1, last: 2 });
    const g2 = await GpuRunner.create(t.device, opn, { ...p, first: 3, last: 5 });
    const s1 = (await g1.fire({ in: v })).outputs.out;
    expect(s1).toEqual(runCpu(opn, { ...p, first: 1, last: 2 }, { in: v }).outputs.out);
    const s2 = (await g2.fire({ in: s1 })).outputs.out;
    expect(s2).toEqual(runCpu(opn, { ...p, first: 3, last: 5 }, { in: s1 }).outputs.out);
    const gc = await GpuRunner.create(t.device, crv, p);
    const rc = await gc.fire({ in: s2 });
    const cc = runCpu(crv, p, { in: s2 });
    expect(rc.outputs.out).toEqual(cc.outputs.out);
    expect(rc.report).toEqual(cc.report);
    for (const r of [gv, g1, g2, gc]) r.destroy();
  });

  it('Fig 19 across two devices: openings 1-3 on one, 4-6 on the other via the host, curve on the CPU', async () => {
    const other = await createTestDevice();
    try {
      const p = { depth: 20, height: 19, width: 21, radius: 3, spheres: 4, seed: 2, levels: 7 };
      const v = runCpu(vol, p, {}).outputs.out;
      const g0 = await GpuRunner.create(t.device, opn, { ...p, first: 1, last: 3 });
      const g1 = await GpuRunner.create(other.device, opn, { ...p, first: 4, last: 6 });
      const mid = (await g0.fire({ in: v })).outputs.out; // GPU 0 -> CPU
      const state = (await g1.fire({ in: mid })).outputs.out; // CPU -> GPU 1
      const r = runCpu(crv, p, { in: state }).report!;
      expect(r.values?.predominant_size).toBe(3);
      expect(state).toEqual(runCpu(opn, { ...p, first: 1, last: 6 }, { in: v }).outputs.out);
      g0.destroy();
      g1.destroy();
    } finally {
      await other.destroy();
    }
  });
});
