import { Worker } from 'node:worker_threads';

// PE threads kept between runs. A thread's start (loading core, the kernels and the kernel
// packages into a fresh isolate) costs more CPU than a small run's own work, so a thread that a
// run freed cleanly (its buffers and device destroyed, its WebGPU promises settled: it answered
// `freed`) waits here for the next run on the same PE, which sends it `init` again
// (pe-lifecycle.ts serves any number). A thread that did not answer, crashed, or is held by a
// kernel is never kept. At most one idle thread per PE and kind; idle ones do not keep the
// process alive.

const BOOT = new URL('./pe-worker-boot.mjs', import.meta.url);

/** Which thread: a static run's PE thread or a task bag's (pe-worker-boot.mjs's `entry`). */
export type PeThreadKind = 'static' | 'taskbag';

const idle = new Map<string, Worker>();

/** Drops the listeners a run (or the pool) added; Node's own (which start and ref the thread's port) stay. */
function forget(worker: Worker): void {
  for (const event of ['message', 'error', 'exit', 'messageerror', 'online']) worker.removeAllListeners(event);
}
const key = (kind: PeThreadKind, pe: string) => `${kind} ${pe}`;

/** A thread for `pe`: the idle one a run gave back, else a new one. Its listeners are the caller's to add. */
export function takePeThread(kind: PeThreadKind, pe: string): Worker {
  const k = key(kind, pe);
  const kept = idle.get(k);
  if (kept) {
    idle.delete(k);
    forget(kept);
    kept.ref();
    return kept;
  }
  return new Worker(BOOT, { name: kind === 'static' ? pe : `task ${pe}`, workerData: kind === 'taskbag' ? { entry: 'taskbag' } : undefined });
}

/** A thread that answered `freed`: kept for the next run on `pe` (a thread already kept for it is ended). */
export function keepPeThread(kind: PeThreadKind, pe: string, worker: Worker): void {
  const k = key(kind, pe);
  forget(worker);
  // An idle thread that fails ends (its exit below forgets it); unheard, its error would end the agent.
  worker.on('error', () => {});
  worker.unref();
  const before = idle.get(k);
  idle.set(k, worker);
  if (before && before !== worker) void before.terminate();
  worker.once('exit', () => {
    if (idle.get(k) === worker) idle.delete(k);
  });
}
