import { KernelError, type Kernel, type Params } from '../types.js';
import { implement } from '../implement.js';
import { CUSTOM_WGSL, CUSTOM_WGSL_EXAMPLE, MAX_VECTOR, customSpecs, declaredPorts, length } from './spec.js';
import { bindingProblems } from '../definition.js';
import { bindGroup, createPipeline, dispatch, dispatchSize, linear, uniformBuffer } from '../gpu/pipeline.js';
import { checkAgainstExpected, fillWithIteration, mismatch } from '../gpu/fill-and-check.js';

// User-written WGSL (`custom.wgsl`) and two small registered kernels around it: a vector
// producer and a checker, so a document can feed a custom kernel and check what it computed.
// Agents refuse documents that fire `custom.wgsl` unless started with --allow-wgsl.

export { CUSTOM_WGSL, CUSTOM_WGSL_EXAMPLE, MAX_VECTOR } from './spec.js';

/** What a custom module must declare; checked before compiling, so the message says which part is missing. */
function contractProblem(source: string): string | undefined {
  if (source.trim() === '') return 'param source is empty; write a WGSL compute module (see the kernel description)';
  if (!/@compute\s+@workgroup_size\(\s*64\s*(,\s*1\s*){0,2}\)\s*fn\s+main\s*\(/.test(source))
    return 'the module needs "@compute @workgroup_size(64) fn main(...)" (64 threads, one element each, dispatched along x)';
  return undefined;
}

/** The bind group layout a custom module is held to: its ports in order, then `info` (a module may leave `info` unused). */
function customLayout(device: GPUDevice, inputs: number, outputs: number): GPUPipelineLayout {
  const entries: GPUBindGroupLayoutEntry[] = [];
  for (let i = 0; i < inputs; i++) entries.push({ binding: i, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } });
  for (let i = 0; i < outputs; i++) entries.push({ binding: inputs + i, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } });
  entries.push({ binding: inputs + outputs, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } });
  const bgl = device.createBindGroupLayout({ label: `${CUSTOM_WGSL}/layout`, entries });
  return device.createPipelineLayout({ bindGroupLayouts: [bgl], label: `${CUSTOM_WGSL}/layout` });
}

/** The value vector.check expects at `iteration`, rounded to f32 as the GPU holds it. */
export function expectedVectorValue(params: Params, iteration: number): number {
  return Math.fround(iteration * Number(params.scale) + Number(params.offset));
}

export const customKernels: Kernel[] = implement(customSpecs, {
  'vector.produce': {
    cpu: ({ iteration, outputs }) => {
      (outputs.out as Float32Array).fill(iteration);
    },
    gpu: fillWithIteration('vector.produce', 'fill', length),
  },
  [CUSTOM_WGSL]: {
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
        let ports;
        try {
          ports = declaredPorts(params);
        } catch (e) {
          throw new KernelError(CUSTOM_WGSL, (e as Error).message);
        }
        const wrong = bindingProblems(
          source,
          ports.inputs.map((x) => x.name),
          ports.outputs.map((x) => x.name),
          'optional',
        );
        if (wrong.length) throw new KernelError(CUSTOM_WGSL, `WGSL bindings do not match its ports: ${wrong.join('; ')}`);
        const pipeline = await createPipeline(device, CUSTOM_WGSL, 'main', source, 'main', customLayout(device, ports.inputs.length, ports.outputs.length));
        const info = uniformBuffer(device, new Uint32Array([n, 0, 0, 0]), `${CUSTOM_WGSL}/info`);
        return {
          encode(encoder, f) {
            device.queue.writeBuffer(info, 0, new Uint32Array([n, f.iteration, 0, 0]));
            const buffers = [...ports.inputs.map((x) => f.inputs[x.name]), ...ports.outputs.map((x) => f.outputs[x.name]), info];
            dispatch(encoder, pipeline, bindGroup(device, pipeline, buffers), n, CUSTOM_WGSL);
          },
          destroy: () => info.destroy(),
        };
      },
    },
  },
  'vector.check': {
    cpu: ({ params, iteration, inputs }) => {
      const a = inputs.in as Float32Array;
      const want = expectedVectorValue(params, iteration);
      const tol = Math.fround(Number(params.tolerance));
      for (let i = 0; i < a.length; i++) if (!(Math.abs(a[i] - want) <= tol)) return mismatch(iteration, i, a[i], want);
      return { ok: true };
    },
    gpu: checkAgainstExpected('vector.check', { count: length, expected: expectedVectorValue, tolerance: (p) => Number(p.tolerance) }),
  },
});
