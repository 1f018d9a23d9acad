import type { Action, PeProgram } from '../compile/types.js';

/**
 * The execution contract: what agents do with the per-PE programs (compile/decode.ts
 * `allPrograms`), in either sync mode. `simulate()` (compile/simulate.ts) and the agent
 * runtime both follow it; the compiler's latencies (shared/LATENCY.md) make it correct.
 *
 * Barrier mode (the paper's reference): each PE loops over cycles k = 0 .. runCycles - 1
 * and the program's phases; an action (fire or transfer) with start cycle s processes
 * iteration i = k - s when 0 <= i < iterations (`iterationOf`); an access to a buffer uses
 * slot `slotOf(k, lag, depth)` of its storage (the memory colour's slots); a phase with
 * `barrier: true` ends with a cluster-wide barrier. Every firing reads iteration k - L.
 *
 * Self-timed mode (the default): no cluster-wide barrier. Iterations are global in this
 * single-rate DFG: the action processing iteration i touches the same slots barrier mode
 * would in cycle k = s + i, and runs as soon as its waits (`selfTimedPlan`) hold. Each action
 * (each half of a host-to-host transfer) has one monotone counter, set to i + 1 when it has
 * finished iteration i. Its waits are those of barrier mode's order it depends on:
 * - a read waits for the write of the data it reads (its writer's counter);
 * - a write into a storage slot waits for every earlier access to that slot, of every buffer
 *   sharing the storage (memory colouring lets several buffers of one PE share it): for each
 *   action touching the storage, its last access to the slot before this write in barrier
 *   mode's order (cycle, phase, action). Counters are monotone, so waiting for an action's
 *   last access covers its earlier ones too. (We wait for every accessor of the storage, not
 *   only the buffer that occupied the slot just before: in fill and drain some of those
 *   occupants are absent, and the chain through them would break.)
 * - the sending half of a host-to-host transfer also waits for a credit: the receiving half
 *   has finished iteration i - depth(destination storage), so a sender cannot run arbitrarily
 *   far ahead; the receiving half also waits for the data itself (it travels with its
 *   readiness). Credits are the only waits on another host's counters.
 * Waits implied by a stream's own order are left out: a PE's firings are one stream (in
 * program order: cycle, then phase, then action), and each action's iterations run in order.
 * Any other grouping of the transfers into streams that keeps program order is also valid.
 *
 * Why it cannot deadlock: every wait targets an access in an earlier cycle, or an earlier
 * phase of the same cycle (simulate.test.ts checks it), every stream runs in barrier mode's
 * order, and a receiving half waits only for its own sending half besides; so in any state the
 * earliest unfinished action in that order (a send before its receive) can run. Capping
 * thresholds at the run's iterations keeps this true at the run's end. Why results are
 * identical: every slot holds, when read, the data iteration barrier mode would have there
 * (same writes, same slots, the same happens-before for every pair of conflicting accesses).
 *
 * The plan needs every PE's programs (a credit names the receiving host's counter, and a
 * counter id must mean the same on every host): the coordinator computes it once and sends
 * each agent its host's part in the deploy (`planForHosts`), with the counters' full list.
 */

export type SyncMode = 'self-timed' | 'barrier';

export const SYNC_MODES: readonly SyncMode[] = ['self-timed', 'barrier'];

/** Slot of a buffer access in cycle k (LATENCY.md): ((k - lag) mod depth), depth = its storage's slots. */
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

/** One access to a storage, placed in barrier mode's order on the storage's PE. */
interface StorageAccess {
  counter: number;
  /** Accesses of one stream are ordered by the stream itself: a PE's firings are one stream. */
  stream: string;
  buffer: string;
  phase: number;
  position: number;
  startCycle: number;
  lag: number;
  write: boolean;
}

/**
 * The self-timed plan of a run (see the header): `programs` is every program of the run
 * (compile/decode.ts `allPrograms`), `pes` every PE's host and kind. Transfers are matched
 * across programs by name (the buffers they connect), never by object identity, so programs
 * parsed from JSON work too.
 */
export function selfTimedPlan(programs: readonly PeProgram[], pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }>, options: PlanOptions = {}): SelfTimedPlan {
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
  // The storage of each buffer (its PE and colour) and the storage's slots.
  const storageOf = new Map<string, string>();
  const slots = new Map<string, number>();
  for (const p of programs) {
    for (const a of p.allocations) {
      const key = `${p.pe}/${a.color}`;
      slots.set(key, Math.max(1, a.depth));
      for (const b of a.buffers) storageOf.set(b, key);
    }
  }
  const storage = (buffer: string) => {
    const s = storageOf.get(buffer);
    if (s === undefined) throw new Error(`selfTimedPlan: buffer ${buffer} has no storage`);
    return s;
  };

  // Every access by storage, every buffer's writer, each counter's own accesses, and where
  // each counter's action sits in the programs.
  const byStorage = new Map<string, StorageAccess[]>();
  const writer = new Map<string, StorageAccess>();
  const own = new Map<number, StorageAccess[]>();
  const credits = new Map<number, { counter: number; buffer: string }>();
  const placed: { pe: string; phase: number; index: number; role: keyof ActionPlan; counter: number }[] = [];
  const add = (s: StorageAccess) => {
    const key = storage(s.buffer);
    (byStorage.get(key) ?? byStorage.set(key, []).get(key)!).push(s);
    if (s.write) writer.set(s.buffer, s);
    (own.get(s.counter) ?? own.set(s.counter, []).get(s.counter)!).push(s);
  };
  for (const p of programs) {
    p.phases.forEach((ph, phase) =>
      ph.actions.forEach((a, position) => {
        if (a.op === 'fire') {
          const c = counter(`fire ${a.node}`, p.host);
          const at = { counter: c, stream: `fires ${p.pe}`, phase, position, startCycle: a.startCycle };
          for (const x of Object.values(a.inputs)) add({ ...at, buffer: x.buffer, lag: x.lag, write: false });
          for (const x of Object.values(a.outputs)) add({ ...at, buffer: x.buffer, lag: x.lag, write: true });
          placed.push({ pe: p.pe, phase, index: position, role: 'access', counter: c });
          return;
        }
        if (a.op !== 'transfer') return;
        const name = `${a.from.buffer}->${a.to.buffer}`;
        const local = hostOf(a.fromPe) === hostOf(a.toPe);
        const sender = p.pe === a.fromPe;
        const c = counter(local ? `transfer ${name}` : `${sender ? 'send' : 'receive'} ${name}`, p.host);
        const at = { counter: c, stream: counters[c].name, phase, position, startCycle: a.startCycle };
        // Each PE listing the transfer places the access to its own storage.
        if (sender) add({ ...at, buffer: a.from.buffer, lag: a.from.lag, write: false });
        if (p.pe === a.toPe) add({ ...at, buffer: a.to.buffer, lag: a.to.lag, write: true });
        if (!local && sender) credits.set(c, { counter: counter(`receive ${name}`, hostOf(a.toPe)), buffer: a.to.buffer });
        placed.push({ pe: p.pe, phase, index: position, role: local ? 'access' : sender ? 'send' : 'receive', counter: c });
      }),
    );
  }

  const plans = new Map<number, Access>();
  for (const [c, list] of own) {
    const waits = new Map<number, number>();
    const need = (target: number, offset: number) => waits.set(target, Math.max(offset, waits.get(target) ?? -Infinity));
    for (const a of list) {
      if (!a.write) {
        // The write of the data iteration this read sees: barrier mode wrote it in cycle k - lag.
        const w = writer.get(a.buffer);
        if (!w) throw new Error(`selfTimedPlan: buffer ${a.buffer} has no writer`);
        if (w.counter !== c && w.stream !== a.stream) need(w.counter, a.startCycle - a.lag - w.startCycle + 1);
        continue;
      }
      // Every earlier access to the slot this write fills, of every buffer sharing the storage:
      // each accessor's last one, d cycles back (d = 0: earlier in this cycle's order).
      const key = storage(a.buffer);
      const depth = slots.get(key)!;
      for (const x of byStorage.get(key)!) {
        if (x.counter === c || x.stream === a.stream) continue;
        if (options.omitSharedStorageWaits && x.buffer !== a.buffer) continue;
        let d = ((-x.lag % depth) + depth) % depth;
        if (d === 0 && !(x.phase < a.phase || (x.phase === a.phase && x.position < a.position))) d = depth;
        need(x.counter, a.startCycle - d - x.startCycle + 1);
      }
    }
    const credit = credits.get(c);
    if (credit) need(credit.counter, 1 - slots.get(storage(credit.buffer))!);
    plans.set(c, { waits: [...waits].map(([counter, offset]) => ({ counter, offset })), signal: c });
  }

  const actions: SelfTimedPlan['actions'] = Object.create(null);
  for (const p of programs) actions[p.pe] = p.phases.map((ph) => ph.actions.map(() => ({})));
  for (const e of placed) actions[e.pe][e.phase][e.index] = { [e.role]: plans.get(e.counter) ?? { waits: [], signal: e.counter } };
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
