import { threshold, type Access } from '@pipeloom/core';
import type { Counters } from './counters.js';

// One cycle of a GPU PE's self-timed work in one queue submission (pe-streams.ts `batchStream`).
// Every wait on a GPU completion costs a Dawn event poll (on the OpenGL backend 65-175 µs of CPU
// each, measured); a PE that waited for its upload, its firing and its read-back separately paid
// three per cycle. The queue is in order, so an action whose input was written earlier in the
// same batch needs no wait: its writer's counter is raised *for this thread* at once (`overlay`)
// and in shared memory only when the batch is complete. Only this thread touches its GPU
// buffers, so no other thread can act on an overlaid counter too early.

/** A read-back in flight: the staging buffer it was copied into, and where its bytes go. */
interface PendingRead {
  staging: GPUBuffer;
  bytes: number;
  into: Uint8Array;
}

export class GpuBatch {
  private encoder: GPUCommandEncoder | undefined;
  private submitted = false;
  private readonly reads: PendingRead[] = [];
  /** Counters raised by actions in this batch, visible to this thread only until `complete`. */
  private readonly overlay = new Map<number, number>();
  /** Signals to publish once the batch is complete (counter, value). */
  private readonly deferred: [number, number][] = [];

  constructor(
    private readonly device: GPUDevice,
    private readonly counters: Counters,
    private readonly iterations: number,
  ) {}

  /** True while the batch holds work not yet known complete. */
  get open(): boolean {
    return this.submitted || this.encoder !== undefined || this.reads.length > 0;
  }

  /** Index of the first wait of `access` that holds neither in shared memory nor through this batch, or -1. */
  blocked(access: Access, i: number): number {
    const waits = access.waits;
    for (let j = 0; j < waits.length; j++) {
      const w = waits[j];
      const need = threshold(w, i, this.iterations);
      if (Atomics.load(this.counters.values, w.counter) >= need) continue;
      if ((this.overlay.get(w.counter) ?? 0) >= need) continue;
      return j;
    }
    return -1;
  }

  /** Host bytes into a GPU buffer: a queue write after everything encoded so far. */
  write(dst: GPUBuffer, scratch: Uint8Array, bytes: number, offset = 0): void {
    this.flush();
    this.device.queue.writeBuffer(dst, offset, scratch.buffer, scratch.byteOffset, bytes);
    this.submitted = true;
  }

  /** The batch's command encoder (created on first use). */
  get commands(): GPUCommandEncoder {
    return (this.encoder ??= this.device.createCommandEncoder());
  }

  /** A GPU buffer to host bytes: copied into `staging` now, mapped and copied out in `complete`. */
  read(src: GPUBuffer, staging: GPUBuffer, bytes: number, into: Uint8Array, offset = 0): void {
    this.commands.copyBufferToBuffer(src, offset, staging, 0, bytes);
    this.reads.push({ staging, bytes, into });
  }

  /** `access` ran iteration i in this batch: later actions of this batch may rely on it; others once it completes. */
  signal(access: Access, i: number): void {
    if (access.signal < 0) return;
    this.overlay.set(access.signal, Math.max(this.overlay.get(access.signal) ?? 0, i + 1));
    this.deferred.push([access.signal, i + 1]);
  }

  /** Submits what is encoded (the queue runs it while this thread goes on). */
  flush(): void {
    if (!this.encoder) return;
    this.device.queue.submit([this.encoder.finish()]);
    this.encoder = undefined;
    this.submitted = true;
  }

  /**
   * Submits, waits for the queue (the read-backs' maps and the queue's completion, polled together),
   * copies read-backs out and publishes the batch's signals. `gpu` wraps each WebGPU promise
   * (pe-state.ts: tracked until it settles, cut short by an abort). `done` runs just before the
   * signals: a trace slice that ends there ends before any thread it releases can start (stamped
   * after this returns, it could end after them on a loaded machine).
   */
  async complete(gpu: <T>(p: Promise<T>) => Promise<T>, done?: () => void): Promise<void> {
    this.flush();
    // A map waits only for the work that used its buffer; the queue's completion covers the rest.
    if (this.submitted)
      await Promise.all([gpu(this.device.queue.onSubmittedWorkDone()), ...this.reads.map((r) => gpu(r.staging.mapAsync(GPUMapMode.READ, 0, r.bytes)))]);
    for (const r of this.reads) {
      r.into.set(new Uint8Array(r.staging.getMappedRange(0, r.bytes), 0, r.into.byteLength));
      r.staging.unmap();
    }
    this.reads.length = 0;
    this.submitted = false;
    done?.();
    for (const [c, v] of this.deferred) this.counters.set(c, v);
    this.deferred.length = 0;
    this.overlay.clear();
  }
}
