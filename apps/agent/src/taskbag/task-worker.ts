import { parentPort } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { dataTypeBytes, ELEMENT_BYTES, getKernel, GpuRunner, portsFor, type FiringReport, type Kernel, type Params, type TypedArray } from '@pipeloom/kernels';
import { openDevice } from '../devices/discover.js';
import { FiringStamp } from '../runtime/watchdog.js';
import { shortMessage, type FromTaskPe, type TaskPeInit, type TaskRun, type ToTaskPe } from './messages.js';

// One task-bag PE's thread: runs the tasks the main thread hands it, one at a time, on the CPU
// twin (a CPU PE, or a GPU PE's kernel without WGSL) or on the PE's WebGPU device through the
// kernels' GpuRunner, prepared once per node and params. Kernels run here so the agent's main
// thread keeps answering pings and pulls while they do.

const post = (m: FromTaskPe) => parentPort!.postMessage(m);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
const VIEW = { f32: Float32Array, u32: Uint32Array, i32: Int32Array, u8: Uint8Array } as const;

class TaskPe {
  private device?: GPUDevice;
  private lost: string | null = null;
  private freed = false;
  private readonly runners = new Map<string, GpuRunner>();
  /**
   * Each node's kernel state on this PE, kept across its tasks as a static PE keeps it across
   * cycles: a source caches what it computed (the phantom), and a stateful kernel's tasks are
   * pinned to one PE by the bag (core run/taskbag/bag.ts), so its state stays whole.
   */
  private readonly states = new Map<number, Record<string, unknown>>();
  /**
   * WebGPU promises not settled yet: dawn.node aborts the process when a thread is torn down
   * with one pending, so `free` waits for them (as runtime/pe-worker.ts does).
   */
  private readonly pending = new Set<Promise<unknown>>();
  /** Tasks run one at a time, in arrival order. */
  private queue: Promise<void> = Promise.resolve();

  /** What the main thread's watchdog reads: the task running, since when, and whether in GPU work. */
  private readonly stamp: FiringStamp;

  constructor(readonly init: TaskPeInit) {
    this.stamp = new FiringStamp(init.watch, init.epoch);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const settled = () => this.pending.delete(p);
    p.then(settled, settled);
    return p;
  }

  async prepare(): Promise<void> {
    const g = this.init.gpu;
    if (this.init.kind !== 'gpu' || !g) return post({ type: 'ready' });
    const device = await this.track(openDevice(g));
    if (this.freed) {
      void this.track(device.lost);
      device.destroy();
      return;
    }
    this.device = device;
    void this.track(device.lost).then((info) => {
      if (this.freed) return;
      this.lost = `WebGPU device lost on ${this.init.pe}: ${info.message || info.reason}`;
      post({ type: 'lost', message: this.lost.slice(0, 300) });
    });
    post({ type: 'ready', adapter: `${g.name} (${g.backend})` });
  }

  run(m: TaskRun): void {
    this.queue = this.queue.then(() => this.runOne(m));
  }

  private async runOne(m: TaskRun): Promise<void> {
    if (this.freed) return;
    if (this.lost) return post({ type: 'failed', seq: m.seq, message: this.lost });
    const start = nowUs();
    this.stamp.begin(m.seq, m.iteration);
    try {
      const kernel = getKernel(m.kernel);
      const report = this.device && kernel.gpu ? await this.onGpu(m, kernel) : this.onCpu(m, kernel);
      this.stamp.end();
      post({ type: 'done', seq: m.seq, start, end: nowUs(), ...(report?.values ? { values: report.values } : {}) });
    } catch (e) {
      this.stamp.end();
      post({ type: 'failed', seq: m.seq, message: this.lost ?? shortMessage(e) });
    }
  }

  /** The bytes of each port as the kernel's typed arrays (views of the shared memory). */
  private views(kernel: Kernel, params: Params, bytes: Record<string, Uint8Array>, dir: 'inputs' | 'outputs'): Record<string, TypedArray> {
    const out: Record<string, TypedArray> = {};
    for (const p of portsFor(kernel, params)[dir]) {
      const b = bytes[p.name];
      const t = p.type(params);
      const View = VIEW[t.element];
      out[p.name] = new View(b.buffer as ArrayBuffer, b.byteOffset, Math.floor(b.byteLength / ELEMENT_BYTES[t.element]));
    }
    return out;
  }

  private onCpu(m: TaskRun, kernel: Kernel): FiringReport | undefined {
    if (kernel.gpuOnly) throw new Error(`kernel "${kernel.id}" has no CPU twin; ${this.init.pe} is a CPU`);
    let state = this.states.get(m.node);
    if (!state) this.states.set(m.node, (state = {}));
    const report = kernel.cpu({ params: m.params, iteration: m.iteration, inputs: this.views(kernel, m.params, m.inputs, 'inputs'), outputs: this.views(kernel, m.params, m.outputs, 'outputs'), state });
    if (report && report.ok === false) throw new Error(report.message ?? `kernel "${kernel.id}" reported a failure`);
    return report ?? undefined;
  }

  private async onGpu(m: TaskRun, kernel: Kernel): Promise<FiringReport | undefined> {
    const key = `${m.node} ${JSON.stringify(m.params)}`;
    // From here the thread may be inside Dawn (a submit runs the kernel on this thread on OpenGL):
    // the watchdog must not terminate it (bag-run.ts).
    this.stamp.gpu(true);
    let runner = this.runners.get(key);
    if (!runner) {
      runner = await this.track(GpuRunner.create(this.device!, kernel, m.params));
      this.runners.set(key, runner);
    }
    // writeBuffer takes no shared memory: each input goes through a private copy.
    const inputs: Record<string, TypedArray> = {};
    for (const [port, v] of Object.entries(this.views(kernel, m.params, m.inputs, 'inputs'))) inputs[port] = v.slice();
    this.device!.pushErrorScope('validation');
    const result = await this.track(runner.fire(inputs, m.iteration));
    const error = await this.track(this.device!.popErrorScope());
    if (error) throw new Error(`kernel "${kernel.id}" on ${this.init.pe}: ${error.message}`);
    if (result.report && result.report.ok === false) throw new Error(result.report.message ?? `kernel "${kernel.id}" reported a failure`);
    for (const o of portsFor(kernel, m.params).outputs) {
      const got = result.outputs[o.name];
      const into = m.outputs[o.name];
      into.set(new Uint8Array(got.buffer, got.byteOffset, Math.min(got.byteLength, into.byteLength, dataTypeBytes(o.type(m.params)))));
    }
    return result.report;
  }

  /** Destroys the prepared kernels and the device, then waits (up to `settleMs`) for WebGPU promises to settle. */
  async free(settleMs = 1500): Promise<void> {
    if (this.freed) return;
    this.freed = true;
    for (const r of this.runners.values()) r.destroy();
    this.runners.clear();
    this.device?.destroy();
    const deadline = performance.now() + settleMs;
    for (let left = settleMs; this.pending.size && left > 0; left = deadline - performance.now()) {
      await Promise.race([Promise.allSettled([...this.pending]), sleep(left)]);
    }
  }
}

let pe: TaskPe | undefined;
parentPort!.on('message', (m: ToTaskPe) => {
  switch (m.type) {
    case 'init':
      pe = new TaskPe(m);
      pe.prepare().catch((e) => post({ type: 'error', message: shortMessage(e) }));
      break;
    case 'run':
      if (pe) pe.run(m);
      else post({ type: 'failed', seq: m.seq, message: 'PE thread not started' });
      break;
    case 'free':
      void (pe?.free() ?? Promise.resolve()).finally(() => post({ type: 'freed' }));
      break;
  }
});
