import type { Diagnostic } from '../diagnostics.js';
import { compileModel } from '../compile/compile.js';
import { fastestLink } from '../compile/phases.js';
import { Router } from '../compile/route.js';
import { actionRange } from '../compile/decode.js';
import type { ImplementationGraph } from '../compile/types.js';
import type { Model } from '../document/model.js';
import type { Link, SyncMode } from '../document/types.js';
import { analyze } from '../document/validate.js';
import type { PeId } from '../ids.js';
import { barrierSlice, waitSlice, type TraceEvent } from '../trace/event.js';
import { transferLanes, type LanePe } from '../trace/lanes.js';
import { nodeTime, transferTime, type TimingOptions } from './timing.js';

export interface PredictOptions extends TimingOptions {
  /** Seconds each cluster-wide barrier costs (default 0, as in the paper's model). */
  barrier?: number;
  /** Iterations of the run (default: the document's options.iterations). */
  iterations?: number;
  /** Cycles drawn in the predicted timeline (default: the whole run, at most 200). */
  timelineCycles?: number;
  /**
   * About the most events in the predicted timeline: it ends with the first cycle that
   * reaches this many (default 200,000). A 1,000-node graph makes ~3,000 events a cycle, so
   * 200 cycles of a large graph would be millions, more than a trace viewer or a copy to the
   * browser's main thread handles.
   */
  timelineEvents?: number;
  /** The sync mode modelled (docs/contract.md); default: the document's options.sync (self-timed when unset). */
  sync?: SyncMode;
  /** The strategy that must compile (default: the document's options.overlap); the other is predicted where it can be. */
  overlap?: boolean;
}

/** PredictOptions.timelineEvents when none is given. */
export const TIMELINE_EVENTS = 200_000;

export interface PhaseTime {
  name: string;
  /** Seconds, barrier included. */
  time: number;
  /** The PE or link that sets the phase's time ('' when the phase is empty). */
  bottleneck: string;
}

export interface StrategyPrediction {
  overlap: boolean;
  /** The sync mode modelled. */
  sync: SyncMode;
  /** Seconds per cycle in steady state (one iteration completes per cycle). */
  cycleTime: number;
  /**
   * What sets the cycle: barrier, the slowest phase's PE or link; self-timed, the busiest PE or
   * link, or a storage slot's writer and reader taking turns (`bn_3: fire a + transfer bn_2->bn_3, 1 slot`).
   */
  bottleneck: string;
  /** Phases of the programs; barrier: each with its barrier's cost; self-timed: no barrier. */
  phases: PhaseTime[];
  /** Busy seconds per cycle of each PE and link (`link a<->b` or `link a->b`). */
  busy: Record<string, number>;
  /** Iterations per second. */
  throughput: number;
  fillCycles: number;
  iterations: number;
  /** Cycles of the whole run: last start cycle + iterations. */
  cycles: number;
  /** Seconds for the whole run: barrier, cycles x cycle time; self-timed, the first iteration's latency + (iterations - 1) x cycle time. */
  runTime: number;
  ig: ImplementationGraph;
  timeline: TraceEvent[];
  /** Cycles the timeline covers, from cycle 0 (fewer than `cycles` for a long run or a large graph). */
  timelineCycles: number;
}

export interface Prediction {
  /**
   * Each strategy's prediction. The strategy the document does not choose may be impossible
   * where the document's is not (a loop's delay covers its cycles round without overlap, not
   * with): it is then absent, and `unavailable` says why. The document's own is always there.
   */
  overlap?: StrategyPrediction;
  noOverlap?: StrategyPrediction;
  /** Cycle time without overlap / with (1 where a strategy is unavailable). */
  speedup: number;
  /** Why a strategy could not be compiled (its errors), by strategy. */
  unavailable?: { overlap?: Diagnostic[]; noOverlap?: Diagnostic[] };
}

export type PredictResult = { ok: true; prediction: Prediction; diagnostics: Diagnostic[] } | { ok: false; diagnostics: Diagnostic[] };

/**
 * Predicts both strategies of paper 4.3 from per-node kernel times and link bandwidth and
 * latency, in one sync mode. Barrier mode: without overlap a cycle is the sum over phases of
 * the slowest PE or link in the phase (plus its barrier); with overlap, the busiest PE or
 * link. For P-I-I-C this gives T = Th + Tib + a*n without overlap and max(Th, Tib, a*n) with.
 * Self-timed mode (see `selfTimed`): the busiest PE or link, or a slot's writer and reader
 * taking turns where the slots are few. A full-duplex link carries both directions at once; a
 * half-duplex one serialises them.
 */
export function predict(doc: unknown, opts: PredictOptions = {}): PredictResult {
  const { diagnostics, model } = analyze(doc);
  if (!model) return { ok: false, diagnostics };
  return predictModel(model, opts, diagnostics);
}

/**
 * predict() of a model already analysed (`diagnostics`: the analysis's warnings, returned with
 * the compiler's). The model's document is lowered: it is not a document to analyse again.
 */
export function predictModel(model: Model, opts: PredictOptions = {}, diagnostics: Diagnostic[] = []): PredictResult {
  const router = new Router(model);
  const out: Pick<Prediction, 'overlap' | 'noOverlap' | 'unavailable'> = {};
  for (const overlap of [true, false]) {
    const key = overlap ? 'overlap' : 'noOverlap';
    const r = compileModel(model, overlap, diagnostics, router);
    if (r.ok) out[key] = predictStrategy(model, r.ig, opts);
    // The document's own strategy must compile; the other may be impossible (a loop's delay).
    else if (overlap === (opts.overlap ?? model.doc.options.overlap)) return { ok: false, diagnostics: r.diagnostics };
    else (out.unavailable ??= {})[key] = r.diagnostics.filter((d) => !diagnostics.includes(d));
  }
  const { overlap, noOverlap, unavailable } = out;
  const speedup = overlap && noOverlap && overlap.cycleTime > 0 ? noOverlap.cycleTime / overlap.cycleTime : 1;
  return { ok: true, prediction: { overlap, noOverlap, speedup, ...(unavailable && { unavailable }) }, diagnostics };
}

/** One action of a phase, timed: an entry of `Programs.list` (a transfer's buffer number, or -1 - a firing's schedule position). */
interface Timed {
  entry: number;
  startCycle: number;
  /** The resource whose busy time it adds to (a PE for a firing, a link or link direction for a transfer), by number: see `Resources`. */
  resource: number;
  time: number;
  /** The position in `Programs.pes` of the PE that fires it (-1 for a transfer). */
  pe: number;
}

/** Resource names (a PE id, `link a->b`, `link a<->b`) numbered in the order first met. */
class Resources {
  readonly names: string[] = [];
  private readonly numbers = new Map<string, number>();
  number(name: string): number {
    let k = this.numbers.get(name);
    if (k === undefined) {
      this.numbers.set(name, (k = this.names.length));
      this.names.push(name);
    }
    return k;
  }
}

export function predictStrategy(model: Model, ig: ImplementationGraph, opts: PredictOptions = {}): StrategyPrediction {
  const sync = opts.sync ?? model.doc.options.sync ?? 'self-timed';
  // Self-timed runs have no barrier.
  const barrier = sync === 'barrier' ? (opts.barrier ?? 0) : 0;
  const iterations = opts.iterations ?? model.doc.options.iterations;
  const linkName = (l: Link, from: PeId, to: PeId) => (l.duplex ? `link ${from}->${to}` : `link ${l.a}<->${l.b}`);
  // Each phase's actions once: a transfer is listed by both its PEs, and counted by its sender's.
  const { pes, list, transfer, fire } = ig.programs;
  const resources = new Resources();
  // The link a transfer crosses and its resource, by (sender, receiver) position, for the last
  // size asked: found once, not by scanning the sender's links (134 on a cluster's CPU) each time.
  const crossing = new Map<number, { bytes: number; link: Link; resource: number }>();
  const phases: Timed[][] = ig.phases.map(() => []);
  for (let p = 0; p < pes.length; p++) {
    const pe = pes[p].pe;
    const self = resources.number(pe);
    for (let f = 0; f < ig.phases.length; f++) {
      const [from, to] = actionRange(ig.programs, ig.phases.length, p, f);
      for (let i = from; i < to; i++) {
        const entry = list[i];
        if (entry < 0) {
          const s = -entry - 1;
          phases[f].push({ entry, startCycle: fire.startCycle[s], resource: self, time: nodeTime(model, ig.order[s], opts), pe: p });
          continue;
        }
        const source = transfer.from[entry];
        if (ig.buffers.pe[source] !== p) continue;
        const q = ig.buffers.pe[entry];
        const bytes = ig.buffers.bytes[entry];
        let c = crossing.get(p * pes.length + q);
        if (!c || c.bytes !== bytes) {
          const receiver = pes[q].pe;
          const link = fastestLink(model, pe, receiver, bytes);
          crossing.set(p * pes.length + q, (c = { bytes, link, resource: resources.number(linkName(link, pe, receiver)) }));
        }
        phases[f].push({
          entry,
          startCycle: transfer.startCycle[entry],
          resource: c.resource,
          time: transferTime(ig.buffers.id[source], ig.buffers.id[entry], bytes, c.link, opts),
          pe: -1,
        });
      }
    }
  }
  // Whether a cluster-wide barrier closes phase f (every phase but those inside a scan's firing).
  const closes = (f: number) => ig.phaseBarriers?.[f] ?? true;
  // Busy and per-phase load by resource number; `busy` lists resources in the order first met.
  const count = resources.names.length;
  const busyTime = new Float64Array(count);
  const busyOrder: number[] = [];
  const load = new Float64Array(count);
  const seen = new Int32Array(count).fill(-1);
  const phaseTimes: PhaseTime[] = phases.map((actions, i) => {
    const order: number[] = [];
    for (const t of actions) {
      const r = t.resource;
      if (seen[r] < 0) busyOrder.push(r);
      if (seen[r] !== i) {
        seen[r] = i;
        load[r] = 0;
        order.push(r);
      }
      load[r] += t.time;
      busyTime[r] += t.time;
    }
    // A duplex link's two directions run at once: its time is the slower direction.
    let bottleneck = '';
    let time = 0;
    for (const r of order) {
      if (load[r] > time || (load[r] === time && bottleneck === '')) {
        time = load[r];
        bottleneck = resources.names[r];
      }
    }
    return { name: ig.phases[i], time: time + (closes(i) ? barrier : 0), bottleneck };
  });
  // Inside a scan's firing (phases no barrier closes): the critical path, not the sum of the
  // phases' slowest, with barrier mode's host meetings (insideTimes). Each phase gets the part
  // of it that ends in it.
  const inside: (Float64Array | undefined)[] = new Array(phases.length);
  for (let first = 0; first < phases.length; first++) {
    let last = first;
    while (!closes(last)) last++;
    if (last > first) {
      const t = insideTimes(ig, phases, first, last, sync === 'barrier');
      for (let f = first; f <= last; f++) {
        inside[f] = t.offsets[f - first];
        phaseTimes[f] = {
          name: ig.phases[f],
          time: t.times[f - first] + (f === last ? barrier : 0),
          bottleneck: t.bottlenecks[f - first] >= 0 ? resources.names[t.bottlenecks[f - first]] : '',
        };
      }
    }
    first = last;
  }
  const busy: Record<string, number> = {};
  for (const r of busyOrder) busy[resources.names[r]] = busyTime[r];
  let last = 0;
  for (const ph of phases) for (const t of ph) last = Math.max(last, t.startCycle);
  const cycles = last + iterations;
  const drawn = Math.min(opts.timelineCycles ?? cycles, cycles, 200);
  const maxEvents = opts.timelineEvents ?? TIMELINE_EVENTS;
  if (sync === 'self-timed') {
    const st = selfTimed(model, ig, phases, resources, busyTime, iterations, drawn, maxEvents);
    return {
      overlap: ig.overlap,
      sync,
      cycleTime: st.cycleTime,
      bottleneck: st.bottleneck,
      phases: phaseTimes,
      busy,
      throughput: st.cycleTime > 0 ? 1 / st.cycleTime : Infinity,
      fillCycles: ig.fillCycles,
      iterations,
      cycles,
      runTime: st.latency + (iterations - 1) * st.cycleTime,
      ig,
      timeline: withScanSlices(ig, st.events),
      timelineCycles: st.cycles,
    };
  }
  const cycleTime = phaseTimes.reduce((a, p) => a + p.time, 0);
  const { events: timeline, cycles: timelineCycles } = buildTimeline(
    model,
    ig,
    phases,
    count,
    phaseTimes,
    cycleTime,
    barrier,
    iterations,
    drawn,
    maxEvents,
    inside,
  );
  let slowest: PhaseTime | undefined;
  for (const ph of phaseTimes) if (!slowest || ph.time > slowest.time) slowest = ph;
  return {
    overlap: ig.overlap,
    sync,
    cycleTime,
    bottleneck: slowest?.bottleneck ?? '',
    phases: phaseTimes,
    busy,
    throughput: cycleTime > 0 ? 1 / cycleTime : Infinity,
    fillCycles: ig.fillCycles,
    iterations,
    cycles,
    runTime: cycles * cycleTime,
    ig,
    timeline: withScanSlices(ig, timeline),
    timelineCycles,
  };
}

/**
 * Barrier mode, phases first .. last, which no cluster-wide barrier separates (a scan's firing,
 * compile/phases.ts): each PE runs its firings in program order and each link its transfers,
 * an action starting once its resource is free and what it reads in this cycle has been
 * written; a copy takes its link's latency + bytes / bandwidth (the rule of core's
 * simulateScan). Data written in an earlier cycle or before these phases is there at their
 * start (0). With `meet` (barrier mode), each host's threads also meet after every phase (see
 * below); without it (self-timed mode's phase list) the path is point to point, as
 * simulateScan's. Per phase: each action's start (as `phases[f]` lists them), how much of the
 * makespan ends in it (the phases' times sum to it) and the resource whose action ends it last
 * (-1 for none).
 */
function insideTimes(
  ig: ImplementationGraph,
  phases: Timed[][],
  first: number,
  last: number,
  meet: boolean,
): { offsets: Float64Array[]; times: number[]; bottlenecks: number[]; makespan: number } {
  const { buffers, order, programs } = ig;
  const { transfer, fire, pes } = programs;
  const fires = order.length;
  // Ends by action id (a firing's schedule position, or fires + the buffer a transfer fills); -1 not run here.
  const end = new Map<number, number>();
  const free = new Map<number, number>();
  const writer = (b: number) => (transfer.from[b] >= 0 ? fires + b : buffers.source[b]);
  const written = (b: number, lag: number) => (lag === 0 ? (end.get(writer(b)) ?? 0) : 0);
  // The host meeting of barrier mode (apps/agent/src/runtime/host-run.ts `lanesLoop`, pe-worker.ts
  // `loop`): after every phase, barrier or not, a host's PE threads (each its firings in order and
  // the copies inside the host it drives) and its main thread (the host's sends and receives to
  // and from other hosts in that phase) meet; only then does any of them start the next phase. So
  // an action starts no earlier than its host's last meeting (a copy between hosts: the sender's,
  // as a receive of bytes that came early ends at once; link emulation, holding it a link time
  // from the receiver's start, is not modelled), and a host meets once its own actions of the
  // phase have ended (a copy between hosts holds both its hosts). The meeting costs nothing.
  const hostOf = new Int32Array(pes.length);
  const hostNumber = new Map<string, number>();
  pes.forEach((p, i) => (hostOf[i] = hostNumber.get(p.host) ?? hostNumber.set(p.host, hostNumber.size).get(p.host)!));
  // When each host left its last meeting, and when its actions of the current phase end.
  const left = new Float64Array(hostNumber.size);
  const ends = new Float64Array(hostNumber.size);
  const offsets: Float64Array[] = [];
  const times: number[] = [];
  const bottlenecks: number[] = [];
  let done = 0;
  for (let f = first; f <= last; f++) {
    const list = phases[f];
    const offset = new Float64Array(list.length);
    let phaseEnd = done;
    let by = -1;
    list.forEach((t, j) => {
      let ready = free.get(t.resource) ?? 0;
      // The hosts that meet after the action: its PE's, or a copy's sender's and receiver's.
      const a = hostOf[t.entry < 0 ? t.pe : buffers.pe[transfer.from[t.entry]]];
      const b = t.entry < 0 ? a : hostOf[buffers.pe[t.entry]];
      if (meet) ready = Math.max(ready, left[a]);
      if (t.entry < 0) {
        const s = -t.entry - 1;
        for (let i = fire.inputs.start[s]; i < fire.inputs.start[s + 1]; i++)
          if (fire.inputs.delay[i] === 0) ready = Math.max(ready, written(fire.inputs.buffer[i], fire.inputs.lag[i]));
      } else ready = Math.max(ready, written(transfer.from[t.entry], transfer.lag[t.entry]));
      const finish = ready + t.time;
      offset[j] = ready;
      free.set(t.resource, finish);
      end.set(t.entry < 0 ? -t.entry - 1 : fires + t.entry, finish);
      ends[a] = Math.max(ends[a], finish);
      ends[b] = Math.max(ends[b], finish);
      if (finish > phaseEnd || (by < 0 && finish === phaseEnd)) [phaseEnd, by] = [finish, t.resource];
    });
    // Every host meets, also one with nothing to do in the phase (it just passes through).
    for (let h = 0; h < left.length; h++) left[h] = Math.max(left[h], ends[h]);
    offsets.push(offset);
    times.push(phaseEnd - done);
    bottlenecks.push(by);
    done = phaseEnd;
  }
  return { offsets, times, bottlenecks, makespan: done };
}

/**
 * A scan's firing drawn as one: per scan, iteration and PE of its workers, a slice
 * named after the scan node on the PE's `scan` lane, from its first expanded firing's start to
 * its last one's end, above the expanded firings (as they were).
 */
export function withScanSlices(ig: ImplementationGraph, events: TraceEvent[]): TraceEvent[] {
  if (!ig.scans) return events;
  const scanOf = new Map<string, string>();
  for (const [scan, levels] of Object.entries(ig.scans)) for (const level of levels) for (const s of level) scanOf.set(ig.order[s], scan);
  const spans = new Map<string, { scan: string; iteration: number; cycle: number; start: number; end: number; pes: Map<string, string> }>();
  for (const e of events) {
    const scan = e.kind === 'fire' && e.node ? scanOf.get(e.node) : undefined;
    if (!scan) continue;
    const key = `${scan} ${e.iteration}`;
    const x = spans.get(key);
    if (!x) spans.set(key, { scan, iteration: e.iteration, cycle: e.cycle, start: e.start, end: e.end, pes: new Map([[e.pe, e.host]]) });
    else {
      x.start = Math.min(x.start, e.start);
      x.end = Math.max(x.end, e.end);
      x.pes.set(e.pe, e.host);
    }
  }
  const out = events.slice();
  for (const x of spans.values())
    for (const [pe, host] of x.pes)
      out.push({ host, pe, thread: SCAN_LANE, kind: 'fire', name: x.scan, node: x.scan, iteration: x.iteration, cycle: x.cycle, start: x.start, end: x.end });
  return out;
}

/** The lane (thread) a PE's slices of a scan's firing are drawn on. */
export const SCAN_LANE = 'scan';

/**
 * The slowest loop: for each delayed firing input (consumer C, buffer b, delay d), the longest
 * chain of actions from C's firing to b's writer along undelayed dependencies (its time round),
 * over d. Actions are taken in barrier mode's order (start cycle, phase, position), which every
 * undelayed dependency of iteration 0 respects, so one pass per delayed input finds it.
 */
function loopBound(ig: ImplementationGraph, phases: Timed[][], time: Float64Array, writer: (b: number) => number): { time: number; name: string } {
  const { fire, transfer } = ig.programs;
  const fires = ig.order.length;
  const delayed: number[] = [];
  for (let j = 0; j < fire.inputs.delay.length; j++) if (fire.inputs.delay[j] > 0) delayed.push(j);
  let worst = { time: 0, name: '' };
  if (!delayed.length) return worst;
  const steps: { t: Timed; f: number; position: number }[] = [];
  phases.forEach((ph, f) => ph.forEach((t, position) => steps.push({ t, f, position })));
  steps.sort((a, b) => a.t.startCycle - b.t.startCycle || a.f - b.f || a.position - b.position);
  const owner = new Int32Array(fires + 1);
  for (let s = 0; s < fires; s++) for (let j = fire.inputs.start[s]; j < fire.inputs.start[s + 1]; j++) owner[j] = s;
  const longest = new Float64Array(time.length);
  for (const j of delayed) {
    const c = owner[j];
    const target = writer(fire.inputs.buffer[j]);
    longest.fill(-Infinity);
    longest[c] = time[c];
    for (const { t } of steps) {
      const id = t.entry < 0 ? -t.entry - 1 : fires + t.entry;
      if (id === c) continue;
      let best = -Infinity;
      if (t.entry < 0) {
        for (let k = fire.inputs.start[id]; k < fire.inputs.start[id + 1]; k++)
          if (fire.inputs.delay[k] === 0) best = Math.max(best, longest[writer(fire.inputs.buffer[k])]);
      } else best = longest[writer(transfer.from[t.entry])];
      if (best > -Infinity) longest[id] = best + time[id];
    }
    const round = longest[target] / fire.inputs.delay[j];
    if (round > worst.time) worst = { time: round, name: `loop through ${ig.order[c]}.${fire.inputs.port[j]} (delay ${fire.inputs.delay[j]})` };
  }
  return worst;
}

/**
 * Self-timed mode (docs/contract.md): no barrier; each firing and transfer starts once its
 * input is written, the slot it writes has been read (its previous occupant, `slots`
 * iterations back), its own stream (a PE's firings, a transfer's iterations) and its PE or
 * link are free. The cycle is what bounds a steady state: the busiest PE or link, or a
 * buffer's writer and one of its readers taking turns through its slots ((writer + reader) /
 * slots, which is what a single buffer costs without overlap). The first iteration's latency
 * (fill) comes from running that schedule as soon as possible, which also draws the timeline,
 * marking a PE or lane idle before an action its data held back as a `wait <buffer>` slice.
 */
function selfTimed(
  model: Model,
  ig: ImplementationGraph,
  phases: Timed[][],
  resources: Resources,
  busyTime: Float64Array,
  iterations: number,
  cycles: number,
  maxEvents: number,
): { cycleTime: number; bottleneck: string; latency: number; events: TraceEvent[]; cycles: number } {
  const { buffers, order, programs } = ig;
  const { transfer, fire } = programs;
  const pes = programs.pes;
  const fires = order.length;
  // Actions by id: a firing's schedule position s, or fires + the number of the buffer a transfer fills.
  const ids = fires + buffers.count;
  const time = new Float64Array(ids);
  const resource = new Int32Array(ids).fill(-1);
  let last = 0;
  for (const ph of phases) {
    for (const t of ph) {
      const id = t.entry < 0 ? -t.entry - 1 : fires + t.entry;
      time[id] = t.time;
      resource[id] = t.resource;
      last = Math.max(last, t.startCycle);
    }
  }
  const writer = (b: number) => (transfer.from[b] >= 0 ? fires + b : buffers.source[b]);
  const slots = (b: number) => Math.max(1, pes[buffers.pe[b]].slots[buffers.color[b]]);
  const readers = (b: number, each: (id: number) => void) => {
    for (let j = buffers.consumers.start[b]; j < buffers.consumers.start[b + 1]; j++) each(buffers.consumers.node[j]);
    for (let j = buffers.next.start[b]; j < buffers.next.start[b + 1]; j++) each(fires + buffers.next.list[j]);
  };
  const name = (id: number) => (id < fires ? `fire ${order[id]}` : `transfer ${buffers.id[transfer.from[id - fires]]}->${buffers.id[id - fires]}`);

  // The cycle: the busiest resource, or the slowest writer-reader turn through a buffer's slots.
  let cycleTime = 0;
  let bottleneck = '';
  busyTime.forEach((t, r) => {
    if (t > cycleTime) [cycleTime, bottleneck] = [t, resources.names[r]];
  });
  // A loop (a delayed input read back from downstream) runs d iterations per trip round: its
  // actions' times round over d bound the cycle too.
  const loop = loopBound(ig, phases, time, writer);
  if (loop.time > cycleTime) [cycleTime, bottleneck] = [loop.time, loop.name];
  let deepest = 1;
  for (let b = 0; b < buffers.count; b++) {
    const w = writer(b);
    const d = slots(b);
    deepest = Math.max(deepest, d);
    readers(b, (r) => {
      if (resource[r] === resource[w]) return; // one PE or link: its busy time counts both
      const t = (time[w] + time[r]) / d;
      if (t > cycleTime) [cycleTime, bottleneck] = [t, `${buffers.id[b]}: ${name(w)} + ${name(r)}, ${d} slot${d > 1 ? 's' : ''}`];
    });
  }

  // As soon as possible, in barrier mode's order (every dependency comes earlier in it). End
  // times are kept for the last `ring` iterations of each action: a reader is at most `slots`
  // iterations behind the writer that waits for it, and never more than the iterations
  // simulated (a long delay's buffer has as many slots as it has initial iterations).
  const simulated = Math.max(cycles, Math.min(last + 1, last + iterations));
  const ring = Math.min(deepest, simulated) + 1;
  const ends = new Float64Array(ids * ring);
  const free = new Float64Array(resources.names.length);
  const events: TraceEvent[] = [];
  const us = (x: number) => x * 1e6;
  // Each lane once, with when its last drawn action ended (where a wait drawn on it starts).
  type Lane = { pe: string; host: string; thread: string; free: number };
  const lanePe = (id: string): LanePe => model.pe.get(id as PeId)!;
  const mainLanes: Lane[] = pes.map((p) => ({ pe: p.pe, host: p.host, thread: 'main', free: 0 }));
  const laneByName = new Map<string, Lane>();
  const lanes = new Map<number, Lane[]>();
  const lanesOf = (p: number, q: number) => {
    let l = lanes.get(p * pes.length + q);
    if (!l) {
      l = transferLanes(pes[p].pe, pes[q].pe, lanePe).map((x) => {
        const key = `${x.pe} ${x.thread}`;
        return laneByName.get(key) ?? laneByName.set(key, { ...x, host: lanePe(x.pe).host, free: 0 }).get(key)!;
      });
      lanes.set(p * pes.length + q, l);
    }
    return l;
  };
  let latency = 0;
  let drawn = 0;
  for (let k = 0; k < simulated; k++) {
    const draw = k < cycles && drawn === k;
    for (const actions of phases) {
      for (const t of actions) {
        const i = k - t.startCycle;
        if (i < 0 || i >= iterations) continue;
        const id = t.entry < 0 ? -t.entry - 1 : fires + t.entry;
        // When its inputs are written and the slots it writes have been read: the latest of
        // those ends, and the buffer it was (`cause`). No closures here: this runs per action
        // and iteration.
        let ready = 0;
        let cause = -1;
        const inFrom = t.entry < 0 ? fire.inputs.start[id] : 0;
        const inTo = t.entry < 0 ? fire.inputs.start[id + 1] : 1;
        for (let j = inFrom; j < inTo; j++) {
          const b = t.entry < 0 ? fire.inputs.buffer[j] : transfer.from[t.entry];
          // A delayed input reads iteration i - delay: an initial token (ready at once) before 0.
          const back = t.entry < 0 ? i - fire.inputs.delay[j] : i;
          if (back < 0) continue;
          const at = ends[writer(b) * ring + (back % ring)];
          if (at > ready) {
            ready = at;
            cause = b;
          }
        }
        const outFrom = t.entry < 0 ? fire.outputs.start[id] : 0;
        const outTo = t.entry < 0 ? fire.outputs.start[id + 1] : 1;
        for (let j = outFrom; j < outTo; j++) {
          const b = t.entry < 0 ? fire.outputs.buffer[j] : t.entry;
          const back = i - slots(b);
          if (back < 0) continue;
          const slot = back % ring;
          for (let x = buffers.consumers.start[b]; x < buffers.consumers.start[b + 1]; x++) {
            const at = ends[buffers.consumers.node[x] * ring + slot];
            if (at > ready) {
              ready = at;
              cause = b;
            }
          }
          for (let x = buffers.next.start[b]; x < buffers.next.start[b + 1]; x++) {
            const at = ends[(fires + buffers.next.list[x]) * ring + slot];
            if (at > ready) {
              ready = at;
              cause = b;
            }
          }
        }
        const own = Math.max(free[t.resource], t.entry >= 0 && i > 0 ? ends[id * ring + ((i - 1) % ring)] : 0);
        const start = Math.max(ready, own);
        const finish = start + t.time;
        ends[id * ring + (i % ring)] = finish;
        free[t.resource] = finish;
        if (i === 0) latency = Math.max(latency, finish);
        if (!draw) continue;
        const held = ready > own;
        if (t.entry < 0) {
          const lane = mainLanes[t.pe];
          if (held && start > lane.free)
            events.push({
              host: lane.host,
              pe: lane.pe,
              thread: 'main',
              kind: 'wait',
              name: waitSlice(buffers.id[cause]),
              buffer: buffers.id[cause],
              iteration: i,
              cycle: k,
              start: us(lane.free),
              end: us(start),
            });
          lane.free = finish;
          events.push({
            host: lane.host,
            pe: lane.pe,
            thread: 'main',
            kind: 'fire',
            name: order[id],
            node: order[id],
            iteration: i,
            cycle: k,
            start: us(start),
            end: us(finish),
          });
        } else {
          const to = t.entry;
          const from = transfer.from[to];
          for (const lane of lanesOf(buffers.pe[from], buffers.pe[to])) {
            if (held && start > lane.free)
              events.push({
                host: lane.host,
                pe: lane.pe,
                thread: lane.thread,
                kind: 'wait',
                name: waitSlice(buffers.id[cause]),
                buffer: buffers.id[cause],
                iteration: i,
                cycle: k,
                start: us(lane.free),
                end: us(start),
              });
            lane.free = finish;
            events.push({
              host: lane.host,
              pe: lane.pe,
              thread: lane.thread,
              kind: 'transfer',
              name: buffers.id[to],
              buffer: buffers.id[to],
              from: buffers.id[from],
              iteration: i,
              cycle: k,
              start: us(start),
              end: us(finish),
              bytes: buffers.bytes[to],
            });
          }
        }
      }
    }
    // Whole cycles only, as in barrier mode: the budget is checked between them.
    if (draw && ++drawn && events.length >= maxEvents) cycles = drawn;
  }
  return { cycleTime, bottleneck, latency, events, cycles: Math.min(drawn, cycles) };
}

function buildTimeline(
  model: Model,
  ig: ImplementationGraph,
  phases: Timed[][],
  resources: number,
  times: PhaseTime[],
  cycleTime: number,
  barrier: number,
  iterations: number,
  cycles: number,
  maxEvents: number,
  inside: (Float64Array | undefined)[],
): { events: TraceEvent[]; cycles: number } {
  const events: TraceEvent[] = [];
  const us = (s: number) => s * 1e6;
  const lanePe = (id: string): LanePe => model.pe.get(id as PeId)!;
  const pes = ig.programs.pes;
  // Each transfer's lanes by (sender, receiver) position, made once.
  const lanes = new Map<number, { pe: string; host: string; thread: string }[]>();
  const lanesOf = (p: number, q: number) => {
    let l = lanes.get(p * pes.length + q);
    if (!l) lanes.set(p * pes.length + q, (l = transferLanes(pes[p].pe, pes[q].pe, lanePe).map((x) => ({ ...x, host: lanePe(x.pe).host }))));
    return l;
  };
  // Where each resource's next action starts in the current phase: valid where stamp matches.
  const cursor = new Float64Array(resources);
  const stamp = new Int32Array(resources).fill(-1);
  let serial = 0;
  for (let k = 0; k < cycles; k++) {
    let at = k * cycleTime;
    // Where the phases without a barrier between them began (their actions' starts are offsets from it).
    let from = at;
    phases.forEach((actions, i) => {
      serial++;
      if (i === 0 || (ig.phaseBarriers?.[i - 1] ?? true)) from = at;
      const offsets = inside[i];
      actions.forEach((t, j) => {
        const iteration = k - t.startCycle;
        if (iteration < 0 || iteration >= iterations) return;
        const r = t.resource;
        const start = offsets ? from + offsets[j] : stamp[r] === serial ? cursor[r] : at;
        stamp[r] = serial;
        cursor[r] = start + t.time;
        if (t.entry < 0) {
          const s = -t.entry - 1;
          const node = ig.order[s];
          const p = t.pe;
          events.push({
            host: pes[p].host,
            pe: pes[p].pe,
            thread: 'main',
            kind: 'fire',
            name: node,
            node,
            iteration,
            cycle: k,
            start: us(start),
            end: us(start + t.time),
          });
        } else {
          const to = t.entry;
          const from = ig.programs.transfer.from[to];
          for (const lane of lanesOf(ig.buffers.pe[from], ig.buffers.pe[to])) {
            events.push({
              host: lane.host,
              pe: lane.pe,
              thread: lane.thread,
              kind: 'transfer',
              name: ig.buffers.id[to],
              buffer: ig.buffers.id[to],
              from: ig.buffers.id[from],
              iteration,
              cycle: k,
              start: us(start),
              end: us(start + t.time),
              bytes: ig.buffers.bytes[to],
            });
          }
        }
      });
      at += times[i].time;
      if (barrier > 0 && (ig.phaseBarriers?.[i] ?? true)) {
        for (const pe of model.pes) {
          events.push({
            host: pe.host,
            pe: pe.id,
            thread: 'main',
            kind: 'barrier',
            name: barrierSlice(times[i].name),
            iteration: -1,
            cycle: k,
            start: us(at - barrier),
            end: us(at),
          });
        }
      }
    });
    // Whole cycles only: the budget is checked between them.
    if (events.length >= maxEvents) return { events, cycles: k + 1 };
  }
  return { events, cycles };
}
