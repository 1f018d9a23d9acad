import type { BufferId, PeId } from '../ids.js';
import { cycleActions, runCycles, selfTimedPlan, slotOf, threshold, type Access, type PlanOptions, type RunAction, type SelfTimedPlan, type SyncMode } from '../run/contract.js';
import { mulberry32, randomInt } from '../util/random.js';
import { allPrograms, bufferNodes } from './decode.js';
import type { BufferAccess, ImplementationGraph, PeProgram } from './types.js';

// A model of what agents do with the programs (run/contract.ts): which iteration of which
// source each storage slot holds. Buffers of one memory colour share storage, so a wrong
// colouring shows up as a wrong read. Barrier mode runs cycle by cycle; self-timed mode runs
// the plan's waits event by event in a seeded random order with random durations. Together
// they prove the latency pass, the phase order, the slot lags, the colouring and the
// self-timed waits (property-tested over random graphs in simulate.test.ts).

export interface SimulationResult {
  /** Empty when every read saw exactly the iteration it should (and, self-timed, nothing raced or deadlocked). */
  violations: string[];
  /** Firings per node. */
  fires: Record<string, number>;
  /** Barrier mode: cycles run. Self-timed: the simulated time the run took (random durations). */
  cycles: number;
}

export interface SimulateOptions {
  /** Default 'barrier'. */
  sync?: SyncMode;
  /** Self-timed: the seed of the interleaving (start order and durations). */
  seed?: number;
  maxViolations?: number;
  /** Self-timed: plan options (the test that drops the shared-storage waits). */
  plan?: PlanOptions;
}

interface Content {
  source: string;
  iteration: number;
}

type Thread = { name: string; actions: RunAction[] };

/** Storage of every buffer: its PE, colour and the colour's slots. */
function storageMap(programs: readonly PeProgram[]): Map<BufferId, { pe: PeId; color: number; depth: number }> {
  const storage = new Map<BufferId, { pe: PeId; color: number; depth: number }>();
  for (const p of programs) for (const a of p.allocations) for (const b of a.buffers) storage.set(b, { pe: p.pe, color: a.color, depth: a.depth });
  return storage;
}

export function simulate(ig: ImplementationGraph, iterations: number, options: SimulateOptions = {}): SimulationResult {
  return options.sync === 'self-timed' ? simulateSelfTimed(ig, iterations, options) : simulateBarrier(ig, iterations, options.maxViolations ?? 20);
}

/**
 * Barrier mode. Within a phase every transfer is its own thread and each PE's firings one
 * thread in order; a thread sees the state at the phase's start plus its own writes. A slot
 * written by one thread and touched by another in the same phase is a race, reported.
 */
/** What both modes' simulations start from: the run's programs, where each buffer lives, and the violations found so far. */
function simulation(ig: ImplementationGraph, maxViolations: number) {
  const buffer = new Map(bufferNodes(ig).map((b) => [b.id, b]));
  const programs = Object.values(allPrograms(ig));
  const storage = storageMap(programs);
  const violations: string[] = [];
  const fires: Record<string, number> = Object.create(null);
  const report = (m: string) => {
    if (violations.length < maxViolations) violations.push(m);
  };
  /** The storage slot an access touches in cycle k (PE, colour, slot). */
  const slotKey = (k: number, access: BufferAccess) => {
    const s = storage.get(access.buffer)!;
    if (s.depth < buffer.get(access.buffer)!.depth) report(`${access.buffer} has ${buffer.get(access.buffer)!.depth} slots but its storage ${s.depth}`);
    return `${s.pe}/${s.color}/${slotOf(k, access.lag, s.depth)}`;
  };
  return { buffer, programs, storage, violations, fires, report, slotKey };
}

function simulateBarrier(ig: ImplementationGraph, iterations: number, maxViolations: number): SimulationResult {
  const { buffer, programs, violations, fires, report, slotKey } = simulation(ig, maxViolations);
  const state = new Map<string, Content>();

  const cycles = runCycles(programs, iterations);
  for (let k = 0; k < cycles; k++) {
    const active = programs.map((p) => cycleActions(p, k, iterations));
    for (let ph = 0; ph < ig.phases.length; ph++) {
      const threads: Thread[] = [];
      programs.forEach((p, n) => {
        const fireThread: Thread = { name: `${p.pe} firings`, actions: [] };
        for (const { action: a } of active[n][ph]) {
          if (a.op === 'transfer' && a.fromPe === p.pe) threads.push({ name: `transfer ${a.from.buffer}->${a.to.buffer}`, actions: [a] });
          else if (a.op === 'fire') fireThread.actions.push(a);
        }
        if (fireThread.actions.length) threads.push(fireThread);
      });
      const writes = new Map<string, { thread: string; content: Content }>();
      const reads = new Map<string, Set<string>>();
      for (const t of threads) {
        const own = new Map<string, Content>();
        const read = (key: string) => {
          (reads.get(key) ?? reads.set(key, new Set()).get(key)!).add(t.name);
          return own.get(key) ?? state.get(key);
        };
        const write = (key: string, content: Content) => {
          const other = writes.get(key);
          if (other && other.thread !== t.name) report(`cycle ${k}, phase ${ig.phases[ph]}: ${t.name} and ${other.thread} both write slot ${key}`);
          own.set(key, content);
          writes.set(key, { thread: t.name, content });
        };
        for (const a of t.actions) {
          const it = k - a.startCycle;
          const where = `cycle ${k}, phase ${ig.phases[ph]}`;
          if (a.op === 'transfer') {
            const got = read(slotKey(k, a.from));
            expectRead(report, where, `transfer ${a.from.buffer}->${a.to.buffer}`, a.from.buffer, buffer, got, it);
            write(slotKey(k, a.to), got ?? { source: '?', iteration: -1 });
          } else {
            fires[a.node] = (fires[a.node] ?? 0) + 1;
            for (const [port, access] of Object.entries(a.inputs)) expectRead(report, where, `${a.node}.${port}`, access.buffer, buffer, read(slotKey(k, access)), it);
            for (const [port, access] of Object.entries(a.outputs)) write(slotKey(k, access), { source: `${a.node}.${port}`, iteration: it });
          }
        }
      }
      for (const [key, w] of writes) {
        for (const r of reads.get(key) ?? []) {
          if (r !== w.thread) report(`cycle ${k}, phase ${ig.phases[ph]}: ${r} reads slot ${key} while ${w.thread} writes it`);
        }
        state.set(key, w.content);
      }
    }
  }
  return { violations, fires, cycles };
}

/** A read must see its buffer's source at exactly the iteration the action processes. */
function expectRead(report: (m: string) => void, where: string, who: string, from: BufferId, buffer: Map<BufferId, { source: string; port: string }>, got: Content | undefined, it: number): void {
  const src = buffer.get(from)!;
  const want = `${src.source}.${src.port}`;
  if (!got || got.source !== want || got.iteration !== it) report(`${where}: ${who} reads ${describe(got)} from ${from}, expected ${want} iteration ${it}`);
}

/** One stream of self-timed execution: a PE's firings, a transfer, or one half of a host-to-host transfer. */
interface Stream {
  name: string;
  /** Its items in program order: the action (or half), its plan and the iteration. */
  items: { action: RunAction; role: 'fire' | 'transfer' | 'send' | 'receive'; plan: Access; iteration: number }[];
  next: number;
  /** In progress: when it ends and what it holds. */
  busy?: { end: number; reads: { key: string; version: number; who: string }[]; writes: string[] };
}

/**
 * Self-timed mode: every stream's next item starts once its waits hold (a receive also once its
 * data arrived), in a seeded random order with random durations. A read must see the right
 * iteration when it starts and the slot must not change until it ends; a write holds its slot
 * while it runs. No runnable item with unfinished ones left is a deadlock.
 */
function simulateSelfTimed(ig: ImplementationGraph, iterations: number, options: SimulateOptions): SimulationResult {
  const maxViolations = options.maxViolations ?? 20;
  const rand = mulberry32(options.seed ?? 1);
  const { buffer, programs, storage, violations, fires, report, slotKey } = simulation(ig, maxViolations);
  const pes = Object.fromEntries(programs.map((p) => [p.pe, { host: p.host as string, kind: p.kind }]));
  const plan: SelfTimedPlan = selfTimedPlan(programs, pes, options.plan);

  // Streams: each PE's firings in program order; each transfer (or half) over its iterations.
  const streams = new Map<string, Stream>();
  const stream = (name: string) => streams.get(name) ?? streams.set(name, { name, items: [], next: 0 }).get(name)!;
  const cycles = runCycles(programs, iterations);
  for (const p of programs) {
    const entries = plan.actions[p.pe];
    for (let k = 0; k < cycles; k++) {
      for (const phase of cycleActions(p, k, iterations)) {
        for (const { action, index, iteration, phase: f } of phase) {
          const e = entries[f][index];
          if (action.op === 'fire') stream(`fires ${p.pe}`).items.push({ action, role: 'fire', plan: e.access!, iteration });
          // A transfer's items are added once, by the PE that drives each part.
          else if (e.access && action.fromPe === p.pe) stream(plan.counters[e.access.signal].name).items.push({ action, role: 'transfer', plan: e.access, iteration });
          else if (e.send) stream(plan.counters[e.send.signal].name).items.push({ action, role: 'send', plan: e.send, iteration });
          else if (e.receive) stream(plan.counters[e.receive.signal].name).items.push({ action, role: 'receive', plan: e.receive, iteration });
        }
      }
    }
  }

  const counters = new Int32Array(plan.counters.length);
  const counterIndex = new Map(plan.counters.map((c, i) => [c.name, i]));
  const slots = new Map<string, { content?: Content; version: number; writing: number }>();
  const slot = (key: string) => slots.get(key) ?? slots.set(key, { version: 0, writing: 0 }).get(key)!;
  // Data in flight between hosts, by receive counter and iteration.
  const inFlight = new Map<string, Content | undefined>();
  const all = [...streams.values()];
  const ready = (s: Stream) => {
    const item = s.items[s.next];
    if (!item || s.busy) return false;
    for (const w of item.plan.waits) if (counters[w.counter] < threshold(w, item.iteration, iterations)) return false;
    return item.role !== 'receive' || inFlight.has(`${item.plan.signal}/${item.iteration}`);
  };

  const start = (s: Stream, now: number) => {
    const { action: a, role, iteration: it } = s.items[s.next];
    const k = a.startCycle + it;
    const where = `iteration ${it} (cycle ${k})`;
    const reads: NonNullable<Stream['busy']>['reads'] = [];
    const writes: string[] = [];
    const read = (access: BufferAccess, who: string) => {
      const key = slotKey(k, access);
      const x = slot(key);
      if (x.writing) report(`${where}: ${who} reads slot ${key} while it is being written`);
      reads.push({ key, version: x.version, who });
      return x.content;
    };
    const write = (access: BufferAccess, who: string) => {
      const key = slotKey(k, access);
      const x = slot(key);
      if (x.writing) report(`${where}: ${who} writes slot ${key} while another write of it runs`);
      x.writing++;
      x.version++;
      writes.push(key);
    };
    let out: { key: string; content: Content | undefined }[] = [];
    if (a.op === 'fire') {
      fires[a.node] = (fires[a.node] ?? 0) + 1;
      for (const [port, access] of Object.entries(a.inputs)) expectRead(report, where, `${a.node}.${port}`, access.buffer, buffer, read(access, `${a.node}.${port}`), it);
      out = Object.entries(a.outputs).map(([port, access]) => {
        write(access, `${a.node}.${port}`);
        return { key: slotKey(k, access), content: { source: `${a.node}.${port}`, iteration: it } };
      });
    } else {
      const who = `${role} ${a.from.buffer}->${a.to.buffer}`;
      let data: Content | undefined;
      if (role !== 'receive') {
        data = read(a.from, who);
        expectRead(report, where, who, a.from.buffer, buffer, data, it);
      } else {
        data = inFlight.get(`${s.items[s.next].plan.signal}/${it}`);
        inFlight.delete(`${s.items[s.next].plan.signal}/${it}`);
      }
      if (role !== 'send') {
        write(a.to, who);
        out = [{ key: slotKey(k, a.to), content: data }];
      } else {
        out = [{ key: `${counterIndex.get(`receive ${a.from.buffer}->${a.to.buffer}`)}/${it}`, content: data }];
      }
    }
    s.busy = { end: now + randomInt(rand, 1, 9), reads, writes };
    return out;
  };

  const pending = new Map<Stream, { key: string; content: Content | undefined }[]>();
  const finish = (s: Stream) => {
    const busy = s.busy!;
    const item = s.items[s.next];
    for (const r of busy.reads) if (slot(r.key).version !== r.version) report(`iteration ${item.iteration}: ${r.who} reads slot ${r.key} while another action writes it`);
    for (const { key, content } of pending.get(s)!) {
      if (item.role === 'send') inFlight.set(key, content);
      else {
        const x = slot(key);
        x.content = content;
        x.writing--;
        x.version++;
      }
    }
    counters[item.plan.signal] = item.iteration + 1;
    s.busy = undefined;
    s.next++;
  };

  let now = 0;
  for (;;) {
    // Start ready streams in a random order, each with probability 3/4 (the others wait a turn).
    const order = shuffle(all.filter(ready), rand);
    for (const s of order) if (rand() < 0.75 && ready(s)) pending.set(s, start(s, now));
    const running = all.filter((s) => s.busy);
    if (!running.length) {
      if (order.length) continue;
      const stuck = all.filter((s) => s.next < s.items.length);
      if (stuck.length) report(`deadlock: ${stuck.map((s) => `${s.name} at iteration ${s.items[s.next].iteration}`).join(', ')}`);
      break;
    }
    now = Math.min(...running.map((s) => s.busy!.end));
    for (const s of shuffle(running.filter((r) => r.busy!.end === now), rand)) finish(s);
    if (violations.length >= maxViolations) break;
  }
  return { violations, fires, cycles: now };
}

function shuffle<T>(xs: T[], rand: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = randomInt(rand, 0, i);
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

function describe(c: Content | undefined): string {
  return c ? `${c.source} iteration ${c.iteration}` : 'an empty slot (a transient)';
}
