import { dataTypeBytes, ELEMENT_BYTES, getKernel, GpuRunner, portsFor, type FiringReport, type Kernel, type Params, type TypedArray } from '@pipeloom/kernels';
import { nowUs, PeLifecycle, poster, servePeThread } from '../runtime/pe-lifecycle.js';
import { shortMessage, type FromTaskPe, type TaskPeInit, type TaskRun, type ToTaskPe } from './messages.js';

// One task-bag PE's thread: runs the tasks the main thread hands it, one at a time, on the CPU
// twin (a CPU PE, or a GPU PE's kernel without WGSL) or on the PE's WebGPU device through the
// kernels' GpuRunner, prepared once per node and params. Kernels run here so the agent's main
// thread keeps answering pings and pulls while they do.

const post = poster<FromTaskPe>();
const VIEW = { f32: Float32Array, u32: Uint32Array, i32: Int32Array, u8: Uint8Array } as const;

class TaskPe {
  /** Device, watchdog stamp, WebGPU promises and freeing (runtime/pe-lifecycle.ts). */
  private readonly life: PeLifecycle;
  private lost: string | null = null;
  private readonly runners = new Map<string, GpuRunner>();
  /**
   * Each node's kernel state on this PE, kept across its tasks as a static PE keeps it across
   * cycles: a source caches what it computed (the phantom), and a stateful kernel's tasks are
   * pinned to one PE by the bag (core run/taskbag/bag.ts), so its state stays whole.
   */
  private readonly states = new Map<number, Record<string, unknown>>();
  /** Tasks run one at a time, in arrival order. */
  private queue: Promise<void> = Promise.resolve();

  constructor(readonly init: TaskPeInit) {
    this.life = new PeLifecycle(init);
  }

  private get device(): GPUDevice | undefined {
    return this.life.device;
  }

  private get stamp() {
    return this.life.stamp;
  }

  private track<T>(p: Promise<T>): Promise<T> {
    return this.life.track(p);
  }

  async prepare(): Promise<void> {
    const g = this.init.gpu;
    if (this.init.kind !== 'gpu' || !g) return post({ type: 'ready' });
    const device = await this.life.open(this.init.pe, g, (message) => {
      this.lost = message;
      post({ type: 'lost', message: message.slice(0, 300) });
    });
    if (device) post({ type: 'ready', adapter: `${g.name} (${g.backend})` });
  }

  run(m: TaskRun): void {
    this.queue = this.queue.then(() => this.runOne(m));
  }

  private async runOne(m: TaskRun): Promise<void> {
    if (this.life.freed) return;
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
    const report = kernel.cpu({
      params: m.params,
      iteration: m.iteration,
      inputs: this.views(kernel, m.params, m.inputs, 'inputs'),
      outputs: this.views(kernel, m.params, m.outputs, 'outputs'),
      state,
    });
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
  free(settleMs = 1500): Promise<void> {
    return this.life.free(() => {
      for (const r of this.runners.values()) r.destroy();
      this.runners.clear();
    }, settleMs);
  }
}

servePeThread<ToTaskPe, TaskPe>({
  create: (init) => new TaskPe(init),
  message: shortMessage,
  on: (m, pe) => {
    if (pe) pe.run(m);
    else post({ type: 'failed', seq: m.seq, message: 'PE thread not started' });
  },
});
