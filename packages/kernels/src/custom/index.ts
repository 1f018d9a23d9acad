import { KernelError, type DataType, type KernelSpec, type Params } from '../types.js';
import { WORKGROUP, bindGroup, createPipeline, dispatch, dispatchSize, linear, uniformBuffer } from '../gpu/pipeline.js';
import { checkAgainstExpected, fillWithIteration, mismatch } from '../gpu/fill-and-check.js';

// User-written WGSL (`custom.wgsl`) and two small registered kernels around it: a vector
// producer and a checker, so a document can feed a custom kernel and check what it computed.
// Agents refuse documents that fire `custom.wgsl` unless started with --allow-wgsl.

export const CUSTOM_WGSL = 'custom.wgsl';

/** Largest vector: one row of 65535 workgroups of 64 threads, so `gid.x` is the element index. */
export const MAX_VECTOR = 65535 * WORKGROUP;

const vectorType = (p: Params): DataType => ({ kind: 'vector', element: 'f32', shape: [Number(p.length)] });
const length = (p: Params) => Number(p.length);

const lengthParam = { type: 'int', default: 1024, min: 1, max: MAX_VECTOR, unit: 'elements', description: 'Vector length' } as const;

/** The starting point offered by the editor: out = in * 2 + 1. */
export const CUSTOM_WGSL_EXAMPLE = `@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> info: vec4<u32>; // (length, iteration, 0, 0)

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= info.x) { return; }
  output[i] = input[i] * 2.0 + 1.0;
}`;

/** What a custom module must declare; checked before compiling, so the message says which part is missing. */
function contractProblem(source: string): string | undefined {
  if (source.trim() === '') return 'param source is empty; write a WGSL compute module (see the kernel description)';
  if (!/@compute\s+@workgroup_size\(\s*64\s*(,\s*1\s*){0,2}\)\s*fn\s+main\s*\(/.test(source)) return 'the module needs "@compute @workgroup_size(64) fn main(...)" (64 threads, one element each, dispatched along x)';
  return undefined;
}

/** The bind group layout every custom module is held to (a module may leave `info` unused). */
function customLayout(device: GPUDevice): GPUPipelineLayout {
  const bgl = device.createBindGroupLayout({
    label: `${CUSTOM_WGSL}/layout`,
    entries: [
      { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
      { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
      { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
    ],
  });
  return device.createPipelineLayout({ bindGroupLayouts: [bgl], label: `${CUSTOM_WGSL}/layout` });
}

/** The value vector.check expects at `iteration`, rounded to f32 as the GPU holds it. */
export function expectedVectorValue(params: Params, iteration: number): number {
  return Math.fround(iteration * Number(params.scale) + Number(params.offset));
}

export const customKernels: KernelSpec[] = [
  {
    id: 'vector.produce',
    title: 'Produce vector',
    category: 'Custom WGSL',
    description: 'Fills an f32 vector of `length` elements with the iteration number (exact up to 2^24).',
    params: { length: lengthParam },
    inputs: [],
    outputs: [{ name: 'out', type: vectorType }],
    cost: (p) => ({ flops: 0, bytes: length(p) * 4 }),
    cpu: ({ iteration, outputs }) => {
      (outputs.out as Float32Array).fill(iteration);
    },
    gpu: fillWithIteration('vector.produce', 'fill', length),
  },
  {
    id: CUSTOM_WGSL,
    title: 'Custom WGSL',
    category: 'Custom WGSL',
    description:
      'Runs your own WGSL compute module on a GPU PE (no CPU twin; agents refuse it unless started with --allow-wgsl). ' +
      'Contract: `@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>)`, one thread per element at index gid.x; ' +
      'read `@group(0) @binding(0) var<storage, read> input: array<f32>;`, write `@group(0) @binding(1) var<storage, read_write> output: array<f32>;` ' +
      '(both `length` elements; the buffers may be longer, so test the index against info.x), and optionally read ' +
      '`@group(0) @binding(2) var<uniform> info: vec4<u32>;` = (length, iteration, 0, 0).',
    params: {
      source: { type: 'string', multiline: true, default: CUSTOM_WGSL_EXAMPLE, description: 'The WGSL compute module (see the contract in the description)' },
      length: lengthParam,
    },
    inputs: [{ name: 'in', type: vectorType }],
    outputs: [{ name: 'out', type: vectorType }],
    gpuOnly: true,
    // Unknown user code: one flop and 8 bytes per element until measured times replace it.
    cost: (p) => ({ flops: length(p), bytes: length(p) * 8 }),
    cpu: () => {
      throw new KernelError(CUSTOM_WGSL, 'runs on GPU PEs only (user WGSL has no CPU twin); map the node to a GPU PE');
    },
    gpu: {
      wgsl: { main: CUSTOM_WGSL_EXAMPLE },
      dispatches: (p) => [linear('main', length(p))],
      async prepare(device, params) {
        const source = String(params.source ?? '');
        const problem = contractProblem(source);
        if (problem) throw new KernelError(CUSTOM_WGSL, problem);
        const n = length(params);
        if (dispatchSize(n)[1] !== 1) throw new KernelError(CUSTOM_WGSL, `length ${n} exceeds ${MAX_VECTOR} elements (one row of workgroups)`);
        const pipeline = await createPipeline(device, CUSTOM_WGSL, 'main', source, 'main', customLayout(device));
        const info = uniformBuffer(device, new Uint32Array([n, 0, 0, 0]), `${CUSTOM_WGSL}/info`);
        return {
          encode(encoder, f) {
            device.queue.writeBuffer(info, 0, new Uint32Array([n, f.iteration, 0, 0]));
            dispatch(encoder, pipeline, bindGroup(device, pipeline, [f.inputs.in, f.outputs.out, info]), n, CUSTOM_WGSL);
          },
          destroy: () => info.destroy(),
        };
      },
    },
  },
  {
    id: 'vector.check',
    title: 'Check vector',
    category: 'Custom WGSL',
    description: 'Checks every element equals iteration * scale + offset (rounded to f32), within `tolerance`; a mismatch reports the iteration, first bad index and value.',
    params: {
      length: lengthParam,
      scale: { type: 'float', default: 1, description: 'Expected value = iteration * scale + offset' },
      offset: { type: 'float', default: 0, description: 'Expected value = iteration * scale + offset' },
      tolerance: { type: 'float', default: 0, min: 0, description: 'Largest accepted |value - expected| (0: exact)' },
    },
    inputs: [{ name: 'in', type: vectorType }],
    outputs: [],
    cost: (p) => ({ flops: length(p) * 2, bytes: length(p) * 4 }),
    cpu: ({ params, iteration, inputs }) => {
      const a = inputs.in as Float32Array;
      const want = expectedVectorValue(params, iteration);
      const tol = Math.fround(Number(params.tolerance));
      for (let i = 0; i < a.length; i++) if (!(Math.abs(a[i] - want) <= tol)) return mismatch(iteration, i, a[i], want);
      return { ok: true };
    },
    gpu: checkAgainstExpected('vector.check', { count: length, expected: expectedVectorValue, tolerance: (p) => Number(p.tolerance) }),
  },
];
