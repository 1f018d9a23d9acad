import { dataTypeBytes, withDefaults } from '../registry.js';
import { portsFor } from '../definition.js';
import { ELEMENT_BYTES, type FiringReport, type GpuExecutor, type Kernel, type Params } from '../types.js';
import { readBuffer, storageBuffer, uploadBuffer } from './pipeline.js';

// Runs kernels one firing at a time on the CPU twin or a WebGPU device, with typed arrays in
// and out: what tests, benches and single-node previews need (the agent has its own buffers).

export type TypedArray = Float32Array | Uint32Array | Int32Array | Uint8Array;

export function allocate(kernel: Kernel, params: Params, port: string, dir: 'in' | 'out'): TypedArray {
  const ports = portsFor(kernel, params);
  const spec = (dir === 'in' ? ports.inputs : ports.outputs).find((p) => p.name === port);
  if (!spec) throw new Error(`${kernel.id} has no ${dir}put "${port}"`);
  const t = spec.type(params);
  const n = dataTypeBytes(t) / ELEMENT_BYTES[t.element];
  return t.element === 'f32' ? new Float32Array(n) : t.element === 'u32' ? new Uint32Array(n) : t.element === 'i32' ? new Int32Array(n) : new Uint8Array(n);
}

export interface FiringResult {
  outputs: Record<string, TypedArray>;
  report?: FiringReport;
}

/** One CPU firing; `state` persists across calls when passed again. */
export function runCpu(kernel: Kernel, params: Params, inputs: Record<string, TypedArray>, iteration = 0, state: Record<string, unknown> = {}): FiringResult {
  const p = withDefaults(kernel, params);
  const outputs: Record<string, TypedArray> = {};
  for (const o of portsFor(kernel, p).outputs) outputs[o.name] = allocate(kernel, p, o.name, 'out');
  const report = kernel.cpu({ params: p, iteration, inputs, outputs, state }) ?? undefined;
  return { outputs, report };
}

/** A kernel prepared on a device, with its output buffers, fired from typed arrays. */
export class GpuRunner {
  private constructor(
    readonly device: GPUDevice,
    readonly kernel: Kernel,
    readonly params: Params,
    readonly executor: GpuExecutor,
    private readonly outBuffers: Record<string, GPUBuffer>,
  ) {}

  static async create(device: GPUDevice, kernel: Kernel, params: Params): Promise<GpuRunner> {
    if (!kernel.gpu) throw new Error(`${kernel.id} has no GPU implementation`);
    const p = withDefaults(kernel, params);
    const executor = await kernel.gpu.prepare(device, p);
    const outs: Record<string, GPUBuffer> = {};
    for (const o of portsFor(kernel, p).outputs) outs[o.name] = storageBuffer(device, dataTypeBytes(o.type(p)), `${kernel.id}.${o.name}`);
    return new GpuRunner(device, kernel, p, executor, outs);
  }

  /** Encodes one firing from device buffers, submits and waits; no read-back. */
  async fireBuffers(inputs: Record<string, GPUBuffer>, iteration = 0): Promise<FiringReport | undefined> {
    const firing = { iteration, inputs, outputs: this.outBuffers };
    const enc = this.device.createCommandEncoder();
    this.executor.encode(enc, firing);
    this.device.queue.submit([enc.finish()]);
    await this.device.queue.onSubmittedWorkDone();
    return this.executor.report ? await this.executor.report(firing) : undefined;
  }

  get outputBuffers(): Readonly<Record<string, GPUBuffer>> {
    return this.outBuffers;
  }

  /** Uploads inputs, fires once, reads every output back. */
  async fire(inputs: Record<string, TypedArray>, iteration = 0): Promise<FiringResult> {
    const bufs: Record<string, GPUBuffer> = {};
    for (const [k, v] of Object.entries(inputs)) bufs[k] = uploadBuffer(this.device, v, `${this.kernel.id}.${k}`);
    const report = await this.fireBuffers(bufs, iteration);
    const outputs: Record<string, TypedArray> = {};
    for (const o of portsFor(this.kernel, this.params).outputs) {
      const like = allocate(this.kernel, this.params, o.name, 'out');
      const bytes = await readBuffer(this.device, this.outBuffers[o.name], like.byteLength);
      outputs[o.name] = new (like.constructor as new (b: ArrayBuffer) => TypedArray)(bytes);
    }
    for (const b of Object.values(bufs)) b.destroy();
    return { outputs, report };
  }

  destroy(): void {
    this.executor.destroy();
    for (const b of Object.values(this.outBuffers)) b.destroy();
  }
}
