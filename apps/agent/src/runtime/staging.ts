import { type Action, type PeProgram, transferKey } from '@pipeloom/core';
import { align4 } from './memory.js';

// A copy between two GPUs of one host (an NVLink the compiler routed over) goes through host
// memory: each GPU PE's thread owns its own GPUDevice, and neither can reach the other's
// buffers. The source thread reads its slot back into a staging SharedArrayBuffer and publishes
// the iteration; the destination thread waits for that iteration, then writes the bytes into its
// slot. Both halves run in the phase the compiler placed the transfer in, so its latency holds.
// One staging buffer per transfer is enough: every phase ends in a barrier, so the source
// cannot publish the next iteration before the destination has taken this one.

type Transfer = Extract<Action, { op: 'transfer' }>;

// Node 20 has Atomics.waitAsync; the project's TypeScript lib (es2022) does not declare it.
type WaitAsync = (
  a: Int32Array,
  i: number,
  v: number,
) => { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** Int32 [published iteration + 1], then the buffer's bytes. */
const HEADER = Int32Array.BYTES_PER_ELEMENT;

export interface Staging {
  /** [0]: the last iteration published, plus one (0: none yet). */
  flag: Int32Array;
  bytes: Uint8Array;
}

/** Whether a transfer runs staged: both ends GPU PEs of one host. */
export function isGpuToGpu(t: Transfer, pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }>): boolean {
  const from = pes[t.fromPe];
  const to = pes[t.toPe];
  return t.fromPe !== t.toPe && from?.kind === 'gpu' && to?.kind === 'gpu' && from.host === to.host;
}

/** One staging SharedArrayBuffer per GPU-to-GPU transfer of these programs, by transferKey. */
export function allocateStaging(programs: PeProgram[], pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }>): Record<string, SharedArrayBuffer> {
  const out: Record<string, SharedArrayBuffer> = {};
  for (const program of programs) {
    for (const phase of program.phases) {
      for (const a of phase.actions) {
        if (a.op !== 'transfer' || !isGpuToGpu(a, pes)) continue;
        out[transferKey(a.from.buffer, a.to.buffer)] ??= new SharedArrayBuffer(HEADER + align4(a.bytes));
      }
    }
  }
  return out;
}

export function stagingView(memory: SharedArrayBuffer, bytes: number): Staging {
  return { flag: new Int32Array(memory, 0, 1), bytes: new Uint8Array(memory, HEADER, bytes) };
}

/** The source's side: the bytes of iteration `it` are in place. */
export function publish(s: Staging, it: number): void {
  Atomics.store(s.flag, 0, it + 1);
  Atomics.notify(s.flag, 0);
}

/** The destination's side: resolves once iteration `it` is published (never blocks the event loop). */
export async function published(s: Staging, it: number): Promise<void> {
  for (let v = Atomics.load(s.flag, 0); v !== it + 1; v = Atomics.load(s.flag, 0)) {
    const w = waitAsync(s.flag, 0, v);
    if (w.async) await w.value;
  }
}
