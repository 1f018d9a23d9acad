import { waitSlice, type TraceEvent } from '../trace/event.js';
import { mulberry32 } from '../util/random.js';
import { operatorApplications, IN, type ScanExecution, type ScanPlan } from '../scan/plan.js';

// The scan's DAG (scan/plan.ts) simulated event by event: each worker runs
// its nodes in plan order (locals, the network level by level, the second stage: an order
// every dependency respects), a node starting once its worker is free and its inputs have
// arrived; a value read on another worker arrives a message later (latency + bytes /
// bandwidth; a message occupies the link, not the worker, as MPI's point-to-point sends).
// `rounds` adds a barrier before each network level: the level waits for every earlier node.
// Costs are seconds per application (a firing of a node costs its applications' sum), drawn
// from a calibrated mean (optionally with a coefficient of variation, seeded) or replayed from
// a run's measured times. The identity is free, so a node with no applications costs only the
// per-firing overhead.

/** A calibrated mean: seconds per application, the same for every worker or per worker (its PE kind's). */
export interface MeanCosts {
  kind: 'mean';
  perApplication: number | readonly number[];
  /** Coefficient of variation of one application's time (lognormal; default 0: every application takes the mean). */
  cv?: number;
  /** Seed of the draws when cv > 0. */
  seed?: number;
  /** Seconds every firing costs beside its applications (default 0). */
  perFiring?: number;
}

/** Replayed measured times by node key (`local.w3`, `ks.r2.w5`): a list per node, entry `iteration mod length` used. */
export interface ReplayCosts {
  kind: 'replay';
  /** Seconds per application (a fire's duration over its applications) or per firing (its duration). */
  per: 'application' | 'firing';
  seconds: Readonly<Record<string, readonly number[]>>;
  /** For nodes the replay lacks (a firing with no applications has no per-application time): seconds per firing (default 0). */
  missing?: number;
}

export type ScanCosts = MeanCosts | ReplayCosts;

export interface ScanLinkCost {
  /** Seconds per message. */
  latency: number;
  /** Bytes per second. */
  bandwidth: number;
}

export interface SimulateOptions {
  execution?: ScanExecution;
  /** The link between two workers (a document's link, or one for all); default: messages are free. */
  link?: ScanLinkCost | ((from: number, to: number) => ScanLinkCost);
  /** Bytes of one element (what a message of one element carries); default 0. */
  elementBytes?: number;
  /** Seconds each barrier costs (rounds only; default 0). */
  barrier?: number;
  /** The iteration simulated (picks replayed entries; labels the trace; default 0). */
  iteration?: number;
  /** Prefixed to node keys in the critical path and the trace (`scan1/`). */
  prefix?: string;
  /**
   * Whether a worker fires one node at a time (default true: a worker is one PE). False lets
   * every node start once its inputs are there: the dataflow depth scanModel counts, which
   * is a lower bound (a worker holding both a network node and its second stage runs them in
   * turn); with unit costs and free messages, true gives scanModel's `span.serialised`.
   */
  serialWorkers?: boolean;
  /** Lane per worker: PE id and host (default `w<i>` on host `sim`). */
  lanes?: readonly { pe: string; host: string }[];
}

export interface WorkerTime {
  /** Seconds firing. */
  busy: number;
  /** Seconds before its last firing ends, not firing: waiting for inputs or a barrier. */
  wait: number;
  /** Seconds after its last firing until the scan ends. */
  idle: number;
}

export interface ScanSimulation {
  /** Seconds from the first firing's start to the last one's end (the scan's input is there at 0). */
  makespan: number;
  workers: WorkerTime[];
  /** Node ids (prefixed) of the longest chain, first to last: each started when the one before it allowed. */
  criticalPath: string[];
  /** Per node (plan order): start and end seconds. */
  start: Float64Array;
  end: Float64Array;
  /** One lane per worker: fires named as the plan's node ids, waits as `wait <what>` slices (microseconds). */
  events: TraceEvent[];
}

/** Most plan nodes simulated (a scan of MAX_SCAN_WORKERS workers has a few thousand). */
export const MAX_SIMULATED_NODES = 1 << 20;

export function simulateScan(plan: ScanPlan, costs: ScanCosts, opts: SimulateOptions = {}): ScanSimulation {
  const { nodes, p } = plan;
  if (nodes.length > MAX_SIMULATED_NODES) throw new RangeError(`a scan plan of ${nodes.length} nodes is more than the ${MAX_SIMULATED_NODES} simulated`);
  const execution = opts.execution ?? 'eager';
  const iteration = opts.iteration ?? 0;
  const prefix = opts.prefix ?? '';
  const elementBytes = opts.elementBytes ?? 0;
  const serial = opts.serialWorkers ?? true;
  const cost = costOf(plan, costs, iteration);
  const linkOf = typeof opts.link === 'function' ? opts.link : () => opts.link as ScanLinkCost | undefined;
  const message = (from: number, to: number, tokens: number) => {
    if (from === to) return 0;
    const l = linkOf(from, to);
    return l ? l.latency + (tokens * elementBytes) / l.bandwidth : 0;
  };

  const start = new Float64Array(nodes.length);
  const end = new Float64Array(nodes.length);
  // What a node's start waited for: -1 nothing, -2 the barrier, -3 its worker's previous node, else the input node.
  const cause = new Int32Array(nodes.length).fill(-1);
  const prevOnWorker = new Int32Array(nodes.length).fill(-1);
  const barrierCause = new Int32Array(nodes.length).fill(-1);
  const free = new Float64Array(p);
  const lastOnWorker = new Int32Array(p).fill(-1);
  const busy = new Float64Array(p);
  // Rounds: at each new network level, the latest end (and its node) of everything before it
  // (nodes come in plan order: locals, the network level by level, the second stage).
  let doneBefore = 0;
  let doneBeforeNode = -1;
  let latest = 0;
  let latestNode = -1;
  let level = 0;
  nodes.forEach((n, k) => {
    if (n.stage === 'network' && n.level !== level) {
      level = n.level!;
      [doneBefore, doneBeforeNode] = [latest, latestNode];
    }
    const w = n.worker;
    let ready = 0;
    let why = -1;
    for (const input of n.inputs)
      for (const r of input.runs) {
        if (r.node === IN) continue;
        const at = end[r.node] + message(nodes[r.node].worker, w, r.count);
        if (at > ready) [ready, why] = [at, r.node];
      }
    if (execution === 'rounds' && n.stage === 'network') {
      const at = doneBefore + (opts.barrier ?? 0);
      if (at > ready) [ready, why] = [at, -2];
      barrierCause[k] = doneBeforeNode;
    }
    if (serial && lastOnWorker[w] >= 0 && free[w] >= ready && free[w] > 0) [ready, why] = [free[w], -3];
    prevOnWorker[k] = lastOnWorker[w];
    start[k] = serial ? Math.max(ready, free[w]) : ready;
    end[k] = start[k] + cost(k);
    cause[k] = why;
    free[w] = Math.max(free[w], end[k]);
    busy[w] += end[k] - start[k];
    lastOnWorker[w] = k;
    if (end[k] > latest || latestNode < 0) [latest, latestNode] = [end[k], k];
  });

  let makespan = 0;
  let last = -1;
  for (let k = 0; k < nodes.length; k++) if (end[k] > makespan || last < 0) [makespan, last] = [end[k], k];
  const workers: WorkerTime[] = [];
  for (let w = 0; w < p; w++) {
    const lastEnd = lastOnWorker[w] >= 0 ? end[lastOnWorker[w]] : 0;
    workers.push({ busy: busy[w], wait: lastEnd - busy[w], idle: makespan - lastEnd });
  }

  // The critical path, back from the last node to end: each step to what its start waited for.
  const path: number[] = [];
  for (let k = last, guard = 0; k >= 0 && guard <= nodes.length; guard++) {
    path.push(k);
    const c = cause[k];
    k = c >= 0 ? c : c === -3 ? prevOnWorker[k] : c === -2 ? barrierCause[k] : -1;
  }
  path.reverse();

  const name = (k: number) => `${prefix}${nodes[k].key}`;
  const lane = (w: number) => opts.lanes?.[w] ?? { pe: `w${w}`, host: 'sim' };
  const us = (s: number) => s * 1e6;
  const events: TraceEvent[] = [];
  const laneFree = new Float64Array(p);
  nodes.forEach((n, k) => {
    const { pe, host } = lane(n.worker);
    const w = n.worker;
    if (start[k] > laneFree[w]) {
      const what = cause[k] >= 0 ? name(cause[k]) : cause[k] === -2 ? `barrier r${n.level}` : 'input';
      events.push({ host, pe, thread: 'main', kind: 'wait', name: waitSlice(what), iteration, cycle: 0, start: us(laneFree[w]), end: us(start[k]) });
    }
    laneFree[w] = end[k];
    events.push({ host, pe, thread: 'main', kind: 'fire', name: name(k), node: name(k), iteration, cycle: 0, start: us(start[k]), end: us(end[k]) });
  });
  return { makespan, workers, criticalPath: path.map(name), start, end, events };
}

/** Seconds each node's firing costs, by plan position. */
function costOf(plan: ScanPlan, costs: ScanCosts, iteration: number): (k: number) => number {
  const { nodes } = plan;
  if (costs.kind === 'replay') {
    return (k) => {
      const list = costs.seconds[nodes[k].key];
      if (!list?.length) return costs.missing ?? 0;
      const t = list[iteration % list.length];
      return costs.per === 'firing' ? t : t * operatorApplications(nodes[k].mode, nodes[k].count);
    };
  }
  const mean = (w: number) => (typeof costs.perApplication === 'number' ? costs.perApplication : costs.perApplication[w]);
  const perFiring = costs.perFiring ?? 0;
  const cv = costs.cv ?? 0;
  if (cv <= 0) return (k) => perFiring + mean(nodes[k].worker) * operatorApplications(nodes[k].mode, nodes[k].count);
  // Lognormal with the given mean and CV: sigma^2 = ln(1 + cv^2), mu = ln(mean) - sigma^2 / 2.
  const rand = mulberry32((costs.seed ?? 1) ^ Math.imul(iteration + 1, 0x9e3779b1));
  const sigma = Math.sqrt(Math.log(1 + cv * cv));
  const draws = nodes.map((n) => {
    let t = perFiring;
    const m = mean(n.worker);
    for (let a = operatorApplications(n.mode, n.count); a > 0; a--) t += m * Math.exp(sigma * normal(rand) - (sigma * sigma) / 2);
    return t;
  });
  return (k) => draws[k];
}

/** A standard normal draw (Box-Muller). */
function normal(rand: () => number): number {
  const u = 1 - rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}
