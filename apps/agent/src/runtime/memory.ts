import type { PeProgram } from '@pipeloom/core';

// Every buffer of a PE allocated up front: one storage per memory colour (buffers of a colour
// share it), one slot per depth. Host PEs use SharedArrayBuffers (allocated by the agent's
// main thread, seen by every PE thread of the host and by the host-to-host lanes), GPU PEs
// GPUBuffers (owned by the GPU PE's thread).

export type ElementName = 'f32' | 'u32' | 'i32' | 'u8';
export type BufferInfo = Record<string, { element: ElementName; bytes: number }>;

const VIEW = { f32: Float32Array, u32: Uint32Array, i32: Int32Array, u8: Uint8Array } as const;
const ELEMENT = { f32: 4, u32: 4, i32: 4, u8: 1 } as const;

export interface HostSlots {
  kind: 'cpu';
  /** Typed views (the kernels' element type) per slot. */
  views: ArrayBufferView[];
  /** Byte views per slot, the buffer's own size, at its place in the storage. */
  bytes: Uint8Array[];
  /** The storage's slots, where the buffer starts in each (a view's offset: joins laid out in one storage), and its element. */
  storage: SharedArrayBuffer[];
  at: number;
  element: ElementName;
  /** Typed views of ranges (view accesses), made once per slot and range. */
  ranges: Map<string, ArrayBufferView>;
}

export interface GpuSlots {
  kind: 'gpu';
  buffers: GPUBuffer[];
  /** The storage's bytes per slot. */
  size: number;
  /** Where the buffer starts in each slot (a view's offset), and its own bytes. */
  at: number;
  bytes: number;
}

/** What an access touches: all of its buffer, or a range of the buffer's place (core's BufferAccess offset/bytes). */
export interface Range {
  offset?: number;
  bytes?: number;
}

/** Host bytes an access touches in one slot, typed as the buffer's element (a subarray view of the storage: no copy). */
export function hostView(s: HostSlots, slot: number, r: Range): ArrayBufferView {
  if (r.offset === undefined && r.bytes === undefined) return s.views[slot];
  const key = `${slot}/${r.offset ?? 0}/${r.bytes}`;
  let v = s.ranges.get(key);
  if (!v) {
    const View = VIEW[s.element] ?? Uint8Array;
    const bytes = r.bytes ?? s.bytes[slot].byteLength;
    s.ranges.set(key, (v = new View(s.storage[slot] as unknown as ArrayBuffer, s.at + (r.offset ?? 0), Math.floor(bytes / ELEMENT[s.element]))));
  }
  return v;
}

/** The same as bytes. */
export function hostBytes(s: HostSlots, slot: number, r: Range): Uint8Array {
  if (r.offset === undefined && r.bytes === undefined) return s.bytes[slot];
  return new Uint8Array(s.storage[slot], s.at + (r.offset ?? 0), r.bytes ?? s.bytes[slot].byteLength);
}

/** Where an access's bytes lie in a GPU slot: byte offset and length. */
export function gpuRange(s: GpuSlots, r: Range): { offset: number; bytes: number } {
  return { offset: s.at + (r.offset ?? 0), bytes: r.bytes ?? s.bytes };
}

export type Slots = HostSlots | GpuSlots;

/** Rounds up to the 4-byte multiple WebGPU copies need. */
export const align4 = (n: number) => Math.ceil(n / 4) * 4;

export class PeMemory {
  readonly slots = new Map<string, Slots>();
  /** Bytes allocated on this PE: only storage that was created. */
  allocated = 0;
  /**
   * Whether WebGPU created every buffer (it reports failures later, through error scopes):
   * null, or why not, naming the buffer, the PE and the size. Never rejects. A PE's thread
   * awaits it before it reports ready, so a buffer that was never created is never counted.
   */
  readonly created: Promise<string | null>;
  private gpuBuffers: GPUBuffer[] = [];

  constructor(
    readonly program: PeProgram,
    private readonly info: BufferInfo,
    device?: GPUDevice,
    /** Host storage from `allocateHost`, for CPU PEs. */
    host?: HostStorage,
  ) {
    const checks: Promise<string | null>[] = [];
    for (const a of program.allocations) {
      const depth = Math.max(1, a.depth);
      const size = align4(a.bytes);
      if (program.kind === 'gpu') {
        if (!device) throw new Error(`${program.pe}: no device`);
        const what = `buffer ${a.buffers[0] ?? '-'} (colour ${a.color}) on ${program.pe}: ${depth} x ${size.toLocaleString('en-US')} bytes`;
        checks.push(this.createGpu(device, a, depth, size, what));
      } else {
        for (const id of a.buffers) {
          const storage = host?.[id];
          if (!storage) throw new Error(`${program.pe}: no host storage for ${id}`);
          this.slots.set(id, hostSlots(storage, info[id] ?? { element: 'u8', bytes: a.bytes }));
        }
        this.allocated += size * depth;
      }
    }
    this.created = Promise.all(checks).then((r) => r.find((x) => x !== null) ?? null);
  }

  /** One colour's slots on a GPU, inside error scopes: an invalid or out-of-memory buffer is an error object, not an exception. */
  private createGpu(device: GPUDevice, a: PeProgram['allocations'][number], depth: number, size: number, what: string): Promise<string | null> {
    device.pushErrorScope('out-of-memory');
    device.pushErrorScope('validation');
    const storage: GPUBuffer[] = [];
    let thrown: string | null = null;
    try {
      for (let s = 0; s < depth; s++) {
        const b = device.createBuffer({
          size,
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
          label: `${this.program.pe} colour ${a.color} slot ${s}`,
        });
        storage.push(b);
        this.gpuBuffers.push(b);
      }
    } catch (e) {
      thrown = e instanceof Error ? e.message : String(e);
    }
    const validation = device.popErrorScope();
    const memory = device.popErrorScope();
    a.buffers.forEach((id, i) => this.slots.set(id, { kind: 'gpu', buffers: storage, size, at: a.offsets?.[i] ?? 0, bytes: this.info[id]?.bytes ?? a.bytes }));
    return Promise.all([validation, memory]).then(
      ([v, m]) => {
        const error = thrown ?? (m ? `out of memory: ${m.message}` : v?.message);
        if (error) return `${what} could not be created (${error.split('\n')[0].slice(0, 200)})`;
        this.allocated += size * depth;
        return null;
      },
      (e: unknown) => `${what} could not be created (${e instanceof Error ? e.message : String(e)})`,
    );
  }

  get(buffer: string): Slots {
    const s = this.slots.get(buffer);
    if (!s) throw new Error(`${this.program.pe}: buffer ${buffer} is not allocated here`);
    return s;
  }

  free(): void {
    for (const b of this.gpuBuffers) b.destroy();
    this.gpuBuffers = [];
    this.slots.clear();
    this.allocated = 0;
  }
}

/** Host buffers of one agent: buffer id -> one SharedArrayBuffer per slot (shared by a colour), and where the buffer starts in it (a view's offset). */
export type HostStorage = Record<string, { slots: SharedArrayBuffer[]; at: number }>;

/** Allocates the host storage of CPU programs: one SharedArrayBuffer per colour and slot. */
export function allocateHost(programs: PeProgram[]): { storage: HostStorage; bytes: Record<string, number> } {
  const storage: HostStorage = {};
  const bytes: Record<string, number> = {};
  for (const program of programs) {
    if (program.kind !== 'cpu') continue;
    bytes[program.pe] = 0;
    for (const a of program.allocations) {
      const depth = Math.max(1, a.depth);
      const size = align4(a.bytes);
      let slots: SharedArrayBuffer[];
      try {
        slots = Array.from({ length: depth }, () => new SharedArrayBuffer(size));
      } catch (e) {
        throw new Error(
          `buffer ${a.buffers[0] ?? '-'} (colour ${a.color}) on ${program.pe}: ${depth} x ${size.toLocaleString('en-US')} bytes of host memory could not be allocated (${e instanceof Error ? e.message : String(e)})`,
        );
      }
      bytes[program.pe] += size * depth;
      a.buffers.forEach((id, i) => (storage[id] = { slots, at: a.offsets?.[i] ?? 0 }));
    }
  }
  return { storage, bytes };
}

export function hostSlots(place: HostStorage[string], info: { element: ElementName; bytes: number }): HostSlots {
  const View = VIEW[info.element] ?? Uint8Array;
  const { slots, at } = place;
  return {
    kind: 'cpu',
    views: slots.map((buf) => new View(buf as unknown as ArrayBuffer, at, Math.floor(info.bytes / ELEMENT[info.element]))),
    bytes: slots.map((buf) => new Uint8Array(buf, at, info.bytes)),
    storage: slots,
    at,
    element: info.element,
    ranges: new Map(),
  };
}

/** Slot of a buffer access in cycle k: core's execution contract has the one copy. */
export { slotOf } from '@pipeloom/core';

export function depthOf(s: Slots): number {
  return s.kind === 'gpu' ? s.buffers.length : s.views.length;
}
