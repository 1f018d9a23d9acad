import type { PeProgram } from '../compile/types.js';

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
 * Why it cannot deadlock: every wait targets an access that comes earlier in barrier mode's
 * order (an earlier cycle or phase, or an earlier firing of the same PE's stream), and every
 * stream runs in that order; barrier mode's order is a total order consistent with every wait,
 * so some unfinished action is always ready. Why results are identical: every slot holds,
 * when read, the data iteration barrier mode would have there (same writes, same slots, the
 * same happens-before for every pair of conflicting accesses).
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
 * action finished all its iterations before it). A threshold <= 0 holds at once (fill).
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

/** The self-timed plan of a run; `programs` is every program of the run (compile/decode.ts `allPrograms`). */
export function selfTimedPlan(programs: readonly PeProgram[], pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }>): SelfTimedPlan {
  void programs;
  void pes;
  throw new Error('selfTimedPlan: not written yet');
}

/** The part of a plan an agent serving `hosts` needs: every counter (ids are global), the actions of its PEs. */
export function planForHosts(plan: SelfTimedPlan, programs: readonly PeProgram[], hosts: Iterable<string>): SelfTimedPlan {
  const wanted = new Set(hosts);
  const actions: SelfTimedPlan['actions'] = Object.create(null);
  for (const p of programs) if (wanted.has(p.host) && plan.actions[p.pe]) actions[p.pe] = plan.actions[p.pe];
  return { counters: plan.counters, actions };
}
