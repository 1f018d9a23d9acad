import { KernelError, WORKGROUP } from '../types.js';

// Shared WebGPU plumbing for every kernel: shader validation that names the kernel, uniform
// buffers, dispatch sizing inside the 65535-per-dimension limit, read-back.

export { WORKGROUP } from '../types.js';

/**
 * Compiles `code` and builds a compute pipeline, turning WGSL errors into a KernelError that
 * names the kernel and the module (error scopes catch what getCompilationInfo misses). An
 * explicit `layout` holds user WGSL to fixed bindings (a mismatch is a KernelError too).
 */
export async function createPipeline(
  device: GPUDevice,
  kernel: string,
  name: string,
  code: string,
  entryPoint = 'main',
  layout: GPUPipelineLayout | 'auto' = 'auto',
): Promise<GPUComputePipeline> {
  // Compatibility-mode devices may allow as few as 4 storage buffers per stage: say so plainly.
  const storage = (code.match(/var<storage/g) ?? []).length;
  const limit = device.limits.maxStorageBuffersPerShaderStage;
  if (storage > limit) throw new KernelError(kernel, `WGSL module "${name}" binds ${storage} storage buffers; this device allows ${limit} per shader stage`);
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code, label: `${kernel}/${name}` });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length) {
    await device.popErrorScope();
    const first = errors[0];
    throw new KernelError(kernel, `WGSL module "${name}" does not compile: ${first.message} (line ${first.lineNum}, column ${first.linePos})`);
  }
  const pipeline = device.createComputePipeline({ layout, compute: { module, entryPoint }, label: `${kernel}/${name}` });
  const err = await device.popErrorScope();
  if (err) throw new KernelError(kernel, `WGSL module "${name}" is invalid: ${err.message}`);
  return pipeline;
}

/** A uniform buffer holding 32-bit words (u32 or f32 as given by the typed array). */
export function uniformBuffer(device: GPUDevice, words: Uint32Array | Float32Array | ArrayBuffer, label?: string): GPUBuffer {
  const bytes = words instanceof ArrayBuffer ? words : words.buffer.slice(words.byteOffset, words.byteOffset + words.byteLength);
  const size = Math.max(16, Math.ceil(bytes.byteLength / 16) * 16);
  const buf = device.createBuffer({ size, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, label });
  device.queue.writeBuffer(buf, 0, bytes);
  return buf;
}

/** Packs mixed u32/f32 fields into one uniform word array, in order. */
export function packWords(fields: Array<['u' | 'f' | 'i', number]>): ArrayBuffer {
  const buf = new ArrayBuffer(Math.max(16, Math.ceil((fields.length * 4) / 16) * 16));
  const dv = new DataView(buf);
  fields.forEach(([t, v], i) => {
    if (t === 'f') dv.setFloat32(i * 4, v, true);
    else if (t === 'i') dv.setInt32(i * 4, v, true);
    else dv.setUint32(i * 4, v >>> 0, true);
  });
  return buf;
}

/**
 * Workgroup counts for `threads` 1D threads: x stays <= 65535, y takes the rest. Shaders
 * rebuild the linear id as gid.x + gid.y * (groups.x * WORKGROUP) (see LINEAR_ID).
 */
export function dispatchSize(threads: number, workgroup = WORKGROUP): [number, number] {
  const groups = Math.max(1, Math.ceil(threads / workgroup));
  if (groups <= 65535) return [groups, 1];
  const y = Math.ceil(groups / 65535);
  return [Math.ceil(groups / y), y];
}

/** The DispatchInfo of a 1D dispatch of `threads` threads made with `dispatch`. */
export function linear(module: string, threads: number, count = 1): { module: string; workgroups: [number, number, number]; count: number } {
  const [x, y] = dispatchSize(threads);
  return { module, workgroups: [x, y, 1], count };
}

/** WGSL snippet: the linear thread id for a dispatch made with dispatchSize. */
export const LINEAR_ID = `fn linear_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * ${WORKGROUP}u; }`;

/** Records one 1D dispatch of `threads` threads. */
export function dispatch(encoder: GPUCommandEncoder, pipeline: GPUComputePipeline, bindGroup: GPUBindGroup, threads: number, label?: string): void {
  const pass = encoder.beginComputePass({ label });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  const [x, y] = dispatchSize(threads);
  pass.dispatchWorkgroups(x, y);
  pass.end();
}

// Bind groups made once per pipeline and set of buffers. A kernel fires with the same few
// buffer sets every cycle (one per slot of its double buffers); a bind group (and a layout
// wrapper) made per firing is native work per firing, and native objects that only the GC's
// finalizers give back.
const bufferIds = new WeakMap<GPUBuffer, number>();
let nextBufferId = 0;
const groups = new WeakMap<GPUComputePipeline, { layout: GPUBindGroupLayout; byBuffers: Map<string, GPUBindGroup> }>();
/** Bind groups kept per pipeline; past this many (buffers made per call, as in tests) the cache starts over. */
const KEPT = 64;

/** Group 0 of `pipeline` binding `buffers` in order (made once per pipeline and buffer set). */
export function bindGroup(device: GPUDevice, pipeline: GPUComputePipeline, buffers: GPUBuffer[]): GPUBindGroup {
  let g = groups.get(pipeline);
  if (!g) groups.set(pipeline, (g = { layout: pipeline.getBindGroupLayout(0), byBuffers: new Map() }));
  let key = '';
  for (const b of buffers) {
    let id = bufferIds.get(b);
    if (id === undefined) bufferIds.set(b, (id = nextBufferId++));
    key += `${id},`;
  }
  let group = g.byBuffers.get(key);
  if (!group) {
    if (g.byBuffers.size >= KEPT) g.byBuffers.clear();
    group = device.createBindGroup({ layout: g.layout, entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })) });
    g.byBuffers.set(key, group);
  }
  return group;
}

/** A storage buffer usable as kernel input/output and for copies. */
export function storageBuffer(device: GPUDevice, bytes: number, label?: string): GPUBuffer {
  return device.createBuffer({
    size: Math.max(16, Math.ceil(bytes / 4) * 4),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    label,
  });
}

/** A storage buffer holding `data`. */
export function uploadBuffer(device: GPUDevice, data: ArrayBufferView, label?: string): GPUBuffer {
  const buf = storageBuffer(device, data.byteLength, label);
  device.queue.writeBuffer(buf, 0, data.buffer, data.byteOffset, data.byteLength);
  return buf;
}

/** Copies `bytes` of `src` back to the host (submits its own command buffer). */
export async function readBuffer(device: GPUDevice, src: GPUBuffer, bytes = src.size): Promise<ArrayBuffer> {
  const size = Math.ceil(bytes / 4) * 4;
  const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(src, 0, staging, 0, size);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = staging.getMappedRange().slice(0, bytes);
  staging.unmap();
  staging.destroy();
  return out;
}

/** The number of storage buffers one stage may bind on this device (compatibility mode may be low). */
export function storageBuffersPerStage(device: GPUDevice): number {
  return device.limits.maxStorageBuffersPerShaderStage;
}
