import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineKernel } from '../define.js';
import { KernelDefinitionError, kernelManifest } from '../definition.js';
import { getKernel } from '../registry.js';
import { GpuRunner, runCpu } from '../gpu/harness.js';
import { createTestDevice, type TestDevice } from '../gpu/node-device.js';
import type { DataType } from '../types.js';
import { GENERIC_SUM } from './spec.js';

// generic.sum, the combine of a split node: known answers where the order of the f32 additions
// shows (1e8 + 1 - 1e8 is 0 in f32, 1 in f64), equal bits on the CPU twin and on the WGSL.

const sum = getKernel(GENERIC_SUM);
const shape = { kind: 'volume', shape: '2,3' };
// Per element: inputs chosen so that another order or wider precision would give other bits.
const inputs = [Float32Array.of(1e8, 0.1, 1, -3, 16777216, 0.5), Float32Array.of(1, 0.2, 2, 3, 1, 0.25), Float32Array.of(-1e8, 0.3, 3, 1e-7, 1, 0.125)];
// acc = in0; acc = fround(acc + in1); acc = fround(acc + in2), worked by hand.
const want = Float32Array.of(0, Math.fround(Math.fround(Math.fround(0.1) + Math.fround(0.2)) + Math.fround(0.3)), 6, Math.fround(1e-7), 16777216, 0.875);
const named = (list: Float32Array[]) => Object.fromEntries(list.map((x, j) => [`in${j}`, x]));

describe('generic.sum (CPU twin)', () => {
  it('adds its inputs in input order, each addition rounded to f32', () => {
    const out = runCpu(sum, { count: 3, ...shape }, named(inputs)).outputs.sum as Float32Array;
    expect([...out]).toEqual([...want]);
    // In another order the bits differ: the order is the contract.
    const swapped = runCpu(sum, { count: 3, ...shape }, named([inputs[0], inputs[2], inputs[1]])).outputs.sum as Float32Array;
    expect([out[0], swapped[0]]).toEqual([0, 1]);
  });

  it('of one input is that input', () => {
    expect([...(runCpu(sum, { count: 1, ...shape }, named([inputs[1]])).outputs.sum as Float32Array)]).toEqual([...inputs[1]]);
  });

  it('has inputs in0..in{count-1} and an output of the kind and shape its params give, element f32', () => {
    const ports = sum.inputs[0];
    expect(ports.repeat).toBe('count');
    const t: DataType = sum.outputs[0].type({ count: 2, kind: 'volume', shape: '16,16,16' });
    expect(t).toEqual({ kind: 'volume', element: 'f32', shape: [16, 16, 16] });
    expect(() => sum.outputs[0].type({ count: 2, kind: 'volume', shape: '16,x' })).toThrow(/param shape: "16,x" is not a list/);
  });
});

describe('generic.sum in WGSL on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  it("gives the CPU twin's bits, in one pass and across several (more inputs than one pass binds)", async () => {
    const run = await GpuRunner.create(t.device, sum, { count: 3, ...shape });
    expect([...((await run.fire(named(inputs))).outputs.sum as Float32Array)]).toEqual([...want]);
    run.destroy();
    // 11 inputs: three passes; seeded values of mixed magnitudes.
    let x = 1;
    const many = Array.from({ length: 11 }, () => Float32Array.from({ length: 6 }, () => ((x = (x * 48271) % 2147483647) / 2147483647 - 0.5) * 10 ** (x % 9)));
    const cpu = runCpu(sum, { count: 11, ...shape }, named(many)).outputs.sum as Float32Array;
    const gpu = await GpuRunner.create(t.device, sum, { count: 11, ...shape });
    expect([...((await gpu.fire(named(many))).outputs.sum as Float32Array)]).toEqual([...cpu]);
    gpu.destroy();
  });
});

describe('a kernel split declaration', () => {
  const base = {
    id: 'acme.split',
    version: '1.0.0',
    description: 'a split kernel',
    params: {
      k: { type: 'int' as const, default: 1, min: 1, max: 8, description: 'shares' },
      j: { type: 'int' as const, default: 0, min: 0, max: 7, description: 'share' },
      n: { type: 'int' as const, default: 8, min: 1, max: 8, description: 'items' },
    },
    outputs: [{ name: 'out', type: () => ({ kind: 'vector', element: 'f32' as const, shape: [4] }) }],
    cost: () => ({ flops: 1, bytes: 1 }),
    cpu: () => {},
  };

  it('is carried in the manifest', () => {
    const k = defineKernel({ ...base, split: { count: 'k', index: 'j', range: 'n', combine: 'sum' } });
    expect(kernelManifest(k).split).toEqual({ count: 'k', index: 'j', range: 'n', combine: 'sum' });
    expect(kernelManifest(getKernel('mlem.projbp')).split).toEqual({ count: 'shares', index: 'share', range: 'angles', combine: 'sum' });
    expect(kernelManifest(getKernel('mlem.update')).split).toBeUndefined();
  });

  it('is refused naming the kernel and the field: a param that is not an int param, a combine rule, the one f32 output', () => {
    const problems = (def: object) => {
      try {
        defineKernel(def as Parameters<typeof defineKernel>[0]);
      } catch (e) {
        if (e instanceof KernelDefinitionError) return e.message;
        throw e;
      }
      return '';
    };
    expect(problems({ ...base, split: { count: 'nope', index: 'j', range: 'n', combine: 'sum' } })).toMatch(
      /kernel "acme.split" split.count: names "nope", which is not an int param/,
    );
    expect(problems({ ...base, split: { count: 'k', index: 'k', range: 'n', combine: 'sum' } })).toMatch(/split.index: names "k", already named/);
    expect(problems({ ...base, split: { count: 'k', index: 'j', range: 'n', combine: 'max' } })).toMatch(/split.combine: "max" is not a combine rule/);
    expect(
      problems({
        ...base,
        outputs: [...base.outputs, { name: 'b', type: base.outputs[0].type }],
        split: { count: 'k', index: 'j', range: 'n', combine: 'sum' },
      }),
    ).toMatch(/outputs: a split kernel has exactly one output; this one has 2/);
    expect(
      problems({
        ...base,
        outputs: [{ name: 'out', type: () => ({ kind: 'v', element: 'u32', shape: [4] }) }],
        split: { count: 'k', index: 'j', range: 'n', combine: 'sum' },
      }),
    ).toMatch(/outputs.out.type: a split kernel's output has element f32; this one has u32/);
  });
});
