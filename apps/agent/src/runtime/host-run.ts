import type { Worker } from 'node:worker_threads';
import {
  servedPe,
  type Access,
  type Action,
  type PeProgram,
  type TraceEvent,
  transferKey,
  type FailureReport,
  type FromAgent,
  type ToAgent,
  recvLane,
  sendLane,
  waitSlice,
} from '@pipeloom/core';
import type { Devices } from '../devices/discover.js';
import type { PeerLink } from '../peer/link.js';
import { ClusterBarrier } from './barrier.js';
import { gather, localBarrierMemory, release } from './local-barrier.js';
import { allocateHost, depthOf, hostBytes, hostSlots, slotOf, type HostSlots } from './memory.js';
import type { FromPe, PeInit, ToPe } from './messages.js';
import { Abort, AbortError } from './abort.js';
import { TraceRecorder } from './trace.js';
import { watchMemory, Watchdog, type Overrun } from './watchdog.js';
import { holdForLink } from './emulate.js';
import { allocateStaging } from './staging.js';
import { Counters, counterMemory } from './counters.js';
import { fillHost } from './initial.js';
import { keepPeThread, takePeThread } from './pe-threads.js';
import { sinkWrites } from '../io/check.js';

// One run on one agent. Each PE of the host runs in its own thread (pe-worker.ts); this main
// thread holds the host memory (shared with the PE threads), runs the host-to-host lanes
// (sends and receives over the peer links), takes the PE threads to the cluster barrier, and
// forwards trace batches to the coordinator.

type Deploy = Extract<ToAgent, { type: 'deploy' }>;
type Transfer = Extract<Action, { op: 'transfer' }>;

const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

interface PeWorker {
  program: PeProgram;
  worker: Worker;
  done: Promise<void>;
  /**
   * Whether the thread has nothing of this run left to say: prepared and never started, or its
   * run loop ended (`done`). Only such a thread is kept for the next run (pe-threads.ts): one
   * freed mid-preparation or mid-run may still post this run's messages after `freed`.
   */
  quiet: boolean;
}

/** What the agent (not the deploy) bounds in a run on this host, and where its deploy progress goes. */
export interface HostRunLimits {
  /** A firing running longer than this (ms) fails the run and leaves its PE thread stuck (watchdog.ts); 0 = no limit. */
  kernelTimeoutMs?: number;
  /** Deploy progress (server/deploy-progress.ts): a host-wide step (pe null), a PE's step, or a PE ready (step null). */
  progress?: (pe: string | null, step: 'allocation' | 'device' | 'kernels' | null) => void;
}

/** The time limit of one firing when the agent is given none: far above any real kernel, even on a CPU adapter. */
export const DEFAULT_KERNEL_TIMEOUT_MS = 60_000;

export class HostRun {
  readonly trace: TraceRecorder;
  readonly barrier: ClusterBarrier;
  private workers: PeWorker[] = [];
  private host = new Map<string, HostSlots>();
  private hostBytes: Record<string, number> = {};
  private gpuBytes: Record<string, number> = {};
  private readonly aborts = new Abort();
  private reports = new Map<string, { node: string; iteration: number; values: Record<string, number | number[] | string> }>();
  private freed = false;
  /** Heap of each PE thread after it prepared and when it finished. */
  readonly peHeaps = { start: {} as Record<string, number>, end: {} as Record<string, number> };
  /** Adapter each GPU PE got. */
  readonly adapters: Record<string, string> = {};
  cycle = 0;
  /** Host-to-host transfers of this host, per phase index (sender or receiver side). */
  private lanes: Transfer[][] = [];
  private phases: { name: string; barrier: boolean }[] = [];
  private readonly syncMemory = localBarrierMemory();
  private readonly sync = new Int32Array(this.syncMemory);
  /** Staging memory of the GPU-to-GPU transfers (staging.ts). */
  private staging: Record<string, SharedArrayBuffer> = {};
  readonly watchdog: Watchdog;
  /** Self-timed execution (counters.ts): the host's counters, shared with its PE threads; absent in barrier mode. */
  private readonly counterMemory: SharedArrayBuffer | undefined;
  private readonly counters: Counters | undefined;
  /** Self-timed progress: the cycle each PE thread and each host-to-host stream has got past. */
  private readonly reached = new Map<string, number>();
  private readonly progress: NonNullable<HostRunLimits['progress']>;

  private constructor(
    readonly deploy: Deploy,
    readonly devices: Devices,
    readonly peers: Map<string, PeerLink>,
    readonly send: (m: FromAgent) => void,
    opts: HostRunLimits,
  ) {
    this.progress = opts.progress ?? (() => {});
    this.watchdog = new Watchdog(opts.kernelTimeoutMs ?? DEFAULT_KERNEL_TIMEOUT_MS, performance.timeOrigin + performance.now(), (o) => this.overrun(o));
    this.trace = new TraceRecorder(
      (events, dropped) => send({ type: 'trace', runId: deploy.runId, events, cycle: this.reachedCycle(), dropped }),
      deploy.traceInterval ?? 50_000,
    );
    // The PE threads meet the lanes (this thread) in shared memory (local-barrier.ts); this
    // thread alone then takes the host's part of the cluster barrier.
    this.barrier = new ClusterBarrier(
      devices.host,
      deploy.hosts.map((h) => h.id),
      1,
      peers,
    );
    if (deploy.sync === 'self-timed' && deploy.plan) {
      this.counterMemory = counterMemory(deploy.plan.counters.length);
      this.counters = new Counters(this.counterMemory, deploy.iterations, this.aborts);
    }
  }

  /** Allocates every buffer, starts one thread per PE (devices opened, kernels prepared). Throws naming the PE or node. */
  static async prepare(
    deploy: Deploy,
    devices: Devices,
    peers: Map<string, PeerLink>,
    send: (m: FromAgent) => void,
    opts: HostRunLimits = {},
  ): Promise<HostRun> {
    const run = new HostRun(deploy, devices, peers, send, opts);
    try {
      await run.start();
      return run;
    } catch (e) {
      await run.free();
      throw e;
    }
  }

  private async start(): Promise<void> {
    const { deploy, devices } = this;
    const me = devices.host;
    for (const program of deploy.programs) {
      if (program.host !== me) throw new Error(`program for ${program.pe} belongs to host ${program.host}, this agent is ${me}`);
      if (!servedPe(devices.pes, program.pe)) throw new Error(`agent ${me} has no PE ${program.pe}`);
    }
    this.progress(null, 'allocation');
    const { storage, bytes } = allocateHost(deploy.programs);
    this.hostBytes = bytes;
    // Delays' initial tokens in host slots: once, here, before any PE thread can see the storage.
    fillHost(me, deploy.programs, storage, deploy.buffers);
    for (const [id, s] of Object.entries(storage)) this.host.set(id, hostSlots(s, deploy.buffers[id]));
    // Host-to-host lanes, per phase: one occurrence per host (the sender's or receiver's program).
    const first = deploy.programs[0];
    this.phases = first ? first.phases.map((p) => ({ name: p.name, barrier: p.barrier })) : [];
    this.lanes = this.phases.map(() => []);
    const seen = new Set<string>();
    for (const link of this.peers.values()) link.onlyExpected();
    for (const program of deploy.programs) {
      program.phases.forEach((phase, i) => {
        for (const a of phase.actions) {
          if (a.op !== 'transfer' || this.hostOf(a.fromPe) === this.hostOf(a.toPe)) continue;
          const key = transferKey(a.from.buffer, a.to.buffer);
          if (seen.has(key)) continue;
          seen.add(key);
          for (const pe of [a.fromPe, a.toPe]) {
            if (this.hostOf(pe) === me && this.kindOf(pe) !== 'cpu')
              throw new Error(`host-to-host transfer ${key} ends on ${pe}, a GPU; route it through the host's CPU`);
          }
          this.lanes[i].push(a);
          // What the sending peer may put on the link: this transfer, at most a slot's bytes, a few
          // iterations early (credits and barriers keep a sender within the slots; twice is slack).
          if (this.hostOf(a.toPe) === me) this.peers.get(this.hostOf(a.fromPe))?.expect(key, a.bytes, 2 * depthOf(this.slots(a.to.buffer)) + 2);
        }
      });
    }
    // GPU-to-GPU copies of this host go through host memory shared by their two PE threads.
    this.staging = allocateStaging(deploy.programs, deploy.pes);
    const ready = deploy.programs.map((program) => this.spawn(program, storage));
    await Promise.all(ready);
  }

  private spawn(program: PeProgram, hostStorage: ReturnType<typeof allocateHost>['storage']): Promise<void> {
    const handle = program.kind === 'gpu' ? this.devices.gpus.get(program.pe) : undefined;
    if (program.kind === 'gpu' && !handle) return Promise.reject(new Error(`agent ${this.devices.host} has no PE ${program.pe}`));
    // The PE's set-up starts with its thread (loading the kernels takes a while on a busy machine).
    this.progress(program.pe, 'device');
    const worker = takePeThread('static', program.pe);
    const init: PeInit = {
      type: 'init',
      host: this.devices.host,
      program,
      iterations: this.deploy.iterations,
      cycles: this.deploy.cycles,
      pes: this.deploy.pes,
      buffers: this.deploy.buffers,
      hostStorage,
      gpu: handle ? { backend: handle.backend, powerPreference: handle.powerPreference, name: handle.name } : undefined,
      traceInterval: this.deploy.traceInterval ?? 50_000,
      sync: this.syncMemory,
      watch: watchMemory(),
      epoch: this.watchdog.epoch,
      emulateLinks: this.deploy.emulateLinks ?? false,
      emulateDevices: this.deploy.emulateDevices,
      slow: this.deploy.slow?.[program.pe],
      staging: this.staging,
      selfTimed: this.counterMemory && { counters: this.counterMemory, plan: this.deploy.plan?.actions[program.pe] ?? [] },
    };
    this.watchdog.watch(program, init.watch);
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const pw: PeWorker = { program, worker, done, quiet: false };
    this.workers.push(pw);
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (m: FromPe) => {
        switch (m.type) {
          case 'step':
            this.progress(program.pe, m.step);
            break;
          case 'ready':
            pw.quiet = true;
            this.progress(program.pe, null);
            if (m.adapter) this.adapters[program.pe] = m.adapter;
            if (program.kind === 'gpu') this.gpuBytes[program.pe] = m.allocated;
            this.peHeaps.start[program.pe] = m.heapUsed;
            resolve();
            break;
          case 'error':
            reject(new Error(m.message));
            break;
          case 'trace':
            if (this.counters) this.reached.set(program.pe, m.cycle);
            for (const e of m.events) this.trace.add(e);
            break;
          case 'report':
            this.reports.set(m.node, { node: m.node, iteration: m.iteration, values: m.values });
            break;
          case 'failed':
            this.fail(m.failure);
            break;
          case 'done':
            pw.quiet = true;
            this.peHeaps.end[program.pe] = m.heapUsed;
            resolveDone();
            break;
          default:
            break;
        }
      });
      worker.on('error', (e) => {
        reject(e);
        this.fail({ host: this.devices.host, pe: program.pe, message: `${program.pe} thread crashed: ${e.message}` });
      });
      worker.on('exit', () => {
        reject(new Error(`${program.pe} thread exited`));
        if (!this.freed) this.fail({ host: this.devices.host, pe: program.pe, message: `${program.pe} thread exited` });
      });
      worker.postMessage(init);
    });
  }

  private post(pw: PeWorker, m: ToPe): void {
    pw.worker.postMessage(m);
  }

  abort(reason: string): void {
    if (!this.aborts.abort(reason)) return;
    for (const pw of this.workers) this.post(pw, { type: 'abort', reason });
  }

  /** Reports a failure once and stops this host's threads; the coordinator stops the others. */
  fail(f: FailureReport): void {
    if (this.aborted) return;
    this.trace.flush();
    this.send({ type: 'failed', runId: this.deploy.runId, failure: f, writes: sinkWrites(this.devices.host, this.deploy.programs, this.reports.values()) });
    this.abort(f.message);
    for (const link of this.peers.values()) link.send({ type: 'abort', message: `host ${f.host} failed: ${f.message}` });
  }

  private guard<T>(p: Promise<T>): Promise<T> {
    return this.aborts.guard(p);
  }

  private get aborted(): string | null {
    return this.aborts.reason;
  }

  /** A firing passed the time limit: the run fails naming it; its thread stays in the kernel. */
  private overrun(o: Overrun): void {
    const limit = `${this.watchdog.limitMs / 1000} s`;
    this.fail({
      host: this.devices.host,
      pe: o.pe,
      node: o.node,
      iteration: o.iteration,
      message: `node ${o.node} (${o.kernel}) on ${o.pe} ran past the agent's kernel time limit (${limit}) at iteration ${o.iteration}; agent ${this.devices.host} restarts to free ${o.pe}. Fix the kernel, or raise the limit: pipeloom agent --kernel-timeout SECONDS`,
    });
  }

  /** PE threads held by a kernel that overran (freed only by restarting the agent). */
  get stuck(): string[] {
    return this.watchdog.stuckPes;
  }

  /** Runs every PE thread and the lanes to the end; sends `done` or `failed`. */
  async execute(): Promise<void> {
    this.trace.start();
    this.watchdog.start();
    for (const pw of this.workers) {
      pw.quiet = false;
      this.post(pw, { type: 'start' });
    }
    try {
      await this.guard(Promise.all([this.counters ? this.streams() : this.lanesLoop(), ...this.workers.map((w) => w.done)]));
      this.trace.flush();
      this.send({
        type: 'done',
        runId: this.deploy.runId,
        cycles: this.deploy.cycles,
        barrierPerCycle: this.deploy.cycles ? this.barrier.syncMicros / this.deploy.cycles : 0,
        reports: [...this.reports.values()],
        writes: sinkWrites(this.devices.host, this.deploy.programs, this.reports.values()),
        memory: { ...processMemory(), peHeaps: this.peHeaps.end },
      });
    } catch (e) {
      if (!(e instanceof AbortError)) this.fail({ host: this.devices.host, message: e instanceof Error ? e.message : String(e) });
    } finally {
      // Aborted, the PE threads still send the events they held as they stop: the timer
      // forwards them until the run is freed (dispose).
      if (!this.aborted) this.trace.stop();
    }
  }

  /** The host-to-host lanes: per cycle and phase, every send and receive of this host at once. */
  private async lanesLoop(): Promise<void> {
    const { iterations, cycles } = this.deploy;
    for (let k = 0; k < cycles; k++) {
      if (this.aborted) throw new AbortError(this.aborted);
      for (let p = 0; p < this.phases.length; p++) {
        const work: Promise<void>[] = [];
        for (const t of this.lanes[p]) {
          const it = k - t.startCycle;
          if (it >= 0 && it < iterations) work.push(this.hostToHost(t, k, it));
        }
        if (work.length) await this.guard(Promise.all(work));
        // The host meets at the end of every phase; a phase without a barrier (inside a scan's
        // firing) skips only the cluster-wide step (pe-worker.ts `loop`).
        await this.guard(gather(this.sync, this.workers.length));
        if (this.phases[p].barrier) await this.guard(this.barrier.arrive(k * this.phases.length + p));
        release(this.sync);
      }
      this.cycle = k + 1;
    }
  }

  /** Self-timed: the least cycle this host's PE threads and host-to-host streams have got past (barrier mode: the lanes' cycle). */
  private reachedCycle(): number {
    if (!this.counters) return this.cycle;
    let least = this.deploy.cycles;
    for (const pw of this.workers) least = Math.min(least, this.reached.get(pw.program.pe) ?? 0);
    for (const [key, c] of this.reached) if (key.startsWith('lane ')) least = Math.min(least, c);
    return least;
  }

  /**
   * Self-timed: each host-to-host transfer's half on this host is a stream of its own, no
   * barrier. A sending half waits for its source and for a credit from the receiving host (its
   * destination slot is free); a receiving half waits for its destination slot here (the link
   * holds bytes that come early), then tells the sender's host with a `credit`.
   */
  private async streams(): Promise<void> {
    const me = this.devices.host;
    const plan = this.deploy.plan!;
    const work: Promise<void>[] = [];
    for (const program of this.deploy.programs) {
      program.phases.forEach((phase, p) =>
        phase.actions.forEach((a, j) => {
          if (a.op !== 'transfer' || this.hostOf(a.fromPe) === this.hostOf(a.toPe)) return;
          const entry = plan.actions[program.pe]?.[p]?.[j];
          const sending = a.fromPe === program.pe && this.hostOf(a.fromPe) === me;
          const half = sending ? entry?.send : a.toPe === program.pe ? entry?.receive : undefined;
          if (!half)
            throw new Error(`the self-timed plan has no ${sending ? 'send' : 'receive'} half for ${transferKey(a.from.buffer, a.to.buffer)} on ${program.pe}`);
          work.push(this.laneStream(a, half, sending));
        }),
      );
    }
    await this.guard(Promise.all(work));
  }

  private async laneStream(t: Transfer, half: Access, sending: boolean): Promise<void> {
    const counters = this.counters!;
    const { iterations, cycles } = this.deploy;
    const me = this.devices.host;
    const key = `lane ${transferKey(t.from.buffer, t.to.buffer)}`;
    const pe = sending ? t.fromPe : t.toPe;
    const lane = sending ? sendLane(t.toPe) : recvLane(t.fromPe);
    const sender = this.peers.get(this.hostOf(t.fromPe));
    // Credits are coalesced: at most one pending per counter and link, sent with the latest value.
    let crediting = false;
    const credit = () => {
      crediting = false;
      if (!this.aborted) sender?.send({ type: 'credit', counter: half.signal, value: Atomics.load(counters.values, half.signal) });
    };
    this.reached.set(key, 0);
    let yielded = performance.now();
    for (let i = 0; i < iterations; i++) {
      const k = t.startCycle + i;
      const j = counters.blocked(half, i);
      if (j >= 0) {
        const t0 = nowUs();
        const remote = this.deploy.plan!.counters[half.waits[j].counter]?.host !== me;
        await counters.until(half, i, j);
        // A sender waits for its source, or (a credit) for the destination slot on the other host.
        const buffer = sending && !remote ? t.from.buffer : t.to.buffer;
        this.trace.add({
          host: me,
          pe,
          thread: lane,
          kind: 'wait',
          name: waitSlice(buffer),
          buffer,
          from: t.from.buffer,
          iteration: i,
          cycle: k,
          start: t0,
          end: nowUs(),
          bytes: t.bytes,
        });
      }
      await this.hostToHost(t, k, i);
      counters.signal(half, i);
      if (!sending && half.signal >= 0 && !crediting) {
        crediting = true;
        setImmediate(credit);
      }
      this.reached.set(key, k + 1);
      if (performance.now() - yielded > 10) {
        await new Promise<void>((r) => setImmediate(r));
        yielded = performance.now();
      }
      if (this.aborted) throw new AbortError(this.aborted);
    }
    this.reached.set(key, cycles);
  }

  /** A peer's credit (self-timed): counter `counter`, which lives on host `peer`, reached `value`. */
  credit(peer: string, counter: unknown, value: unknown): void {
    const c = this.counters;
    if (!c) return;
    if (!Number.isInteger(counter) || !Number.isInteger(value) || this.deploy.plan!.counters[counter as number]?.host !== peer) {
      this.fail({ host: peer, message: `host ${peer} sent a credit for counter ${String(counter).slice(0, 20)}, which is not one of its counters` });
      return;
    }
    c.set(counter as number, value as number);
  }

  private kindOf(pe: string): 'cpu' | 'gpu' {
    return this.deploy.pes[pe]?.kind ?? 'cpu';
  }

  private hostOf(pe: string): string {
    const h = this.deploy.pes[pe]?.host;
    if (!h) throw new Error(`PE ${pe} is not part of the run`);
    return h;
  }

  private slots(buffer: string): HostSlots {
    const s = this.host.get(buffer);
    if (!s) throw new Error(`buffer ${buffer} is not in host memory on ${this.devices.host}`);
    return s;
  }

  private async hostToHost(t: Transfer, k: number, it: number): Promise<void> {
    const me = this.devices.host;
    const fromHost = this.hostOf(t.fromPe);
    const toHost = this.hostOf(t.toPe);
    const peer = fromHost === me ? toHost : fromHost;
    const link = this.peers.get(peer);
    if (!link) throw new Error(`no link from ${me} to ${peer}`);
    const key = transferKey(t.from.buffer, t.to.buffer);
    const common = {
      host: me,
      thread: fromHost === me ? sendLane(t.toPe) : recvLane(t.fromPe),
      buffer: t.to.buffer,
      from: t.from.buffer,
      iteration: it,
      cycle: k,
      bytes: t.bytes,
    };
    if (fromHost === me) {
      const src = this.slots(t.from.buffer);
      // Only the transfer's range crosses (a split's part).
      const bytes = hostBytes(src, slotOf(k, t.from.lag, depthOf(src)), t.from);
      const t0 = nowUs();
      await this.guard(link.sendFrame(key, it, bytes.subarray(0, t.bytes)));
      if (this.deploy.emulateLinks) await this.guard(holdForLink(t, t0, nowUs));
      this.trace.add({ ...common, pe: t.fromPe, kind: 'transfer', name: t.to.buffer, start: t0, end: nowUs() });
    } else {
      const dst = this.slots(t.to.buffer);
      const slot = hostBytes(dst, slotOf(k, t.to.lag, depthOf(dst)), t.to);
      // The link copies the bytes into the slot as they arrive: waiting ends at the first byte.
      const w0 = nowUs();
      const t0 = Math.max(w0, await this.guard(link.receive(key, it, slot)));
      // Emulated, the bytes count as arrived once the link's time has passed since they began to.
      if (this.deploy.emulateLinks) await this.guard(holdForLink(t, t0, nowUs));
      this.trace.add({ ...common, pe: t.toPe, kind: 'wait', name: waitSlice(t.to.buffer), start: w0, end: t0 });
      this.trace.add({ ...common, pe: t.toPe, kind: 'transfer', name: t.to.buffer, start: t0, end: nowUs() });
    }
  }

  /** Frees every buffer and device (each PE thread destroys its own, then exits); every call gets the same promise. */
  free(): Promise<void> {
    this.freeing ??= this.dispose();
    return this.freeing;
  }

  private freeing: Promise<void> | undefined;

  private async dispose(): Promise<void> {
    this.freed = true;
    this.abort('run freed');
    // Still watching: a thread finishing a long firing is waited for up to the time limit.
    this.watchdog.start();
    await Promise.all(
      this.workers.map(
        (pw) =>
          new Promise<void>((resolve) => {
            const pe = pw.program.pe;
            // A thread held by a kernel is left alone: terminating it inside a native Dawn
            // call aborts the whole process. The agent restarts instead (see `stuck`).
            if (this.watchdog.stuckPes.includes(pe)) return resolve();
            const giveUp = () => {
              if (this.watchdog.stuckPes.includes(pe)) return resolve();
              if (this.watchdog.firing(pe)) {
                t = setTimeout(giveUp, 100);
                return;
              }
              void pw.worker.terminate().then(() => resolve());
            };
            let t = setTimeout(giveUp, 2000);
            pw.worker.on('message', (m: FromPe) => {
              if (m.type === 'freed') {
                clearTimeout(t);
                // Clean and quiet: the next run on this PE takes the thread as it is (pe-threads.ts).
                if (pw.quiet) {
                  keepPeThread('static', pe, pw.worker);
                  resolve();
                } else void pw.worker.terminate().then(() => resolve());
              }
            });
            pw.worker.once('exit', () => {
              clearTimeout(t);
              resolve();
            });
            this.post(pw, { type: 'free' });
          }),
      ),
    );
    this.watchdog.stop();
    // Every PE thread has ended and sent what it held: the last batch goes before `stopped`.
    this.trace.stop();
    this.trace.flush();
    this.workers = [];
    this.host.clear();
  }

  /** Bytes allocated per PE. */
  allocated(): Record<string, number> {
    return { ...this.hostBytes, ...this.gpuBytes };
  }
}

export type { TraceEvent };

export function processMemory(): { rss: number; heapUsed: number } {
  // With --expose-gc (local agents) collect first so the figure is live memory, not garbage.
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed };
}
