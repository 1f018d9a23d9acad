// The barrier between a host's PE threads and its agent's main thread (the host-to-host
// lanes, and the host's part of the cluster barrier), through shared memory instead of a
// message round trip per PE: a PE thread counts itself in and sleeps on the generation; the
// main thread waits for every PE thread, takes the cluster step, then bumps the generation.
// Neither side blocks its event loop (Atomics.waitAsync).

// Node 20 has Atomics.waitAsync; the project's TypeScript lib (es2022) does not declare it.
type WaitAsync = (
  a: Int32Array,
  i: number,
  v: number,
) => { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

const ARRIVED = 0;
const GENERATION = 1;

export function localBarrierMemory(): SharedArrayBuffer {
  return new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
}

/** A PE thread's side: resolves once the main thread releases this barrier. */
export async function arriveAndWait(sync: Int32Array): Promise<void> {
  // Read before arriving: the generation cannot move until every PE thread has arrived.
  const gen = Atomics.load(sync, GENERATION);
  Atomics.add(sync, ARRIVED, 1);
  Atomics.notify(sync, ARRIVED);
  // Re-check after every wake: only a new generation lets the thread past.
  while (Atomics.load(sync, GENERATION) === gen) {
    const w = waitAsync(sync, GENERATION, gen);
    if (w.async) await w.value;
  }
}

/** The main thread's side: resolves once `parties` PE threads have arrived. */
export async function gather(sync: Int32Array, parties: number): Promise<void> {
  for (;;) {
    const v = Atomics.load(sync, ARRIVED);
    if (v >= parties) return;
    const w = waitAsync(sync, ARRIVED, v);
    if (w.async) await w.value;
  }
}

/** The main thread's side: lets every PE thread past the barrier. */
export function release(sync: Int32Array): void {
  Atomics.store(sync, ARRIVED, 0);
  Atomics.add(sync, GENERATION, 1);
  Atomics.notify(sync, GENERATION);
}
