import type { Diagnostic } from '../diagnostics.js';
import { compileModel } from '../compile/compile.js';
import { fastestLink } from '../compile/phases.js';
import { Router } from '../compile/route.js';
import { actionRange } from '../compile/decode.js';
import type { ImplementationGraph } from '../compile/types.js';
import type { Model } from '../document/model.js';
import type { Link } from '../document/types.js';
import { analyze } from '../document/validate.js';
import type { PeId } from '../ids.js';
import type { TraceEvent } from '../trace/event.js';
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
  /** Seconds per cycle in steady state (one iteration completes per cycle). */
  cycleTime: number;
  phases: PhaseTime[];
  /** Busy seconds per cycle of each PE and link (`link a<->b` or `link a->b`). */
  busy: Record<string, number>;
  /** Iterations per second. */
  throughput: number;
  fillCycles: number;
  iterations: number;
  /** Cycles of the whole run: last start cycle + iterations. */
  cycles: number;
  /** Seconds for the whole run (cycles x cycle time). */
  runTime: number;
  ig: ImplementationGraph;
  timeline: TraceEvent[];
  /** Cycles the timeline covers, from cycle 0 (fewer than `cycles` for a long run or a large graph). */
  timelineCycles: number;
}

export interface Prediction {
  overlap: StrategyPrediction;
  noOverlap: StrategyPrediction;
  /** Cycle time without overlap / with. */
  speedup: number;
}

export type PredictResult = { ok: true; prediction: Prediction; diagnostics: Diagnostic[] } | { ok: false; diagnostics: Diagnostic[] };

/**
 * Predicts both strategies of paper 4.3 from per-node kernel times and link bandwidth and
 * latency. Without overlap a cycle is the sum over phases of the slowest PE or link in the
 * phase (plus its barrier); with overlap, the busiest PE or link. A full-duplex link carries
 * both directions at once; a half-duplex one serialises them. For P-I-I-C this gives
 * T = Th + Tib + a*n without overlap and max(Th, Tib, a*n) with.
 */
export function predict(doc: unknown, opts: PredictOptions = {}): PredictResult {
  const { diagnostics, model } = analyze(doc);
  if (!model) return { ok: false, diagnostics };
  const router = new Router(model);
  const out: Partial<Record<'overlap' | 'noOverlap', StrategyPrediction>> = {};
  for (const overlap of [true, false]) {
    const r = compileModel(model, overlap, diagnostics, router);
    if (!r.ok) return { ok: false, diagnostics: r.diagnostics };
    out[overlap ? 'overlap' : 'noOverlap'] = predictStrategy(model, r.ig, opts);
  }
  const speedup = out.overlap!.cycleTime > 0 ? out.noOverlap!.cycleTime / out.overlap!.cycleTime : 1;
  const prediction = { overlap: out.overlap!, noOverlap: out.noOverlap!, speedup };
  return { ok: true, prediction, diagnostics };
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
  const barrier = opts.barrier ?? 0;
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
        phases[f].push({ entry, startCycle: transfer.startCycle[entry], resource: c.resource, time: transferTime(ig.buffers.id[source], ig.buffers.id[entry], bytes, c.link, opts), pe: -1 });
      }
    }
  }
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
    return { name: ig.phases[i], time: time + barrier, bottleneck };
  });
  const busy: Record<string, number> = {};
  for (const r of busyOrder) busy[resources.names[r]] = busyTime[r];
  const cycleTime = phaseTimes.reduce((a, p) => a + p.time, 0);
  let last = 0;
  for (const ph of phases) for (const t of ph) last = Math.max(last, t.startCycle);
  const cycles = last + iterations;
  const { events: timeline, cycles: timelineCycles } = buildTimeline(model, ig, phases, count, phaseTimes, cycleTime, barrier, iterations, Math.min(opts.timelineCycles ?? cycles, cycles, 200), opts.timelineEvents ?? TIMELINE_EVENTS);
  return {
    overlap: ig.overlap,
    cycleTime,
    phases: phaseTimes,
    busy,
    throughput: cycleTime > 0 ? 1 / cycleTime : Infinity,
    fillCycles: ig.fillCycles,
    iterations,
    cycles,
    runTime: cycles * cycleTime,
    ig,
    timeline,
    timelineCycles,
  };
}

function buildTimeline(model: Model, ig: ImplementationGraph, phases: Timed[][], resources: number, times: PhaseTime[], cycleTime: number, barrier: number, iterations: number, cycles: number, maxEvents: number): { events: TraceEvent[]; cycles: number } {
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
    phases.forEach((actions, i) => {
      serial++;
      for (const t of actions) {
        const iteration = k - t.startCycle;
        if (iteration < 0 || iteration >= iterations) continue;
        const r = t.resource;
        const start = stamp[r] === serial ? cursor[r] : at;
        stamp[r] = serial;
        cursor[r] = start + t.time;
        if (t.entry < 0) {
          const s = -t.entry - 1;
          const node = ig.order[s];
          const p = t.pe;
          events.push({ host: pes[p].host, pe: pes[p].pe, thread: 'main', kind: 'fire', name: node, node, iteration, cycle: k, start: us(start), end: us(start + t.time) });
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
      }
      at += times[i].time;
      if (barrier > 0) {
        for (const pe of model.pes) {
          events.push({ host: pe.host, pe: pe.id, thread: 'main', kind: 'barrier', name: `barrier ${times[i].name}`, iteration: -1, cycle: k, start: us(at - barrier), end: us(at) });
        }
      }
    });
    // Whole cycles only: the budget is checked between them.
    if (events.length >= maxEvents) return { events, cycles: k + 1 };
  }
  return { events, cycles };
}
