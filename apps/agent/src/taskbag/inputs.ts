import { quote, type BagInput } from '@pipeloom/core';
import { Initial } from '../runtime/initial.js';
import type { BufferInfo } from '../runtime/memory.js';
import { sharedBytes, type DataStore } from './pulls.js';

// A task's input made whole on this agent before its kernel runs: parts of producers' outputs
// (held here or pulled: pulls.ts) copied to their places, or a delayed edge's initial tokens: a constant, or a source kernel run once on its
// CPU twin (runtime/initial.ts makes both, as for static runs, and keeps a kernel's bytes).

const VIEW = { f32: Float32Array, u32: Uint32Array, i32: Int32Array, u8: Uint8Array } as const;

export class InputGatherer {
  /** The buffers `Initial` fills name: one per (element, bytes), made as inputs ask. */
  private readonly buffers: BufferInfo = {};
  private readonly initial: Initial;

  constructor(
    readonly host: string,
    readonly store: DataStore,
  ) {
    this.initial = new Initial(host, this.buffers);
  }

  /** The input's bytes in shared memory. Rejects with LostError (pulls.ts) when a part cannot be pulled, else an Error naming the input. */
  async gather(input: BagInput, pe: string, iteration: number): Promise<Uint8Array> {
    if (input.init) return this.init(input, pe, iteration);
    const parts = input.parts!;
    const sources = await Promise.all(parts.map((p) => this.store.get(p.host, p.key, pe, p.size)));
    const only = parts[0];
    // One whole output as the whole input: the kernel reads it where it lies (kernels do not write their inputs).
    if (
      parts.length === 1 &&
      !only.offset &&
      !only.at &&
      only.bytes === input.bytes &&
      sources[0].byteLength === input.bytes &&
      sources[0].buffer instanceof SharedArrayBuffer
    )
      return sources[0];
    const out = sharedBytes(input.bytes);
    parts.forEach((p, j) => {
      const src = sources[j];
      if (src.byteLength !== p.size)
        throw new Error(`input "${input.port}": part ${j} reads output ${quote(p.key)} as ${p.size} bytes; it holds ${src.byteLength}`);
      if (p.offset + p.bytes > src.byteLength)
        throw new Error(
          `input "${input.port}": part ${j} reads bytes ${p.offset}..${p.offset + p.bytes} of output ${quote(p.key)}, which holds ${src.byteLength}`,
        );
      out.set(src.subarray(p.offset, p.offset + p.bytes), p.at);
    });
    return out;
  }

  private init(input: BagInput, pe: string, iteration: number): Uint8Array {
    const buffer = `initial ${input.element} x${input.bytes}`;
    this.buffers[buffer] = { element: input.element, bytes: input.bytes };
    const spec = input.init!;
    // Iteration i < delay reads initial token i.
    const fill = 'value' in spec ? { buffer, slot: 0, value: spec.value } : { buffer, slot: 0, kernel: spec.kernel, params: spec.params, token: iteration };
    const made = this.initial.bytes(fill as Parameters<Initial['bytes']>[0], pe);
    const out = sharedBytes(input.bytes);
    out.set(made.subarray(0, input.bytes));
    return out;
  }
}
