import { align4, gpuRange, type GpuSlots } from './memory.js';
import type { Fire, GatherSlots, PortSlots } from './pe-types.js';

// A GPU PE's copies (pe-worker.ts): host bytes to and from its device through private scratch
// bytes and mappable staging buffers, and the device scratch buffers a firing's views and
// gathered inputs are copied through. Each kept by key, made once and grown when needed.

export interface GpuFiringBuffers {
  firing: { iteration: number; inputs: Record<string, GPUBuffer>; outputs: Record<string, GPUBuffer> };
  /** Encodes the copies back into the outputs' views once the kernel has run. */
  after: (e: GPUCommandEncoder) => void;
}

export class DeviceCopies {
  private readonly staging = new Map<string, GPUBuffer>();
  private readonly gpuScratch = new Map<string, GPUBuffer>();
  private readonly scratchBytes = new Map<string, Uint8Array>();

  /** `wait`: how the thread waits for a WebGPU promise (tracked, cut short by an abort). */
  constructor(
    private readonly device: GPUDevice,
    private readonly pe: string,
    private readonly wait: <T>(p: Promise<T>) => Promise<T>,
  ) {}

  /** A device buffer for `key`, at least `bytes` long (made once, grown when needed). */
  private deviceScratch(key: string, bytes: number): GPUBuffer {
    let b = this.gpuScratch.get(key);
    if (!b || b.size < align4(bytes)) {
      b?.destroy();
      b = this.device.createBuffer({
        size: Math.max(16, align4(bytes)),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
        label: `${this.pe} scratch ${key}`,
      });
      this.gpuScratch.set(key, b);
    }
    return b;
  }

  /**
   * A GPU firing's buffers, encoding into `encoder` the copies its views need; `after` encodes
   * the copies back once the kernel has run. An access at the start of its storage binds the
   * storage itself. A view elsewhere (a split's part, a view of a join's base at an offset) is
   * copied into a scratch buffer on the device first, and an output view back after the
   * kernel: the kernels bind whole GPUBuffers (GpuFiring), so a storage-buffer binding with an
   * offset (possible where it is a multiple of device.limits.minStorageBufferOffsetAlignment,
   * 256 on most devices) is not offered to them; a device copy of the range is the fallback
   * WebGPU needs anyway for the unaligned ones. Gathered inputs are copied part by part.
   */
  gpuFiring(a: Fire, ins: PortSlots, outs: PortSlots, gathers: GatherSlots, it: number, encoder: GPUCommandEncoder): GpuFiringBuffers {
    const inputs: Record<string, GPUBuffer> = {};
    const outputs: Record<string, GPUBuffer> = {};
    const back: [GPUBuffer, GPUBuffer, number, number][] = [];
    for (const [port, x] of Object.entries(ins)) {
      const s = x.slots as GpuSlots;
      const r = gpuRange(s, x.range);
      if (r.offset === 0) inputs[port] = s.buffers[x.slot];
      else {
        const scratch = this.deviceScratch(`${a.node}.${port}`, r.bytes);
        encoder.copyBufferToBuffer(s.buffers[x.slot], r.offset, scratch, 0, align4(r.bytes));
        inputs[port] = scratch;
      }
    }
    for (const [port, parts] of Object.entries(gathers)) {
      const ranges = parts.map((x) => ({ s: x.slots as GpuSlots, slot: x.slot, r: gpuRange(x.slots as GpuSlots, x.range) }));
      const scratch = this.deviceScratch(
        `${a.node}.${port}`,
        ranges.reduce((n, x) => n + x.r.bytes, 0),
      );
      let at = 0;
      for (const { s, slot, r } of ranges) {
        encoder.copyBufferToBuffer(s.buffers[slot], r.offset, scratch, at, align4(r.bytes));
        at += r.bytes;
      }
      inputs[port] = scratch;
    }
    for (const [port, x] of Object.entries(outs)) {
      const s = x.slots as GpuSlots;
      const r = gpuRange(s, x.range);
      if (r.offset === 0) outputs[port] = s.buffers[x.slot];
      else {
        const scratch = this.deviceScratch(`${a.node}.${port} out`, r.bytes);
        outputs[port] = scratch;
        back.push([scratch, s.buffers[x.slot], r.offset, align4(r.bytes)]);
      }
    }
    return {
      firing: { iteration: it, inputs, outputs },
      after: (e) => back.forEach(([from, to, offset, bytes]) => e.copyBufferToBuffer(from, 0, to, offset, bytes)),
    };
  }

  stagingFor(key: string, size: number, usage: number): GPUBuffer {
    let s = this.staging.get(key);
    if (!s || s.size < size) {
      s?.destroy();
      s = this.device.createBuffer({ size, usage, label: `staging ${key}` });
      this.staging.set(key, s);
    }
    return s;
  }

  /** GPU buffer -> host bytes through a mappable staging buffer (one per key: two read-backs at once must not share one). */
  async readback(src: GPUBuffer, dst: ArrayBufferView, key = `read ${src.label}`, offset = 0): Promise<void> {
    const device = this.device;
    const size = align4(dst.byteLength);
    const staging = this.stagingFor(key, size, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(src, offset, staging, 0, size);
    device.queue.submit([encoder.finish()]);
    await this.wait(staging.mapAsync(GPUMapMode.READ, 0, size));
    new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(new Uint8Array(staging.getMappedRange(0, size), 0, dst.byteLength));
    staging.unmap();
  }

  /**
   * Host bytes -> GPU buffer. writeBuffer does not take shared memory, so the bytes go through
   * a private scratch copy first (measured on Dawn's OpenGL backend at 16 MiB: ~3 ms, against
   * ~14 ms for a mapped staging buffer).
   */
  async upload(src: Uint8Array, dst: GPUBuffer, offset = 0): Promise<void> {
    this.device.queue.writeBuffer(dst, offset, this.scratchFor(dst.label, src).buffer, 0, align4(src.byteLength));
    await this.wait(this.device.queue.onSubmittedWorkDone());
  }

  /** `src` copied into this key's private scratch bytes (grown to 4-byte multiples as needed). */
  scratchFor(key: string, src: Uint8Array): Uint8Array {
    const size = align4(src.byteLength);
    let scratch = this.scratchBytes.get(key);
    if (!scratch || scratch.byteLength < size) this.scratchBytes.set(key, (scratch = new Uint8Array(size)));
    scratch.set(src);
    return scratch;
  }

  destroy(): void {
    for (const s of this.staging.values()) s.destroy();
    for (const s of this.gpuScratch.values()) s.destroy();
  }
}
