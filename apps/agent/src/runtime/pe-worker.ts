import { barrierSlice } from '@pipeloom/core';
import { hostSlots, PeMemory } from './memory.js';
import { arriveAndWait } from './local-barrier.js';
import type { PeInit, ToPe } from './messages.js';
import { AbortError } from './abort.js';
import { isGpuToGpu } from './staging.js';
import { fillGpu } from './initial.js';
import { nowUs, servePeThread } from './pe-lifecycle.js';
import { post, PeState } from './pe-state.js';
import { DeviceCopies } from './device-copies.js';
import type { Fire } from './pe-types.js';
import { fire, prepareFire } from './pe-fire.js';
import { stagedHalf, stageHalf, transfer } from './pe-transfer.js';
import { streams } from './pe-streams.js';

// One PE's thread of control (a worker thread): its fires in schedule order and the
// same-host transfers it drives, phase by phase, meeting the others at each barrier in shared
// memory with the agent's main thread (local-barrier.ts). A GPU submit on Dawn's OpenGL backend runs on the calling thread,
// so each PE needs its own thread for PEs (and the host-to-host lanes) to run side by side.
// Self-timed runs go through pe-streams.ts instead of the barrier loop; the thread's life
// (messages, device, freeing) is pe-lifecycle.ts's.

/** This thread's heap in use, after a collection where --expose-gc allows one. */
const heapUsed = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
};

class PeThread {
  private readonly s: PeState;
  private readonly sync: Int32Array;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(readonly init: PeInit) {
    this.s = new PeState(init);
    this.sync = new Int32Array(init.sync);
  }

  async prepare(): Promise<void> {
    const s = this.s;
    const { program, buffers, hostStorage } = this.init;
    for (const [id, storage] of Object.entries(hostStorage)) s.host.set(id, hostSlots(storage, buffers[id]));
    let adapterName: string | undefined;
    if (program.kind === 'gpu') {
      const g = this.init.gpu!;
      const device = await s.life.open(s.pe, g, (message) => s.fail({ host: this.init.host, pe: s.pe, message }), true);
      // Freed while the device was being opened: it is closed already (pe-lifecycle.ts).
      if (!device) throw new AbortError('run freed');
      s.copies = new DeviceCopies(device, s.pe, (p) => s.gpu(p));
      adapterName = `${g.name} (${g.backend})`;
    }
    s.memory = new PeMemory(program, buffers, s.device, hostStorage);
    // A buffer WebGPU could not create refuses the deploy instead of being counted as allocated.
    const notCreated = await s.life.track(s.memory.created);
    if (notCreated) throw new Error(notCreated);
    // Delays' initial tokens in this GPU's slots (host slots the main thread filled already).
    if (program.kind === 'gpu') await fillGpu(this.init.host, program, s.memory, buffers, s.device!, (p) => s.life.track(p));
    post({ type: 'step', step: 'kernels' });
    for (const phase of program.phases) {
      for (const a of phase.actions) {
        if (a.op === 'transfer' && isGpuToGpu(a, this.init.pes)) stageHalf(s, a);
        if (a.op !== 'fire') continue;
        const f = await prepareFire(s, a);
        if (f.twin) adapterName += ` [${a.kernel}: no WGSL, CPU twin]`;
        s.fireIndex.set(a, s.fires.size);
        s.fires.set(a, f);
      }
    }
    post({ type: 'ready', adapter: adapterName, allocated: program.kind === 'gpu' ? s.memory.allocated : 0, heapUsed: heapUsed() });
  }

  abort(reason: string): void {
    this.s.abort(reason);
  }

  flush(): void {
    this.s.flush();
  }

  async run(): Promise<void> {
    const s = this.s;
    this.timer = setInterval(() => s.flush(), Math.max(1, this.init.traceInterval / 1000));
    try {
      await (this.init.selfTimed ? streams(s) : this.loop());
      s.flush();
      post({ type: 'done', heapUsed: heapUsed() });
    } catch (e) {
      if (!(e instanceof AbortError)) s.fail({ host: this.init.host, pe: s.pe, message: `${s.pe}: ${e instanceof Error ? e.message : String(e)}` });
      s.flush();
    } finally {
      clearInterval(this.timer);
    }
  }

  private async loop(): Promise<void> {
    const s = this.s;
    const phases = this.init.program.phases;
    const { iterations, cycles } = this.init;
    const fault = s.fault;
    for (let k = 0; k < cycles; k++) {
      if (s.aborted) throw new AbortError(s.aborted);
      for (let p = 0; p < phases.length; p++) {
        const phase = phases[p];
        const fires: Fire[] = [];
        const lanes: Promise<void>[] = [];
        for (const a of phase.actions) {
          if (a.op === 'barrier') continue;
          const it = k - a.startCycle;
          if (it < 0 || it >= iterations) continue;
          if (a.op === 'fire') fires.push(a);
          else if (s.staged.size && s.staged.has(a)) lanes.push(stagedHalf(s, a, k, it));
          else if (s.drives(a)) lanes.push(transfer(s, a, k, it));
        }
        // Fires of one PE one after another in schedule order; its transfers beside them.
        const chain = (async () => {
          for (const f of fires) await fire(s, f, k, k - f.startCycle);
        })();
        await s.guard(Promise.all([chain, ...lanes]));
        // Every phase ends with the host's PE threads and lanes meeting (the main thread adds the
        // cluster-wide step where the phase has a barrier). Inside a scan's firing (no barrier)
        // this is all: another host's data comes with its message, so its PEs wait for their own
        // inputs only, and this host's PE threads see each other's writes of the phase before.
        const t0 = nowUs();
        await s.guard(arriveAndWait(this.sync));
        if (phase.barrier)
          s.trace({
            host: this.init.host,
            pe: s.pe,
            thread: 'main',
            kind: 'barrier',
            name: barrierSlice(phase.name),
            iteration: k,
            cycle: k,
            start: t0,
            end: nowUs(),
          });
      }
      s.cycle = k + 1;
      s.injectFault(k, fault);
    }
  }

  /** Destroys the thread's buffers and device, then waits (up to `settleMs`) for its WebGPU promises to settle. */
  free(settleMs = 1500): Promise<void> {
    const s = this.s;
    return s.life.free(() => {
      s.abort('run freed');
      clearInterval(this.timer);
      for (const f of s.fires.values()) f.gpu?.destroy();
      s.copies?.destroy();
      s.memory?.free();
    }, settleMs);
  }
}

servePeThread<ToPe, PeThread>({
  create: (init) => new PeThread(init),
  message: (e) => (e instanceof Error ? e.message : String(e)),
  on: (m, thread) => {
    if (m.type === 'start') void thread?.run();
    else thread?.abort(m.reason);
  },
  // The events this thread still holds go before `freed`: the run's trace keeps them.
  freeing: (thread) => thread?.flush(),
});
