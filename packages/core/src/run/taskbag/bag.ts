import { majorOf } from '@pipeloom/kernels/specs';
import type { FailureReport, BagInput, BagTaskMessage } from '../protocol.js';
import type { Policy, PolicyState, BagTask } from '../policy.js';
import { failingClause, type PeCapabilities } from '../../document/requires.js';
import { outputKey, taskId, type BagGraph, type BagGraphNode } from './graph.js';

// The task bag's bookkeeping, as a pure state machine (no clock, no sockets): the coordinator
// feeds it what happens (start, a task done or failed, an agent leaving) and sends the commands
// it returns (a task to an agent, keys to free, the run's end). It decides readiness (inputs of
// the iteration committed, at most `window` iterations in flight), asks the policy where ready
// tasks go, keeps exactly one commit per task id, requeues the tasks of a PE that left ahead of
// newer ones (oldest first is the policy's order) and recomputes outputs lost with it.

export interface BagPe {
  id: string;
  host: string;
  capabilities?: PeCapabilities;
  /** The kernels its agent has, as `id@major` (absent: not reported, any is assumed). */
  kernels?: ReadonlySet<string>;
}

/** How a PE's agent names a kernel it has, major version included. */
export const kernelMajor = (id: string, version: string) => `${id}@${majorOf(version)}`;

export interface BagOptions {
  iterations: number;
  /** Most iterations in flight (default 2). */
  window?: number;
  policy: Policy;
  /** Tries of one task before the run fails (default 3). */
  attempts?: number;
}

export type BagCommand =
  | { type: 'task'; host: string; task: Omit<BagTaskMessage, 'type' | 'runId'> }
  | { type: 'free'; host: string; keys: string[] }
  | { type: 'finished' }
  | { type: 'fail'; failure: FailureReport };

export interface BagCounts {
  tasks: number;
  committed: number;
  /** Results of superseded attempts (or of agents that had left), thrown away. */
  discarded: number;
  /** Tasks put back in the bag (their PE left or they failed). */
  requeued: number;
  /** Committed tasks run again because their outputs were lost. */
  recomputed: number;
}

type Status = 'waiting' | 'given' | 'committed';

interface Task {
  node: number;
  iteration: number;
  id: string;
  status: Status;
  attempt: number;
  pe?: string;
  host?: string;
  /** Where its outputs are held once committed (undefined: nowhere, freed or lost). */
  held?: string;
  lastError?: string;
  /** The host of its last attempt (failures name it). */
  lastHost?: string;
}

/** Whether `pe` can run `node`: its agent has the kernel (same major version), the PE meets its requires, its buffers fit. */
export function capableOf(node: BagGraphNode, pe: BagPe): boolean {
  if (pe.kernels && node.version && !pe.kernels.has(kernelMajor(node.kernel, node.version))) return false;
  const caps = pe.capabilities;
  if (!caps) return !node.requires?.length;
  if (node.requires?.length && failingClause(caps, node.requires)) return false;
  if (caps.kind === 'gpu' && !node.gpu) return false;
  // The implicit clauses: every buffer the task touches fits the PE.
  const buffers = [...node.inputs.map((i) => i.bytes), ...node.outputs.map((o) => o.bytes)];
  const total = buffers.reduce((a, b) => a + b, 0);
  if (caps.memory !== undefined && total > caps.memory) return false;
  const largest = Math.max(0, ...buffers);
  const binding = caps.limits?.maxStorageBufferBindingSize;
  const buffer = caps.limits?.maxBufferSize;
  if (caps.kind === 'gpu' && ((binding !== undefined && largest > binding) || (buffer !== undefined && largest > buffer))) return false;
  return true;
}

const shareText = (node: BagGraphNode) => (node.share !== undefined ? `, share ${node.share}` : '');
const requirementText = (node: BagGraphNode) =>
  node.requires?.length ? `requires ${node.requires.map((c) => c.text).join(', ')}` : 'no requirement beyond its buffers fitting a PE';

export class TaskBag {
  private readonly tasks: Task[];
  private pool: BagPe[];
  private state: PolicyState;
  private readonly window: number;
  private readonly attempts: number;
  private readonly pinned = new Map<number, string>();
  private readonly nodeIndex: Map<string, number>;
  /** Index of the first task not committed, or below it (the window's start is found from here). */
  private low = 0;
  /** Each node's capable PEs in the pool, in pool order (made on first use; cleared when PEs leave). */
  private capable = new Map<number, string[]>();
  /** Tasks given and not done (kept as they move, not counted per event). */
  private given = 0;
  /** Ready tasks the last step left in the bag. */
  private left = 0;
  private over = false;
  readonly counts: BagCounts;

  constructor(
    private readonly graph: BagGraph,
    pes: readonly BagPe[],
    private readonly opts: BagOptions,
  ) {
    const n = graph.nodes.length;
    this.tasks = [];
    for (let it = 0; it < opts.iterations; it++) {
      for (let k = 0; k < n; k++) this.tasks.push({ node: k, iteration: it, id: taskId(graph.nodes[k].id, it), status: 'waiting', attempt: 0 });
    }
    this.pool = [...pes];
    this.state = { pes: pes.map((p) => ({ id: p.id, outstanding: 0 })), pointer: 0 };
    this.window = opts.window ?? 2;
    this.attempts = opts.attempts ?? 3;
    this.nodeIndex = new Map(graph.nodes.map((node, i) => [node.id, i]));
    this.counts = { tasks: this.tasks.length, committed: 0, discarded: 0, requeued: 0, recomputed: 0 };
  }

  private task(node: number, iteration: number): Task {
    return this.tasks[iteration * this.graph.nodes.length + node];
  }

  /** Every node with no capable PE in the pool, with each PE's reason (checked before a run starts). */
  unplaceable(): { node: BagGraphNode; pes: BagPe[] }[] {
    return this.graph.nodes.filter((_, i) => !this.capableOf(i).length).map((node) => ({ node, pes: this.pool }));
  }

  /** Ready tasks the last event left in the bag (no capable PE free): the bag's depth. */
  get depth(): number {
    return this.left;
  }

  /** Tasks given to PEs and not done. */
  get inFlight(): number {
    return this.given;
  }

  /** The pool's PEs that can run node `i` (its requires, its buffers, its kernel), cached per node: asked on every event. */
  private capableOf(i: number): string[] {
    let ids = this.capable.get(i);
    if (!ids) {
      const node = this.graph.nodes[i];
      this.capable.set(i, (ids = this.pool.filter((pe) => capableOf(node, pe)).map((pe) => pe.id)));
    }
    return ids;
  }

  start(): BagCommand[] {
    return this.step();
  }

  /** An agent says a task is done: commit it, unless it is a superseded attempt or from a PE no longer in the pool. */
  done(host: string, m: { id: string; attempt: number; pe: string }): BagCommand[] {
    if (this.over) return [];
    const t = this.find(m.id);
    if (!t || t.status !== 'given' || t.attempt !== m.attempt || t.pe !== m.pe || t.host !== host) {
      this.counts.discarded++;
      // Its outputs are no one's: the agent may drop them, unless the task's live attempt is on that same agent.
      if (t && t.held !== host && !(t.status === 'given' && t.host === host)) return [{ type: 'free', host, keys: this.keys(t) }];
      return [];
    }
    this.release(t);
    this.given--;
    t.status = 'committed';
    t.held = host;
    this.counts.committed++;
    const out: BagCommand[] = [];
    // Its reads are done: producers whose every reader committed free their outputs.
    for (const p of this.producers(t)) {
      if (p.held && !this.readersLeft(p)) {
        out.push({ type: 'free', host: p.held, keys: this.keys(p) });
        p.held = undefined;
      }
    }
    // A task nobody reads (a sink, or the run's last iterations) frees its outputs at once.
    if (!this.readersLeft(t)) {
      out.push({ type: 'free', host, keys: this.keys(t) });
      t.held = undefined;
    }
    return [...out, ...this.step()];
  }

  /**
   * An agent says a task failed. `lost`: a host an input could not be pulled from; its outputs are
   * recomputed. `peLost`: the PE can run nothing more (device lost): it leaves the pool.
   */
  failed(host: string, m: { id: string; attempt: number; pe: string; message: string; lost?: string; peLost?: boolean }): BagCommand[] {
    if (this.over) return [];
    const t = this.find(m.id);
    if (!t || t.status !== 'given' || t.attempt !== m.attempt || t.pe !== m.pe || t.host !== host) {
      this.counts.discarded++;
      return [];
    }
    this.release(t);
    this.given--;
    t.status = 'waiting';
    t.lastError = m.message;
    this.counts.requeued++;
    if (m.lost) for (const p of this.producers(t)) if (p.held === m.lost) this.lose(p);
    if (m.peLost) return this.leavePes((pe) => pe.id === m.pe, host, `${m.pe} failed: ${m.message}`, false);
    return this.step();
  }

  /** An agent left (socket closed, heartbeats stopped, device lost): its PEs leave the pool; its tasks and outputs are redone. */
  leave(host: string, reason: string): BagCommand[] {
    return this.leavePes((pe) => pe.host === host, host, `agent ${host} left: ${reason}`, true);
  }

  /** PEs leave the pool: their given tasks go back to the bag; with their agent (`outputsLost`), its outputs are recomputed. */
  private leavePes(which: (pe: BagPe) => boolean, host: string, reason: string, outputsLost: boolean): BagCommand[] {
    if (this.over) return [];
    const leaving = this.pool.filter(which);
    if (!leaving.length) return this.step();
    const gone = new Set(leaving.map((p) => p.id));
    this.pool = this.pool.filter((p) => !gone.has(p.id));
    this.capable.clear();
    this.state = { pes: this.state.pes.filter((p) => !gone.has(p.id)), pointer: 0 };
    for (const t of this.tasks) {
      if (t.status === 'given' && t.pe !== undefined && gone.has(t.pe)) {
        t.status = 'waiting';
        t.lastError = reason;
        this.given--;
        this.release(t);
        t.pe = t.host = undefined;
        this.counts.requeued++;
      }
    }
    for (const [node, pe] of this.pinned) {
      if (leaving.some((l) => l.id === pe) && this.tasks.some((t) => t.node === node && t.status !== 'committed')) {
        const n = this.graph.nodes[node];
        return this.fail({
          host,
          pe,
          node: n.id,
          message: `node "${n.id}" keeps state across iterations on ${pe}, which left the pool (${reason}); task-bag mode cannot rebuild it: run this document in static mode or restart the run`,
        });
      }
    }
    if (outputsLost) for (const t of this.tasks) if (t.held === host) this.lose(t);
    // A node no PE left can run fails the run now, not when its task comes up.
    for (const t of this.tasks) {
      if (t.status === 'committed') continue;
      const node = this.graph.nodes[t.node];
      if (!this.capableOf(t.node).length) return this.noCapable(t, host, reason);
    }
    return this.step();
  }

  /** Stops handing out tasks (the coordinator failed or stopped the run). */
  end(): void {
    this.over = true;
  }

  private find(id: string): Task | undefined {
    const at = id.lastIndexOf('@');
    const iteration = Number(id.slice(at + 1));
    if (at < 0 || !Number.isInteger(iteration) || iteration < 0 || iteration >= this.opts.iterations) return undefined;
    const node = this.nodeIndex.get(id.slice(0, at));
    return node === undefined ? undefined : this.task(node, iteration);
  }

  private release(t: Task): void {
    if (!this.state.pes.some((p) => p.id === t.pe)) return;
    this.state = { ...this.state, pes: this.state.pes.map((p) => (p.id === t.pe ? { ...p, outstanding: p.outstanding - 1 } : p)) };
  }

  private keys(t: Task): string[] {
    const n = this.graph.nodes[t.node];
    return n.outputs.map((o) => outputKey(n.id, o.port, t.iteration));
  }

  /** The producer tasks whose outputs `t` reads (initial tokens excluded). */
  private producers(t: Task): Task[] {
    const out: Task[] = [];
    for (const input of this.graph.nodes[t.node].inputs) {
      for (const part of input.parts) {
        const it = t.iteration - part.delay;
        if (it < 0) continue;
        const p = this.task(part.from, it);
        if (!out.includes(p)) out.push(p);
      }
    }
    return out;
  }

  /** Whether any task of the run still reads `t`'s outputs. */
  private readersLeft(t: Task): boolean {
    for (const c of this.graph.nodes[t.node].consumers) {
      const it = t.iteration + c.delay;
      if (it < this.opts.iterations && this.task(c.node, it).status !== 'committed') return true;
    }
    return false;
  }

  /**
   * `t`'s outputs are gone (its agent left, or a pull of them failed): if someone still reads
   * them, run it again; it is replayable, and its own inputs are recomputed as far back as needed.
   */
  private lose(t: Task): void {
    t.held = undefined;
    if (t.status !== 'committed' || !this.readersLeft(t)) return;
    t.status = 'waiting';
    this.counts.committed--;
    this.counts.recomputed++;
    this.low = Math.min(this.low, t.iteration * this.graph.nodes.length + t.node);
    for (const p of this.producers(t)) if (!p.held) this.lose(p);
  }

  private ready(): Task[] {
    const n = this.graph.nodes.length;
    while (this.low < this.tasks.length && this.tasks[this.low].status === 'committed') this.low++;
    const low = Math.floor(this.low / n);
    const out: Task[] = [];
    const limit = Math.min(this.opts.iterations, low + this.window);
    for (let i = low * n; i < limit * n; i++) {
      const t = this.tasks[i];
      if (t.status !== 'waiting') continue;
      if (this.producers(t).some((p) => p.status !== 'committed' || !p.held)) continue;
      const node = this.graph.nodes[t.node];
      if (node.stateful && t.iteration > 0 && this.task(t.node, t.iteration - 1).status !== 'committed') continue;
      out.push(t);
    }
    return out;
  }

  private noCapable(t: Task, host: string, why: string): BagCommand[] {
    const node = this.graph.nodes[t.node];
    return this.fail({
      host,
      node: node.id,
      iteration: t.iteration,
      message: `no capable PE left for task ${t.id}${shareText(node)} of node "${node.id}" (${requirementText(node)}); the last capable one was on agent ${host}: ${why}`,
    });
  }

  private fail(failure: FailureReport): BagCommand[] {
    this.over = true;
    return [{ type: 'fail', failure }];
  }

  /** Gives what the policy places; ends the run when everything is committed or a task cannot go on. */
  private step(): BagCommand[] {
    if (this.over) return [];
    if (this.counts.committed === this.tasks.length) {
      this.over = true;
      this.left = 0;
      return [{ type: 'finished' }];
    }
    const ready = this.ready();
    const bagTasks: BagTask[] = [];
    const byId = new Map<string, Task>();
    for (const t of ready) {
      const node = this.graph.nodes[t.node];
      if (t.attempt >= this.attempts) {
        return this.fail({
          host: t.lastHost ?? 'coordinator',
          pe: t.pe,
          node: node.id,
          iteration: t.iteration,
          message: `task ${t.id}${shareText(node)} of node "${node.id}" (${requirementText(node)}) failed ${t.attempt} times, last on agent ${t.lastHost ?? '?'}: ${t.lastError ?? 'unknown'}`,
        });
      }
      const pin = this.pinned.get(t.node);
      const capable = pin ? (this.pool.some((pe) => pe.id === pin) ? [pin] : []) : this.capableOf(t.node);
      if (!capable.length) return this.noCapable(t, t.lastHost ?? 'coordinator', t.lastError ?? 'no PE of the pool meets it');
      bagTasks.push({ id: t.id, node: node.id, iteration: t.iteration, share: node.share ?? 0, order: node.order, capable });
      byId.set(t.id, t);
    }
    const { assignments, state } = this.opts.policy.assign(bagTasks, this.state);
    this.state = state;
    this.left = bagTasks.length - assignments.length;
    const out: BagCommand[] = [];
    for (const a of assignments) {
      const t = byId.get(a.task.id)!;
      const pe = this.pool.find((p) => p.id === a.pe)!;
      const node = this.graph.nodes[t.node];
      if (node.stateful) this.pinned.set(t.node, pe.id);
      t.status = 'given';
      this.given++;
      t.attempt++;
      t.pe = pe.id;
      t.host = t.lastHost = pe.host;
      out.push({
        type: 'task',
        host: pe.host,
        task: {
          id: t.id,
          node: t.node,
          iteration: t.iteration,
          attempt: t.attempt,
          pe: pe.id,
          inputs: this.inputs(t),
          outputs: node.outputs.map((o) => ({ port: o.port, key: outputKey(node.id, o.port, t.iteration), bytes: o.bytes })),
        },
      });
    }
    return out;
  }

  private inputs(t: Task): BagInput[] {
    const node = this.graph.nodes[t.node];
    return node.inputs.map((input) => {
      const first = input.parts[0];
      if (first.delay > t.iteration) return { port: input.port, bytes: input.bytes, element: input.element, init: first.init ?? { value: 0 } };
      return {
        port: input.port,
        bytes: input.bytes,
        element: input.element,
        parts: input.parts.map((part) => {
          const p = this.task(part.from, t.iteration - part.delay);
          const from = this.graph.nodes[part.from];
          const size = from.outputs.find((o) => o.port === part.port)?.bytes ?? part.offset + part.bytes;
          return { key: outputKey(from.id, part.port, p.iteration), host: p.held!, size, offset: part.offset, bytes: part.bytes, at: part.at };
        }),
      };
    });
  }
}
