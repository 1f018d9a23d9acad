import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { DataType, Kernel, PortSpec } from '@pipeloom/kernels';
import { callKey, Doing, stableJson, type CallResult, type DoingWhat, type LoadedPackages, type PackageCall, type PackageFile } from './package-calls.js';

// Kernel packages' code runs on a thread of its own (package-worker.ts), never on the agent's
// or the CLI's main thread: importing a package, checking its kernels and every later call of
// their functions (port types, rates, costs, declared ports) is answered there under a time
// limit. The main thread registers each package kernel with its functions replaced by calls
// to that thread (`guardKernel`): memoized, made synchronously with a bounded wait where a
// caller needs the value now (core's compile), or evaluated ahead without blocking
// (`prefetch`, an agent's deploy). A call past the limit stops the thread and fails with a
// message naming the package, the kernel, the function and the params.

/** Seconds a package may take to import, and any one call of its functions (`--kernel-load-timeout`). */
export const DEFAULT_KERNEL_LOAD_TIMEOUT_S = 30;

const BOOT = new URL('../runtime/pe-worker-boot.mjs', import.meta.url);

/** Memo entries kept at most (a deploy's prefetch and its checks fall well within). */
const MAX_MEMO = 100_000;

type Pending = { resolve: (v: never) => void; reject: (e: Error) => void };

export class PackageHost {
  private worker?: Worker;
  private booting?: Promise<void>;
  private bootFailed?: (e: Error) => void;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private readonly doingBuffer = Doing.buffer();
  private readonly doing = new Doing(this.doingBuffer);
  private reply?: MessagePort;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private watchdog?: NodeJS.Timeout;
  private readonly memo = new Map<string, CallResult>();
  /** The packages the thread imports (again, after a restart). */
  private files: PackageFile[] = [];
  /** Each package kernel's id and its package as named. */
  readonly kernels = new Map<string, string>();
  /** Why calls fail from now on: a call overran and this host does not restart its thread (the CLI). */
  overrun?: string;

  /**
   * @param limitMs time limit of the import and of each call (0: none)
   * @param restart after an overrun, start a new thread for later calls (an agent) rather than fail them all (a CLI command)
   */
  constructor(
    readonly limitMs: number,
    private readonly restart: boolean,
  ) {}

  /** Imports the packages on the thread and checks their kernels; a package that overruns is a problem naming what it was doing. */
  async load(list: PackageFile[]): Promise<LoadedPackages> {
    try {
      await this.boot();
      const loaded = await this.request<{ loaded: LoadedPackages }>({ type: 'load', names: list });
      this.files = list.filter((p) => loaded.loaded.packages.some((q) => q.file === p.file));
      for (const p of loaded.loaded.packages) for (const k of p.kernels) this.kernels.set(k, p.name);
      return loaded.loaded;
    } catch (e) {
      return { packages: [], problems: [(e as Error).message] };
    }
  }

  /** The value of a call, from the memo or from the thread (the caller waits, at most the limit). Throws what the function threw, or the overrun. */
  call(c: PackageCall): unknown {
    // A firing is not a function of its params alone (and its arrays make no key): never memoized.
    if (c.fn === 'cpu') {
      const r = this.callNow(c);
      if ('error' in r) throw new Error(r.error);
      return r.ok;
    }
    const key = callKey(c);
    let r = this.memo.get(key);
    if (!r) {
      r = this.callNow(c);
      this.remember(key, r);
    }
    if ('error' in r) throw new Error(r.error);
    return r.ok;
  }

  /**
   * Evaluates on the thread, without blocking this one, what checks will read of these kernels
   * at these params (kernels not from this host's packages are skipped). Rejects with the
   * overrun's message.
   */
  async prefetch(items: { kernel: string; params: Record<string, unknown> }[]): Promise<void> {
    // Once per kernel and params: a bag of many nodes often repeats them.
    const seen = new Set<string>();
    const mine = items.filter((i) => {
      const key = `${i.kernel}\u0000${stableJson(i.params)}`;
      if (!this.kernels.has(i.kernel) || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (!mine.length) return;
    if (this.overrun) throw new Error(this.overrun);
    if (!this.worker) await this.reboot();
    for (let at = 0; at < mine.length; at += 500) {
      const r = await this.request<{ entries: [string, CallResult][] }>({ type: 'describe', items: mine.slice(at, at + 500) });
      for (const [key, value] of r.entries) this.remember(key, value);
    }
  }

  close(): void {
    void this.worker?.terminate();
    this.worker = undefined;
  }

  /** The thread keeps this process alive only while something waits for it (a command ends when its work does). */
  private hold(): void {
    if (this.pending.size) return void this.worker?.ref();
    this.worker?.unref();
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
  }

  private remember(key: string, r: CallResult): void {
    if (this.memo.size >= MAX_MEMO) this.memo.clear();
    this.memo.set(key, r);
  }

  private boot(): Promise<void> {
    if (this.booting) return this.booting;
    const { port1, port2 } = new MessageChannel();
    this.reply = port1;
    port1.unref();
    const worker = new Worker(BOOT, {
      name: 'kernel packages',
      workerData: { entry: 'packages', state: this.flag.buffer, doing: this.doingBuffer, reply: port2 },
      transferList: [port2],
    });
    this.worker = worker;
    this.booting = new Promise<void>((resolve, reject) => {
      this.bootFailed = reject;
      worker.on('message', (m: { ready?: boolean; id?: number }) => {
        if (m.ready) {
          resolve();
          return this.hold();
        }
        const p = this.pending.get(m.id!);
        this.pending.delete(m.id!);
        this.hold();
        p?.resolve(m as never);
      });
      worker.on('error', (e) => {
        reject(e);
        this.stop(`the kernel package thread failed: ${e.message}`);
      });
      worker.on('exit', (code) => {
        if (this.worker !== worker) return;
        reject(new Error(`the kernel package thread exited (${code})`));
        this.stop(`the kernel package thread exited (code ${code})`);
      });
    });
    // Its waiters hear a failure; nobody waiting is no crash.
    this.booting.catch(() => {});
    return this.booting;
  }

  /** A new thread with the packages imported again (an agent, after an overrun). */
  private async reboot(): Promise<void> {
    await this.boot();
    const loaded = await this.request<{ loaded: LoadedPackages }>({ type: 'load', names: this.files });
    if (loaded.loaded.problems.length) throw new Error(loaded.loaded.problems.join('; '));
  }

  private request<T>(m: Record<string, unknown>): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: never) => void, reject });
      this.worker!.postMessage({ ...m, id });
      this.hold();
      this.arm();
    });
  }

  /** While requests wait, checks that the thread's current call is within the limit. */
  private arm(): void {
    if (this.watchdog || !this.limitMs || !this.pending.size) return;
    const check = () => {
      this.watchdog = undefined;
      if (!this.pending.size) return;
      const { since, what } = this.doing.read();
      const late = since ? Date.now() - since : 0;
      if (since && late >= this.limitMs) return this.stop(this.overrunMessage(what));
      this.watchdog = setTimeout(check, Math.max(10, since ? this.limitMs - late : this.limitMs));
    };
    this.watchdog = setTimeout(check, this.limitMs);
  }

  private callNow(c: PackageCall): CallResult {
    if (this.overrun) throw new Error(this.overrun);
    if (!this.worker || !this.reply)
      throw new Error(`kernel package ${this.kernels.get(c.kernel) ?? ''}: its thread is restarting after a call that overran; try again`);
    const id = this.nextId++;
    Atomics.store(this.flag, 0, 0);
    this.worker.postMessage({ type: 'call', id, call: c, sync: true });
    for (;;) {
      if (Atomics.wait(this.flag, 0, 0, this.limitMs || Infinity) === 'timed-out') {
        const { what } = this.doing.read();
        const message = this.overrunMessage(what ?? { kernel: c.kernel, fn: c.fn });
        this.stop(message);
        throw new Error(message);
      }
      const m = receiveMessageOnPort(this.reply)?.message as { id: number; result: CallResult } | undefined;
      if (m?.id === id) return m.result;
      Atomics.store(this.flag, 0, 0);
    }
  }

  /** Stops the thread: waiting requests fail with `message`; later calls fail too, or start a new thread. */
  private stop(message: string): void {
    const worker = this.worker;
    this.worker = undefined;
    this.booting = undefined;
    this.bootFailed?.(new Error(message));
    void worker?.terminate();
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    if (!this.restart) this.overrun = message;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new Error(message));
  }

  private overrunMessage(what: DoingWhat | undefined): string {
    const s = `${this.limitMs / 1000} s`;
    const raise = 'or raise the limit with --kernel-load-timeout SECONDS';
    if (what?.doing === 'importing')
      return `kernel package ${what.package}: importing it did not finish within ${s} (its top-level code loops or awaits something that never settles; defineKernel's checks of each kernel's port types at the params' defaults and bounds run then too): fix the package, ${raise}`;
    if (what?.doing === 'checking')
      return `kernel package ${what.package}: evaluating kernel "${what.kernel}"'s port types, rates and cost at the params' defaults and bounds did not finish within ${s}: fix the kernel, ${raise}`;
    const pkg = what?.kernel ? this.kernels.get(what.kernel) : undefined;
    return `kernel package ${pkg ?? '?'}: kernel "${what?.kernel ?? '?'}" ${what?.fn ?? 'function'} did not return within ${s} for params ${what?.params ?? '?'} (it may loop for these values): fix the function or narrow the params' ranges, ${raise}`;
  }
}

/** A package kernel whose spec functions and CPU twin run on `host`'s thread; its GPU side stays as it is (PE threads and the WGSL check at start run it). */
export function guardKernel(k: Kernel, host: PackageHost): Kernel {
  const call = (fn: string, args: unknown[]) => host.call({ kernel: k.id, fn, args });
  const port =
    (side: 'inputs' | 'outputs') =>
    (p: PortSpec): PortSpec => ({
      ...p,
      type: (params, index) => call(`${side}.${p.name}.type`, [params, index ?? null]) as DataType,
      ...(typeof p.rate === 'function' ? { rate: (params) => call(`${side}.${p.name}.rate`, [params]) as number } : {}),
    });
  type PortData = { name: string; description?: string; repeat?: string; rate?: number; type: CallResult };
  const fromData = (d: PortData): PortSpec => ({
    name: d.name,
    ...(d.description ? { description: d.description } : {}),
    ...(d.repeat ? { repeat: d.repeat } : {}),
    ...(d.rate !== undefined ? { rate: d.rate } : {}),
    type: () => {
      if ('error' in d.type) throw new Error(d.type.error);
      return d.type.ok as DataType;
    },
  });
  return {
    ...k,
    inputs: k.inputs.map(port('inputs')),
    outputs: k.outputs.map(port('outputs')),
    cost: (params) => call('cost', [params]) as ReturnType<Kernel['cost']>,
    ...(k.ports
      ? {
          ports: (params) => {
            const d = call('ports', [params]) as { inputs: PortData[]; outputs: PortData[] };
            return { inputs: d.inputs.map(fromData), outputs: d.outputs.map(fromData) };
          },
        }
      : {}),
    // The CPU twin runs here only for a delay's initial tokens (runtime/initial.ts; PE threads have their own registry).
    cpu: (firing) => {
      const r = call('cpu', [firing]) as { report: ReturnType<Kernel['cpu']>; outputs: Record<string, ArrayLike<number>> };
      for (const [name, v] of Object.entries(r.outputs)) (firing.outputs[name] as unknown as { set(a: ArrayLike<number>): void }).set(v);
      return r.report;
    },
    ...(k.values ? { values: (params, inputs) => call('values', [params, inputs]) as ReturnType<NonNullable<Kernel['values']>> } : {}),
    ...(k.expects
      ? { expects: { params: k.expects.params, derive: (inputs) => call('expects.derive', [inputs]) as ReturnType<NonNullable<Kernel['expects']>['derive']> } }
      : {}),
  };
}
