import { dataTypeBytes, ELEMENT_BYTES, findKernel, getKernel, majorOf, portsFor, withDefaults, type Params } from '@pipeloom/kernels';
import type { InitialFill, PeProgram } from '@pipeloom/core';
import { align4, type BufferInfo, type ElementName, type GpuSlots, type HostStorage, type PeMemory } from './memory.js';

// Delays (feedback edges): a delayed edge's reader reads initial tokens in its first
// iterations, so the compiler lists the slots holding them (`PeProgram.initial`) and the agent
// fills them after allocating and before the PE reports ready: host slots once, on the agent's
// main thread (every PE thread shares them), GPU slots on their PE's thread with writeBuffer.
// A token is a constant in every element, or a source kernel's output run on its CPU twin. A fill
// names a range of slots (`count`, at most the allocation's depth: checkDeploy bounds it), so a
// delay's size costs the agent its slots, never a loop over its tokens.

const VIEW = { f32: Float32Array, u32: Uint32Array, i32: Int32Array, u8: Uint8Array } as const;

/** Names a fill in a refusal: its token (when a source kernel makes it), buffer, slot and PE. */
function what(f: InitialFill, pe: string): string {
  return `initial ${f.token !== undefined ? `token ${f.token} ` : ''}of buffer ${f.buffer} (slot ${f.slot}) on ${pe}`;
}

/** The single-slot fills of a range fill, in slot order: slot + i holds token + i. */
function* slotsOf(f: InitialFill): Generator<InitialFill> {
  const count = f.count ?? 1;
  for (let i = 0; i < count; i++) yield i === 0 ? f : { ...f, slot: f.slot + i, ...(f.token !== undefined ? { token: f.token + i } : {}) };
}

/** The fill's range in its buffer's place in the slot: byte offset from the buffer's start, and length. */
export function fillRange(f: InitialFill, bufferBytes: number): { offset: number; bytes: number } {
  const offset = f.offset ?? 0;
  return { offset, bytes: f.bytes ?? bufferBytes - offset };
}

/**
 * Why this agent cannot make the deploy's initial tokens, or undefined: a source kernel it
 * lacks (or has in another major version than `versions` names), one without a CPU twin, with
 * inputs, without the named output port, or whose port's bytes are not the fill's. Checked
 * before anything is allocated; `Initial` checks the same again where it fills.
 */
export function initialRefusal(
  host: string,
  programs: readonly PeProgram[],
  buffers: BufferInfo,
  versions: Readonly<Record<string, string>> = {},
): string | undefined {
  for (const program of programs) {
    for (const f of program.initial ?? []) {
      if (f.kernel === undefined) continue;
      const why = sourceProblem(f, program.pe, host, buffers, versions);
      if (why) return why;
    }
  }
  return undefined;
}

function sourceProblem(f: InitialFill, pe: string, host: string, buffers: BufferInfo, versions: Readonly<Record<string, string>>): string | undefined {
  const at = what(f, pe);
  const kernel = findKernel(f.kernel!);
  if (!kernel) return `${at}: agent ${host} has no kernel "${f.kernel}": start it with --kernels naming the package that defines it`;
  const wanted = Object.hasOwn(versions, f.kernel!) ? versions[f.kernel!] : undefined;
  if (wanted !== undefined && majorOf(wanted) !== majorOf(kernel.version))
    return `${at}: agent ${host} has kernel "${f.kernel}" ${kernel.version}, but the document was compiled against ${wanted} (another major version)`;
  if (kernel.gpuOnly) return `${at}: kernel "${f.kernel}" has no CPU twin; initial tokens are made on the CPU`;
  try {
    const params = withDefaults(kernel, f.params);
    const ports = portsFor(kernel, params);
    if (ports.inputs.length)
      return `${at}: kernel "${f.kernel}" has inputs (${ports.inputs.map((p) => p.name).join(', ')}); an initial token comes from a source kernel, one without inputs`;
    const port = f.port === undefined ? (ports.outputs.length === 1 ? ports.outputs[0] : undefined) : ports.outputs.find((p) => p.name === f.port);
    if (!port)
      return `${at}: kernel "${f.kernel}" has no output ${f.port === undefined ? 'to take without a port name' : `"${f.port}"`} (it has ${ports.outputs.map((p) => p.name).join(', ') || 'none'})`;
    const bytes = dataTypeBytes(port.type(params));
    const want = fillRange(f, buffers[f.buffer]?.bytes ?? 0).bytes;
    if (bytes !== want) return `${at}: kernel "${f.kernel}" gives ${bytes} bytes on port ${port.name}; the fill holds ${want}`;
  } catch (e) {
    return `${at}: kernel "${f.kernel}" cannot take its params (${e instanceof Error ? e.message : String(e)})`;
  }
  return undefined;
}

/** Makes the bytes of a program's initial tokens; a source kernel's output is made once per (kernel, params, port, token). */
export class Initial {
  private readonly made = new Map<string, Uint8Array>();

  constructor(
    readonly host: string,
    readonly buffers: BufferInfo,
  ) {}

  /** The bytes fill `f` of PE `pe` writes (its range's length). Throws naming the fill. */
  bytes(f: InitialFill, pe: string): Uint8Array {
    const info = this.buffers[f.buffer];
    if (!info) throw new Error(`${what(f, pe)}: the deploy does not declare the buffer`);
    const { bytes } = fillRange(f, info.bytes);
    if (f.value !== undefined) return constant(info.element, f.value, bytes);
    const problem = sourceProblem(f, pe, this.host, this.buffers, {});
    if (problem) throw new Error(problem);
    const key = JSON.stringify([f.kernel, f.params ?? {}, f.port ?? '', f.token ?? 0]);
    let out = this.made.get(key);
    if (!out) this.made.set(key, (out = this.source(f, pe)));
    return out;
  }

  /** Fires the source kernel once on its CPU twin for iteration `token` (fresh state) and keeps the port's bytes. */
  private source(f: InitialFill, pe: string): Uint8Array {
    const kernel = getKernel(f.kernel!);
    const params: Params = withDefaults(kernel, f.params);
    const ports = portsFor(kernel, params);
    const outputs: Record<string, ArrayBufferView> = {};
    for (const o of ports.outputs) {
      const t = o.type(params);
      outputs[o.name] = new VIEW[t.element as ElementName](dataTypeBytes(t) / ELEMENT_BYTES[t.element]);
    }
    const port = f.port ?? ports.outputs[0].name;
    let report;
    try {
      report = kernel.cpu({ params, iteration: f.token ?? 0, inputs: {}, outputs, state: {} });
    } catch (e) {
      throw new Error(`${what(f, pe)}: kernel "${f.kernel}" failed (${e instanceof Error ? e.message : String(e)})`);
    }
    if (report && report.ok === false) throw new Error(`${what(f, pe)}: kernel "${f.kernel}" reported ${report.message ?? 'a failure'}`);
    const v = outputs[port];
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  }
}

/** `bytes` bytes of `value` repeated in the buffer's element type (the last element cut where `bytes` is not a multiple). */
function constant(element: ElementName, value: number, bytes: number): Uint8Array {
  const View = VIEW[element] ?? Uint8Array;
  const v = new View(Math.ceil(bytes / View.BYTES_PER_ELEMENT));
  v.fill(value);
  return new Uint8Array(v.buffer, 0, bytes);
}

/** Fills the CPU programs' initial tokens into host storage, once (the agent's main thread, before any PE thread starts). */
export function fillHost(host: string, programs: readonly PeProgram[], storage: HostStorage, buffers: BufferInfo): void {
  const initial = new Initial(host, buffers);
  for (const program of programs) {
    if (program.kind !== 'cpu') continue;
    for (const range of program.initial ?? []) {
      for (const f of slotsOf(range)) {
        const place = storage[f.buffer];
        const slot = place?.slots[f.slot];
        if (!slot) throw new Error(`${what(f, program.pe)}: the buffer has no such slot on ${program.pe}`);
        const { offset } = fillRange(f, buffers[f.buffer]?.bytes ?? 0);
        const data = initial.bytes(f, program.pe);
        new Uint8Array(slot, place.at + offset, data.byteLength).set(data);
      }
    }
  }
}

/**
 * Fills a GPU program's initial tokens into its fresh (zeroed) slots: per GPUBuffer, one
 * writeBuffer of the 4-byte-aligned span covering its fills (WebGPU writes whole words), the
 * bytes between fills left zero as they were. Resolves once the queue has done them; throws
 * naming the buffer and PE.
 */
export async function fillGpu(
  host: string,
  program: PeProgram,
  memory: PeMemory,
  buffers: BufferInfo,
  device: GPUDevice,
  track: <T>(p: Promise<T>) => Promise<T> = (p) => p,
): Promise<void> {
  const fills = program.initial ?? [];
  if (!fills.length) return;
  const initial = new Initial(host, buffers);
  const bySlot = new Map<GPUBuffer, { size: number; parts: { at: number; data: Uint8Array }[] }>();
  for (const f of fills.flatMap((range) => [...slotsOf(range)])) {
    const s = memory.slots.get(f.buffer) as GpuSlots | undefined;
    const buffer = s?.kind === 'gpu' ? s.buffers[f.slot] : undefined;
    if (!s || !buffer) throw new Error(`${what(f, program.pe)}: the buffer has no such slot on ${program.pe}`);
    const data = initial.bytes(f, program.pe);
    const at = s.at + fillRange(f, s.bytes).offset;
    let entry = bySlot.get(buffer);
    if (!entry) bySlot.set(buffer, (entry = { size: s.size, parts: [] }));
    entry.parts.push({ at, data });
  }
  device.pushErrorScope('validation');
  for (const [buffer, { size, parts }] of bySlot) {
    const lo = Math.floor(Math.min(...parts.map((p) => p.at)) / 4) * 4;
    const hi = Math.min(size, align4(Math.max(...parts.map((p) => p.at + p.data.byteLength))));
    const image = new Uint8Array(hi - lo);
    for (const p of parts) image.set(p.data, p.at - lo);
    device.queue.writeBuffer(buffer, lo, image);
  }
  const error = await track(device.popErrorScope());
  if (error) throw new Error(`initial tokens on ${program.pe} could not be written (${error.message.split('\n')[0].slice(0, 200)})`);
  await track(device.queue.onSubmittedWorkDone());
}
