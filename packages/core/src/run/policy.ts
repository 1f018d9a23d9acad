// Dynamic execution modes' schedulers: which ready task goes to which PE. A policy is
// a pure function of the bag and the PEs' state, called on every ready, done, failed or leave
// event; it has no clock and no randomness, so identical runs make identical assignments (and a
// simulation replays a run). The Boss/Worker task bag is the first policy; cost-aware ones
// (PATS, work stealing) implement the same interface.

/** A task: one firing of one node for one iteration (one share of a split node). */
export interface BagTask {
  /** `node[share]@iteration`: the task id (exactly-once commit keys on it). */
  id: string;
  node: string;
  iteration: number;
  share: number;
  /** The node's position in the document: ties between tasks of one iteration. */
  order: number;
  /** Ids of the PEs that meet the node's `requires` (run/requires.ts). */
  capable: readonly string[];
}

/** A PE of the pool: its tasks given and not yet done or failed. */
export interface PoolPe {
  id: string;
  outstanding: number;
}

export interface PolicyState {
  /** The pool in a stable order (the rotating pointer walks it). */
  pes: readonly PoolPe[];
  /** Where the next tie between equally loaded PEs starts looking. */
  pointer: number;
}

export interface Assignment {
  task: BagTask;
  pe: string;
}

export interface Policy {
  /** Assigns what it can of `ready` (the tasks in the bag, any order); returns the assignments and the state after them. */
  assign(ready: readonly BagTask[], state: PolicyState): { assignments: Assignment[]; state: PolicyState };
}

/** Oldest first: iteration, then document order, then share. */
export function oldestFirst(a: BagTask, b: BagTask): number {
  return a.iteration - b.iteration || a.order - b.order || a.share - b.share;
}

/**
 * The Boss/Worker paper's task bag (pedemonte-boss-worker §3): walk the ready tasks oldest first,
 * skipping those with no free capable PE; give each to an idle capable PE, else to the capable
 * PE with fewest outstanding tasks, ties broken by a pointer rotating over the PEs in their
 * stable order. A PE holds at most `prefetch` outstanding tasks (2 by default: its next inputs
 * arrive while one runs); `'unbounded'` is the paper's literal reading (every ready task is
 * handed out at once).
 */
export function taskBagPolicy(opts: { prefetch?: number | 'unbounded' } = {}): Policy {
  const prefetch = opts.prefetch ?? 2;
  if (prefetch !== 'unbounded' && (!Number.isInteger(prefetch) || prefetch < 1))
    throw new Error(`taskBagPolicy: prefetch ${prefetch} is not a positive integer or 'unbounded'`);
  const limit = prefetch === 'unbounded' ? Infinity : prefetch;
  return {
    assign(ready, state) {
      const pes = state.pes.map((p) => ({ ...p }));
      let pointer = state.pointer;
      const assignments: Assignment[] = [];
      for (const task of [...ready].sort(oldestFirst)) {
        let best = -1;
        // Candidates in rotation order from the pointer: the first idle one wins, else the least loaded (first met on ties).
        for (let k = 0; k < pes.length; k++) {
          const i = (pointer + k) % pes.length;
          const pe = pes[i];
          if (pe.outstanding >= limit || !task.capable.includes(pe.id)) continue;
          if (pe.outstanding === 0) {
            best = i;
            break;
          }
          if (best < 0 || pe.outstanding < pes[best].outstanding) best = i;
        }
        if (best < 0) continue;
        pes[best].outstanding++;
        pointer = (best + 1) % pes.length;
        assignments.push({ task, pe: pes[best].id });
      }
      return { assignments, state: { pes, pointer } };
    },
  };
}

/** One task as a simulated run placed it. */
export interface Placed {
  task: BagTask;
  pe: string;
  start: number;
  end: number;
}

/**
 * A run of a bag of independent tasks under a policy, with no overhead: each PE runs its
 * assigned tasks one at a time in the order given, a task taking `duration(task, pe)`; the
 * policy is asked again whenever a task ends (PEs ending at one instant in their stable order).
 * What a policy alone makes of a set of task times: bench:taskbag's ideal, and the tests' proof
 * of the policy's rules.
 */
export function simulateBag(
  tasks: readonly BagTask[],
  pes: readonly string[],
  duration: (task: BagTask, pe: string) => number,
  policy: Policy,
): { placed: Placed[]; makespan: number } {
  let state: PolicyState = { pes: pes.map((id) => ({ id, outstanding: 0 })), pointer: 0 };
  let bag = [...tasks];
  const queues = new Map<string, BagTask[]>(pes.map((id) => [id, []]));
  const busyUntil = new Map<string, number>(pes.map((id) => [id, 0]));
  const running = new Map<string, Placed | undefined>();
  const placed: Placed[] = [];
  let now = 0;
  const give = () => {
    const r = policy.assign(bag, state);
    state = r.state;
    const given = new Set(r.assignments.map((a) => a.task.id));
    bag = bag.filter((t) => !given.has(t.id));
    for (const a of r.assignments) queues.get(a.pe)!.push(a.task);
  };
  const startNext = () => {
    for (const pe of pes) {
      if (running.get(pe) || !queues.get(pe)!.length) continue;
      const task = queues.get(pe)!.shift()!;
      const p = { task, pe, start: now, end: now + duration(task, pe) };
      running.set(pe, p);
      busyUntil.set(pe, p.end);
      placed.push(p);
    }
  };
  give();
  startNext();
  for (let guard = 0; guard <= 4 * tasks.length + 4; guard++) {
    const ends = pes.filter((pe) => running.get(pe)).map((pe) => running.get(pe)!.end);
    if (!ends.length) break;
    now = Math.min(...ends);
    for (const pe of pes) {
      const r = running.get(pe);
      if (!r || r.end !== now) continue;
      running.set(pe, undefined);
      state = { ...state, pes: state.pes.map((p) => (p.id === pe ? { ...p, outstanding: p.outstanding - 1 } : p)) };
    }
    give();
    startNext();
  }
  if (bag.length) throw new Error(`simulateBag: ${bag.length} tasks never placed (no capable PE: ${bag[0].id})`);
  return { placed, makespan: Math.max(0, ...placed.map((p) => p.end)) };
}
