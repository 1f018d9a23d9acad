import { parentPort } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { getKernel, withDefaults, type GpuExecutor, type Kernel, type Params } from '@pipeloom/kernels';
import { type Access, type Action, type TraceEvent, transferKey, type FailureReport, recvLane, sendLane, barrierSlice, waitSlice } from '@pipeloom/core';
import { gpuFor } from '../devices/discover.js';
import { align4, depthOf, gpuRange, hostBytes, hostSlots, hostView, PeMemory, slotOf, type GpuSlots, type HostSlots, type Range, type Slots } from './memory.js';
import { arriveAndWait } from './local-barrier.js';
import type { FromPe, PeInit, ToPe } from './messages.js';
import { Abort, AbortError } from './abort.js';
import { FiringStamp } from './watchdog.js';
import { Counters } from './counters.js';
import { holdForLink, holdUntil } from './emulate.js';
import { isGpuToGpu, published, publish, stagingView, type Staging } from './staging.js';
import { GpuBatch } from './gpu-batch.js';
import { fillGpu } from './initial.js';

// One PE's thread of control (a worker thread): its fires in schedule order and the
// same-host transfers it drives, phase by phase, meeting the others at each barrier in shared
// memory with the agent's main thread (local-barrier.ts). A GPU submit on Dawn's OpenGL backend runs on the calling thread,
// so each PE needs its own thread for PEs (and the host-to-host lanes) to run side by side.

type Fire = Extract<Action, { op: 'fire' }>;
type Transfer = Extract<Action, { op: 'transfer' }>;

type KernelReport = { ok: boolean; message?: string; values?: Record<string, number | number[] | string> };
/** A firing's ports: each port's buffer slots, the slot this cycle uses and the range it touches (a view). */
type PortSlots = Record<string, { slots: Slots; slot: number; range: Range }>;
/** A firing's inputs fed in parts that are not views of one base: per port, its parts, gathered (copied) before it fires. */
type GatherSlots = Record<string, { slots: Slots; slot: number; range: Range }[]>;

interface PreparedFire {
  kernel: Kernel;
  params: Params;
  state: Record<string, unknown>;
  gpu?: GpuExecutor;
  /** GPU PE whose kernel has no WGSL: host copies for its CPU twin. */
  twin?: { inputs: Record<string, ArrayBufferView>; outputs: Record<string, ArrayBufferView> };
}


const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
/** Self-timed: a stream that never has to wait lets its thread's event loop in at least this often (ms). */
const YIELD_MS = 10;
const post = (m: FromPe) => parentPort!.postMessage(m);
/** This thread's heap in use, after a collection where --expose-gc allows one. */
const heapUsed = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
};

class PeThread {
  private memory!: PeMemory;
  private device?: GPUDevice;
  private host = new Map<string, HostSlots>();
  private fires = new Map<Fire, PreparedFire>();
  private staging = new Map<string, GPUBuffer>();
  /** This PE's half of each GPU-to-GPU transfer, staged through host memory (staging.ts). */
  private staged = new Map<Transfer, Staging>();
  private readonly aborts = new Abort();
  private events: TraceEvent[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private cycle = 0;
  private freed = false;
  /**
   * WebGPU promises not settled yet. dawn.node aborts the whole process when a thread is torn
   * down while one of its promises is pending (a firing cut short by an abort leaves some), so
   * `free` waits for them before the thread answers `freed` and is terminated.
   */
  private readonly pending = new Set<Promise<unknown>>();

  private readonly sync: Int32Array;
  private readonly stamp: FiringStamp;
  /** Each fire action's number in the program (watchdog.ts fireList order). */
  private readonly fireIndex = new Map<Fire, number>();

  constructor(readonly init: PeInit) {
    this.sync = new Int32Array(init.sync);
    this.stamp = new FiringStamp(init.watch, init.epoch);
  }

  get pe(): string {
    return this.init.program.pe;
  }

  async prepare(): Promise<void> {
    const { program, buffers, hostStorage } = this.init;
    for (const [id, storage] of Object.entries(hostStorage)) this.host.set(id, hostSlots(storage, buffers[id]));
    let adapterName: string | undefined;
    if (program.kind === 'gpu') {
      const g = this.init.gpu!;
      const gpu = await gpuFor(g.backend);
      const adapter = await this.track(gpu.requestAdapter({ featureLevel: 'compatibility', powerPreference: g.powerPreference } as GPURequestAdapterOptions));
      if (!adapter) throw new Error(`${this.pe}: adapter ${g.name} is gone`);
      const l = adapter.limits;
      this.device = await this.track(
        adapter.requestDevice({
          requiredLimits: { maxBufferSize: l.maxBufferSize, maxStorageBufferBindingSize: l.maxStorageBufferBindingSize, maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage },
        }),
      );
      if (this.freed) {
        // Freed while the device was being opened: close it at once (see `free`).
        this.track(this.device.lost);
        this.device.destroy();
        throw new AbortError('run freed');
      }
      adapterName = `${g.name} (${g.backend})`;
      void this.track(this.device.lost).then((info) => {
        if (!this.freed) this.fail({ host: this.init.host, pe: this.pe, message: `WebGPU device lost on ${this.pe}: ${info.message || info.reason}` });
      });
    }
    this.memory = new PeMemory(program, buffers, this.device, hostStorage);
    // A buffer WebGPU could not create refuses the deploy instead of being counted as allocated.
    const notCreated = await this.track(this.memory.created);
    if (notCreated) throw new Error(notCreated);
    // Delays' initial tokens in this GPU's slots (host slots the main thread filled already).
    if (program.kind === 'gpu') await fillGpu(this.init.host, program, this.memory, buffers, this.device!, (p) => this.track(p));
    post({ type: 'step', step: 'kernels' });
    for (const phase of program.phases) {
      for (const a of phase.actions) {
        if (a.op === 'transfer' && isGpuToGpu(a, this.init.pes)) this.stageHalf(a);
        if (a.op !== 'fire') continue;
        const f = await this.prepareFire(a);
        if (f.twin) adapterName += ` [${a.kernel}: no WGSL, CPU twin]`;
        this.fireIndex.set(a, this.fires.size);
        this.fires.set(a, f);
      }
    }
    post({ type: 'ready', adapter: adapterName, allocated: program.kind === 'gpu' ? this.memory.allocated : 0, heapUsed: heapUsed() });
  }

  private async prepareFire(action: Fire): Promise<PreparedFire> {
    // Only registered kernels run: getKernel refuses any other id.
    const kernel = getKernel(action.kernel);
    const params = withDefaults(kernel, action.params);
    const f: PreparedFire = { kernel, params, state: {} };
    if (this.init.program.kind !== 'gpu') return f;
    if (kernel.gpu) {
      try {
        f.gpu = await this.track(kernel.gpu.prepare(this.device!, params));
      } catch (e) {
        throw new Error(`node ${action.node} (${action.kernel}) on ${this.pe}: ${e instanceof Error ? e.message : String(e)}`);
      }
    } else {
      const views = (ports: Record<string, { buffer: string; bytes?: number }>) => Object.fromEntries(Object.entries(ports).map(([port, acc]) => [port, this.scratch(acc.buffer, acc.bytes)]));
      f.twin = { inputs: { ...views(action.inputs), ...this.gatherScratches(action) }, outputs: views(action.outputs) };
    }
    return f;
  }

  /** Host scratch for `buffer`'s data (or `bytes` of it: a view access), typed as its element. */
  private scratch(buffer: string, bytes?: number): ArrayBufferView {
    const info = this.init.buffers[buffer];
    const buf = new ArrayBuffer(align4(bytes ?? info?.bytes ?? 0));
    return info?.element === 'f32' ? new Float32Array(buf) : info?.element === 'u32' ? new Uint32Array(buf) : info?.element === 'i32' ? new Int32Array(buf) : new Uint8Array(buf);
  }

  /** Per input gathered from parts (not views of one base): a host scratch of their total size, typed as the first part's buffer. */
  private gatherScratches(a: Fire): Record<string, ArrayBufferView> {
    const out: Record<string, ArrayBufferView> = {};
    for (const [port, parts] of Object.entries(a.parts ?? {})) {
      if (a.inputs[port]) continue;
      out[port] = this.scratch(parts[0].buffer, parts.reduce((n, x) => n + (x.bytes ?? this.init.buffers[x.buffer]?.bytes ?? 0), 0));
    }
    return out;
  }

  // --- control

  abort(reason: string): void {
    this.aborts.abort(reason);
  }

  private fail(f: FailureReport): void {
    if (this.aborted) return;
    this.flush();
    post({ type: 'failed', failure: f });
    this.abort(f.message);
  }

  private guard<T>(p: Promise<T>): Promise<T> {
    return this.aborts.guard(p);
  }

  /** Notes a WebGPU promise until it settles (see `pending`). */
  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const settled = () => this.pending.delete(p);
    p.then(settled, settled);
    return p;
  }

  /** A WebGPU promise the run waits for: tracked, and cut short by an abort. */
  private gpu<T>(p: Promise<T>): Promise<T> {
    return this.guard(this.track(p));
  }

  private get aborted(): string | null {
    return this.aborts.reason;
  }

  private barrier(): Promise<void> {
    return this.guard(arriveAndWait(this.sync));
  }

  private trace(e: TraceEvent): void {
    this.events.push(e);
  }

  /** The cycle the last batch reported. */
  private posted = -1;

  flush(): void {
    // A PE with nothing to trace still reports its progress (self-timed: the host's is the least of its PEs').
    const cycle = this.reachedCycle();
    if (!this.events.length && cycle === this.posted) return;
    this.posted = cycle;
    post({ type: 'trace', events: this.events, cycle });
    this.events = [];
  }

  async run(): Promise<void> {
    this.timer = setInterval(() => this.flush(), Math.max(1, this.init.traceInterval / 1000));
    try {
      await (this.init.selfTimed ? this.streams() : this.loop());
      this.flush();
      post({ type: 'done', heapUsed: heapUsed() });
    } catch (e) {
      if (!(e instanceof AbortError)) this.fail({ host: this.init.host, pe: this.pe, message: `${this.pe}: ${e instanceof Error ? e.message : String(e)}` });
      this.flush();
    } finally {
      clearInterval(this.timer);
    }
  }

  private async loop(): Promise<void> {
    const phases = this.init.program.phases;
    const { iterations, cycles } = this.init;
    const fault = this.fault;
    for (let k = 0; k < cycles; k++) {
      if (this.aborted) throw new AbortError(this.aborted);
      for (let p = 0; p < phases.length; p++) {
        const phase = phases[p];
        const fires: Fire[] = [];
        const lanes: Promise<void>[] = [];
        for (const a of phase.actions) {
          if (a.op === 'barrier') continue;
          const it = k - a.startCycle;
          if (it < 0 || it >= iterations) continue;
          if (a.op === 'fire') fires.push(a);
          else if (this.staged.size && this.staged.has(a)) lanes.push(this.stagedHalf(a, k, it));
          else if (this.drives(a)) lanes.push(this.transfer(a, k, it));
        }
        // Fires of one PE one after another in schedule order; its transfers beside them.
        const chain = (async () => {
          for (const f of fires) await this.fire(f, k, k - f.startCycle);
        })();
        await this.guard(Promise.all([chain, ...lanes]));
        // Every phase ends with the host's PE threads and lanes meeting (the main thread adds the
        // cluster-wide step where the phase has a barrier). Inside a scan's firing (no barrier)
        // this is all: another host's data comes with its message, so its PEs wait for their own
        // inputs only, and this host's PE threads see each other's writes of the phase before.
        const t0 = nowUs();
        await this.barrier();
        if (phase.barrier) this.trace({ host: this.init.host, pe: this.pe, thread: 'main', kind: 'barrier', name: barrierSlice(phase.name), iteration: k, cycle: k, start: t0, end: nowUs() });
      }
      this.cycle = k + 1;
      this.injectFault(k, fault);
    }
  }

  private injectFault(k: number, fault: PeThread['fault']): void {
    if (k + 1 !== fault?.cycle) return;
    if (fault.kind === 'lose-device') this.device?.destroy();
    else process.kill(process.pid, 'SIGKILL');
  }

  /** Self-timed: the cycle each stream of this PE has got past (the PE's progress is the least). */
  private reached: number[] | undefined;

  private reachedCycle(): number {
    if (!this.reached) return this.cycle;
    let least = this.init.cycles;
    for (const c of this.reached) least = Math.min(least, c);
    return least;
  }

  /**
   * Self-timed execution (core run/contract.ts, counters.ts): no barrier. The PE's firings are
   * one stream in program order; each transfer it drives is a stream of its own (PREESM's one
   * loop per actor and per communication), so a copy runs ahead of the firings, and they of it,
   * until a counter stops it. Every wait is cut short by the run's abort.
   */
  private async streams(): Promise<void> {
    const { plan, counters: memory } = this.init.selfTimed!;
    const planned = (p: number, j: number): Access => {
      const access = plan[p]?.[j]?.access;
      if (!access) throw new Error(`${this.pe}: the self-timed plan has no access for action ${j} of phase ${p}`);
      return access;
    };
    const reached: number[] = (this.reached = []);
    const batched = this.batchable();
    if (batched) {
      reached.push(0);
      const counters = new Counters(memory, this.init.iterations, this.aborts);
      return this.guard(this.batchStream(batched.map(([p, j, a]) => ({ a, access: planned(p, j) })), counters));
    }
    const fires: { a: Fire; access: Access }[] = [];
    const transfers: { t: Transfer; access: Access }[] = [];
    this.init.program.phases.forEach((phase, p) =>
      phase.actions.forEach((a, j) => {
        if (a.op === 'fire') fires.push({ a, access: planned(p, j) });
        else if (a.op === 'transfer' && (this.staged.has(a) || this.drives(a))) transfers.push({ t: a, access: planned(p, j) });
      }),
    );
    const counters = new Counters(memory, this.init.iterations, this.aborts);
    const streams = transfers.map(({ t, access }) => this.transferStream(t, access, counters, reached.push(0) - 1));
    if (fires.length) streams.push(this.fireStream(fires, counters, reached.push(0) - 1));
    await this.guard(Promise.all(streams));
  }

  /**
   * This GPU PE's actions in program order (phase by phase: an order every cycle's dependencies
   * respect), when each cycle of them can be one queue submission (gpu-batch.ts): real kernels
   * only (no CPU twin, no padded device time), copies between host and this GPU only, links
   * not emulated. Else undefined: one stream per action, as on a CPU PE.
   */
  private batchable(): [number, number, Fire | Transfer][] | undefined {
    if (this.init.program.kind !== 'gpu' || this.init.emulateLinks || this.staged.size) return undefined;
    const emulated = this.init.emulateDevices ?? {};
    const list: [number, number, Fire | Transfer][] = [];
    for (const [p, phase] of this.init.program.phases.entries()) {
      for (const [j, a] of phase.actions.entries()) {
        if (a.op === 'fire') {
          if (!this.fires.get(a)?.gpu || emulated[a.node]) return undefined;
          list.push([p, j, a]);
        } else if (a.op === 'transfer' && this.drives(a)) {
          const src = this.slots(a.from.buffer).kind;
          if (src === this.slots(a.to.buffer).kind) return undefined;
          list.push([p, j, a]);
        }
      }
    }
    return list;
  }

  /**
   * Self-timed on a GPU PE: each cycle's uploads, firings and read-backs go to the queue as one
   * batch with one wait (gpu-batch.ts), instead of a wait per action. A wait on another thread
   * first completes the batch, so no thread ever waits on work this one holds back. Each
   * action's trace slice runs from its encoding to the batch's completion: the queue does not
   * say when each part ended.
   */
  private async batchStream(actions: { a: Fire | Transfer; access: Access }[], counters: Counters): Promise<void> {
    const { iterations, cycles, host } = this.init;
    const fault = this.fault;
    const batch = new GpuBatch(this.device!, counters, iterations);
    const slices: TraceEvent[] = [];
    const reports: { a: Fire; report: () => Promise<KernelReport | void>; it: number }[] = [];
    let stamped = false;
    const complete = async () => {
      let end = 0;
      await batch.complete(
        (p) => this.gpu(p),
        () => (end = nowUs()),
      );
      if (stamped) this.stamp.end();
      stamped = false;
      for (const e of slices) this.trace({ ...e, end });
      slices.length = 0;
      for (const r of reports) this.checkReport(r.a, r.it, await this.gpu(r.report()));
      reports.length = 0;
    };
    let yielded = performance.now();
    for (let k = 0; k < cycles; k++) {
      for (const { a, access } of actions) {
        const i = k - a.startCycle;
        if (i < 0 || i >= iterations) continue;
        if (batch.blocked(access, i) >= 0) {
          if (batch.open) await complete();
          if (counters.blocked(access, i) >= 0) await this.waitFor(a, access, counters, i, k, a.op === 'fire' ? 'main' : this.laneOf(a));
        }
        const start = nowUs();
        if (a.op === 'fire') {
          const f = this.fires.get(a)!;
          const { firing, after } = this.gpuFiring(a, this.pick(a.inputs, k), this.pick(a.outputs, k), this.gathers(a, k), i, batch.commands);
          if (!stamped) this.stamp.begin(this.fireIndex.get(a)!, i);
          stamped = true;
          f.gpu!.encode(batch.commands, firing);
          after(batch.commands);
          const report = f.gpu!.report;
          if (report) reports.push({ a, it: i, report: () => report.call(f.gpu, firing) });
          slices.push({ host, pe: this.pe, thread: 'main', kind: 'fire', name: a.node, node: a.node, iteration: i, cycle: k, start, end: start });
        } else {
          const src = this.slots(a.from.buffer);
          const dst = this.slots(a.to.buffer);
          const sSlot = slotOf(k, a.from.lag, depthOf(src));
          const dSlot = slotOf(k, a.to.lag, depthOf(dst));
          const size = align4(a.bytes);
          // Only the transfer's range moves (a split's part), into the destination's place (a view).
          if (src.kind === 'cpu') batch.write((dst as GpuSlots).buffers[dSlot], this.scratchFor(a.to.buffer, hostBytes(src, sSlot, a.from)), size, gpuRange(dst as GpuSlots, a.to).offset);
          else {
            const into = hostBytes(dst as HostSlots, dSlot, a.to);
            batch.read(src.buffers[sSlot], this.stagingFor(`read ${a.to.buffer}`, align4(into.byteLength), GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST), align4(into.byteLength), into, gpuRange(src, a.from).offset);
          }
          slices.push({ host, pe: this.pe, thread: this.laneOf(a), kind: 'transfer', name: a.to.buffer, buffer: a.to.buffer, from: a.from.buffer, iteration: i, cycle: k, start, end: start, bytes: a.bytes });
        }
        batch.signal(access, i);
      }
      if (batch.open) await complete();
      this.reached![0] = k + 1;
      this.injectFault(k, fault);
      yielded = await this.yieldSometimes(yielded);
    }
  }

  /** The trace lane of a transfer on this PE: receiving from, or sending to, the other end. */
  private laneOf(t: Transfer): string {
    return t.fromPe === this.pe ? sendLane(t.toPe) : recvLane(t.fromPe);
  }

  private async fireStream(fires: { a: Fire; access: Access }[], counters: Counters, s: number): Promise<void> {
    const { iterations, cycles } = this.init;
    const fault = this.fault;
    let yielded = performance.now();
    for (let k = 0; k < cycles; k++) {
      for (const { a, access } of fires) {
        const i = k - a.startCycle;
        if (i < 0 || i >= iterations) continue;
        if (counters.blocked(access, i) >= 0) await this.waitFor(a, access, counters, i, k, 'main');
        await this.fire(a, k, i);
        counters.signal(access, i);
      }
      this.reached![s] = k + 1;
      this.injectFault(k, fault);
      yielded = await this.yieldSometimes(yielded);
    }
  }

  private async transferStream(t: Transfer, access: Access, counters: Counters, s: number): Promise<void> {
    const staged = this.staged.has(t);
    const sending = t.fromPe === this.pe;
    const lane = sending ? sendLane(t.toPe) : recvLane(t.fromPe);
    let yielded = performance.now();
    for (let i = 0; i < this.init.iterations; i++) {
      const k = t.startCycle + i;
      if (staged && !sending) {
        // The source's half did the waits; the bytes' arrival is the staging flag (stagedHalf).
        await this.stagedHalf(t, k, i);
        counters.signal(access, i);
      } else {
        if (counters.blocked(access, i) >= 0) await this.waitFor(t, access, counters, i, k, lane);
        if (staged) {
          // One staging buffer per transfer: free once the destination has taken iteration i - 1.
          if (Atomics.load(counters.values, access.signal) < i) await counters.atLeast(access.signal, i);
          await this.stagedHalf(t, k, i);
        } else {
          await this.transfer(t, k, i);
          counters.signal(access, i);
        }
      }
      this.reached![s] = k + 1;
      yielded = await this.yieldSometimes(yielded);
    }
    this.reached![s] = this.init.cycles;
  }

  /**
   * A stream whose counters are all there never waits, and a CPU kernel never yields: let the
   * event loop in (abort, trace flushes) every few milliseconds. Throws once the run aborted.
   */
  private async yieldSometimes(since: number): Promise<number> {
    if (this.aborted) throw new AbortError(this.aborted);
    const now = performance.now();
    if (now - since < YIELD_MS) return since;
    await new Promise<void>((r) => setImmediate(r));
    if (this.aborted) throw new AbortError(this.aborted);
    return performance.now();
  }

  /** Waits until `access` may run iteration i, traced as a wait on the buffer it waits for. */
  private async waitFor(a: Fire | Transfer, access: Access, counters: Counters, i: number, k: number, thread: string): Promise<void> {
    const t0 = nowUs();
    // Another thread may have signalled since the caller looked.
    const j = counters.blocked(access, i);
    if (j < 0) return;
    await counters.until(access, i, j);
    this.trace({ host: this.init.host, pe: this.pe, thread, kind: 'wait', name: waitSlice(this.waitedBuffer(a, access.waits[j].counter)), iteration: i, cycle: k, start: t0, end: nowUs() });
  }

  /** The buffer a wait on `counter` is about: an input its writer fills, else (a free slot) the action's output. */
  private waitedBuffer(a: Fire | Transfer, counter: number): string {
    const plan = this.init.selfTimed!.plan;
    const phases = this.init.program.phases;
    const inputs = a.op === 'fire' ? [...Object.values(a.inputs), ...Object.values(a.parts ?? {}).flat()].map((x) => x.buffer) : [a.from.buffer];
    for (let p = 0; p < phases.length; p++) {
      for (let j = 0; j < phases[p].actions.length; j++) {
        const e = plan[p]?.[j];
        if ((e?.access ?? e?.receive)?.signal !== counter) continue;
        const w = phases[p].actions[j];
        const wrote = w.op === 'fire' ? Object.values(w.outputs).map((x) => x.buffer) : w.op === 'transfer' ? [w.to.buffer] : [];
        const hit = inputs.find((b) => wrote.includes(b));
        if (hit) return hit;
      }
    }
    return a.op === 'fire' ? (Object.values(a.outputs)[0]?.buffer ?? a.node) : a.to.buffer;
  }

  /**
   * Fault injection for tests, PIPELOOM_FAULT=<kind>:<pe>:<cycle>, after that cycle on that PE:
   * `lose-device` destroys its device (the nearest thing to a GPU falling off the bus), `kill`
   * kills the agent's process (as a crash in native code does).
   */
  private get fault(): { kind: 'lose-device' | 'kill'; cycle: number } | undefined {
    const m = /^(lose-device|kill):([^:]+):(\d+)$/.exec(process.env.PIPELOOM_FAULT ?? '');
    return m && m[2] === this.pe ? { kind: m[1] as 'lose-device' | 'kill', cycle: Number(m[3]) } : undefined;
  }

  private kindOf(pe: string): 'cpu' | 'gpu' {
    return this.init.pes[pe]?.kind ?? 'cpu';
  }

  /** Host-to-host transfers belong to the main thread's lanes; same host: the GPU side drives (one copy). */
  private drives(t: Transfer): boolean {
    const pes = this.init.pes;
    if (pes[t.fromPe]?.host !== pes[t.toPe]?.host) return false;
    const driver = this.kindOf(t.toPe) === 'gpu' && this.kindOf(t.fromPe) !== 'gpu' ? t.toPe : t.fromPe;
    return driver === this.pe;
  }

  private slots(buffer: string): Slots {
    const own = this.memory.slots.get(buffer);
    if (own) return own;
    const h = this.host.get(buffer);
    if (h) return h;
    throw new Error(`buffer ${buffer} is not reachable from ${this.pe} (another GPU's buffer on the same host?)`);
  }

  /** The slots, slot and range of each access in cycle k, by port. */
  private pick(ports: Record<string, { buffer: string; lag: number } & Range>, k: number): PortSlots {
    const out: PortSlots = {};
    for (const [port, acc] of Object.entries(ports)) {
      const slots = this.memory.get(acc.buffer);
      out[port] = { slots, slot: slotOf(k, acc.lag, depthOf(slots)), range: acc };
    }
    return out;
  }

  /** The parts of a firing's gathered inputs in cycle k (each part with its own lag). */
  private gathers(a: Fire, k: number): GatherSlots {
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

  private async fire(a: Fire, k: number, it: number): Promise<void> {
    const f = this.fires.get(a)!;
    const ins = this.pick(a.inputs, k);
    const outs = this.pick(a.outputs, k);
    const gathers = this.gathers(a, k);
    const t0 = nowUs();
    let report: KernelReport | void;
    this.stamp.begin(this.fireIndex.get(a)!, it);
    try {
      report = await this.runKernel(a, f, ins, outs, gathers, it);
    } catch (e) {
      // A kernel that throws (a CPU twin's KernelError: a refused range, a non-finite result) fails the run naming its node.
      if (e instanceof AbortError) throw e;
      this.fail({ host: this.init.host, pe: this.pe, node: a.node, iteration: it, message: `${this.pe}: ${e instanceof Error ? e.message : String(e)}` });
      throw new AbortError('kernel failed');
    } finally {
      this.stamp.end();
    }
    // Emulated device: the kernel ran (and is checked below); the rest of its time is waited out.
    // The map names GPU nodes (--emulate-devices) and generic.work stand-ins on any PE.
    const emulated = this.init.emulateDevices?.[a.node];
    if (emulated) await this.guard(holdUntil(t0 + emulated * 1e6, nowUs));
    // A slowed PE (a labelled emulation): the firing lasts `slow` times as long, the rest on a timer.
    const slow = this.init.slow;
    if (slow && slow > 1) await this.guard(holdUntil(t0 + (nowUs() - t0) * slow, nowUs));
    this.trace({ host: this.init.host, pe: this.pe, thread: 'main', kind: 'fire', name: a.node, node: a.node, iteration: it, cycle: k, start: t0, end: nowUs() });
    this.checkReport(a, it, report);
  }

  /** A firing's report: a failed check fails the run naming node and iteration; values go to the coordinator. */
  private checkReport(a: Fire, it: number, report: KernelReport | void): void {
    if (!report) return;
    if (!report.ok) {
      this.fail({ host: this.init.host, pe: this.pe, node: a.node, iteration: it, message: report.message ?? `node ${a.node} on ${this.pe}, iteration ${it}: check failed` });
      throw new AbortError('check failed');
    }
    if (report.values) post({ type: 'report', node: a.node, iteration: it, values: report.values });
  }

  /** One firing's kernel: the CPU kernel in place, or the GPU kernel (or a GPU PE's CPU twin) until its work is done. */
  private async runKernel(a: Fire, f: PreparedFire, ins: PortSlots, outs: PortSlots, gathers: GatherSlots, it: number): Promise<KernelReport | void> {
    let report: KernelReport | void = undefined;
    if (this.init.program.kind === 'cpu') {
      // Views are subarrays of the storage: a split's part, a join's parts laid out together.
      const view = (x: PortSlots[string]) => hostView(x.slots as HostSlots, x.slot, x.range);
      const inputs = Object.fromEntries(Object.entries(ins).map(([p, x]) => [p, view(x)]));
      for (const [port, parts] of Object.entries(gathers)) inputs[port] = this.gatherHost(a, port, parts);
      report = f.kernel.cpu({
        params: f.params,
        iteration: it,
        inputs,
        outputs: Object.fromEntries(Object.entries(outs).map(([p, x]) => [p, view(x)])),
        state: f.state,
      });
    } else {
      const device = this.device!;
      const encoder = device.createCommandEncoder();
      const { firing, after } = this.gpuFiring(a, ins, outs, gathers, it, encoder);
      if (f.gpu) {
        f.gpu.encode(encoder, firing);
        after(encoder);
        device.queue.submit([encoder.finish()]);
        await this.gpu(device.queue.onSubmittedWorkDone());
        if (f.gpu.report) report = await this.gpu(f.gpu.report(firing));
      } else {
        // Kernels without WGSL: read inputs back, run the CPU twin, upload outputs.
        device.queue.submit([encoder.finish()]);
        const twin = f.twin!;
        for (const [port, gbuf] of Object.entries(firing.inputs)) await this.readback(gbuf, twin.inputs[port]);
        report = f.kernel.cpu({ params: f.params, iteration: it, inputs: twin.inputs, outputs: twin.outputs, state: f.state });
        for (const [port, gbuf] of Object.entries(firing.outputs)) {
          const v = twin.outputs[port];
          device.queue.writeBuffer(gbuf, 0, v.buffer as ArrayBuffer, v.byteOffset, align4(v.byteLength));
        }
        const copies = device.createCommandEncoder();
        after(copies);
        device.queue.submit([copies.finish()]);
        await this.gpu(device.queue.onSubmittedWorkDone());
      }
    }
    return report;
  }

  private gatherBuffers = new Map<string, ArrayBufferView>();

  /** A CPU firing's input fed in parts that are not laid out together: the parts copied, in order, into one scratch (a gather). */
  private gatherHost(a: Fire, port: string, parts: GatherSlots[string]): ArrayBufferView {
    const key = `${a.node}.${port}`;
    let into = this.gatherBuffers.get(key);
    if (!into) this.gatherBuffers.set(key, (into = this.gatherScratches(a)[port]));
    const bytes = new Uint8Array(into.buffer, into.byteOffset, into.byteLength);
    let at = 0;
    for (const x of parts) {
      const part = hostBytes(x.slots as HostSlots, x.slot, x.range);
      bytes.set(part, at);
      at += part.byteLength;
    }
    return into;
  }

  private gpuScratch = new Map<string, GPUBuffer>();

  /** A device buffer for `key`, at least `bytes` long (made once, grown when needed). */
  private deviceScratch(key: string, bytes: number): GPUBuffer {
    let b = this.gpuScratch.get(key);
    if (!b || b.size < align4(bytes)) {
      b?.destroy();
      b = this.device!.createBuffer({ size: Math.max(16, align4(bytes)), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST, label: `${this.pe} scratch ${key}` });
      this.gpuScratch.set(key, b);
    }
    return b;
  }

  /**
   * A GPU firing's buffers, encoding into `encoder` the copies its views need; `after` encodes
   * the copies back once the kernel has run. An access at the start of its storage binds the
   * storage itself. A view elsewhere (a split's part, a view of a join's base at an offset) is
   * copied into a scratch buffer on the device first, and an output view back after the
   * kernel: the kernels bind whole GPUBuffers (GpuFiring), so a storage-buffer binding with an
   * offset (possible where it is a multiple of device.limits.minStorageBufferOffsetAlignment,
   * 256 on most devices) is not offered to them; a device copy of the range is the fallback
   * WebGPU needs anyway for the unaligned ones. Gathered inputs are copied part by part.
   */
  private gpuFiring(a: Fire, ins: PortSlots, outs: PortSlots, gathers: GatherSlots, it: number, encoder: GPUCommandEncoder): { firing: { iteration: number; inputs: Record<string, GPUBuffer>; outputs: Record<string, GPUBuffer> }; after: (e: GPUCommandEncoder) => void } {
    const inputs: Record<string, GPUBuffer> = {};
    const outputs: Record<string, GPUBuffer> = {};
    const back: [GPUBuffer, GPUBuffer, number, number][] = [];
    for (const [port, x] of Object.entries(ins)) {
      const s = x.slots as GpuSlots;
      const r = gpuRange(s, x.range);
      if (r.offset === 0) inputs[port] = s.buffers[x.slot];
      else {
        const scratch = this.deviceScratch(`${a.node}.${port}`, r.bytes);
        encoder.copyBufferToBuffer(s.buffers[x.slot], r.offset, scratch, 0, align4(r.bytes));
        inputs[port] = scratch;
      }
    }
    for (const [port, parts] of Object.entries(gathers)) {
      const ranges = parts.map((x) => ({ s: x.slots as GpuSlots, slot: x.slot, r: gpuRange(x.slots as GpuSlots, x.range) }));
      const scratch = this.deviceScratch(`${a.node}.${port}`, ranges.reduce((n, x) => n + x.r.bytes, 0));
      let at = 0;
      for (const { s, slot, r } of ranges) {
        encoder.copyBufferToBuffer(s.buffers[slot], r.offset, scratch, at, align4(r.bytes));
        at += r.bytes;
      }
      inputs[port] = scratch;
    }
    for (const [port, x] of Object.entries(outs)) {
      const s = x.slots as GpuSlots;
      const r = gpuRange(s, x.range);
      if (r.offset === 0) outputs[port] = s.buffers[x.slot];
      else {
        const scratch = this.deviceScratch(`${a.node}.${port} out`, r.bytes);
        outputs[port] = scratch;
        back.push([scratch, s.buffers[x.slot], r.offset, align4(r.bytes)]);
      }
    }
    return { firing: { iteration: it, inputs, outputs }, after: (e) => back.forEach(([from, to, offset, bytes]) => e.copyBufferToBuffer(from, 0, to, offset, bytes)) };
  }

  private stagingFor(key: string, size: number, usage: number): GPUBuffer {
    let s = this.staging.get(key);
    if (!s || s.size < size) {
      s?.destroy();
      s = this.device!.createBuffer({ size, usage, label: `staging ${key}` });
      this.staging.set(key, s);
    }
    return s;
  }

  /** GPU buffer -> host bytes through a mappable staging buffer (one per key: two read-backs at once must not share one). */
  private async readback(src: GPUBuffer, dst: ArrayBufferView, key = `read ${src.label}`, offset = 0): Promise<void> {
    const device = this.device!;
    const size = align4(dst.byteLength);
    const staging = this.stagingFor(key, size, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(src, offset, staging, 0, size);
    device.queue.submit([encoder.finish()]);
    await this.gpu(staging.mapAsync(GPUMapMode.READ, 0, size));
    new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(new Uint8Array(staging.getMappedRange(0, size), 0, dst.byteLength));
    staging.unmap();
  }

  private scratchBytes = new Map<string, Uint8Array>();

  /**
   * Host bytes -> GPU buffer. writeBuffer does not take shared memory, so the bytes go through
   * a private scratch copy first (measured on Dawn's OpenGL backend at 16 MiB: ~3 ms, against
   * ~14 ms for a mapped staging buffer).
   */
  private async upload(src: Uint8Array, dst: GPUBuffer, offset = 0): Promise<void> {
    this.device!.queue.writeBuffer(dst, offset, this.scratchFor(dst.label, src).buffer, 0, align4(src.byteLength));
    await this.gpu(this.device!.queue.onSubmittedWorkDone());
  }

  /** `src` copied into this key's private scratch bytes (grown to 4-byte multiples as needed). */
  private scratchFor(key: string, src: Uint8Array): Uint8Array {
    const size = align4(src.byteLength);
    let scratch = this.scratchBytes.get(key);
    if (!scratch || scratch.byteLength < size) this.scratchBytes.set(key, (scratch = new Uint8Array(size)));
    scratch.set(src);
    return scratch;
  }

  private async transfer(t: Transfer, k: number, it: number): Promise<void> {
    const other = t.fromPe === this.pe ? t.toPe : t.fromPe;
    const t0 = nowUs();
    const src = this.slots(t.from.buffer);
    const dst = this.slots(t.to.buffer);
    const sSlot = slotOf(k, t.from.lag, depthOf(src));
    const dSlot = slotOf(k, t.to.lag, depthOf(dst));
    // Only the transfer's range moves (a split's part), into the destination's place (a view).
    if (src.kind === 'cpu' && dst.kind === 'gpu') await this.upload(hostBytes(src, sSlot, t.from), dst.buffers[dSlot], gpuRange(dst, t.to).offset);
    // Staging per destination: a phase reads parts of one GPU buffer back into several host
    // buffers at once (a scan's blocks), and one mappable buffer cannot be mapped twice.
    else if (src.kind === 'gpu' && dst.kind === 'cpu') await this.readback(src.buffers[sSlot], hostBytes(dst, dSlot, t.to), `read ${t.to.buffer}`, gpuRange(src, t.from).offset);
    else if (src.kind === 'cpu' && dst.kind === 'cpu') {
      const into = hostBytes(dst, dSlot, t.to);
      into.set(hostBytes(src, sSlot, t.from).subarray(0, into.byteLength));
    } else {
      // Two buffers on this GPU (the compiler does not produce these): a device copy.
      const enc = this.device!.createCommandEncoder();
      enc.copyBufferToBuffer((src as GpuSlots).buffers[sSlot], gpuRange(src as GpuSlots, t.from).offset, (dst as GpuSlots).buffers[dSlot], gpuRange(dst as GpuSlots, t.to).offset, align4(t.bytes));
      this.device!.queue.submit([enc.finish()]);
      await this.gpu(this.device!.queue.onSubmittedWorkDone());
    }
    if (this.init.emulateLinks) await this.guard(holdForLink(t, t0, nowUs));
    this.trace({ host: this.init.host, pe: this.pe, thread: other === t.fromPe ? recvLane(other) : sendLane(other), kind: 'transfer', name: t.to.buffer, buffer: t.to.buffer, from: t.from.buffer, iteration: it, cycle: k, start: t0, end: nowUs(), bytes: t.bytes });
  }

  private stageHalf(t: Transfer): void {
    const memory = this.init.staging[transferKey(t.from.buffer, t.to.buffer)];
    if (!memory) throw new Error(`no staging memory for ${t.from.buffer} -> ${t.to.buffer} (${t.fromPe} -> ${t.toPe})`);
    this.staged.set(t, stagingView(memory, t.bytes));
  }

  /**
   * This PE's half of a GPU-to-GPU transfer (staging.ts): the source reads its slot back into
   * host memory and publishes the iteration; the destination waits for it and uploads it into
   * its slot. Same slots as any transfer of its phase. Emulated, the source holds the bytes for
   * the link's time before publishing them, so the whole copy lasts at least that.
   */
  private async stagedHalf(t: Transfer, k: number, it: number): Promise<void> {
    const s = this.staged.get(t)!;
    const via = `(${t.link.kind}, staged through host)`;
    const common = { host: this.init.host, pe: this.pe, buffer: t.to.buffer, from: t.from.buffer, iteration: it, cycle: k, bytes: t.bytes };
    const t0 = nowUs();
    if (t.fromPe === this.pe) {
      const src = this.memory.get(t.from.buffer) as GpuSlots;
      await this.readback(src.buffers[slotOf(k, t.from.lag, depthOf(src))], s.bytes, `nvlink ${t.to.buffer}`, gpuRange(src, t.from).offset);
      if (this.init.emulateLinks) await this.guard(holdForLink(t, t0, nowUs));
      publish(s, it);
      this.trace({ ...common, thread: sendLane(t.toPe), kind: 'transfer', name: `${t.to.buffer} ${t.fromPe}->host ${via}`, start: t0, end: nowUs() });
    } else {
      const dst = this.memory.get(t.to.buffer) as GpuSlots;
      await this.guard(published(s, it));
      const t1 = nowUs();
      await this.upload(s.bytes, dst.buffers[slotOf(k, t.to.lag, depthOf(dst))], gpuRange(dst, t.to).offset);
      this.trace({ ...common, thread: recvLane(t.fromPe), kind: 'wait', name: waitSlice(t.to.buffer, via), start: t0, end: t1 });
      this.trace({ ...common, thread: recvLane(t.fromPe), kind: 'transfer', name: `${t.to.buffer} host->${t.toPe} ${via}`, start: t1, end: nowUs() });
    }
  }

  /** Destroys the thread's buffers and device, then waits (up to `settleMs`) for its WebGPU promises to settle. */
  async free(settleMs = 1500): Promise<void> {
    if (this.freed) return;
    this.freed = true;
    this.abort('run freed');
    clearInterval(this.timer);
    for (const f of this.fires.values()) f.gpu?.destroy();
    for (const s of this.staging.values()) s.destroy();
    for (const s of this.gpuScratch.values()) s.destroy();
    this.memory?.free();
    this.device?.destroy();
    // A destroyed device settles what it still owed (dawn.node's polling delivers it). A
    // device that `prepare` was still opening is destroyed as it arrives, adding its own.
    const deadline = performance.now() + settleMs;
    for (let left = settleMs; this.pending.size && left > 0; left = deadline - performance.now()) {
      await Promise.race([Promise.allSettled([...this.pending]), sleep(left)]);
    }
  }
}

let thread: PeThread | undefined;
parentPort!.on('message', (m: ToPe) => {
  switch (m.type) {
    case 'init':
      thread = new PeThread(m);
      thread.prepare().catch((e) => post({ type: 'error', message: e instanceof Error ? e.message : String(e) }));
      break;
    case 'start':
      void thread?.run();
      break;
    case 'abort':
      thread?.abort(m.reason);
      break;
    case 'free':
      void (thread?.free() ?? Promise.resolve()).finally(() => {
        // The events this thread still holds go before `freed`: the run's trace keeps them.
        thread?.flush();
        post({ type: 'freed' });
      });
      break;
  }
});
