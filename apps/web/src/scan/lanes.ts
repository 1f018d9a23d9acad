import {
  DEFAULT_RATES,
  operatorApplications,
  simulateScan,
  TRACE_KINDS,
  type Calibration,
  type OperatorMode,
  type ScanCosts,
  type ScanExecution,
  type ScanPlan,
  type TraceColumns,
  type WrittenDocument,
} from '@pipeloom/core';
import { portsFor, withDefaults, type KernelSpec, type Params } from '@pipeloom/kernels';
import { ownStarts } from './inflight.js';
import type { ScanMessages } from './messages.js';

// The scan timeline's content: one lane per worker in three bands on
// one time axis, as figure 4.4 draws a run: (a) core's simulateScan of the plan with a mean
// cost per application (calibrated from the last run's fires, else from the project's
// calibration on each worker's PE, else the operator's cost hint),
// (b) simulateScan replaying that run's measured time of every node, and (c) the run's own
// fires. Both simulations send a value read on another worker's PE over the architecture's
// fastest route (messages.ts), as the run must. Each lane holds the worker's firings coloured by stage, the waits between them
// (grey) and its idle tail to the band's makespan; the simulations mark their critical path.
// Times are seconds from the scan's first firing.

export type Stage = 'local' | 'network' | 'prop' | 'barrier';
/** `other`: a firing on the worker's PE that is not this scan's in the iteration shown (another iteration's, another node's). */
export type SliceKind = Stage | 'other' | 'wait' | 'idle';

export interface Slice {
  kind: SliceKind;
  start: number;
  end: number;
  /** The node's key (`ks.r2.w5`); for `other` the firing's name and iteration; '' for a wait or idle. */
  key: string;
  /** A measured firing in flight beside an earlier one on its PE: when it was started (drawn from `start`, when the earlier one ended). */
  queued?: number;
  /** On the simulation's critical path. */
  critical: boolean;
}

export interface Lane {
  worker: number;
  slices: Slice[];
  /** Seconds firing the scan's nodes, waiting before its last one (not firing anything), idle after it until the band's makespan. */
  busy: number;
  wait: number;
  idle: number;
}

export type BandId = 'mean' | 'replay' | 'measured';

export interface Band {
  id: BandId;
  title: string;
  /** Where its costs come from, in words. */
  source: string;
  makespan: number;
  lanes: Lane[];
  /** Node keys of the critical path, first to last (simulations only). */
  criticalPath: string[];
}

/** A node's stage from its key: `local.w3`, `prop.w3`, `barrier.r2`, else a network application (`ks.r2.w5`). */
export function stageOf(key: string): Stage {
  if (key.startsWith('local.')) return 'local';
  if (key.startsWith('prop.')) return 'prop';
  if (key.startsWith('barrier.')) return 'barrier';
  return 'network';
}

/** The worker of an expanded node's key: its `.w<i>`; a barrier (`barrier.r2`) runs on worker 0's PE. Undefined for a key of neither form. */
export function workerOf(key: string): number | undefined {
  const m = /\.w(\d+)$/.exec(key);
  if (m) return Number(m[1]);
  return /^barrier\.r\d+$/.test(key) ? 0 : undefined;
}

export interface Fire {
  key: string;
  worker: number;
  /** Seconds from the iteration's first fire of the scan. */
  start: number;
  end: number;
  /**
   * Where its own time starts: `start`, or the end of an earlier firing still in flight on its
   * PE (a GPU PE takes several dispatches at once and runs them in turn: each counts from the
   * one before it). Its cost in the replay is `end - from`.
   */
  from?: number;
  /** Not the scan's: another firing on the worker's PE within the iteration's span (its name and iteration in `key`). */
  other?: boolean;
}

/** A run's fires of one scan: one iteration's (the median span) drawn and replayed, every iteration's mean cost. */
export interface RunFires {
  /** Iterations with fires of the scan (read up to MAX_ITERATIONS). */
  iterations: number;
  /** The iteration shown and replayed: the one whose span is the median. */
  iteration: number;
  /** The scan's fires in that iteration, then the other fires on its workers' PEs during it (clipped to its span). */
  fires: Fire[];
  /** Seconds per operator application over every iteration read: fire time (each counted from `from`) over the plan's applications. */
  perApplication?: number;
  /** Mean seconds of a barrier relay's fire (rounds), 0 without any. */
  barrier: number;
  /** Fires read in all. */
  count: number;
}

const FIRE = TRACE_KINDS.indexOf('fire');
/** Most iterations read and fires kept (a long run's first iterations say as much). */
export const MAX_ITERATIONS = 10_000;
const MAX_FIRES = 1 << 20;
/** Most other firings drawn (each is an SVG box; a long self-timed span on 64 PEs could hold many). */
const MAX_OTHER = 20_000;

/**
 * The fires of scan `id` (nodes `id/<key>`) in a run's trace, against the plan the document
 * makes of it; null when the trace has none, or has fires of a worker the plan lacks (a run
 * of another p).
 */
export function runFires(c: TraceColumns, id: string, plan: ScanPlan): RunFires | null {
  const prefix = `${id}/`;
  const apps = new Map(plan.nodes.map((n) => [n.key, operatorApplications(n.mode, n.count)]));
  // Per interned name: its key, or null for a name not of this scan (each name tested once).
  const keyOf = new Map<number, string | null>();
  const spans = new Map<number, { start: number; end: number }>();
  let count = 0;
  const mine: number[] = [];
  for (let i = 0; i < c.length && mine.length < MAX_FIRES; i++) {
    if (c.kind[i] !== FIRE || c.node[i] < 0) continue;
    let key = keyOf.get(c.node[i]);
    if (key === undefined) {
      const s = c.names[c.node[i]];
      key = s.startsWith(prefix) ? s.slice(prefix.length) : null;
      if (key !== null && !apps.has(key) && stageOf(key) !== 'barrier') return null;
      keyOf.set(c.node[i], key);
    }
    if (key === null) continue;
    const it = c.iteration[i];
    let span = spans.get(it);
    if (!span) {
      if (spans.size >= MAX_ITERATIONS) continue;
      spans.set(it, (span = { start: Infinity, end: -Infinity }));
    }
    span.start = Math.min(span.start, c.start[i]);
    span.end = Math.max(span.end, c.end[i]);
    count++;
    mine.push(i);
  }
  if (!spans.size) return null;
  // Each fire's own time: from its start, or from the end of the fires before it on its lane
  // in its iteration that are still in flight (they overlap on a GPU PE, never on a CPU one).
  const own = ownStarts(c, mine);
  const from = new Map<number, number>(mine.map((i, k) => [i, own[k]]));
  let busy = 0;
  let applications = 0;
  let barrierTime = 0;
  let barriers = 0;
  for (const i of mine) {
    const key = keyOf.get(c.node[i])!;
    const d = (c.end[i] - from.get(i)!) / 1e6;
    if (stageOf(key) === 'barrier') {
      barrierTime += d;
      barriers++;
    } else {
      busy += d;
      applications += apps.get(key)!;
    }
  }
  const bySpan = [...spans].sort((a, b) => a[1].end - a[1].start - (b[1].end - b[1].start));
  const [iteration, span] = bySpan[Math.floor(bySpan.length / 2)];
  const fires: Fire[] = [];
  const shown = new Set<number>();
  // Each worker's trace lane (its PE's thread), from its fires in this iteration.
  const workerOn = new Map<number, number>();
  for (const i of mine) {
    if (c.iteration[i] !== iteration) continue;
    const key = keyOf.get(c.node[i])!;
    const worker = workerOf(key) ?? 0;
    shown.add(i);
    if (!workerOn.has(c.lane[i])) workerOn.set(c.lane[i], worker);
    fires.push({ key, worker, start: (c.start[i] - span.start) / 1e6, end: (c.end[i] - span.start) / 1e6, from: (from.get(i)! - span.start) / 1e6 });
  }
  // In a self-timed run a worker's PE also fires other iterations and other nodes while this
  // iteration goes: those are drawn as such, not as waits.
  for (let i = 0, n = 0; i < c.length && n < MAX_OTHER; i++) {
    if (c.kind[i] !== FIRE || shown.has(i) || c.end[i] <= span.start || c.start[i] >= span.end) continue;
    const worker = workerOn.get(c.lane[i]);
    if (worker === undefined) continue;
    fires.push({
      key: `${c.names[c.name[i]]} (iteration ${c.iteration[i]})`,
      worker,
      start: (Math.max(c.start[i], span.start) - span.start) / 1e6,
      end: (Math.min(c.end[i], span.end) - span.start) / 1e6,
      other: true,
    });
    n++;
  }
  return {
    iterations: spans.size,
    iteration,
    fires,
    perApplication: applications > 0 ? busy / applications : undefined,
    barrier: barriers ? barrierTime / barriers : 0,
    count,
  };
}

/**
 * Seconds one application of the operator takes on each worker's PE from its cost hint (flops
 * over the PE's flop rate plus bytes over its memory bandwidth, as core's predictor: the PE's
 * own rates, else core's defaults for its kind); undefined where the hint cannot be read.
 */
export function hintPerApplication(operator: KernelSpec, own: Params, doc: WrittenDocument, pes: readonly string[], p: number): number[] | undefined {
  let cost: { flops: number; bytes: number };
  try {
    const params = withDefaults(operator, { ...own, mode: 'apply', count: 1 });
    portsFor(operator, params);
    cost = operator.cost(params);
  } catch {
    return undefined;
  }
  return Array.from({ length: p }, (_, w) => {
    const pe = doc.arch.pes.find((x) => x.id === pes[w]);
    const kind = pe?.kind === 'gpu' ? 'gpu' : 'cpu';
    return cost.flops / (pe?.flops ?? DEFAULT_RATES[kind].flops) + cost.bytes / (pe?.memoryBandwidth ?? DEFAULT_RATES[kind].memoryBandwidth);
  });
}

/**
 * Seconds one application of the operator takes on each worker's PE from a calibration (the
 * Run view's Calibrate or `pipeloom calibrate`): its firings of the operator with these params
 * on that PE, their time over their applications (a firing of mode m and count c makes
 * operatorApplications(m, c)). Undefined unless every worker's PE has such firings.
 */
export function calibratedPerApplication(
  cal: Calibration,
  operator: KernelSpec,
  own: Params,
  pes: readonly string[],
  p: number,
): { perApplication: number[]; firings: number } | undefined {
  let mine: Params;
  try {
    mine = withDefaults(operator, { ...own, mode: 'apply', count: 1 });
  } catch {
    return undefined;
  }
  const same = (params: Record<string, unknown>) =>
    Object.keys(mine).every((k) => k === 'mode' || k === 'count' || JSON.stringify(params[k]) === JSON.stringify(mine[k]));
  const per = new Map<string, { seconds: number; applications: number }>();
  let firings = 0;
  for (const f of cal.firings) {
    if (f.kernel !== operator.id || !same(f.params)) continue;
    const a = operatorApplications(f.params.mode as OperatorMode, Number(f.params.count));
    if (!(a > 0) || !(f.seconds >= 0) || !(f.nodes > 0)) continue;
    const acc = per.get(f.pe) ?? { seconds: 0, applications: 0 };
    acc.seconds += f.seconds * f.nodes;
    acc.applications += a * f.nodes;
    per.set(f.pe, acc);
    firings += f.nodes;
  }
  const out: number[] = [];
  for (let w = 0; w < p; w++) {
    const acc = per.get(pes[w]);
    if (!acc) return undefined;
    out.push(acc.seconds / acc.applications);
  }
  return { perApplication: out, firings };
}

/**
 * Lanes from each worker's firings: a gap before its last scan firing is a wait, after it idle
 * (to the makespan); other firings on its PE fill gaps as what they are.
 */
export function lanesOf(p: number, slices: readonly (Fire & { critical: boolean })[], makespan: number): Lane[] {
  const per: (Fire & { critical: boolean })[][] = Array.from({ length: p }, () => []);
  // A firing in flight beside an earlier one is drawn from when that one ended (its own time).
  for (const s of slices)
    if (s.worker < p)
      per[s.worker].push(
        s.from !== undefined && s.from > s.start ? ({ ...s, start: s.from, queued: s.start } as Fire & { critical: boolean; queued: number }) : s,
      );
  return per.map((fires, worker) => {
    fires.sort((a, b) => a.start - b.start || a.end - b.end);
    const last = fires.reduce((m, f) => (f.other ? m : Math.max(m, f.end)), 0);
    const out: Slice[] = [];
    let at = 0;
    let busy = 0;
    let wait = 0;
    let idle = 0;
    const gap = (to: number) => {
      if (to <= at) return;
      const kind = at < last ? 'wait' : 'idle';
      out.push({ kind, start: at, end: to, key: '', critical: false });
      if (kind === 'wait') wait += to - at;
      else idle += to - at;
    };
    for (const f of fires) {
      gap(f.start);
      const queued = (f as { queued?: number }).queued;
      out.push({
        kind: f.other ? 'other' : stageOf(f.key),
        start: f.start,
        end: f.end,
        key: f.key,
        critical: f.critical,
        ...(queued !== undefined ? { queued } : {}),
      });
      if (!f.other) busy += f.end - f.start;
      at = Math.max(at, f.end);
    }
    gap(makespan);
    return { worker, slices: out, busy, wait, idle };
  });
}

export interface TimelineInput {
  plan: ScanPlan;
  execution: ScanExecution;
  /** Seconds per application from the operator's cost hint, per worker (band (a) without a run). */
  hint?: number[];
  /** The last run's fires of this scan (of the document as it is), if any. */
  run?: RunFires | null;
  /** Seconds per application per worker from the project's calibration, and when it was measured (used without a run). */
  calibrated?: { perApplication: number[]; firings: number; date: string };
  /** What a message between two workers costs in (a) and (b) (messages.ts); free without. */
  messages?: ScanMessages;
}

export interface ScanTimeline {
  bands: Band[];
  /** The axis every band shares: the longest makespan. */
  axis: number;
  /** Why a band is missing (no run yet; no cost hint). */
  notes: string[];
}

const fmtCost = (s: number) => (s >= 1e-3 ? `${(s * 1e3).toPrecision(3)} ms` : `${(s * 1e6).toPrecision(3)} µs`);
const range = (xs: readonly number[]) => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo === hi ? fmtCost(lo) : `${fmtCost(lo)} to ${fmtCost(hi)}`;
};

/** The three bands: (a) the mean-cost simulation, (b) the replay and (c) the measured fires, the last two only with a run. */
export function scanTimeline({ plan, execution, hint, run, calibrated, messages }: TimelineInput): ScanTimeline {
  const bands: Band[] = [];
  const notes: string[] = [];
  const p = plan.p;
  const simulated = (id: BandId, title: string, source: string, costs: ScanCosts, barrier: number): Band => {
    const sim = simulateScan(plan, costs, { execution, barrier, ...(messages ? { link: messages.link, elementBytes: messages.elementBytes } : {}) });
    const critical = new Set(sim.criticalPath);
    const fires = plan.nodes.map((n, k) => ({ key: n.key, worker: n.worker, start: sim.start[k], end: sim.end[k], critical: critical.has(n.key) }));
    return { id, title, source, makespan: sim.makespan, lanes: lanesOf(p, fires, sim.makespan), criticalPath: sim.criticalPath };
  };
  const mean = run?.perApplication;
  if (mean !== undefined) {
    bands.push(
      simulated(
        'mean',
        '(a) simulated, mean cost',
        `calibrated from the last run: ${fmtCost(mean)} per application (${run!.count} fires over ${run!.iterations} iterations)`,
        { kind: 'mean', perApplication: mean },
        run!.barrier,
      ),
    );
  } else if (calibrated) {
    bands.push(
      simulated(
        'mean',
        '(a) simulated, mean cost',
        `the project's calibration of ${calibrated.date.slice(0, 16).replace('T', ' ')} UTC: ${range(calibrated.perApplication)} per application on the workers' PEs (${calibrated.firings} firings)`,
        { kind: 'mean', perApplication: calibrated.perApplication },
        0,
      ),
    );
  } else if (hint) {
    bands.push(
      simulated(
        'mean',
        '(a) simulated, mean cost',
        `the operator's cost hint: ${range(hint)} per application (no measured cost yet)`,
        { kind: 'mean', perApplication: hint },
        0,
      ),
    );
  } else notes.push("(a) needs a cost per application: the operator's cost hint cannot be read for these params, and there is no run or calibration of it yet");
  if (run) {
    const seconds: Record<string, number[]> = {};
    for (const f of run.fires) if (!f.other && stageOf(f.key) !== 'barrier') seconds[f.key] = [f.end - (f.from ?? f.start)];
    bands.push(
      simulated(
        'replay',
        '(b) simulated, replayed costs',
        `each node's measured time in iteration ${run.iteration} of the last run`,
        { kind: 'replay', per: 'firing', seconds },
        run.barrier,
      ),
    );
    const makespan = run.fires.reduce((m, f) => (f.other ? m : Math.max(m, f.end)), 0);
    bands.push({
      id: 'measured',
      title: '(c) measured',
      source: `the last run's fires, iteration ${run.iteration} (the median span of ${run.iterations})`,
      makespan,
      lanes: lanesOf(
        p,
        run.fires.map((f) => ({ ...f, critical: false })),
        makespan,
      ),
      criticalPath: [],
    });
  } else
    notes.push(
      "No run of the document as it is yet: run it (Run tab) to calibrate (a) from its fires, and add (b), the simulation replaying each node's measured time, and (c), the measured firings, on this axis.",
    );
  return { bands, axis: bands.reduce((m, b) => Math.max(m, b.makespan), 0), notes };
}
