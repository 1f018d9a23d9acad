import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKernel } from '../registry.js';
import { GpuRunner, runCpu } from '../gpu/harness.js';
import { createTestDevice, type TestDevice } from '../gpu/node-device.js';
import { KernelError } from '../types.js';
import { CUSTOM_WGSL_EXAMPLE } from './index.js';

// Odd length on purpose: the last workgroup is partial.
const length = 1000;

describe('custom WGSL on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  it('runs the user module: produce -> out = in * 2 + 1 -> check(scale 2, offset 1) passes', async () => {
    const prod = await GpuRunner.create(t.device, getKernel('vector.produce'), { length });
    const custom = await GpuRunner.create(t.device, getKernel('custom.wgsl'), { length, source: CUSTOM_WGSL_EXAMPLE });
    const check = await GpuRunner.create(t.device, getKernel('vector.check'), { length, scale: 2, offset: 1 });
    const p = (await prod.fire({}, 7)).outputs.out;
    expect(p).toEqual(runCpu(getKernel('vector.produce'), { length }, {}, 7).outputs.out);
    const out = (await custom.fire({ in: p }, 7)).outputs.out as Float32Array;
    expect(Array.from(out.subarray(0, 3))).toEqual([15, 15, 15]);
    expect(out.every((v) => v === 15)).toBe(true);
    expect((await check.fire({ in: out }, 7)).report).toEqual({ ok: true });
    expect(runCpu(getKernel('vector.check'), { length, scale: 2, offset: 1 }, { in: out }, 7).report).toEqual({ ok: true });
    for (const r of [prod, custom, check]) r.destroy();
  });

  it('gives the module info = (length, iteration, 0, 0) and lets it leave info unused', async () => {
    const useInfo = CUSTOM_WGSL_EXAMPLE.replace('input[i] * 2.0 + 1.0', 'f32(info.y) * 1000.0 + f32(i) + f32(info.x) * 0.0 + input[i] * 0.0');
    const a = await GpuRunner.create(t.device, getKernel('custom.wgsl'), { length, source: useInfo });
    const out = (await a.fire({ in: new Float32Array(length) }, 3)).outputs.out as Float32Array;
    expect(out[0]).toBe(3000);
    expect(out[length - 1]).toBe(3000 + length - 1);
    a.destroy();
    const noInfo = `@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < arrayLength(&output)) { output[gid.x] = -input[gid.x]; }
}`;
    const b = await GpuRunner.create(t.device, getKernel('custom.wgsl'), { length, source: noInfo });
    const neg = (await b.fire({ in: new Float32Array(length).fill(4) }, 0)).outputs.out as Float32Array;
    expect(neg.every((v) => v === -4)).toBe(true);
    b.destroy();
  });

  it('the checker reports the first bad index and value on the GPU, as on the CPU', async () => {
    const run = await GpuRunner.create(t.device, getKernel('vector.check'), { length, scale: 2, offset: 1 });
    const v = new Float32Array(length).fill(9);
    v[600] = 0;
    v[321] = Number.NaN;
    const want = { ok: false, message: 'iteration 4: element 321 is NaN, expected 9' };
    expect((await run.fire({ in: v }, 4)).report).toMatchObject(want);
    expect(runCpu(getKernel('vector.check'), { length, scale: 2, offset: 1 }, { in: v }, 4).report).toMatchObject(want);
    run.destroy();
  });

  it('bad WGSL rejects with a KernelError naming the kernel', async () => {
    const bad = async (source: string) => {
      const e = await GpuRunner.create(t.device, getKernel('custom.wgsl'), { length, source }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(KernelError);
      expect((e as KernelError).kernel).toBe('custom.wgsl');
      return (e as Error).message;
    };
    expect(await bad(CUSTOM_WGSL_EXAMPLE.replace('* 2.0', '* two'))).toMatch(/^kernel "custom.wgsl": WGSL module "main" does not compile: .*two/);
    // Compiles, but binds the input read_write: refused against its ports before compiling.
    expect(await bad(CUSTOM_WGSL_EXAMPLE.replace('var<storage, read> input', 'var<storage, read_write> input'))).toBe(
      'kernel "custom.wgsl": WGSL bindings do not match its ports: binding 0 "input" (line 1) is storage-read_write, but input "in" needs var<storage, read>',
    );
    expect(await bad(CUSTOM_WGSL_EXAMPLE.replace('@workgroup_size(64)', '@workgroup_size(32)'))).toMatch(/workgroup_size\(64\)/);
    expect(await bad('  ')).toMatch(/source is empty/);
  });
});

describe('custom WGSL with declared ports on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  it('binds two inputs and two outputs of different types and sizes in port order', async () => {
    const n = 333;
    const source = `@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> sum: array<f32>;
@group(0) @binding(3) var<storage, read_write> last: array<u32>;
@group(0) @binding(4) var<uniform> info: vec4<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= info.x) { return; }
  sum[gid.x] = a[gid.x] + f32(b[gid.x % 7u]);
  if (gid.x == info.x - 1u) { last[0] = info.y; last[1] = b[6]; }
}`;
    const params = { length: n, source, ports: `a: f32[${n}], b: u32[7] -> sum: f32[${n}], last: u32[2]` };
    const run = await GpuRunner.create(t.device, getKernel('custom.wgsl'), params);
    const a = Float32Array.from({ length: n }, (_, i) => i / 4);
    const b = Uint32Array.from([1, 2, 3, 4, 5, 6, 7]);
    const got = await run.fire({ a, b }, 9);
    expect(got.outputs.sum).toEqual(Float32Array.from(a, (x, i) => x + b[i % 7]));
    expect(got.outputs.last).toEqual(Uint32Array.from([9, 7]));
    run.destroy();
  });
});

describe('custom WGSL on the CPU', () => {
  it('refuses with a KernelError: it runs on GPU PEs only', () => {
    expect(getKernel('custom.wgsl').gpuOnly).toBe(true);
    expect(() => runCpu(getKernel('custom.wgsl'), { length: 4 }, { in: new Float32Array(4) })).toThrow(/kernel "custom.wgsl": runs on GPU PEs only/);
  });
});
