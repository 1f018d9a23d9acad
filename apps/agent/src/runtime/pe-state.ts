import { type TraceEvent, type FailureReport, recvLane, sendLane } from '@pipeloom/core';
import { depthOf, slotOf, type HostSlots, type PeMemory, type Range, type Slots } from './memory.js';
import type { FromPe, PeInit } from './messages.js';
import { Abort } from './abort.js';
import { PeLifecycle, poster } from './pe-lifecycle.js';
import type { Staging } from './staging.js';
import type { DeviceCopies } from './device-copies.js';
import type { Fire, GatherSlots, PortSlots, PreparedFire, Transfer } from './pe-types.js';

// What a static run's PE thread (pe-worker.ts) knows while it runs: its memory and prepared
// firings, its abort, its trace so far and its progress. The firings (pe-fire.ts), transfers
// (pe-transfer.ts) and self-timed streams (pe-streams.ts) act on it.

export const post = poster<FromPe>();

export class PeState {
  memory!: PeMemory;
  /** GPU PEs: copies between this device, its scratch buffers and host memory. */
  copies!: DeviceCopies;
  readonly host = new Map<string, HostSlots>();
  readonly fires = new Map<Fire, PreparedFire>();
  /** Each fire action's number in the program (watchdog.ts fireList order). */
  readonly fireIndex = new Map<Fire, number>();
  /** This PE's half of each GPU-to-GPU transfer, staged through host memory (staging.ts). */
  readonly staged = new Map<Transfer, Staging>();
  /** A CPU firing's gathered inputs, by node and port (pe-fire.ts gatherHost). */
  readonly gatherBuffers = new Map<string, ArrayBufferView>();
  readonly aborts = new Abort();
  /** Device, watchdog stamp, WebGPU promises and freeing (pe-lifecycle.ts). */
  readonly life: PeLifecycle;
  private events: TraceEvent[] = [];
  /** The cycles done (barrier mode). */
  cycle = 0;
  /** Self-timed: the cycle each stream of this PE has got past (the PE's progress is the least). */
  reached: number[] | undefined;
  /** The cycle the last batch reported. */
  private posted = -1;

  constructor(readonly init: PeInit) {
    this.life = new PeLifecycle(init);
  }

  get pe(): string {
    return this.init.program.pe;
  }

  get device(): GPUDevice | undefined {
    return this.life.device;
  }

  get aborted(): string | null {
    return this.aborts.reason;
  }

  abort(reason: string): void {
    this.aborts.abort(reason);
  }

  fail(f: FailureReport): void {
    if (this.aborted) return;
    this.flush();
    post({ type: 'failed', failure: f });
    this.abort(f.message);
  }

  guard<T>(p: Promise<T>): Promise<T> {
    return this.aborts.guard(p);
  }

  /** A WebGPU promise the run waits for: tracked until it settles, and cut short by an abort. */
  gpu<T>(p: Promise<T>): Promise<T> {
    return this.guard(this.life.track(p));
  }

  trace(e: TraceEvent): void {
    this.events.push(e);
  }

  flush(): void {
    // A PE with nothing to trace still reports its progress (self-timed: the host's is the least of its PEs').
    const cycle = this.reachedCycle();
    if (!this.events.length && cycle === this.posted) return;
    this.posted = cycle;
    post({ type: 'trace', events: this.events, cycle });
    this.events = [];
  }

  private reachedCycle(): number {
    if (!this.reached) return this.cycle;
    let least = this.init.cycles;
    for (const c of this.reached) least = Math.min(least, c);
    return least;
  }

  /**
   * Fault injection for tests, PIPELOOM_FAULT=<kind>:<pe>:<cycle>, after that cycle on that PE:
   * `lose-device` destroys its device (the nearest thing to a GPU falling off the bus), `kill`
   * kills the agent's process (as a crash in native code does).
   */
  get fault(): { kind: 'lose-device' | 'kill'; cycle: number } | undefined {
    const m = /^(lose-device|kill):([^:]+):(\d+)$/.exec(process.env.PIPELOOM_FAULT ?? '');
    return m && m[2] === this.pe ? { kind: m[1] as 'lose-device' | 'kill', cycle: Number(m[3]) } : undefined;
  }

  injectFault(k: number, fault: PeState['fault']): void {
    if (k + 1 !== fault?.cycle) return;
    if (fault.kind === 'lose-device') this.device?.destroy();
    else process.kill(process.pid, 'SIGKILL');
  }

  private kindOf(pe: string): 'cpu' | 'gpu' {
    return this.init.pes[pe]?.kind ?? 'cpu';
  }

  /** Host-to-host transfers belong to the main thread's lanes; same host: the GPU side drives (one copy). */
  drives(t: Transfer): boolean {
    const pes = this.init.pes;
    if (pes[t.fromPe]?.host !== pes[t.toPe]?.host) return false;
    const driver = this.kindOf(t.toPe) === 'gpu' && this.kindOf(t.fromPe) !== 'gpu' ? t.toPe : t.fromPe;
    return driver === this.pe;
  }

  /** The trace lane of a transfer on this PE: receiving from, or sending to, the other end. */
  laneOf(t: Transfer): string {
    return t.fromPe === this.pe ? sendLane(t.toPe) : recvLane(t.fromPe);
  }

  slots(buffer: string): Slots {
    const own = this.memory.slots.get(buffer);
    if (own) return own;
    const h = this.host.get(buffer);
    if (h) return h;
    throw new Error(`buffer ${buffer} is not reachable from ${this.pe} (another GPU's buffer on the same host?)`);
  }

  /** The slots, slot and range of each access in cycle k, by port. */
  pick(ports: Record<string, { buffer: string; lag: number } & Range>, k: number): PortSlots {
    const out: PortSlots = {};
    for (const [port, acc] of Object.entries(ports)) {
      const slots = this.memory.get(acc.buffer);
      out[port] = { slots, slot: slotOf(k, acc.lag, depthOf(slots)), range: acc };
    }
    return out;
  }

  /** The parts of a firing's gathered inputs in cycle k (each part with its own lag). */
  gathers(a: Fire, k: number): GatherSlots {
    const out: GatherSlots = {};
    if (!a.parts) return out;
    for (const [port, parts] of Object.entries(a.parts)) {
      if (a.inputs[port]) continue; // views of one base: read as one range
      out[port] = parts.map((acc) => {
        const slots = this.memory.get(acc.buffer);
        return { slots, slot: slotOf(k, acc.lag, depthOf(slots)), range: acc };
      });
    }
    return out;
  }
}
