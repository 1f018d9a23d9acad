import { threshold, type Access } from '@pipeloom/core';
import type { Abort } from './abort.js';

// Self-timed execution (core run/contract.ts): each action waits for monotone counters
// instead of a barrier. A host's counters are one Int32 each in memory shared by its PE threads
// and its main thread; a counter signalled on another host is mirrored here from that host's
// `credit` messages (host-run.ts). Waits never block a thread's event loop (Atomics.waitAsync)
// and every one is cut short by the run's abort. The hot path (counters already there) makes
// no promise, and a signal nobody waits for wakes no one.

// Node 20 has Atomics.waitAsync; the project's TypeScript lib (es2022) does not declare it.
type WaitAsync = (
  a: Int32Array,
  i: number,
  v: number,
) => { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** `count` counters, then as many waiter counts (see `Counters.set`). */
export function counterMemory(count: number): SharedArrayBuffer {
  return new SharedArrayBuffer(2 * Math.max(1, count) * Int32Array.BYTES_PER_ELEMENT);
}

export class Counters {
  readonly values: Int32Array;
  /**
   * Per counter, how many waits are pending on it. Atomics.notify costs the signaller tens of
   * µs (on the 2-core VM, a sixth of a GPU PE's cycle at 16-byte tokens), so a signal notifies
   * only when someone waits. Sequentially consistent atomics make this safe: a waiter counts
   * itself before it reads the value, a signaller stores the value before it reads the count.
   */
  private readonly waiting: Int32Array;

  constructor(
    memory: SharedArrayBuffer,
    /** The run's iterations: a wait's threshold is capped there (contract.ts `threshold`). */
    private readonly iterations: number,
    private readonly aborts: Abort,
  ) {
    const n = memory.byteLength / Int32Array.BYTES_PER_ELEMENT / 2;
    this.values = new Int32Array(memory, 0, n);
    this.waiting = new Int32Array(memory, n * Int32Array.BYTES_PER_ELEMENT, n);
  }

  /**
   * Index of the first wait of `access` that does not hold before iteration `i`, or -1 when
   * all hold (the action may run now). A threshold <= 0 always holds (counters start at 0).
   */
  blocked(access: Access, i: number): number {
    const waits = access.waits;
    for (let j = 0; j < waits.length; j++) {
      const w = waits[j];
      if (Atomics.load(this.values, w.counter) < threshold(w, i, this.iterations)) return j;
    }
    return -1;
  }

  /** Resolves once every wait of `access` from the `from`-th on holds for iteration `i`; rejects on abort. */
  async until(access: Access, i: number, from = 0): Promise<void> {
    const waits = access.waits;
    for (let j = from; j < waits.length; j++) await this.atLeast(waits[j].counter, threshold(waits[j], i, this.iterations));
  }

  /** Resolves once counter `c` >= `target`; rejects on abort. */
  async atLeast(c: number, target: number): Promise<void> {
    const values = this.values;
    if (Atomics.load(values, c) >= target) return;
    Atomics.add(this.waiting, c, 1);
    try {
      for (let v = Atomics.load(values, c); v < target; v = Atomics.load(values, c)) {
        const w = waitAsync(values, c, v);
        if (w.async) await this.aborts.guard(w.value);
        else if (this.aborts.reason) await this.aborts.guard(Promise.resolve());
      }
    } finally {
      Atomics.sub(this.waiting, c, 1);
    }
  }

  /** The action of `access` finished iteration `i`. */
  signal(access: Access, i: number): void {
    if (access.signal >= 0) this.set(access.signal, i + 1);
  }

  /** Raises counter `c` to `value` (counters never go down: a late credit changes nothing). */
  set(c: number, value: number): void {
    const values = this.values;
    if (Atomics.load(values, c) >= value) return;
    Atomics.store(values, c, value);
    if (Atomics.load(this.waiting, c) > 0) Atomics.notify(values, c);
  }
}
