import type { BufferId, PeId } from '../ids.js';
import type { SyncMode } from '../document/types.js';
import { cycleActions, runCycles, selfTimedPlan, slotOf, threshold, type Access, type PlanOptions, type RunAction, type SelfTimedPlan } from './contract.js';
import { mulberry32, randomInt } from '../util/random.js';
import { allPrograms, bufferNodes } from './decode.js';
import type { BufferAccess, ImplementationGraph, InitialFill, PeProgram } from './types.js';

// A model of what agents do with the programs (docs/contract.md): which iteration of which
// source each byte range of each storage slot holds. Buffers of one memory colour share
// storage, and views live at offsets in it, so a wrong colouring, a wrong offset or a part of
// the wrong iteration shows up as a wrong read (each read is checked byte range by byte range
// against the parts its edges carry). Barrier mode runs cycle by cycle; self-timed mode runs
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

/**
 * What a range of a storage slot holds: bytes start .. end - 1 of the slot hold bytes origin ..
 * of the output `source` (node.port) at `iteration`. A slot is a list of these (views and parts
 * fill ranges of it); data read or in flight is the same, relative to the range read.
 */
interface Segment {
  start: number;
  end: number;
  source: string;
  iteration: number;
  origin: number;
}

type Data = Segment[];

/** What a read should see: consecutive pieces of outputs (a buffer's range; a joined input's parts). */
interface Piece {
  length: number;
  source: string;
  origin: number;
  /** Iterations back (a delayed input reads the firing's iteration minus this). */
  back?: number;
}

/** Bytes start .. end - 1 of a storage slot (`key`: PE/colour/slot). */
interface Region {
  key: string;
  start: number;
  end: number;
}

type Thread = { name: string; actions: RunAction[] };

/** Storage of every buffer: its PE, colour, the colour's slots and where the buffer starts in a slot (a view's offset). */
function storageMap(programs: readonly PeProgram[]): Map<BufferId, { pe: PeId; color: number; depth: number; offset: number }> {
  const storage = new Map<BufferId, { pe: PeId; color: number; depth: number; offset: number }>();
  for (const p of programs)
    for (const a of p.allocations) a.buffers.forEach((b, i) => storage.set(b, { pe: p.pe, color: a.color, depth: a.depth, offset: a.offsets?.[i] ?? 0 }));
  return storage;
}

/** The part start .. end - 1 of a slot's (or data's) segments, relative to start. */
function cut(data: Data, start: number, end: number): Data {
  const out: Data = [];
  for (const s of data) {
    if (s.end <= start || s.start >= end) continue;
    const from = Math.max(s.start, start);
    out.push({ start: from - start, end: Math.min(s.end, end) - start, source: s.source, iteration: s.iteration, origin: s.origin + from - s.start });
  }
  return out;
}

/** `data` (relative segments) written at start .. end - 1 of a slot's segments: a new list. */
function put(slot: Data, start: number, end: number, data: Data): Data {
  const out: Data = [];
  for (const s of slot) {
    if (s.end <= start || s.start >= end) out.push(s);
    else {
      if (s.start < start) out.push({ ...s, end: start });
      if (s.end > end) out.push({ ...s, start: end, origin: s.origin + end - s.start });
    }
  }
  for (const s of data) out.push({ ...s, start: s.start + start, end: Math.min(s.end + start, end) });
  return out.sort((a, b) => a.start - b.start);
}

const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end;

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
  /** The range of a storage slot (PE, colour, slot) an access touches in cycle k: the buffer's place, or the access's range of it. */
  const region = (k: number, access: BufferAccess): Region => {
    const s = storage.get(access.buffer)!;
    const b = buffer.get(access.buffer)!;
    if (s.depth < b.depth) report(`${access.buffer} has ${b.depth} slots but its storage ${s.depth}`);
    const start = s.offset + (access.offset ?? 0);
    return { key: `${s.pe}/${s.color}/${slotOf(k, access.lag, s.depth)}`, start, end: start + (access.bytes ?? b.bytes) };
  };
  // Where each buffer's bytes start in its source's output (a copy of a part holds a range of it).
  const origin = new Map<BufferId, number>();
  const b = ig.buffers;
  for (let k = 0; k < b.count; k++) origin.set(b.id[k], (b.parent[k] >= 0 ? origin.get(b.id[b.parent[k]])! : 0) + b.parentOffset[k]);
  /** What a read of `access` should see: its buffer's source, from the buffer's origin plus the access's offset. */
  const expected = (access: BufferAccess): Piece[] => {
    const x = buffer.get(access.buffer)!;
    return [{ length: access.bytes ?? x.bytes, source: `${x.source}.${x.port}`, origin: origin.get(access.buffer)! + (access.offset ?? 0) }];
  };
  /**
   * A firing's reads: each input with what it should see, and the parts of inputs fed in parts:
   * read as one range where the parts are views of one base (`inputs` has the port), else each
   * on its own (the agent gathers them).
   */
  // What each firing's inputs must see, from the IG's own record of the parts its edges carry
  // (not from the accesses, whose offsets are what is checked): by node, by port, the pieces.
  const { fire } = ig.programs;
  const wants = new Map<string, Map<string, Piece[]>>();
  ig.order.forEach((node, s) => {
    const byPort = new Map<string, Piece[]>();
    for (let i = fire.inputs.start[s]; i < fire.inputs.start[s + 1]; i++) {
      const x = b.source[fire.inputs.buffer[i]];
      const piece = {
        length: fire.inputs.bytes[i],
        source: `${ig.order[x]}.${b.port[fire.inputs.buffer[i]]}`,
        origin: fire.inputs.origin[i],
        back: fire.inputs.delay[i],
      };
      (byPort.get(fire.inputs.port[i]) ?? byPort.set(fire.inputs.port[i], []).get(fire.inputs.port[i])!).push(piece);
    }
    wants.set(node, byPort);
  });
  const fireReads = (a: Extract<RunAction, { op: 'fire' }>): { who: string; access: BufferAccess; want: Piece[] }[] => {
    const out: { who: string; access: BufferAccess; want: Piece[] }[] = [];
    const want = wants.get(a.node)!;
    for (const [port, access] of Object.entries(a.inputs)) out.push({ who: `${a.node}.${port}`, access, want: want.get(port)! });
    for (const [port, list] of Object.entries(a.parts ?? {}))
      if (!a.inputs[port]) list.forEach((access, j) => out.push({ who: `${a.node}.${port} part ${j}`, access, want: [want.get(port)![j]] }));
    return out;
  };
  /**
   * Delays: what the agents put in a slot (`pe/colour/slot`) before the run, as segments, read
   * the first time the slot is touched (a delay's range of slots is never walked). Slot
   * (written - j) mod slots holds what iteration -j would have put there, written = the first
   * cycle of the buffer's writer (its copy, or its source's firing).
   */
  const fillsAt = new Map<string, { fill: InitialFill; depth: number }[]>();
  for (const p of programs) {
    for (const fill of p.initial ?? []) {
      const s = storage.get(fill.buffer)!;
      const key = `${s.pe}/${s.color}`;
      (fillsAt.get(key) ?? fillsAt.set(key, []).get(key)!).push({ fill, depth: s.depth });
    }
  }
  const initial = (key: string): Data => {
    const slash = key.lastIndexOf('/');
    const fills = fillsAt.get(key.slice(0, slash));
    if (!fills) return [];
    const at = Number(key.slice(slash + 1));
    const out: Data = [];
    for (const { fill: f, depth } of fills) {
      if (at < f.slot || at >= f.slot + (f.count ?? 1)) continue;
      const k = ig.buffers.id.indexOf(f.buffer);
      const s = storage.get(f.buffer)!;
      const written = b.parent[k] >= 0 ? ig.programs.transfer.startCycle[k] : ig.programs.fire.startCycle[b.source[k]];
      const j = slotOf(written - at, 0, depth) || depth;
      const x = buffer.get(f.buffer)!;
      const start = s.offset + (f.offset ?? 0);
      out.push({ start, end: start + (f.bytes ?? x.bytes), source: `${x.source}.${x.port}`, iteration: -j, origin: origin.get(f.buffer)! + (f.offset ?? 0) });
    }
    return out.sort((p, q) => p.start - q.start);
  };
  return { buffer, programs, storage, violations, fires, report, region, expected, fireReads, initial };
}

function simulateBarrier(ig: ImplementationGraph, iterations: number, maxViolations: number): SimulationResult {
  const { programs, violations, fires, report, region, expected, fireReads, initial } = simulation(ig, maxViolations);
  const state = new Map<string, Data>();
  const now = (key: string) => state.get(key) ?? initial(key);

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
      // Every range read and written in the phase, by slot, with its thread; the writes in order.
      const writes: { thread: string; at: Region; data: Data }[] = [];
      const reads: { thread: string; at: Region }[] = [];
      const where = `cycle ${k}, phase ${ig.phases[ph]}`;
      for (const t of threads) {
        const own: { at: Region; data: Data }[] = [];
        // A thread sees the phase's starting state plus its own writes.
        const read = (at: Region): Data => {
          reads.push({ thread: t.name, at });
          let slot = now(at.key);
          for (const w of own) if (w.at.key === at.key) slot = put(slot, w.at.start, w.at.end, w.data);
          return cut(slot, at.start, at.end);
        };
        const write = (at: Region, data: Data) => {
          for (const w of writes)
            if (w.thread !== t.name && w.at.key === at.key && overlaps(w.at, at))
              report(`${where}: ${t.name} and ${w.thread} both write slot ${at.key} (bytes ${Math.max(at.start, w.at.start)}..)`);
          own.push({ at, data });
          writes.push({ thread: t.name, at, data });
        };
        for (const a of t.actions) {
          const it = k - a.startCycle;
          if (a.op === 'transfer') {
            const who = `transfer ${a.from.buffer}->${a.to.buffer}`;
            const got = read(region(k, a.from));
            expectRead(report, where, who, a.from.buffer, got, expected(a.from), it);
            write(region(k, a.to), got);
          } else {
            fires[a.node] = (fires[a.node] ?? 0) + 1;
            for (const r of fireReads(a)) expectRead(report, where, r.who, r.access.buffer, read(region(k, r.access)), r.want, it);
            for (const [port, access] of Object.entries(a.outputs)) {
              const at = region(k, access);
              write(at, [{ start: 0, end: at.end - at.start, source: `${a.node}.${port}`, iteration: it, origin: 0 }]);
            }
          }
        }
      }
      for (const w of writes) {
        for (const r of reads) {
          if (r.thread !== w.thread && r.at.key === w.at.key && overlaps(r.at, w.at))
            report(`${where}: ${r.thread} reads slot ${w.at.key} while ${w.thread} writes it`);
        }
      }
      for (const w of writes) state.set(w.at.key, put(now(w.at.key), w.at.start, w.at.end, w.data));
    }
  }
  return { violations, fires, cycles };
}

/**
 * A read must see, byte for byte, what it expects (its buffer's source at its origin, or each
 * part of a joined input in turn) at exactly the iteration the action processes.
 */
function expectRead(report: (m: string) => void, where: string, who: string, from: BufferId, got: Data, want: Piece[], it: number): void {
  let at = 0;
  for (const piece of want) {
    const end = at + piece.length;
    let covered = at;
    let wrong: string | undefined;
    for (const s of got) {
      if (s.end <= at || s.start >= end) continue;
      if (s.start > covered) break;
      const from = Math.max(s.start, at);
      if (s.source !== piece.source || s.iteration !== it - (piece.back ?? 0) || s.origin + (from - s.start) !== piece.origin + (from - at)) {
        wrong = `${s.source} iteration ${s.iteration} (bytes ${s.origin + (from - s.start)}..)`;
        break;
      }
      covered = Math.min(s.end, end);
    }
    if (wrong || covered < end) {
      report(
        `${where}: ${who} reads ${wrong ?? 'an empty slot (a transient)'} from ${from}${at ? ` at byte ${at}` : ''}, expected ${piece.source} iteration ${it - (piece.back ?? 0)}${piece.origin ? ` (bytes ${piece.origin}..)` : ''}`,
      );
      return;
    }
    at = end;
  }
}

/** One stream of self-timed execution: a PE's firings, a transfer, or one half of a host-to-host transfer. */
interface Stream {
  name: string;
  /** Its items in program order: the action (or half), its plan and the iteration. */
  items: { action: RunAction; role: 'fire' | 'transfer' | 'send' | 'receive'; plan: Access; iteration: number }[];
  next: number;
  /** In progress: when it ends, the ranges it reads (with the slot's write count when it began) and the ranges it writes. */
  busy?: { end: number; reads: { at: Region; writes: number; who: string }[]; writes: Region[] };
}

/**
 * Self-timed mode: every stream's next item starts once its waits hold (a receive also once its
 * data arrived), in a seeded random order with random durations. A read must see the right
 * iteration when it starts and its range must not be written until it ends; a write holds its
 * range while it runs. No runnable item with unfinished ones left is a deadlock.
 */
function simulateSelfTimed(ig: ImplementationGraph, iterations: number, options: SimulateOptions): SimulationResult {
  const maxViolations = options.maxViolations ?? 20;
  const rand = mulberry32(options.seed ?? 1);
  const { programs, violations, fires, report, region, expected, fireReads, initial } = simulation(ig, maxViolations);
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
          else if (e.access && action.fromPe === p.pe)
            stream(plan.counters[e.access.signal].name).items.push({ action, role: 'transfer', plan: e.access, iteration });
          else if (e.send) stream(plan.counters[e.send.signal].name).items.push({ action, role: 'send', plan: e.send, iteration });
          else if (e.receive) stream(plan.counters[e.receive.signal].name).items.push({ action, role: 'receive', plan: e.receive, iteration });
        }
      }
    }
  }

  const counters = new Int32Array(plan.counters.length);
  const counterIndex = new Map(plan.counters.map((c, i) => [c.name, i]));
  // Each slot: its contents, every write begun on it (ranges, in order) and the writes running.
  const slots = new Map<string, { data: Data; begun: Region[]; writing: Region[] }>();
  const slot = (key: string) => slots.get(key) ?? slots.set(key, { data: initial(key), begun: [], writing: [] }).get(key)!;
  // Data in flight between hosts, by receive counter and iteration.
  const inFlight = new Map<string, Data>();
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
    const writes: Region[] = [];
    const read = (access: BufferAccess, who: string): Data => {
      const at = region(k, access);
      const x = slot(at.key);
      if (x.writing.some((w) => overlaps(w, at))) report(`${where}: ${who} reads slot ${at.key} while it is being written`);
      reads.push({ at, writes: x.begun.length, who });
      return cut(x.data, at.start, at.end);
    };
    const write = (access: BufferAccess, who: string): Region => {
      const at = region(k, access);
      const x = slot(at.key);
      if (x.writing.some((w) => overlaps(w, at))) report(`${where}: ${who} writes slot ${at.key} while another write of it runs`);
      x.writing.push(at);
      x.begun.push(at);
      writes.push(at);
      return at;
    };
    let out: { at?: Region; flight?: string; data: Data }[] = [];
    if (a.op === 'fire') {
      fires[a.node] = (fires[a.node] ?? 0) + 1;
      for (const r of fireReads(a)) expectRead(report, where, r.who, r.access.buffer, read(r.access, r.who), r.want, it);
      out = Object.entries(a.outputs).map(([port, access]) => {
        const at = write(access, `${a.node}.${port}`);
        return { at, data: [{ start: 0, end: at.end - at.start, source: `${a.node}.${port}`, iteration: it, origin: 0 }] };
      });
    } else {
      const who = `${role} ${a.from.buffer}->${a.to.buffer}`;
      let data: Data;
      if (role !== 'receive') {
        data = read(a.from, who);
        expectRead(report, where, who, a.from.buffer, data, expected(a.from), it);
      } else {
        data = inFlight.get(`${s.items[s.next].plan.signal}/${it}`) ?? [];
        inFlight.delete(`${s.items[s.next].plan.signal}/${it}`);
      }
      if (role !== 'send') out = [{ at: write(a.to, who), data }];
      else out = [{ flight: `${counterIndex.get(`receive ${a.from.buffer}->${a.to.buffer}`)}/${it}`, data }];
    }
    s.busy = { end: now + randomInt(rand, 1, 9), reads, writes };
    return out;
  };

  const pending = new Map<Stream, { at?: Region; flight?: string; data: Data }[]>();
  const finish = (s: Stream) => {
    const busy = s.busy!;
    const item = s.items[s.next];
    for (const r of busy.reads) {
      const x = slot(r.at.key);
      // Writes begun since the read began, of its range (its own writes excluded).
      for (let w = r.writes; w < x.begun.length; w++) {
        if (overlaps(x.begun[w], r.at) && !busy.writes.includes(x.begun[w])) {
          report(`iteration ${item.iteration}: ${r.who} reads slot ${r.at.key} while another action writes it`);
          break;
        }
      }
    }
    for (const { at, flight, data } of pending.get(s)!) {
      if (flight !== undefined) inFlight.set(flight, data);
      else if (at) {
        const x = slot(at.key);
        x.data = put(x.data, at.start, at.end, data);
        x.writing.splice(x.writing.indexOf(at), 1);
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
    for (const s of shuffle(
      running.filter((r) => r.busy!.end === now),
      rand,
    ))
      finish(s);
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
