import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKernel } from '../registry.js';
import { GpuRunner, runCpu, type TypedArray } from '../gpu/harness.js';
import { createTestDevice, type TestDevice } from '../gpu/node-device.js';
import type { Params } from '../types.js';
import { REG2D_CHECK } from './index.js';

// reg2d.check on a real registration scan of a seeded series (the twin's reg2d.pair and
// reg2d.compose), then on elements spoiled on purpose: a wrong range, a transform off the
// truth, a NaN. The WGSL gives the twin's verdicts and shifts on the llvmpipe adapter.

const SIZE = 32;
const N = 12;
const series = { width: SIZE, height: SIZE, seed: 4, drift: 0.4, rotation: 0.003 };
const descent = { eps: 1e-6, iterations: 50 };
const E = 5;

const frames = runCpu(getKernel('reg2d.frames'), { ...series, noise: 0.1, low_contrast: 0, frames: N + 1 }, {}).outputs.frames as Float32Array;
const pairs = runCpu(getKernel('reg2d.pair'), { width: SIZE, height: SIZE, frames: N + 1, first: 0, count: N, ...descent }, { frames }).outputs
  .out as Uint32Array;
const scan = (mode: string) =>
  runCpu(getKernel('reg2d.compose'), { width: SIZE, height: SIZE, frames: N + 1, ...descent, mode, count: N }, { in: pairs, frames }).outputs;
const inclusive = scan('scan');
const exclusive = scan('exclusive');

const checkParams = (over: Params = {}): Params => ({ ...series, count: N, output: 'inclusive', total: true, within: 0.5, ...over });
const check = (params: Params, inputs: Record<string, TypedArray>) => runCpu(getKernel(REG2D_CHECK), params, inputs).report!;
const f32bits = (x: number) => new Uint32Array(Float32Array.of(x).buffer)[0];

/** A copy of `out` with element i's word t replaced. */
function spoiled(out: TypedArray, i: number, t: number, word: number): Uint32Array {
  const c = Uint32Array.from(out as Uint32Array);
  c[i * E + t] = word;
  return c;
}

describe('reg2d.check on the CPU twin', () => {
  it('passes a serial scan of a seeded series, reporting its largest and mean shift from the truth', () => {
    const r = check(checkParams(), { out: inclusive.out, total: inclusive.total });
    expect(r.ok, r.message).toBe(true);
    expect(r.values?.maxShift).toBeLessThan(0.5);
    expect(r.values?.meanShift).toBeLessThanOrEqual(r.values!.maxShift as number);
  });

  it('passes the exclusive scan: the identity over the empty range, then [0, i - 1]', () => {
    const r = check(checkParams({ output: 'exclusive', total: false }), { out: exclusive.out });
    expect(r.ok, r.message).toBe(true);
  });

  it('names the port, element and range of a miss', () => {
    expect(check(checkParams(), { out: spoiled(inclusive.out, 5, 1, 6), total: inclusive.total }).message).toBe(
      'iteration 0: out element 5 covers [0, 6], expected [0, 5]',
    );
    const off = check(checkParams(), { out: spoiled(inclusive.out, 7, 3, f32bits(9)), total: inclusive.total });
    expect(off.ok).toBe(false);
    expect(off.message).toMatch(
      /^iteration 0: out element 7 \[0, 7\] holds \(theta .*, tx 9\.000, ty .*\), \d+\.\d{3} px from the truth; at most 0\.5 px accepted$/,
    );
    const nan = check(checkParams(), { out: inclusive.out, total: spoiled(inclusive.total, 0, 2, 0x7fc00000) });
    expect(nan.message).toMatch(/total \[0, 11\] holds .*a non-finite transform from the truth/);
  });

  it("with serial: every bracketing within the operator's tolerance of the serial scan, a miss named", () => {
    const params = checkParams({ serial: true, total: false });
    const ok = check(params, { out: inclusive.out, serial: inclusive.out });
    expect(ok.ok, ok.message).toBe(true);
    expect(ok.values?.maxSerialShift).toBe(0);
    // The serial scan moved 0.3 px in x at element 4 (out itself stays within 0.5 px of the truth).
    const moved = Uint32Array.from(inclusive.out as Uint32Array);
    const tx = new Float32Array(moved.buffer, (4 * E + 3) * 4, 1);
    tx[0] += 0.3;
    expect(check(params, { out: inclusive.out, serial: moved }).message).toBe(
      "iteration 0: out element 4 [0, 4] is 0.300 px from the serial scan's; at most 0.25 px (the operator's tolerance) accepted",
    );
  });

  it('refuses a short input naming the port', () => {
    expect(() => check(checkParams(), { out: inclusive.out.subarray(0, 10), total: inclusive.total })).toThrow('input "out" holds 10 words; 60 expected');
  });
});

describe('reg2d.check: the WGSL against the twin (llvmpipe)', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  async function onGpu(params: Params, inputs: Record<string, TypedArray>) {
    const runner = await GpuRunner.create(t.device, getKernel(REG2D_CHECK), params);
    try {
      return (await runner.fire(inputs)).report!;
    } finally {
      runner.destroy();
    }
  }

  it("gives the twin's verdicts, and its shifts within 1e-3 px", async () => {
    for (const [params, inputs] of [
      [checkParams(), { out: inclusive.out, total: inclusive.total }],
      [checkParams({ output: 'exclusive', total: false }), { out: exclusive.out }],
      [checkParams(), { out: spoiled(inclusive.out, 5, 1, 6), total: inclusive.total }],
      [checkParams(), { out: spoiled(inclusive.out, 7, 3, f32bits(9)), total: inclusive.total }],
      [checkParams(), { out: inclusive.out, total: spoiled(inclusive.total, 0, 2, 0x7fc00000) }],
      [checkParams({ serial: true }), { out: inclusive.out, total: inclusive.total, serial: inclusive.out }],
      [checkParams({ serial: true }), { out: inclusive.out, total: inclusive.total, serial: spoiled(inclusive.out, 4, 3, f32bits(5)) }],
    ] as [Params, Record<string, TypedArray>][]) {
      const cpu = check(params, inputs);
      const gpu = await onGpu(params, inputs);
      expect(gpu.ok).toBe(cpu.ok);
      if (cpu.ok) {
        expect(Math.abs((gpu.values!.maxShift as number) - (cpu.values!.maxShift as number))).toBeLessThan(1e-3);
      } else {
        // The texts agree but for the shift's last digits.
        expect(gpu.message?.replace(/\d+\.\d{3} px/, 'x px')).toBe(cpu.message?.replace(/\d+\.\d{3} px/, 'x px'));
      }
    }
  }, 60_000);
});
