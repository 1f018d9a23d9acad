import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineKernel, type KernelDefinition } from './define.js';
import { KernelDefinitionError, bindingProblems, declaredRate, formatKernelProblem, kernelManifest, portsFor, specFromManifest } from './definition.js';
import { GpuRunner, runCpu } from './gpu/harness.js';
import { createTestDevice, type TestDevice } from './gpu/node-device.js';
import { getKernel, listKernels } from './registry.js';
import { KernelError, type Params } from './types.js';

const vec = (p: Params) => ({ kind: 'vector', element: 'f32' as const, shape: [Number(p.n)] });

// A small kernel written as a package would: two inputs, two outputs of different sizes, WGSL
// with two entry points (two passes) and a uniform, and its CPU twin.
const SUMDIFF = `
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> sum: array<f32>;
@group(0) @binding(3) var<storage, read_write> first: array<f32>;
@group(0) @binding(4) var<uniform> u: vec4<u32>;
@compute @workgroup_size(64) fn add(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= u.x) { return; }
  sum[gid.x] = a[gid.x] + b[gid.x] + f32(u.y);
}
@compute @workgroup_size(1) fn head() { first[0] = sum[0] * 0.0 + a[0] - b[0]; }
`;
const sumDiff: KernelDefinition = {
  id: 'test.sumdiff',
  version: '1.2.0',
  description: 'sum = a + b + iteration; first = a[0] - b[0]',
  params: { n: { type: 'int', default: 7, min: 1, max: 100000, unit: 'elements', description: 'elements of a and b' } },
  inputs: [
    { name: 'a', type: vec },
    { name: 'b', type: vec },
  ],
  outputs: [
    { name: 'sum', type: vec },
    { name: 'first', description: 'one element', type: () => ({ kind: 'vector', element: 'f32', shape: [1] }) },
  ],
  cost: (p) => ({ flops: Number(p.n), bytes: 12 * Number(p.n) }),
  cpu: ({ inputs, outputs, iteration }) => {
    const a = inputs.a as Float32Array;
    const b = inputs.b as Float32Array;
    const sum = outputs.sum as Float32Array;
    for (let i = 0; i < sum.length; i++) sum[i] = a[i] + b[i] + iteration;
    (outputs.first as Float32Array)[0] = a[0] - b[0];
  },
  gpu: {
    source: SUMDIFF,
    passes: [
      { entry: 'add', threads: (p) => Number(p.n) },
      { entry: 'head', workgroups: () => [1, 1, 1] },
    ],
    uniforms: (p, iteration) => [
      ['u', Number(p.n)],
      ['u', iteration],
    ],
  },
};

/** The problems a definition is refused with, as the CLI prints them. */
function refused(def: KernelDefinition): string[] {
  try {
    defineKernel(def);
  } catch (e) {
    if (e instanceof KernelDefinitionError) return e.problems.map(formatKernelProblem);
    throw e;
  }
  throw new Error('was accepted');
}

describe('defineKernel', () => {
  it('accepts a kernel with several ports of different sizes, several passes and a twin; its manifest is plain data', () => {
    const k = defineKernel(sumDiff);
    expect(k.id).toBe('test.sumdiff');
    expect(k.gpuOnly).toBe(false);
    const m = kernelManifest(k);
    expect(JSON.parse(JSON.stringify(m))).toEqual(m);
    expect(m.outputs).toEqual([
      { name: 'sum', type: 'vector<f32>[7]' },
      { name: 'first', description: 'one element', type: 'vector<f32>[1]' },
    ]);
    expect(m).toMatchObject({ id: 'test.sumdiff', version: '1.2.0', package: 'builtin', cpu: true, gpu: true, deterministic: true, stateful: false });
  });

  it('names kernel, element and fix for each mistake, all at once', () => {
    const problems = refused({
      ...sumDiff,
      id: 'Sobel',
      version: '1.0',
      description: '',
      params: { n: { type: 'int', default: 0, min: 1, max: 10, description: 'n' }, mode: { type: 'enum', default: 'x', values: ['a'], description: 'm' } },
      inputs: [
        { name: 'a', type: vec },
        { name: 'a', type: vec },
      ],
    });
    expect(problems).toEqual([
      'kernel "Sobel" id: "Sobel" is not a namespaced id (use <package>.<name> in lower case, e.g. "acme.sobel")',
      'kernel "Sobel" version: "1.0" is not a semver version (use MAJOR.MINOR.PATCH, e.g. "1.0.0")',
      'kernel "Sobel" description: is empty (say in a sentence what one firing computes)',
      'kernel "Sobel" params.n.default: 0 is outside its range 1 .. 10 (pick a default within the range)',
      'kernel "Sobel" params.mode.default: "x" is not one of a',
      'kernel "Sobel" inputs: two ports are named "a" (give every input and output its own name)',
    ]);
  });

  it('names the params for which a port type function throws', () => {
    const problems = refused({
      ...sumDiff,
      outputs: [
        {
          name: 'sum',
          type: (p) =>
            Number(p.n) > 50_000
              ? (() => {
                  throw new Error('too big for one row');
                })()
              : vec(p),
        },
      ],
    });
    expect(problems).toEqual([expect.stringMatching(/^kernel "test.sumdiff" outputs.sum.type: throws \(too big for one row\) for params \{"n":100000\}/)]);
  });

  it('refuses WGSL whose bindings do not follow the ports in order', () => {
    const swapped = SUMDIFF.replace('@binding(2) var<storage, read_write> sum', '@binding(2) var<storage, read> sum');
    expect(refused({ ...sumDiff, gpu: { ...(sumDiff.gpu as object), source: swapped } as KernelDefinition['gpu'] })).toEqual([
      expect.stringContaining(
        'kernel "test.sumdiff" gpu.source: bindings do not match the declared ports: binding 2 "sum" (line 4) is storage-read, but output "sum" needs var<storage, read_write>',
      ),
    ]);
    expect(bindingProblems(SUMDIFF, ['a', 'b'], ['sum'], 'required')).toEqual([
      'binding 3 "first" (line 5) is storage-read_write, but the uniforms needs var<uniform>',
      '@group(0) @binding(4) "u" (line 6) matches no declared port (ports bind 0..3 of group 0 in order: input "a", input "b", output "sum", the uniforms)',
    ]);
  });

  it('needs a twin or WGSL; a kernel with WGSL only runs on GPU PEs and its twin says so', () => {
    expect(refused({ ...sumDiff, cpu: undefined, gpu: undefined })).toEqual([
      'kernel "test.sumdiff" cpu: has neither a CPU twin nor WGSL (give cpu: (firing) => ..., gpu: { source, passes }, or both)',
    ]);
    const gpuOnly = defineKernel({ ...sumDiff, cpu: undefined });
    expect(gpuOnly.gpuOnly).toBe(true);
    expect(() => runCpu(gpuOnly, {}, { a: new Float32Array(7), b: new Float32Array(7) })).toThrow(KernelError);
  });

  it('expands a variadic port from its count param: in0..in4 for inputs 5', () => {
    const join = defineKernel({
      id: 'test.join',
      version: '0.1.0',
      description: 'sums any number of vectors',
      params: { n: sumDiff.params!.n, inputs: { type: 'int', default: 2, min: 1, max: 16, unit: 'ports', description: 'inputs' } },
      inputs: [{ name: 'in', repeat: 'inputs', type: vec }],
      outputs: [{ name: 'out', type: vec }],
      cost: (p) => ({ flops: Number(p.n), bytes: 4 }),
      cpu: ({ inputs, outputs }) => {
        const out = outputs.out as Float32Array;
        for (const v of Object.values(inputs)) (v as Float32Array).forEach((x, i) => (out[i] += x));
      },
    });
    expect(portsFor(join, { n: 3, inputs: 5 }).inputs.map((p) => p.name)).toEqual(['in0', 'in1', 'in2', 'in3', 'in4']);
    expect(refused({ ...sumDiff, inputs: [{ name: 'in', repeat: 'count', type: vec }] })).toEqual([
      expect.stringContaining('kernel "test.sumdiff" inputs[0].repeat: names "count", which is not an int param of this kernel'),
    ]);
  });

  it('a manifest (data) back to a spec the designer can place: ports, variadic counts and types at the defaults', () => {
    const spec = specFromManifest(JSON.parse(JSON.stringify(kernelManifest(getKernel('generic.work')))));
    expect(portsFor(spec, { inputs: 3, outputs: 1, bytes: 4096 }).inputs.map((p) => p.name)).toEqual(['in0', 'in1', 'in2']);
    expect(spec.outputs[0].type({})).toEqual({ kind: 'bytes', element: 'u32', shape: [1024] });
    expect(spec.cost({})).toEqual({ flops: 0, bytes: 8192 });
    expect('cpu' in spec).toBe(false);
  });

  it('a port may declare its rate (tokens per firing), fixed or from params: checked at the probes, carried to variadic copies and manifests', () => {
    const slicer = defineKernel({
      ...sumDiff,
      id: 'test.slicer',
      params: {
        ...sumDiff.params,
        slices: { type: 'int', default: 4, min: 1, max: 8, description: 'tokens per firing' },
        inputs: { type: 'int', default: 2, min: 1, max: 4, description: 'inputs' },
      },
      inputs: [{ name: 'in', repeat: 'inputs', type: vec, rate: (p) => Number(p.slices) }],
      outputs: [{ name: 'sum', type: vec, rate: 2 }],
      cpu: () => undefined,
      gpu: undefined,
    });
    expect(portsFor(slicer, { n: 8, inputs: 3, slices: 4 }).inputs.map((p) => declaredRate(p, { slices: 4 }))).toEqual([4, 4, 4]);
    const m = kernelManifest(slicer);
    expect(m.inputs[0]).toMatchObject({ name: 'in', rate: 4 });
    expect(m.outputs[0]).toMatchObject({ name: 'sum', rate: 2 });
    expect(declaredRate(specFromManifest(JSON.parse(JSON.stringify(m))).outputs[0], {})).toBe(2);
    expect(kernelManifest(defineKernel(sumDiff)).inputs[0].rate).toBeUndefined();
    expect(refused({ ...sumDiff, outputs: [{ name: 'sum', type: vec, rate: (p) => (Number(p.n) > 50_000 ? 0 : 1) }] })).toEqual([
      expect.stringMatching(/^kernel "test.sumdiff" outputs.sum.rate: gives 0, not a positive integer for params \{"n":100000\}/),
    ]);
    expect(refused({ ...sumDiff, outputs: [{ name: 'sum', type: vec, rate: 1.5 }] })).toEqual([
      expect.stringContaining('outputs.sum.rate: gives 1.5, not a positive integer'),
    ]);
  });

  it('the built-ins went through the same checks, with a version and a package', () => {
    for (const k of listKernels()) {
      expect(k.version, k.id).toMatch(/^\d+\.\d+\.\d+$/);
      expect(k.package, k.id).toBe('builtin');
    }
    expect(getKernel('generic.work').gpu).toBeDefined();
  });
});

describe('a defineKernel WGSL kernel on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  it('matches its CPU twin exactly at odd sizes, both passes run, the uniform carries the iteration', async () => {
    const k = defineKernel(sumDiff);
    for (const n of [1, 7, 333]) {
      const a = Float32Array.from({ length: n }, (_, i) => i * 0.5);
      const b = Float32Array.from({ length: n }, (_, i) => 3 - i);
      const run = await GpuRunner.create(t.device, k, { n });
      const got = await run.fire({ a, b }, 4);
      const want = runCpu(k, { n }, { a, b }, 4);
      expect(got.outputs.sum).toEqual(want.outputs.sum);
      expect(got.outputs.first).toEqual(want.outputs.first);
      run.destroy();
    }
  });

  it('a module that does not compile is a KernelError naming the kernel and the line', async () => {
    const k = defineKernel({
      ...sumDiff,
      gpu: { ...(sumDiff.gpu as object), source: SUMDIFF.replace('a[gid.x] + b[gid.x]', 'a[gid.x] + nope') } as KernelDefinition['gpu'],
    });
    const err = await GpuRunner.create(t.device, k, { n: 5 }).catch((e) => e);
    expect(err).toBeInstanceOf(KernelError);
    expect(err.message).toMatch(/^kernel "test.sumdiff": WGSL module "add" does not compile: .*nope.*\(line 9, column \d+\)/);
  });
});
