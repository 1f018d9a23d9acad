import { parentPort } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDevice } from '../devices/discover.js';
import { FiringStamp } from './watchdog.js';
import { setDataHost } from '@pipeloom/kernels';
import { dataHostFromEnv } from '../io/host.js';

// The life of a PE thread (a worker thread), the same for a static run's (pe-worker.ts) and a
// task bag's (taskbag/task-worker.ts): the message loop (`init` makes the thread and prepares
// it, `free` frees it and answers `freed`), the watchdog's firing stamp, the PE's WebGPU device
// opened and watched for loss, and the WebGPU promises waited for before the thread goes.

/** µs on this machine's clock (timeOrigin-based, the same in every thread). */
export const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

/** Posting to the agent's main thread, typed by the thread's messages (messages.ts, taskbag/messages.ts). */
export const poster =
  <T>() =>
  (m: T) =>
    parentPort!.postMessage(m);

const post = poster<{ type: 'error'; message: string } | { type: 'freed' }>();

/** Which adapter a GPU PE opens (devices/discover.ts openDevice). */
export type GpuChoice = { backend: string; powerPreference: GPUPowerPreference; name: string };

export class PeLifecycle {
  device?: GPUDevice;
  /** Set once `free` begins: nothing starts after it, and a device loss is the thread's own doing. */
  freed = false;
  /** What the main thread's watchdog reads (watchdog.ts): the firing or task running, since when, and whether in GPU work. */
  readonly stamp: FiringStamp;
  /**
   * WebGPU promises not settled yet. dawn.node aborts the whole process when a thread is torn
   * down while one of its promises is pending (a firing cut short by an abort leaves some), so
   * `free` waits for them before the thread answers `freed` and is terminated.
   */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(watch: { watch: SharedArrayBuffer; epoch: number }) {
    this.stamp = new FiringStamp(watch.watch, watch.epoch);
  }

  /** Notes a WebGPU promise until it settles (see `pending`). */
  track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const settled = () => this.pending.delete(p);
    p.then(settled, settled);
    return p;
  }

  /**
   * Opens `pe`'s device; `lost` hears of its loss (not one `free` caused). Undefined when the
   * thread was freed while the device was being opened: it is closed as it arrives.
   */
  async open(pe: string, gpu: GpuChoice, lost: (message: string) => void, named = false): Promise<GPUDevice | undefined> {
    const device = await this.track(openDevice(gpu, named ? pe : undefined));
    if (this.freed) {
      void this.track(device.lost);
      device.destroy();
      return undefined;
    }
    this.device = device;
    void this.track(device.lost).then((info) => {
      if (!this.freed) lost(`WebGPU device lost on ${pe}: ${info.message || info.reason}`);
    });
    return device;
  }

  /**
   * Once: `release` (the thread's kernels and buffers), then the device destroyed; then waits
   * (up to `settleMs`) for its WebGPU promises to settle. A destroyed device settles what it
   * still owed (dawn.node's polling delivers it); one `open` was still opening adds its own.
   */
  async free(release: () => void, settleMs = 1500): Promise<void> {
    if (this.freed) return;
    this.freed = true;
    release();
    this.device?.destroy();
    const deadline = performance.now() + settleMs;
    for (let left = settleMs; this.pending.size && left > 0; left = deadline - performance.now()) {
      await Promise.race([Promise.allSettled([...this.pending]), sleep(left)]);
    }
  }
}

/** A PE thread as its message loop drives it. */
export interface PeThreadLike {
  prepare(): Promise<void>;
  free(): Promise<void>;
}

/**
 * The thread's message loop: `init` makes the thread (`create`) and prepares it, a failure
 * posted as `error` (`message` words it); `free` frees it, then `freeing` (what goes before
 * the answer), then `freed`. Every other message goes to `on`, with the thread once made.
 */
export function servePeThread<M extends { type: string }, T extends PeThreadLike>(o: {
  create: (init: Extract<M, { type: 'init' }>) => T;
  message: (e: unknown) => string;
  on: (m: Exclude<M, { type: 'init' | 'free' }>, thread: T | undefined) => void;
  freeing?: (thread: T | undefined) => void;
}): void {
  let thread: T | undefined;
  // io.read and io.write firings read and write through the agent's data roots (--data).
  setDataHost(dataHostFromEnv());
  parentPort!.on('message', (m: M) => {
    if (m.type === 'init') {
      thread = o.create(m as Extract<M, { type: 'init' }>);
      thread.prepare().catch((e) => post({ type: 'error', message: o.message(e) }));
    } else if (m.type === 'free') {
      void (thread?.free() ?? Promise.resolve()).finally(() => {
        o.freeing?.(thread);
        post({ type: 'freed' });
      });
    } else o.on(m as Exclude<M, { type: 'init' | 'free' }>, thread);
  });
}
