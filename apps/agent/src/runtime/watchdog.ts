import type { PeProgram } from '@pipeloom/core';

// A time limit on every firing, kept from the agent's main thread. A PE thread cannot time
// itself out: on Dawn's OpenGL backend a submit runs the kernel on the calling thread, so a
// kernel that never ends (custom WGSL looping forever) holds its thread in native code, where
// neither a timer nor Worker.terminate() reaches it (terminating it there aborts the process).
// So each PE thread stamps the firing it is in into shared memory, and the main thread checks
// the stamps: an overrun fails the run naming the node, and the thread is given up as stuck.
// A task-bag PE thread also stamps whether it is inside GPU work: outside it (a CPU twin) the
// thread is only running JavaScript, which Worker.terminate() does stop, so it can be replaced.

/**
 * Int32 words per PE: [firing: a number the watcher can name (static: index in the program's
 * fire list + 1; task bag: the task's sequence number), or 0 when idle; started: ms since the
 * run's epoch; iteration; 1 while inside GPU work (native code: not to be terminated)].
 */
const WORDS = 4;

export function watchMemory(): SharedArrayBuffer {
  return new SharedArrayBuffer(WORDS * 4);
}

const nowMs = () => performance.timeOrigin + performance.now();

/** The firings of a program, in the order both threads number them. */
export function fireList(program: PeProgram): { node: string; kernel: string }[] {
  const fires: { node: string; kernel: string }[] = [];
  for (const phase of program.phases) for (const a of phase.actions) if (a.op === 'fire') fires.push({ node: a.node, kernel: a.kernel });
  return fires;
}

/** The PE thread's side: marks the start and end of each firing. */
export class FiringStamp {
  private readonly words: Int32Array;
  constructor(
    memory: SharedArrayBuffer,
    private readonly epoch: number,
  ) {
    this.words = new Int32Array(memory);
  }

  begin(fire: number, iteration: number): void {
    Atomics.store(this.words, 1, Math.round(nowMs() - this.epoch));
    Atomics.store(this.words, 2, iteration);
    Atomics.store(this.words, 0, fire + 1);
  }

  /** The firing enters (true) or leaves (false) GPU work. */
  gpu(inside: boolean): void {
    Atomics.store(this.words, 3, inside ? 1 : 0);
  }

  end(): void {
    Atomics.store(this.words, 3, 0);
    Atomics.store(this.words, 0, 0);
  }
}

/** Names a stamped firing (its number as begin() got it) for the message. */
export type FiringName = (fire: number) => { node: string; kernel: string } | undefined;

export interface Overrun {
  pe: string;
  node: string;
  kernel: string;
  iteration: number;
  /** How long the firing had run when it was caught. */
  ms: number;
  /** The number begin() was given. */
  fire: number;
  /** Caught inside GPU work: the thread may be in native code, where terminating it aborts the process. */
  gpu: boolean;
}

/** The main thread's side: polls every PE's stamp while a run executes. */
export class Watchdog {
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly pes: { pe: string; words: Int32Array; name: FiringName }[] = [];
  private readonly stuck = new Set<string>();

  constructor(
    readonly limitMs: number,
    readonly epoch: number,
    private readonly onOverrun: (o: Overrun) => void,
  ) {}

  watch(program: PeProgram, memory: SharedArrayBuffer): void {
    const fires = fireList(program);
    this.watchThread(program.pe, memory, (fire) => fires[fire]);
  }

  /** Watches a PE thread whose firings `name` names; a PE watched again (its thread replaced) is watched afresh. */
  watchThread(pe: string, memory: SharedArrayBuffer, name: FiringName): void {
    this.unwatch(pe);
    this.pes.push({ pe, words: new Int32Array(memory), name });
  }

  /** Stops watching `pe` (its thread was terminated): it is no longer stuck. */
  unwatch(pe: string): void {
    const i = this.pes.findIndex((x) => x.pe === pe);
    if (i >= 0) this.pes.splice(i, 1);
    this.stuck.delete(pe);
  }

  start(): void {
    if (this.timer || !(this.limitMs > 0)) return;
    // Caught within a quarter of the limit (at most a second) after it passes.
    this.timer = setInterval(() => this.check(), Math.min(1000, Math.max(10, this.limitMs / 4)));
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The PE is in a firing now. */
  firing(pe: string): boolean {
    const p = this.pes.find((x) => x.pe === pe);
    return Boolean(p && Atomics.load(p.words, 0) !== 0);
  }

  /** PEs caught overrunning: their threads are held by the kernel and cannot be freed. */
  get stuckPes(): string[] {
    return [...this.stuck];
  }

  /** Checks every stamp now; returns the PEs caught. */
  check(): Overrun[] {
    const caught: Overrun[] = [];
    const now = nowMs() - this.epoch;
    for (const p of this.pes) {
      const fire = Atomics.load(p.words, 0);
      if (fire === 0 || this.stuck.has(p.pe)) continue;
      const ms = now - Atomics.load(p.words, 1);
      if (ms <= this.limitMs) continue;
      this.stuck.add(p.pe);
      const f = p.name(fire - 1) ?? { node: '?', kernel: '?' };
      const o = { pe: p.pe, node: f.node, kernel: f.kernel, iteration: Atomics.load(p.words, 2), ms, fire: fire - 1, gpu: Atomics.load(p.words, 3) === 1 };
      caught.push(o);
      this.onOverrun(o);
    }
    return caught;
  }
}
