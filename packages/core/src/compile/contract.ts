import type { SyncMode } from '../document/types.js';
import type { Action, PeProgram } from './types.js';

// The execution contract agents rely on, as code: what they do with the per-PE programs in
// either sync mode, why it cannot deadlock and why both modes give the same results are in
// docs/contract.md; simulate() (simulate.ts) and the agent runtime follow it.

/** Slot of a buffer access in cycle k (docs/contract.md): ((k - lag) mod depth), depth = its storage's slots. */
export function slotOf(k: number, lag: number, depth: number): number {
  return (((k - lag) % depth) + depth) % depth;
}

/** The iteration an action with start cycle `startCycle` processes in cycle k; -1 outside the run. */
export function iterationOf(startCycle: number, k: number, iterations: number): number {
  const i = k - startCycle;
  return i >= 0 && i < iterations ? i : -1;
}

/** Cycles a barrier-mode run lasts: the last action's start cycle plus the iterations. */
export function runCycles(programs: readonly PeProgram[], iterations: number): number {
  let last = 0;
  for (const p of programs) for (const ph of p.phases) for (const a of ph.actions) if (a.op !== 'barrier') last = Math.max(last, a.startCycle);
  return last + iterations;
}

/** Counter ids are indices into `SelfTimedPlan.counters`; `host` is where the counter lives (its signaller's host). */
export interface Counter {
  name: string;
  host: string;
}

/**
 * Before iteration i: wait until counters[counter] >= threshold(wait, i, iterations), that is
 * i + offset capped at `iterations` (an access beyond the run did not happen: the counter's
 * action finished all its iterations before it). A threshold <= 0 holds at once (fill). The cap
 * matters: near the run's end a write may wait on an accessor that started earlier and has
 * already stopped (offset > 1), and i + offset uncapped would never be reached.
 */
export interface Wait {
  counter: number;
  offset: number;
}

/** The value `wait`'s counter must reach before iteration i (<= 0: no wait). */
export function threshold(wait: Wait, i: number, iterations: number): number {
  return Math.min(i + wait.offset, iterations);
}

/** One action's (or one half's) waits, and the counter it sets to i + 1 when iteration i is done (-1: none). */
export interface Access {
  waits: Wait[];
  signal: number;
}

/** What one action entry of a PE's program does in self-timed mode. */
export interface ActionPlan {
  /** A firing, or a transfer inside one host (both PEs' entries hold the same object). */
  access?: Access;
  /** The sending half of a host-to-host transfer (in the sender PE's entry). */
  send?: Access;
  /** The receiving half of a host-to-host transfer (in the receiver PE's entry). */
  receive?: Access;
}

/**
 * Per PE, per phase, per action (same indices as program.phases[p].actions): what it waits for
 * and signals. A host-to-host transfer has a `send` Access on the sender's host and a `receive`
 * Access on the receiver's host (waits on another host's counters are served by credit messages).
 */
export interface SelfTimedPlan {
  counters: Counter[];
  actions: Record<string, ActionPlan[][]>;
}

/** Options of `selfTimedPlan`. */
export interface PlanOptions {
  /** Leave out a write's waits on accessors of other buffers sharing its storage: only for the test proving they are needed. */
  omitSharedStorageWaits?: boolean;
}

/** Roles of an action entry in a plan (`ActionPlan`'s fields). */
const ACCESS = 0;
const SEND = 1;
const RECEIVE = 2;

/**
 * Accesses to storages, placed in barrier mode's order, one column per field (a 10,000-node
 * graph has ~100,000 of them: an object and string keys per access cost over a second there).
 * A stream is an int: a transfer's own counter, or -1 - k for the k-th PE's firings.
 */
class AccessColumns {
  length = 0;
  counter = new Int32Array(1024);
  stream = new Int32Array(1024);
  buffer = new Int32Array(1024);
  phase = new Int32Array(1024);
  position = new Int32Array(1024);
  startCycle = new Float64Array(1024);
  lag = new Float64Array(1024);
  write = new Uint8Array(1024);

  add(counter: number, stream: number, buffer: number, phase: number, position: number, startCycle: number, lag: number, write: boolean): number {
    const i = this.length++;
    if (i === this.counter.length) {
      const grow = <T extends Int32Array | Float64Array | Uint8Array>(a: T): T => {
        const b = new (a.constructor as new (n: number) => T)(2 * a.length);
        b.set(a);
        return b;
      };
      this.counter = grow(this.counter);
      this.stream = grow(this.stream);
      this.buffer = grow(this.buffer);
      this.phase = grow(this.phase);
      this.position = grow(this.position);
      this.startCycle = grow(this.startCycle);
      this.lag = grow(this.lag);
      this.write = grow(this.write);
    }
    this.counter[i] = counter;
    this.stream[i] = stream;
    this.buffer[i] = buffer;
    this.phase[i] = phase;
    this.position[i] = position;
    this.startCycle[i] = startCycle;
    this.lag[i] = lag;
    this.write[i] = write ? 1 : 0;
    return i;
  }

  /** The accesses grouped by `key(i)` (< groups), each group in access order: start[g] .. start[g + 1] of list. */
  groups(groups: number, key: (i: number) => number): { start: Int32Array; list: Int32Array } {
    const start = new Int32Array(groups + 1);
    for (let i = 0; i < this.length; i++) start[key(i) + 1]++;
    for (let g = 0; g < groups; g++) start[g + 1] += start[g];
    const next = start.slice(0, groups);
    const list = new Int32Array(this.length);
    for (let i = 0; i < this.length; i++) list[next[key(i)]++] = i;
    return { start, list };
  }
}

/**
 * The self-timed plan of a run (see the header): `programs` is every program of the run
 * (compile/decode.ts `allPrograms`), `pes` every PE's host and kind. Transfers are matched
 * across programs by name (the buffers they connect), never by object identity, so programs
 * parsed from JSON work too. Linear in the accesses plus, per write, the accesses sharing its
 * storage (a handful: memory colouring shares a slot among a PE's few buffers).
 */
export function selfTimedPlan(
  programs: readonly PeProgram[],
  pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }>,
  options: PlanOptions = {},
): SelfTimedPlan {
  const counters: Counter[] = [];
  const counterOf = new Map<string, number>();
  const counter = (name: string, host: string) => {
    let c = counterOf.get(name);
    if (c === undefined) {
      counterOf.set(name, (c = counters.length));
      counters.push({ name, host });
    }
    return c;
  };
  const hostOf = (pe: string) => {
    const h = pes[pe]?.host;
    if (h === undefined) throw new Error(`selfTimedPlan: no host for PE ${pe}`);
    return h;
  };
  // Buffers and storages (a PE's memory colour) by number: each buffer's storage (-1: none, as
  // for a buffer only a transfer names), each storage's slots.
  const bufferOf = new Map<string, number>();
  const storageOfBuffer: number[] = [];
  const buffer = (name: string) => {
    let k = bufferOf.get(name);
    if (k === undefined) bufferOf.set(name, (k = storageOfBuffer.push(-1) - 1));
    return k;
  };
  const storageIds = new Map<string, Map<number, number>>();
  const slots: number[] = [];
  for (const p of programs) {
    let colors = storageIds.get(p.pe);
    if (!colors) storageIds.set(p.pe, (colors = new Map()));
    for (const a of p.allocations) {
      let s = colors.get(a.color);
      if (s === undefined) colors.set(a.color, (s = slots.length));
      slots[s] = Math.max(1, a.depth);
      for (const b of a.buffers) storageOfBuffer[buffer(b)] = s;
    }
  }
  // Buffers numbered so far have a storage; only those are accessed. Typed arrays indexed by
  // them stay dense (scattered writes into a plain array can turn it into a hash table).
  const stored = storageOfBuffer.length;
  const storage = (b: number) => {
    const s = storageOfBuffer[b];
    if (s < 0) throw new Error(`selfTimedPlan: buffer ${[...bufferOf.keys()][b]} has no storage`);
    return s;
  };
  // A transfer's counter by its role (0 both halves, 1 send, 2 receive) and buffers' numbers,
  // remembered per destination buffer (it has one writer): the name is made once per counter,
  // not once per PE listing the transfer. A different source there falls back to the name.
  const memoFrom = [0, 1, 2].map(() => new Int32Array(stored).fill(-1));
  const memoCounter = [0, 1, 2].map(() => new Int32Array(stored));
  const transferCounter = (role: 0 | 1 | 2, from: number, to: number, a: Extract<Action, { op: 'transfer' }>, host: string) => {
    if (to < stored && memoFrom[role][to] === from) return memoCounter[role][to];
    const c = counter(`${role === 0 ? 'transfer' : role === 1 ? 'send' : 'receive'} ${a.from.buffer}->${a.to.buffer}`, host);
    if (to < stored) {
      memoFrom[role][to] = from;
      memoCounter[role][to] = c;
    }
    return c;
  };

  // Every access, every buffer's writer, and where each counter's action sits in the programs
  // (`placed`: program, phase, position, role, counter, five numbers per entry).
  const acc = new AccessColumns();
  const writer = new Int32Array(stored).fill(-1);
  const credit: { counter: number; buffer: number }[] = [];
  const placed: number[] = [];
  const add = (counter: number, stream: number, b: number, phase: number, position: number, startCycle: number, lag: number, write: boolean) => {
    storage(b);
    const i = acc.add(counter, stream, b, phase, position, startCycle, lag, write);
    if (write) writer[b] = i;
  };
  const fireStreams = new Map<string, number>();
  programs.forEach((p, program) => {
    let fires = fireStreams.get(p.pe);
    if (fires === undefined) fireStreams.set(p.pe, (fires = -1 - fireStreams.size));
    const phases = p.phases;
    for (let phase = 0; phase < phases.length; phase++) {
      const list = phases[phase].actions;
      for (let position = 0; position < list.length; position++) {
        const a = list[position];
        if (a.op === 'fire') {
          const c = counter(`fire ${a.node}`, p.host);
          for (const x of Object.values(a.inputs)) add(c, fires, buffer(x.buffer), phase, position, a.startCycle, x.lag, false);
          // An input fed in parts reads each part (its own writer), views of one base or gathered.
          if (a.parts)
            for (const list of Object.values(a.parts)) for (const x of list) add(c, fires, buffer(x.buffer), phase, position, a.startCycle, x.lag, false);
          for (const x of Object.values(a.outputs)) add(c, fires, buffer(x.buffer), phase, position, a.startCycle, x.lag, true);
          placed.push(program, phase, position, ACCESS, c);
          continue;
        }
        if (a.op !== 'transfer') continue;
        const local = hostOf(a.fromPe) === hostOf(a.toPe);
        const sender = p.pe === a.fromPe;
        const from = buffer(a.from.buffer);
        const to = buffer(a.to.buffer);
        const c = transferCounter(local ? 0 : sender ? 1 : 2, from, to, a, p.host);
        // Each PE listing the transfer places the access to its own storage.
        if (sender) add(c, c, from, phase, position, a.startCycle, a.from.lag, false);
        if (p.pe === a.toPe) add(c, c, to, phase, position, a.startCycle, a.to.lag, true);
        if (!local && sender) credit[c] = { counter: transferCounter(2, from, to, a, hostOf(a.toPe)), buffer: to };
        placed.push(program, phase, position, local ? ACCESS : sender ? SEND : RECEIVE, c);
      }
    }
  });

  // The accesses of each storage and of each counter, in access order; counters in the order of
  // their first access.
  const byStorage = acc.groups(slots.length, (i) => storageOfBuffer[acc.buffer[i]]);
  const own = acc.groups(counters.length, (i) => acc.counter[i]);
  const owners: number[] = [];
  const first = new Uint8Array(counters.length);
  for (let i = 0; i < acc.length; i++) {
    const c = acc.counter[i];
    if (!first[c]) owners.push(c);
    first[c] = 1;
  }

  // Each counter's waits, one entry per target in first-need order, at the largest offset:
  // `at[target]` is the entry's position while `owner[target]` says it belongs to this counter.
  const plans: (Access | undefined)[] = new Array(counters.length);
  const owner = new Int32Array(counters.length).fill(-1);
  const at = new Int32Array(counters.length);
  for (const c of owners) {
    const waits: Wait[] = [];
    const need = (target: number, offset: number) => {
      if (owner[target] === c) {
        const w = waits[at[target]];
        if (offset > w.offset) w.offset = offset;
      } else {
        owner[target] = c;
        at[target] = waits.push({ counter: target, offset }) - 1;
      }
    };
    for (let o = own.start[c]; o < own.start[c + 1]; o++) {
      const i = own.list[o];
      const stream = acc.stream[i];
      const b = acc.buffer[i];
      if (!acc.write[i]) {
        // The write of the data iteration this read sees: barrier mode wrote it in cycle k - lag.
        const w = writer[b];
        if (w < 0) throw new Error(`selfTimedPlan: buffer ${[...bufferOf.keys()][b]} has no writer`);
        if (acc.counter[w] !== c && acc.stream[w] !== stream) need(acc.counter[w], acc.startCycle[i] - acc.lag[i] - acc.startCycle[w] + 1);
        continue;
      }
      // Every earlier access to the slot this write fills, of every buffer sharing the storage:
      // each accessor's last one, d cycles back (d = 0: earlier in this cycle's order).
      const s = storageOfBuffer[b];
      const depth = slots[s];
      const phase = acc.phase[i];
      const position = acc.position[i];
      for (let y = byStorage.start[s]; y < byStorage.start[s + 1]; y++) {
        const x = byStorage.list[y];
        if (acc.counter[x] === c || acc.stream[x] === stream) continue;
        if (options.omitSharedStorageWaits && acc.buffer[x] !== b) continue;
        let d = ((-acc.lag[x] % depth) + depth) % depth;
        if (d === 0 && !(acc.phase[x] < phase || (acc.phase[x] === phase && acc.position[x] < position))) d = depth;
        need(acc.counter[x], acc.startCycle[i] - d - acc.startCycle[x] + 1);
      }
    }
    const cr = credit[c];
    if (cr) need(cr.counter, 1 - slots[storage(cr.buffer)]);
    plans[c] = { waits, signal: c };
  }

  const actions: SelfTimedPlan['actions'] = Object.create(null);
  for (const p of programs) actions[p.pe] = p.phases.map((ph) => new Array(ph.actions.length));
  for (let e = 0; e < placed.length; e += 5) {
    const c = placed[e + 4];
    const x = plans[c] ?? { waits: [], signal: c };
    const role = placed[e + 3];
    actions[programs[placed[e]].pe][placed[e + 1]][placed[e + 2]] = role === ACCESS ? { access: x } : role === SEND ? { send: x } : { receive: x };
  }
  // Entries nothing placed (barriers) are empty.
  for (const p of programs) for (const list of actions[p.pe]) for (let i = 0; i < list.length; i++) list[i] ??= {};
  return { counters, actions };
}

/** The part of a plan an agent serving `hosts` needs: every counter (ids are global), the actions of its PEs. */
export function planForHosts(plan: SelfTimedPlan, programs: readonly PeProgram[], hosts: Iterable<string>): SelfTimedPlan {
  const wanted = new Set(hosts);
  const actions: SelfTimedPlan['actions'] = Object.create(null);
  for (const p of programs) if (wanted.has(p.host) && plan.actions[p.pe]) actions[p.pe] = plan.actions[p.pe];
  return { counters: plan.counters, actions };
}

/** A fire or transfer (what a phase runs besides its barrier). */
export type RunAction = Exclude<Action, { op: 'barrier' }>;

/** An action of a program active in some cycle: where it sits and the iteration it processes. */
export interface ActiveAction {
  phase: number;
  index: number;
  action: RunAction;
  iteration: number;
}

/** What a PE does in cycle k of a barrier-mode run: each phase's actions active in k, with the iteration each processes. */
export function cycleActions(program: PeProgram, k: number, iterations: number): ActiveAction[][] {
  return program.phases.map((ph, phase) => {
    const out: ActiveAction[] = [];
    ph.actions.forEach((action, index) => {
      if (action.op === 'barrier') return;
      const iteration = iterationOf(action.startCycle, k, iterations);
      if (iteration >= 0) out.push({ phase, index, action, iteration });
    });
    return out;
  });
}
