import type { Worker } from 'node:worker_threads';
import { recvLane, samePe, servedPe, taskSlice, type BagDeploy, type FromAgent, type TraceEvent } from '@pipeloom/core';
import type { Devices } from '../devices/discover.js';
import type { PeerLink } from '../peer/link.js';
import { TraceRecorder } from '../runtime/trace.js';
import { holdUntil } from '../runtime/emulate.js';
import { DEFAULT_KERNEL_TIMEOUT_MS } from '../runtime/host-run.js';
import { watchMemory, Watchdog, type Overrun } from '../runtime/watchdog.js';
import { keepPeThread, takePeThread } from '../runtime/pe-threads.js';
import { BAG_LIMITS, type BagNode, type CheckedTask } from './check.js';
import { DataStore, LostError, sharedBytes } from './pulls.js';
import { InputGatherer } from './inputs.js';
import { shortMessage, type FromTaskPe, type ToTaskPe } from './messages.js';

// One task-bag run on this agent: the tasks the coordinator hands out, each run on the PE it
// names. Per PE a queue in arrival order and one worker thread (started with its first task; a
// GPU PE opens its adapter there). A PE runs one task at a time; the next one's inputs are
// gathered (pulled) while it runs. Outputs stay here under their keys until `free`; results go
// back as task-done / task-failed, fire and pull events in trace batches (cycle 0).
// A task running past the agent's kernel time limit (runtime/watchdog.ts) fails naming node, PE
// and limit; its thread, caught in a CPU twin, is terminated and the PE's next task starts a new
// one (the bag counts the attempt). Caught inside GPU work the thread cannot be terminated (the
// process would abort): the PE leaves the run and the agent restarts after it, as in static runs.

const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
/** Tasks of one PE whose inputs are gathered at once: the running one and the next. */
const GATHER_AHEAD = 2;

interface Queued {
  checked: CheckedTask;
  gathered?: Promise<Record<string, Uint8Array>>;
  gatherStart: number;
  gatherEnd: number;
}

/** A task's run on its PE thread: when, and what a checking kernel reported. */
type Ran = { start: number; end: number; values?: Record<string, number | number[] | string> };

interface Lane {
  pe: string;
  kind: 'cpu' | 'gpu';
  queue: Queued[];
  /** Its queue is being worked through. */
  pumping: boolean;
  worker?: Worker;
  ready?: Promise<void>;
  /** Its thread answered `ready` (its preparation has nothing left to say). */
  prepared?: boolean;
  /** Why this PE runs no more tasks (its device was lost, its thread ended). */
  dead?: string;
  runs: Map<number, { resolve: (t: Ran) => void; reject: (e: Error) => void }>;
  /** The task its thread runs (by seq), for the watchdog's message. */
  running?: { seq: number; node: string; kernel: string };
  /** Nodes of stateful kernels whose state the thread holds: lost if the thread is replaced. */
  stateful: Set<string>;
  /** The thread is held inside GPU work past the time limit: it is left alone until the agent restarts. */
  stuck?: boolean;
}

/** A task's share, from its id `node[j]@iteration`. */
export function shareOf(id: string): number | undefined {
  const m = /\[(\d+)\]@\d+$/.exec(id);
  return m ? Number(m[1]) : undefined;
}

export class BagRun {
  readonly trace: TraceRecorder;
  readonly store: DataStore;
  private readonly gatherer: InputGatherer;
  private readonly lanes = new Map<string, Lane>();
  private started = false;
  private stopped = false;
  private seq = 0;
  private outstanding = 0;
  /** The adapter each GPU PE opens, as deployed reports it. */
  readonly adapters: Record<string, string> = {};
  private readonly watchdog: Watchdog;

  constructor(
    readonly deploy: BagDeploy,
    readonly nodes: readonly BagNode[],
    readonly devices: Devices,
    links: ReadonlyMap<string, PeerLink>,
    readonly send: (m: FromAgent) => void,
    maxBytes: number,
    /** A task running longer than this (ms) fails (0 = no limit). */
    kernelTimeoutMs = DEFAULT_KERNEL_TIMEOUT_MS,
  ) {
    this.watchdog = new Watchdog(kernelTimeoutMs, performance.timeOrigin + performance.now(), (o) => this.overrun(o));
    this.trace = new TraceRecorder(
      (events, dropped) => send({ type: 'trace', runId: deploy.runId, events, cycle: 0, dropped }),
      deploy.traceInterval ?? 50_000,
    );
    this.store = new DataStore(devices.host, links, maxBytes);
    this.store.onPulled = (p) =>
      this.trace.add({
        host: devices.host,
        pe: p.pe,
        thread: recvLane(p.from),
        kind: 'transfer',
        name: p.key,
        buffer: p.key,
        iteration: 0,
        cycle: 0,
        start: p.start,
        end: p.end,
        bytes: p.bytes,
      });
    this.gatherer = new InputGatherer(devices.host, this.store);
    for (const pe of devices.pes) {
      const gpu = devices.gpus.get(pe.id);
      if (gpu) this.adapters[pe.id] = `${gpu.name} (${gpu.backend})`;
    }
  }

  get runId(): string {
    return this.deploy.runId;
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.trace.start();
    this.watchdog.start();
    for (const lane of this.lanes.values()) void this.pump(lane);
  }

  /** A checked task: queued on its PE. Over the agent's bound of outstanding tasks it fails at once. */
  task(checked: CheckedTask): void {
    if (this.stopped) return;
    const t = checked.task;
    if (this.outstanding >= BAG_LIMITS.maxOutstanding)
      return this.failed(t, `agent ${this.devices.host} already holds ${BAG_LIMITS.maxOutstanding} tasks not yet reported`);
    this.outstanding++;
    const lane = this.lane(t.pe);
    lane.queue.push({ checked, gatherStart: 0, gatherEnd: 0 });
    this.gatherAhead(lane);
    if (this.started) void this.pump(lane);
  }

  free(keys: readonly string[]): void {
    this.store.free(keys);
  }

  private lane(pe: string): Lane {
    let lane = this.lanes.get(pe);
    if (!lane) {
      const kind = servedPe(this.devices.pes, pe)?.kind ?? 'cpu';
      this.lanes.set(pe, (lane = { pe, kind, queue: [], pumping: false, runs: new Map(), stateful: new Set() }));
    }
    return lane;
  }

  /** Starts gathering the inputs of the first GATHER_AHEAD tasks of the PE. */
  private gatherAhead(lane: Lane): void {
    for (const q of lane.queue.slice(0, GATHER_AHEAD)) {
      if (q.gathered) continue;
      q.gatherStart = nowUs();
      const t = q.checked.task;
      q.gathered = Promise.all(t.inputs.map((input) => this.gatherer.gather(input, t.pe, t.iteration))).then((bytes) => {
        q.gatherEnd = nowUs();
        return Object.fromEntries(t.inputs.map((input, i) => [input.port, bytes[i]]));
      });
      // Awaited when the task's turn comes; until then a rejection is not unhandled.
      q.gathered.catch(() => {});
    }
  }

  private async pump(lane: Lane): Promise<void> {
    if (lane.pumping) return;
    lane.pumping = true;
    try {
      while (lane.queue.length && !this.stopped) {
        const q = lane.queue[0];
        this.gatherAhead(lane);
        try {
          await this.runTask(lane, q);
        } catch (e) {
          // Whatever goes wrong with one task is that task's failure, never the agent's.
          this.failed(q.checked.task, shortMessage(e));
        }
        lane.queue.shift();
        this.outstanding--;
      }
    } finally {
      lane.pumping = false;
    }
  }

  private async runTask(lane: Lane, q: Queued): Promise<void> {
    const { task: t, node, params } = q.checked;
    let inputs: Record<string, Uint8Array>;
    try {
      inputs = await q.gathered!;
    } catch (e) {
      if (e instanceof LostError) return this.failed(t, `an input could not be pulled: ${shortMessage(e)}`, e.host);
      return this.failed(t, shortMessage(e));
    }
    if (this.stopped) return;
    const outBytes = t.outputs.reduce((n, o) => n + o.bytes, 0);
    if (!this.store.room(outBytes))
      return this.failed(
        t,
        `agent ${this.devices.host} holds ${this.store.held} bytes of outputs; ${outBytes} more would pass its limit of ${this.store.maxBytes} (maxHostBytes)`,
      );
    const outputs = Object.fromEntries(t.outputs.map((o) => [o.port, sharedBytes(o.bytes)]));
    let ran: Ran;
    const tried = nowUs();
    try {
      if (lane.dead) throw new Error(lane.dead);
      await this.startWorker(lane);
      const seq = ++this.seq;
      lane.running = { seq, node: node.id, kernel: node.kernel.id };
      if (node.kernel.stateful) lane.stateful.add(node.id);
      ran = await this.runOn(lane, { type: 'run', seq, node: t.node, kernel: node.kernel.id, params, iteration: t.iteration, inputs, outputs });
    } catch (e) {
      // The failed attempt is drawn too: a node failing three times shows three slices.
      if (!this.stopped) this.fired(t, node.id, tried, nowUs(), true);
      // A dead lane (device lost, thread gone) can run nothing more: the coordinator takes the PE out of its pool.
      return this.failed(t, shortMessage(e), undefined, lane.dead !== undefined);
    }
    if (this.stopped) return;
    // Device emulation (as static runs: at least this long), then the labelled slow-PE emulation: (s - 1) x the run's time, on a timer.
    const emulated = this.deploy.emulateDevices?.[node.id];
    if (emulated) await holdUntil(ran.start + emulated * 1e6, nowUs);
    const slow = Object.entries(this.deploy.slow ?? {}).find(([id]) => samePe(id, t.pe))?.[1];
    if (slow && slow > 1) {
      const took = nowUs() - ran.start;
      await holdUntil(nowUs() + (slow - 1) * took, nowUs);
    }
    if (this.stopped) return;
    const end = nowUs();
    for (const o of t.outputs) this.store.keep(o.key, outputs[o.port]);
    this.fired(t, node.id, ran.start, end, false);
    this.send({
      type: 'task-done',
      runId: this.runId,
      id: t.id,
      attempt: t.attempt,
      pe: t.pe,
      ms: { pull: (q.gatherEnd - q.gatherStart) / 1000, run: (end - ran.start) / 1000 },
      ...(ran.values ? { values: ran.values } : {}),
    });
  }

  /** A task's fire slice (`failed`: the kernel or its PE failed; named so). */
  private fired(t: CheckedTask['task'], node: string, start: number, end: number, failed: boolean): void {
    const share = shareOf(t.id);
    this.trace.add({
      host: this.devices.host,
      pe: t.pe,
      thread: 'main',
      kind: 'fire',
      name: `${taskSlice(t.id, t.attempt)}${failed ? ' failed' : ''}`,
      node,
      iteration: t.iteration,
      cycle: t.iteration,
      start,
      end,
      task: share === undefined ? { id: t.id, attempt: t.attempt } : { id: t.id, share, attempt: t.attempt },
    } satisfies TraceEvent);
  }

  private failed(t: CheckedTask['task'], message: string, lost?: string, peLost = false): void {
    if (this.stopped) return;
    this.send({
      type: 'task-failed',
      runId: this.runId,
      id: t.id,
      attempt: t.attempt,
      pe: t.pe,
      message: message.slice(0, 300),
      ...(lost === undefined ? {} : { lost }),
      ...(peLost ? { peLost } : {}),
    });
  }

  /** The PE's thread, started with its first task (a GPU PE opens its device there). */
  private startWorker(lane: Lane): Promise<void> {
    if (lane.ready) return lane.ready;
    const worker = takePeThread('taskbag', lane.pe);
    lane.worker = worker;
    const watch = watchMemory();
    this.watchdog.watchThread(lane.pe, watch, (seq) => (lane.running?.seq === seq ? lane.running : undefined));
    const die = (why: string) => {
      // A thread the watchdog replaced ends as it was told to: that is no reason for the PE to stop.
      if (lane.dead || lane.worker !== worker) return;
      lane.dead = why;
      for (const r of lane.runs.values()) r.reject(new Error(why));
      lane.runs.clear();
    };
    lane.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (m: FromTaskPe) => {
        if (lane.worker !== worker) return;
        switch (m.type) {
          case 'ready':
            lane.prepared = true;
            if (m.adapter) this.adapters[lane.pe] = m.adapter;
            resolve();
            break;
          case 'error':
            die(`${lane.pe} could not start: ${m.message}`);
            reject(new Error(lane.dead));
            break;
          case 'done':
          case 'failed': {
            const r = lane.runs.get(m.seq);
            lane.runs.delete(m.seq);
            if (m.type === 'done') r?.resolve({ start: m.start, end: m.end, values: m.values });
            else r?.reject(new Error(m.message));
            break;
          }
          case 'lost':
            die(m.message);
            break;
          default:
            break;
        }
      });
      worker.on('error', (e) => {
        die(`${lane.pe} thread crashed: ${shortMessage(e)}`);
        reject(new Error(lane.dead));
      });
      worker.on('exit', () => {
        die(`${lane.pe} thread exited`);
        reject(new Error(lane.dead));
      });
    });
    lane.ready.catch(() => {});
    const gpu = this.devices.gpus.get(lane.pe);
    this.post(lane, {
      type: 'init',
      pe: lane.pe,
      kind: lane.kind,
      gpu: gpu && { backend: gpu.backend, powerPreference: gpu.powerPreference, name: gpu.name },
      watch,
      epoch: this.watchdog.epoch,
    });
    return lane.ready;
  }

  /**
   * A task ran past the time limit: it fails naming node, PE and limit. Caught in a CPU twin, its
   * thread is terminated (JavaScript only: Worker.terminate() stops it) and the PE's next task
   * starts a new one; a stateful kernel's state went with it, so then the PE leaves the run (the
   * bag cannot rebuild that state). Caught inside GPU work, the thread is left alone (terminating
   * it inside Dawn aborts the process): the PE leaves the run and the agent restarts after it.
   */
  private overrun(o: Overrun): void {
    const lane = this.lanes.get(o.pe);
    if (!lane || this.stopped) return;
    const worker = lane.worker;
    const limit = `the agent's kernel time limit (${this.watchdog.limitMs / 1000} s)`;
    const fix = 'Fix the kernel, or raise the limit: pipeloom agent --kernel-timeout SECONDS';
    const host = this.devices.host;
    let message: string;
    if (o.gpu) {
      lane.stuck = true;
      message = `node ${o.node} (${o.kernel}) on ${o.pe} ran past ${limit} at iteration ${o.iteration}, inside GPU work; agent ${host} takes ${o.pe} out of this run and restarts after it to free the PE. ${fix}`;
      lane.dead = message;
    } else {
      const lostState = [...lane.stateful];
      message = `node ${o.node} (${o.kernel}) on ${o.pe} ran past ${limit} at iteration ${o.iteration}; its thread was stopped and ${o.pe} takes tasks on a new one. ${fix}`;
      if (lostState.length)
        lane.dead = `${o.pe} lost the state of ${lostState.map((n) => `node ${n}`).join(', ')} with the thread stopped after ${o.node} ran past ${limit}`;
      this.watchdog.unwatch(o.pe);
      lane.worker = undefined;
      lane.ready = undefined;
      lane.prepared = false;
      lane.stateful.clear();
      void worker?.terminate();
    }
    // The task's promise settles now, whatever the thread does (lane.worker no longer names it).
    for (const r of lane.runs.values()) r.reject(new Error(message));
    lane.runs.clear();
  }

  /** PE threads held inside GPU work past the time limit: freed only by restarting the agent. */
  get stuck(): string[] {
    return [...this.lanes.values()].filter((l) => l.stuck).map((l) => l.pe);
  }

  private post(lane: Lane, m: ToTaskPe): void {
    lane.worker?.postMessage(m);
  }

  private runOn(lane: Lane, m: Extract<ToTaskPe, { type: 'run' }>): Promise<Ran> {
    return new Promise((resolve, reject) => {
      if (lane.dead) return reject(new Error(lane.dead));
      lane.runs.set(m.seq, { resolve, reject });
      this.post(lane, m);
    });
  }

  /** Ends the run: every PE thread frees its device and ends; the trace's last batch goes out. Every call gets the same promise. */
  stop(): Promise<void> {
    this.stopping ??= this.dispose();
    return this.stopping;
  }

  private stopping: Promise<void> | undefined;

  private async dispose(): Promise<void> {
    this.stopped = true;
    await Promise.all(
      [...this.lanes.values()].map(async (lane) => {
        const worker = lane.worker;
        // A thread with a task in flight may still answer it after `freed`: never kept.
        const quiet = lane.prepared === true && lane.runs.size === 0 && !lane.dead;
        for (const r of lane.runs.values()) r.reject(new Error('run stopped'));
        lane.runs.clear();
        lane.dead ??= 'run stopped';
        // A thread held inside a Dawn call cannot be ended: the agent restarts instead (runs.ts).
        if (!worker || lane.stuck) return;
        // Let the thread destroy its device first: terminating it inside a Dawn call aborts the process.
        const freed = await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => resolve(false), 3000);
          worker.on('message', (m: FromTaskPe) => m.type === 'freed' && (clearTimeout(t), resolve(true)));
          worker.once('exit', () => (clearTimeout(t), resolve(false)));
          worker.postMessage({ type: 'free' } satisfies ToTaskPe);
        });
        // Clean: the next run on this PE takes the thread as it is (runtime/pe-threads.ts).
        if (freed && quiet && lane.worker === worker) keepPeThread('taskbag', lane.pe, worker);
        else await worker.terminate();
      }),
    );
    this.watchdog.stop();
    this.store.clear();
    this.trace.stop();
    this.trace.flush();
  }
}
