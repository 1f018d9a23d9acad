import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKernel } from '../registry.js';
import { GpuRunner, runCpu } from '../gpu/harness.js';
import { createTestDevice, type TestDevice } from '../gpu/node-device.js';
import { expectedValue, increment } from './index.js';

// Odd sizes on purpose: the last workgroup is partial.
const size = { width: 37, height: 13 };

describe('the Fig 13 increment rule', () => {
  it('is 0 for nb_loop <= 4 and 1 from 5 on', () => {
    expect([0, 1, 2, 3, 4].map(increment)).toEqual([0, 0, 0, 0, 0]);
    expect([5, 6, 100, 400].map(increment)).toEqual([1, 1, 1, 1]);
  });

  it('gives the consumer its expected value from the upstream nb_loops, not +1 each', () => {
    expect(expectedValue({ increments: '4,100', expected_offset: 0 }, 7)).toBe(8);
    expect(expectedValue({ increments: '5, 5', expected_offset: 0 }, 7)).toBe(9);
    expect(expectedValue({ increments: '', expected_offset: 2 }, 7)).toBe(9);
    expect(() => expectedValue({ increments: '5,x' }, 0)).toThrow(/matrix.consume.*increments/);
  });
});

describe('the consumer of a running sum (feedback with delay d)', () => {
  // acc_k = x_k + acc_{k-d} (initial tokens 0), x_k = scale * k + offset: the brute-force sum.
  const bySum = (k: number, d: number, scale: number, offset: number) => {
    let s = 0;
    for (let i = k; i >= 0; i -= d) s += scale * i + offset;
    return s;
  };

  it('expects the closed form of the sum over k, k-d, k-2d, ... >= 0 for every delay', () => {
    for (const d of [1, 2, 3, 7, 1_000_000])
      for (const [scale, offset, increments] of [
        [1, 0, ''],
        [2, 3, ''],
        [1, 0, '5,5'],
        [0.5, 1, ''],
      ] as const)
        for (let k = 0; k < 60; k++) {
          const upstream = increments ? 2 : 0;
          expect(expectedValue({ scale, expected_offset: offset, increments, running_sum: d }, k)).toBe(bySum(k, d, scale, offset + upstream));
        }
    expect(expectedValue({ running_sum: 0 }, 9)).toBe(9);
    expect(expectedValue({ running_sum: 1 }, 99)).toBe(4950);
  });

  it('passes an accumulator loop fed by P through matrix.add, iteration by iteration, and fails a wrong delay', () => {
    for (const d of [1, 3]) {
      const acc: Float32Array[] = [];
      const n = size.width * size.height;
      for (let k = 0; k < 40; k++) {
        const x = runCpu(getKernel('matrix.produce'), size, {}, k).outputs.out;
        const back = k < d ? new Float32Array(n) : acc[k - d];
        acc[k] = runCpu(getKernel('matrix.add'), size, { a: x, b: back }).outputs.out as Float32Array;
        expect(runCpu(getKernel('matrix.consume'), { ...size, running_sum: d }, { in: acc[k] }, k).report).toEqual({ ok: true });
        if (k > d) expect(runCpu(getKernel('matrix.consume'), { ...size, running_sum: d + 1 }, { in: acc[k] }, k).report?.ok).toBe(false);
      }
    }
  });

  it('refuses to check a sum beyond what f32 holds exactly, as for a plain stream', () => {
    // sum 0..5792 = 16,776,528 is exact; sum 0..5793 = 16,782,321 is past 2^24
    const m = new Float32Array(size.width * size.height).fill(16_776_528);
    expect(runCpu(getKernel('matrix.consume'), { ...size, running_sum: 1 }, { in: m }, 5792).report).toEqual({ ok: true });
    expect(runCpu(getKernel('matrix.consume'), { ...size, running_sum: 1 }, { in: m }, 5793).report?.message).toMatch(
      /iteration 5793: expected value 16782321 is not exact in f32/,
    );
  });

  it('is an expectation param the derivation never sets', () => {
    const spec = getKernel('matrix.consume');
    expect(spec.expects?.params).toContain('running_sum');
    expect(spec.expects?.derive({ in: { scale: 2, offset: 1 } })).toEqual({ increments: '', expected_offset: 1, scale: 2 });
  });
});

describe('matrix kernels on the CPU', () => {
  it('P -> I(nb_loop 3) -> I(nb_loop 100) -> C passes with increments "3,100"', () => {
    const p = runCpu(getKernel('matrix.produce'), size, {}, 42).outputs.out;
    const i1 = runCpu(getKernel('matrix.increment'), { ...size, nb_loop: 3 }, { in: p }).outputs.out;
    const i2 = runCpu(getKernel('matrix.increment'), { ...size, nb_loop: 100 }, { in: i1 }).outputs.out;
    expect(i2.every((v) => v === 43)).toBe(true);
    expect(runCpu(getKernel('matrix.consume'), { ...size, increments: '3,100' }, { in: i2 }, 42).report).toEqual({ ok: true });
    const wrong = runCpu(getKernel('matrix.consume'), { ...size, increments: '5,100' }, { in: i2 }, 42).report;
    expect(wrong?.ok).toBe(false);
    expect(wrong?.message).toBe('iteration 42: element 0 is 43, expected 44');
  });

  it('names the first bad index and its value', () => {
    const m = new Float32Array(size.width * size.height).fill(5);
    m[300] = 6;
    m[400] = 7;
    const r = runCpu(getKernel('matrix.consume'), size, { in: m }, 5).report;
    expect(r).toMatchObject({ ok: false, values: { iteration: 5, index: 300, value: 6, expected: 5 } });
  });
});

describe('matrix kernels in WGSL on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  it('produce and increment match the CPU twin exactly', async () => {
    const prod = await GpuRunner.create(t.device, getKernel('matrix.produce'), size);
    const gp = (await prod.fire({}, 1234)).outputs.out;
    expect(gp).toEqual(runCpu(getKernel('matrix.produce'), size, {}, 1234).outputs.out);
    for (const nb_loop of [0, 4, 5, 57]) {
      const inc = await GpuRunner.create(t.device, getKernel('matrix.increment'), { ...size, nb_loop });
      const got = (await inc.fire({ in: gp })).outputs.out;
      expect(got).toEqual(runCpu(getKernel('matrix.increment'), { ...size, nb_loop }, { in: gp }).outputs.out);
      inc.destroy();
    }
    prod.destroy();
  });

  it('add matches the CPU twin exactly', async () => {
    const n = size.width * size.height;
    const a = Float32Array.from({ length: n }, (_, i) => i * 0.5);
    const b = Float32Array.from({ length: n }, (_, i) => 3 - i);
    const run = await GpuRunner.create(t.device, getKernel('matrix.add'), size);
    expect((await run.fire({ a, b })).outputs.out).toEqual(runCpu(getKernel('matrix.add'), size, { a, b }).outputs.out);
    run.destroy();
  });

  it('consume passes on good data and reports the first bad index and value found by the GPU reduction', async () => {
    const run = await GpuRunner.create(t.device, getKernel('matrix.consume'), { ...size, increments: '5,2' });
    const m = new Float32Array(size.width * size.height).fill(10);
    expect((await run.fire({ in: m }, 9)).report).toEqual({ ok: true });
    m[470] = -1;
    m[123] = 12.5;
    m[200] = 0;
    const bad = (await run.fire({ in: m }, 9)).report;
    expect(bad).toEqual({
      ok: false,
      message: 'iteration 9: element 123 is 12.5, expected 10',
      values: { iteration: 9, index: 123, value: 12.5, expected: 10 },
    });
    // the result buffer is cleared each firing: good data passes again
    m.fill(11);
    expect((await run.fire({ in: m }, 10)).report).toEqual({ ok: true });
    run.destroy();
  });

  it('P -> I -> I -> C chained on the device over several iterations (Figs 11-13)', async () => {
    const runs = [
      await GpuRunner.create(t.device, getKernel('matrix.produce'), size),
      await GpuRunner.create(t.device, getKernel('matrix.increment'), { ...size, nb_loop: 100 }),
      await GpuRunner.create(t.device, getKernel('matrix.increment'), { ...size, nb_loop: 4 }),
    ];
    const good = await GpuRunner.create(t.device, getKernel('matrix.consume'), { ...size, increments: '100,4' });
    const plusOne = await GpuRunner.create(t.device, getKernel('matrix.consume'), { ...size, expected_offset: 2 });
    for (const it of [0, 1, 2, 2 ** 24 - 2]) {
      let prev: GPUBuffer | undefined;
      for (const r of runs) {
        await r.fireBuffers(prev ? { in: prev } : {}, it);
        prev = r.outputBuffers.out;
      }
      expect(await good.fireBuffers({ in: prev! }, it)).toEqual({ ok: true });
      // a hard-coded +1 per incrementer is wrong: nb_loop 4 adds 0
      expect((await plusOne.fireBuffers({ in: prev! }, it))?.message).toBe(`iteration ${it}: element 0 is ${it + 1}, expected ${it + 2}`);
    }
    // at 2^24, 2^24 + 1 rounds back to 2^24 in f32: the consumer says so instead of passing
    await runs[0].fireBuffers({}, 2 ** 24);
    expect((await good.fireBuffers({ in: runs[0].outputBuffers.out }, 2 ** 24))?.message).toMatch(
      /iteration 16777216: expected value 16777217 is not exact in f32/,
    );
    expect(
      runCpu(getKernel('matrix.consume'), { ...size, increments: '100,4' }, { in: new Float32Array(size.width * size.height).fill(2 ** 24) }, 2 ** 24).report
        ?.ok,
    ).toBe(false);
    for (const r of [...runs, good, plusOne]) r.destroy();
  });

  it('consume with running_sum checks an accumulator built on the device exactly as the CPU twin does', async () => {
    const n = size.width * size.height;
    const prod = await GpuRunner.create(t.device, getKernel('matrix.produce'), size);
    const add = await GpuRunner.create(t.device, getKernel('matrix.add'), size);
    for (const d of [1, 4]) {
      const check = await GpuRunner.create(t.device, getKernel('matrix.consume'), { ...size, running_sum: d });
      const wrong = await GpuRunner.create(t.device, getKernel('matrix.consume'), { ...size, running_sum: d + 1 });
      const acc: Float32Array[] = [];
      for (let k = 0; k < 24; k++) {
        const x = (await prod.fire({}, k)).outputs.out as Float32Array;
        acc[k] = (await add.fire({ a: x, b: k < d ? new Float32Array(n) : acc[k - d] })).outputs.out as Float32Array;
        const cpu = runCpu(getKernel('matrix.consume'), { ...size, running_sum: d }, { in: acc[k] }, k).report;
        expect((await check.fire({ in: acc[k] }, k)).report).toEqual(cpu);
        expect(cpu).toEqual({ ok: true });
        if (k > d)
          expect((await wrong.fire({ in: acc[k] }, k)).report).toEqual(
            runCpu(getKernel('matrix.consume'), { ...size, running_sum: d + 1 }, { in: acc[k] }, k).report,
          );
      }
      check.destroy();
      wrong.destroy();
    }
    const big = await GpuRunner.create(t.device, getKernel('matrix.consume'), { ...size, running_sum: 1 });
    expect((await big.fire({ in: new Float32Array(n).fill(16_776_528) }, 5793)).report?.message).toMatch(/expected value 16782321 is not exact in f32/);
    big.destroy();
    prod.destroy();
    add.destroy();
  });

  it('splits dispatches beyond 65535 workgroups', async () => {
    const big = { width: 2100, height: 2100 }; // 4.41M elements = 68907 workgroups of 64
    const prod = await GpuRunner.create(t.device, getKernel('matrix.produce'), big);
    await prod.fireBuffers({}, 3);
    const cons = await GpuRunner.create(t.device, getKernel('matrix.consume'), big);
    expect(await cons.fireBuffers({ in: prod.outputBuffers.out }, 3)).toEqual({ ok: true });
    expect((await cons.fireBuffers({ in: prod.outputBuffers.out }, 4))?.message).toBe('iteration 4: element 0 is 3, expected 4');
    prod.destroy();
    cons.destroy();
  });
});
