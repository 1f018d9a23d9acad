import { getKernel, withDefaults, type GpuExecutor, type KernelSpec, type Params } from '@pipeloom/kernels';
import type { Action, PeProgram, TraceEvent } from '@pipeloom/core';
import { transferKey, type FailureReport, type FromAgent, type ThreadStats, type ToAgent } from '@pipeloom/core/coordinator/protocol';
import { openDevice, type Devices } from '../devices/discover.js';
import type { PeerLink } from '../peer/link.js';
import { ClusterBarrier } from './barrier.js';
import { align4, depthOf, PeMemory, slotOf, type GpuSlots, type HostSlots, type Slots } from './memory.js';
import { TraceRecorder } from './trace.js';

// One run on one agent: the PEs of this host, one thread of control each (an async loop),
// transfers on lanes beside them, a cluster barrier after each phase that asks for one.

type Deploy = Extract<ToAgent, { type: 'deploy' }>;
type Fire = Extract<Action, { op: 'fire' }>;
type Transfer = Extract<Action, { op: 'transfer' }>;

interface PreparedFire {
  action: Fire;
  kernel: KernelSpec;
  params: Params;
  state: Record<string, unknown>;
  gpu?: GpuExecutor;
  /** GPU PE whose kernel has no WGSL yet: host copies for its CPU twin. */
  twin?: { inputs: Record<string, ArrayBufferView>; outputs: Record<string, ArrayBufferView> };
}

interface PeState {
  program: PeProgram;
  memory: PeMemory;
  device?: GPUDevice;
  fires: Map<Fire, PreparedFire>;
  /** Readback buffers for GPU -> host copies, per source buffer. */
  staging: Map<string, GPUBuffer>;
}

export class AbortError extends Error {}

const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

export class Run {
  readonly pes = new Map<string, PeState>();
  readonly trace: TraceRecorder;
  readonly barrier: ClusterBarrier;
  private aborted: string | null = null;
  private readonly abortWaiters = new Set<(e: Error) => void>();
  private reports = new Map<string, { node: string; iteration: number; values: Record<string, number | number[] | string> }>();
  private freed = false;
  /** Adapter each GPU PE got, and whether its kernels run on the device or via CPU twins. */
  readonly adapters: Record<string, string> = {};
  cycle = 0;

  private constructor(
    readonly deploy: Deploy,
    readonly devices: Devices,
    readonly peers: Map<string, PeerLink>,
    readonly send: (m: FromAgent) => void,
  ) {
    this.trace = new TraceRecorder((events, dropped) => send({ type: 'trace', runId: deploy.runId, events, cycle: this.cycle, dropped }), deploy.traceInterval ?? 50_000);
    const hosts = deploy.hosts.map((h) => h.id);
    this.barrier = new ClusterBarrier(devices.host, hosts, deploy.programs.length, peers);
  }

  get host(): string {
    return this.devices.host;
  }

  /** Allocates every buffer, opens devices, prepares every kernel. Throws with a message naming the PE or node. */
  static async prepare(deploy: Deploy, devices: Devices, peers: Map<string, PeerLink>, send: (m: FromAgent) => void): Promise<Run> {
    const run = new Run(deploy, devices, peers, send);
    try {
      for (const program of deploy.programs) {
        if (program.host !== devices.host) throw new Error(`program for ${program.pe} belongs to host ${program.host}, this agent is ${devices.host}`);
        let device: GPUDevice | undefined;
        if (program.kind === 'gpu') {
          const handle = devices.gpus.get(program.pe);
          if (!handle) throw new Error(`agent ${devices.host} has no PE ${program.pe}`);
          device = await openDevice(handle);
          run.adapters[program.pe] = `${handle.name} (${handle.backend})`;
          void device.lost.then((info) => {
            if (!run.freed) run.fail({ host: run.host, pe: program.pe, message: `WebGPU device lost on ${program.pe}: ${info.message || info.reason}` });
          });
        } else if (!devices.pes.some((p) => p.id === program.pe)) throw new Error(`agent ${devices.host} has no PE ${program.pe}`);
        const memory = new PeMemory(program, deploy.buffers, device);
        const pe: PeState = { program, memory, device, fires: new Map(), staging: new Map() };
        run.pes.set(program.pe, pe);
        for (const phase of program.phases) {
          for (const a of phase.actions) if (a.op === 'fire') pe.fires.set(a, await run.prepareFire(pe, a));
        }
      }
      return run;
    } catch (e) {
      run.free();
      throw e;
    }
  }

  private async prepareFire(pe: PeState, action: Fire): Promise<PreparedFire> {
    // Only registered kernels run: getKernel refuses any other id.
    const kernel = getKernel(action.kernel);
    const params = withDefaults(kernel, action.params);
    const f: PreparedFire = { action, kernel, params, state: {} };
    if (pe.program.kind === 'gpu') {
      if (kernel.gpu) {
        try {
          f.gpu = await kernel.gpu.prepare(pe.device!, params);
        } catch (e) {
          throw new Error(`node ${action.node} (${action.kernel}) on ${pe.program.pe}: ${e instanceof Error ? e.message : String(e)}`);
        }
      } else {
        const views = (ports: Record<string, { buffer: string }>) =>
          Object.fromEntries(Object.entries(ports).map(([port, acc]) => [port, this.hostView(acc.buffer)]));
        f.twin = { inputs: views(action.inputs), outputs: views(action.outputs) };
        this.adapters[pe.program.pe] += ` [${action.kernel}: no WGSL, CPU twin]`;
      }
    }
    return f;
  }

  private hostView(buffer: string): ArrayBufferView {
    const info = this.deploy.buffers[buffer];
    const bytes = align4(info?.bytes ?? 0);
    const buf = new ArrayBuffer(bytes);
    switch (info?.element) {
      case 'f32':
        return new Float32Array(buf);
      case 'u32':
        return new Uint32Array(buf);
      case 'i32':
        return new Int32Array(buf);
      default:
        return new Uint8Array(buf);
    }
  }

  abort(reason: string): void {
    if (this.aborted) return;
    this.aborted = reason;
    const e = new AbortError(reason);
    for (const reject of this.abortWaiters) reject(e);
    this.abortWaiters.clear();
  }

  /** Reports a failure once and stops this host's threads; the coordinator stops the others. */
  fail(f: FailureReport): void {
    if (this.aborted) return;
    this.trace.flush();
    this.send({ type: 'failed', runId: this.deploy.runId, failure: f });
    this.abort(f.message);
    for (const link of this.peers.values()) link.send({ type: 'abort', message: `host ${f.host} failed: ${f.message}` });
  }

  /**
   * `p`, or a rejection once the run aborts. (Not Promise.race with the abort promise: every
   * race would leave a reaction on that long-lived promise, a leak over a long run.)
   */
  private guard<T>(p: Promise<T>): Promise<T> {
    if (this.aborted) return Promise.reject(new AbortError(this.aborted));
    return new Promise<T>((resolve, reject) => {
      this.abortWaiters.add(reject);
      p.then(
        (v) => {
          this.abortWaiters.delete(reject);
          resolve(v);
        },
        (e) => {
          this.abortWaiters.delete(reject);
          reject(e);
        },
      );
    });
  }

  /** Runs every PE thread to the end; sends `done` or `failed`. */
  async execute(): Promise<void> {
    this.trace.start();
    const threads = [...this.pes.values()].map((pe) => this.thread(pe));
    try {
      await this.guard(Promise.all(threads));
      this.trace.flush();
      const threadStats: ThreadStats[] = this.trace.threadStats();
      this.send({
        type: 'done',
        runId: this.deploy.runId,
        cycles: this.deploy.cycles,
        threads: threadStats,
        barrierPerCycle: this.deploy.cycles ? this.barrier.syncMicros / this.deploy.cycles : 0,
        reports: [...this.reports.values()],
        memory: processMemory(),
      });
    } catch (e) {
      if (!(e instanceof AbortError)) this.fail({ host: this.host, message: e instanceof Error ? e.message : String(e) });
      await Promise.allSettled(threads);
    } finally {
      this.trace.stop();
    }
  }

  private async thread(pe: PeState): Promise<void> {
    const phases = pe.program.phases;
    const { iterations, cycles } = this.deploy;
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
          else if (this.drives(pe, a)) lanes.push(this.transfer(pe, a, k, it));
        }
        // Fires of one PE run one after another in schedule order; transfers beside them.
        const chain = (async () => {
          for (const f of fires) await this.fire(pe, f, k, k - f.startCycle);
        })();
        await this.guard(Promise.all([chain, ...lanes]));
        if (phase.barrier) {
          const t0 = nowUs();
          await this.guard(this.barrier.arrive(k * phases.length + p));
          this.trace.add({ host: this.host, pe: pe.program.pe, thread: 'main', kind: 'barrier', name: phase.name, iteration: k, cycle: k, start: t0, end: nowUs() });
        }
      }
      if (pe === this.pes.values().next().value) this.cycle = k + 1;
    }
  }

  private kindOf(pe: string): 'cpu' | 'gpu' {
    return this.deploy.pes[pe]?.kind ?? 'cpu';
  }

  private hostOf(pe: string): string {
    const h = this.deploy.pes[pe]?.host;
    if (!h) throw new Error(`PE ${pe} is not part of the run`);
    return h;
  }

  /** Same host: the GPU side drives (one copy); different hosts: both sides act (send / receive). */
  private drives(pe: PeState, t: Transfer): boolean {
    if (this.hostOf(t.fromPe) !== this.hostOf(t.toPe)) return true;
    const me = pe.program.pe;
    const driver = this.kindOf(t.toPe) === 'gpu' && this.kindOf(t.fromPe) !== 'gpu' ? t.toPe : t.fromPe;
    return driver === me;
  }

  private slots(buffer: string): Slots {
    for (const pe of this.pes.values()) {
      const s = pe.memory.slots.get(buffer);
      if (s) return s;
    }
    throw new Error(`buffer ${buffer} is not allocated on host ${this.host}`);
  }

  private async fire(pe: PeState, a: Fire, k: number, it: number): Promise<void> {
    const f = pe.fires.get(a)!;
    const pick = (ports: Record<string, { buffer: string; lag: number }>) => {
      const out: Record<string, { slots: Slots; slot: number }> = {};
      for (const [port, acc] of Object.entries(ports)) {
        const slots = pe.memory.get(acc.buffer);
        out[port] = { slots, slot: slotOf(k, acc.lag, depthOf(slots)) };
      }
      return out;
    };
    const ins = pick(a.inputs);
    const outs = pick(a.outputs);
    let t0 = nowUs();
    let report: { ok: boolean; message?: string; values?: Record<string, number | number[] | string> } | void = undefined;
    if (pe.program.kind === 'cpu') {
      // A CPU kernel holds the event loop: let the other PEs' threads issue their GPU work
      // and transfers first so they run beside it.
      await this.guard(new Promise<void>((r) => setImmediate(r)));
      t0 = nowUs();
      const view = (x: { slots: Slots; slot: number }) => (x.slots as HostSlots).views[x.slot];
      report = f.kernel.cpu({
        params: f.params,
        iteration: it,
        inputs: Object.fromEntries(Object.entries(ins).map(([p, x]) => [p, view(x)])),
        outputs: Object.fromEntries(Object.entries(outs).map(([p, x]) => [p, view(x)])),
        state: f.state,
      });
    } else {
      const device = pe.device!;
      const buf = (x: { slots: Slots; slot: number }) => (x.slots as GpuSlots).buffers[x.slot];
      const firing = {
        iteration: it,
        inputs: Object.fromEntries(Object.entries(ins).map(([p, x]) => [p, buf(x)])),
        outputs: Object.fromEntries(Object.entries(outs).map(([p, x]) => [p, buf(x)])),
      };
      if (f.gpu) {
        const encoder = device.createCommandEncoder();
        f.gpu.encode(encoder, firing);
        device.queue.submit([encoder.finish()]);
        await this.guard(device.queue.onSubmittedWorkDone());
        if (f.gpu.report) report = await this.guard(f.gpu.report(firing));
      } else {
        // Temporary route for kernels without WGSL: read inputs back, run the CPU twin, upload outputs.
        const twin = f.twin!;
        for (const [port, gbuf] of Object.entries(firing.inputs)) await this.readback(pe, gbuf, twin.inputs[port]);
        report = f.kernel.cpu({ params: f.params, iteration: it, inputs: twin.inputs, outputs: twin.outputs, state: f.state });
        for (const [port, gbuf] of Object.entries(firing.outputs)) {
          const v = twin.outputs[port];
          device.queue.writeBuffer(gbuf, 0, v.buffer, v.byteOffset, align4(v.byteLength));
        }
        await this.guard(device.queue.onSubmittedWorkDone());
      }
    }
    this.trace.add({ host: this.host, pe: pe.program.pe, thread: 'main', kind: 'fire', name: a.node, node: a.node, iteration: it, cycle: k, start: t0, end: nowUs() });
    if (report) {
      if (!report.ok) {
        this.fail({ host: this.host, pe: pe.program.pe, node: a.node, iteration: it, message: `node ${a.node} on ${pe.program.pe}, iteration ${it}: ${report.message ?? 'check failed'}` });
        throw new AbortError('check failed');
      }
      if (report.values) this.reports.set(a.node, { node: a.node, iteration: it, values: report.values });
    }
  }

  /** Copies a GPU buffer into a host view through a mappable staging buffer. */
  private async readback(pe: PeState, src: GPUBuffer, dst: ArrayBufferView): Promise<void> {
    const device = pe.device!;
    const size = align4(dst.byteLength);
    const label = `${src.label}`;
    let staging = pe.staging.get(label);
    if (!staging || staging.size < size) {
      staging?.destroy();
      staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: `staging ${label}` });
      pe.staging.set(label, staging);
    }
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(src, 0, staging, 0, size);
    device.queue.submit([encoder.finish()]);
    await this.guard(staging.mapAsync(GPUMapMode.READ, 0, size));
    new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(new Uint8Array(staging.getMappedRange(0, size), 0, dst.byteLength));
    staging.unmap();
  }

  private hostBytes(s: Slots, slot: number): Uint8Array {
    return (s as HostSlots).bytes[slot];
  }

  private async transfer(pe: PeState, t: Transfer, k: number, it: number): Promise<void> {
    const fromHost = this.hostOf(t.fromPe);
    const toHost = this.hostOf(t.toPe);
    const key = transferKey(t.from.buffer, t.to.buffer);
    const common = { host: this.host, pe: pe.program.pe, buffer: t.to.buffer, from: t.from.buffer, iteration: it, cycle: k, bytes: t.bytes };
    if (fromHost !== toHost) {
      const peer = fromHost === this.host ? toHost : fromHost;
      const link = this.peers.get(peer);
      if (!link) throw new Error(`no link from ${this.host} to ${peer}`);
      const thread = `lane:${peer}`;
      if (fromHost === this.host) {
        const src = this.slots(t.from.buffer);
        const slot = slotOf(k, t.from.lag, depthOf(src));
        const t0 = nowUs();
        let bytes: Uint8Array;
        if (src.kind === 'cpu') bytes = this.hostBytes(src, slot);
        else {
          bytes = new Uint8Array(align4(t.bytes));
          await this.readback(this.pes.get(t.fromPe)!, src.buffers[slot], bytes);
          bytes = bytes.subarray(0, t.bytes);
        }
        await this.guard(link.sendFrame(key, it, bytes.subarray(0, t.bytes)));
        this.trace.add({ ...common, thread, kind: 'transfer', name: t.to.buffer, start: t0, end: nowUs() });
      } else {
        const w0 = nowUs();
        const data = await this.guard(link.take(key, it));
        const t0 = nowUs();
        this.trace.add({ ...common, thread, kind: 'wait', name: `recv ${t.to.buffer}`, start: w0, end: t0 });
        const dst = this.slots(t.to.buffer);
        const slot = slotOf(k, t.to.lag, depthOf(dst));
        if (dst.kind === 'cpu') this.hostBytes(dst, slot).set(data.subarray(0, this.hostBytes(dst, slot).byteLength));
        else {
          const device = this.pes.get(t.toPe)!.device!;
          const padded = data.byteLength % 4 ? Uint8Array.from({ length: align4(data.byteLength) }, (_, i) => data[i] ?? 0) : data;
          device.queue.writeBuffer(dst.buffers[slot], 0, padded.buffer, padded.byteOffset, padded.byteLength);
          await this.guard(device.queue.onSubmittedWorkDone());
        }
        this.trace.add({ ...common, thread, kind: 'transfer', name: t.to.buffer, start: t0, end: nowUs() });
      }
      return;
    }
    // Same host: one copy, driven by the GPU side.
    const other = t.fromPe === pe.program.pe ? t.toPe : t.fromPe;
    const t0 = nowUs();
    const src = this.slots(t.from.buffer);
    const dst = this.slots(t.to.buffer);
    const sSlot = slotOf(k, t.from.lag, depthOf(src));
    const dSlot = slotOf(k, t.to.lag, depthOf(dst));
    if (src.kind === 'cpu' && dst.kind === 'gpu') {
      const device = this.pes.get(t.toPe)!.device!;
      const b = this.hostBytes(src, sSlot);
      device.queue.writeBuffer(dst.buffers[dSlot], 0, b.buffer, b.byteOffset, align4(t.bytes));
      await this.guard(device.queue.onSubmittedWorkDone());
    } else if (src.kind === 'gpu' && dst.kind === 'cpu') {
      await this.readback(this.pes.get(t.fromPe)!, src.buffers[sSlot], this.hostBytes(dst, dSlot));
    } else if (src.kind === 'gpu' && dst.kind === 'gpu') {
      const tmp = new Uint8Array(align4(t.bytes));
      await this.readback(this.pes.get(t.fromPe)!, src.buffers[sSlot], tmp);
      const device = this.pes.get(t.toPe)!.device!;
      device.queue.writeBuffer(dst.buffers[dSlot], 0, tmp);
      await this.guard(device.queue.onSubmittedWorkDone());
    } else {
      this.hostBytes(dst, dSlot).set(this.hostBytes(src, sSlot).subarray(0, this.hostBytes(dst, dSlot).byteLength));
    }
    this.trace.add({ ...common, thread: `lane:${other}`, kind: 'transfer', name: t.to.buffer, start: t0, end: nowUs() });
  }

  /** Frees every buffer and device; safe to call twice. */
  free(): void {
    if (this.freed) return;
    this.freed = true;
    this.abort('run freed');
    this.trace.stop();
    for (const pe of this.pes.values()) {
      for (const f of pe.fires.values()) f.gpu?.destroy();
      for (const s of pe.staging.values()) s.destroy();
      pe.memory.free();
      pe.device?.destroy();
    }
    this.pes.clear();
  }

  /** Bytes allocated per PE. */
  allocated(): Record<string, number> {
    return Object.fromEntries([...this.pes].map(([id, pe]) => [id, pe.memory.allocated]));
  }
}

export type { TraceEvent };

export function processMemory(): { rss: number; heapUsed: number } {
  // With --expose-gc (local agents) collect first so the figure is live memory, not garbage.
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed };
}
