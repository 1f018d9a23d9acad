import { bindingProblems, defineKernelSpec, KernelDefinitionError, portsFor, type KernelProblem, type KernelSpecInput } from './definition.js';
import { bindGroup, createPipeline, dispatchSize, packWords, uniformBuffer } from './gpu/pipeline.js';
import {
  KernelError,
  type CpuFiring,
  type DispatchInfo,
  type FiringReport,
  type GpuExecutor,
  type GpuImplementation,
  type Kernel,
  type Params,
} from './types.js';

// The public way to write a kernel: `defineKernel({...})`, for packages and built-ins alike.
// A kernel's WGSL is one module (several entry points allowed) whose bindings follow its ports
// in order; each firing records its passes in order. The low-level form (`gpu.prepare`, what the
// built-ins use for readbacks) is accepted too.

/** One compute pass of a firing: an entry point and how many workgroups (or 1D threads) it runs. */
export interface WgslPass {
  /** Entry point (default `main`). */
  entry?: string;
  /**
   * 1D: this many threads, split into workgroups of `workgroupSize` along x and y (y when x
   * would pass 65535). Rebuild the index with `LINEAR_ID`'s `linear_id(gid, nwg)`.
   */
  threads?: (params: Params) => number;
  /** Or the workgroup counts themselves (2D and 3D kernels). */
  workgroups?: (params: Params) => [number, number, number];
  /** The module's @workgroup_size along x for `threads` (default 64). */
  workgroupSize?: number;
  /** Repeats of this pass in one firing (default 1). */
  count?: (params: Params) => number;
}

/** A kernel's GPU side as WGSL: bindings in port order (inputs, outputs, then the uniforms). */
export interface WgslKernel {
  /** The module's text, or a function of the params (variadic kernels bind one buffer per port). */
  source: string | ((params: Params) => string);
  /** The passes of one firing, in order (default: one pass of `main`, which needs `threads` or `workgroups`). */
  passes: WgslPass[];
  /**
   * 32-bit words bound after the last output as `var<uniform>`, written each firing (so they
   * may depend on the iteration): `['u' | 'i' | 'f', value]` in order.
   */
  uniforms?: (params: Params, iteration: number) => Array<['u' | 'f' | 'i', number]>;
}

export type KernelDefinition = KernelSpecInput & {
  /** The CPU twin: computes one firing on typed arrays (and checks, returning a report). Absent: GPU PEs only. */
  cpu?: (firing: CpuFiring) => FiringReport | void;
  /** WGSL (bindings in port order) or the low-level GPU implementation. Absent: the CPU twin runs on GPU PEs too. */
  gpu?: WgslKernel | GpuImplementation;
};

const isLowLevel = (g: WgslKernel | GpuImplementation): g is GpuImplementation => typeof (g as GpuImplementation).prepare === 'function';

/**
 * A checked kernel (spec and implementation). Throws a KernelDefinitionError listing every
 * problem (kernel, element, fix): a bad id or version, a param whose default is out of range,
 * a port type that throws for some params, WGSL bindings that do not match the ports...
 */
export function defineKernel(def: KernelDefinition): Kernel {
  const { cpu, gpu, ...rest } = def ?? ({} as KernelDefinition);
  const problems: KernelProblem[] = [];
  let spec;
  try {
    spec = defineKernelSpec({ ...rest, gpuOnly: rest.gpuOnly ?? (cpu === undefined && gpu !== undefined) });
  } catch (e) {
    if (!(e instanceof KernelDefinitionError)) throw e;
    problems.push(...e.problems);
  }
  const id = String(rest.id ?? '(no id)');
  if (cpu === undefined && gpu === undefined)
    problems.push({ kernel: id, path: 'cpu', message: 'has neither a CPU twin nor WGSL', hint: 'give cpu: (firing) => ..., gpu: { source, passes }, or both' });
  if (cpu !== undefined && typeof cpu !== 'function')
    problems.push({ kernel: id, path: 'cpu', message: 'is not a function', hint: 'give cpu: ({ params, iteration, inputs, outputs, state }) => void' });
  if (gpu !== undefined && !isLowLevel(gpu)) problems.push(...wgslProblems(id, gpu, spec));
  if (problems.length || !spec) throw new KernelDefinitionError(problems);
  const twin =
    cpu ??
    (() => {
      throw new KernelError(id, 'runs on GPU PEs only (it has no CPU twin)');
    });
  return { ...spec, cpu: twin, ...(gpu ? { gpu: isLowLevel(gpu) ? gpu : wgslImplementation(id, gpu, spec) } : {}) };
}

function wgslProblems(id: string, gpu: WgslKernel, spec: ReturnType<typeof defineKernelSpec> | undefined): KernelProblem[] {
  const out: KernelProblem[] = [];
  if (typeof gpu.source !== 'string' && typeof gpu.source !== 'function')
    out.push({ kernel: id, path: 'gpu.source', message: 'is neither WGSL text nor a function of the params giving it' });
  if (!Array.isArray(gpu.passes) || !gpu.passes.length)
    out.push({ kernel: id, path: 'gpu.passes', message: 'lists no pass', hint: 'give passes: [{ entry: "main", threads: (p) => n }]' });
  else
    gpu.passes.forEach((p, i) => {
      if (typeof p?.threads !== 'function' && typeof p?.workgroups !== 'function')
        out.push({
          kernel: id,
          path: `gpu.passes[${i}]`,
          message: 'says neither threads nor workgroups',
          hint: 'give threads: (params) => n (1D) or workgroups: (params) => [x, y, z]',
        });
    });
  if (out.length || !spec) return out;
  // Bindings are checked at the default params (a variadic module's text is made per params;
  // prepare checks it again for the params of each node).
  const params: Params = {};
  for (const [name, p] of Object.entries(spec.params)) params[name] = p.default;
  const problem = bindingsProblem(gpu, spec, params);
  if (problem)
    out.push({
      kernel: id,
      path: 'gpu.source',
      message: problem,
      hint: 'bind the ports in order: inputs (var<storage, read>), outputs (var<storage, read_write>), then var<uniform> if the kernel has uniforms',
    });
  return out;
}

function bindingsProblem(gpu: WgslKernel, spec: ReturnType<typeof defineKernelSpec>, params: Params): string | undefined {
  let source: string;
  try {
    source = typeof gpu.source === 'function' ? gpu.source(params) : gpu.source;
  } catch (e) {
    return `the source function throws for params ${JSON.stringify(params)}: ${e instanceof Error ? e.message : String(e)}`;
  }
  const ports = portsFor(spec, params);
  const problems = bindingProblems(
    source,
    ports.inputs.map((p) => p.name),
    ports.outputs.map((p) => p.name),
    gpu.uniforms ? 'required' : 'none',
  );
  return problems.length ? `bindings do not match the declared ports: ${problems.join('; ')}` : undefined;
}

/** The WGSL snippet `linear_id(gid, nwg)`: the 1D index of a `threads` pass (x and y workgroups). */
export { LINEAR_ID } from './gpu/pipeline.js';

function wgslImplementation(id: string, gpu: WgslKernel, spec: ReturnType<typeof defineKernelSpec>): GpuImplementation {
  const groups = (pass: WgslPass, p: Params): [number, number, number] => {
    if (pass.workgroups) return pass.workgroups(p);
    const [x, y] = dispatchSize(pass.threads!(p), pass.workgroupSize ?? 64);
    return [x, y, 1];
  };
  return {
    wgsl: typeof gpu.source === 'string' ? { main: gpu.source } : {},
    dispatches: (p) => gpu.passes.map((pass): DispatchInfo => ({ module: pass.entry ?? 'main', workgroups: groups(pass, p), count: pass.count?.(p) ?? 1 })),
    async prepare(device: GPUDevice, params: Params): Promise<GpuExecutor> {
      const problem = bindingsProblem(gpu, spec, params);
      if (problem) throw new KernelError(id, problem);
      const source = typeof gpu.source === 'function' ? gpu.source(params) : gpu.source;
      const ports = portsFor(spec, params);
      // An explicit layout from the ports: a module declaring another access than its port's
      // fails here as a KernelError, not at the first bind.
      const entries: GPUBindGroupLayoutEntry[] = [
        ...ports.inputs.map((_, i) => ({ binding: i, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' as const } })),
        ...ports.outputs.map((_, i) => ({ binding: ports.inputs.length + i, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' as const } })),
        ...(gpu.uniforms
          ? [{ binding: ports.inputs.length + ports.outputs.length, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' as const } }]
          : []),
      ];
      const layout = device.createPipelineLayout({
        bindGroupLayouts: [device.createBindGroupLayout({ entries, label: `${id}/layout` })],
        label: `${id}/layout`,
      });
      const pipelines = await Promise.all(gpu.passes.map((pass) => createPipeline(device, id, pass.entry ?? 'main', source, pass.entry ?? 'main', layout)));
      const uniforms = gpu.uniforms ? uniformBuffer(device, packWords(gpu.uniforms(params, 0)), `${id}/uniforms`) : undefined;
      const plan = gpu.passes.map((pass) => ({ groups: groups(pass, params), count: pass.count?.(params) ?? 1 }));
      return {
        encode(encoder, firing) {
          if (uniforms) device.queue.writeBuffer(uniforms, 0, packWords(gpu.uniforms!(params, firing.iteration)));
          const buffers = [
            ...ports.inputs.map((p) => firing.inputs[p.name]),
            ...ports.outputs.map((p) => firing.outputs[p.name]),
            ...(uniforms ? [uniforms] : []),
          ];
          pipelines.forEach((pipeline, i) => {
            const group = bindGroup(device, pipeline, buffers);
            for (let c = 0; c < plan[i].count; c++) {
              const pass = encoder.beginComputePass({ label: `${id}/${gpu.passes[i].entry ?? 'main'}` });
              pass.setPipeline(pipeline);
              pass.setBindGroup(0, group);
              pass.dispatchWorkgroups(...plan[i].groups);
              pass.end();
            }
          });
        },
        destroy() {
          uniforms?.destroy();
        },
      };
    },
  };
}
