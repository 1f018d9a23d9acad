import { buildNetwork, networkStats, type NetworkStats, type ScanNetwork } from './networks.js';
import { operatorApplications, IN, scanPlan, type ScanExecution, type ScanOutput, type ScanPlan, type ScanStrategy, type Stage } from './plan.js';

// The cost model of a distributed scan (Copik, sections 4.1-4.4, figures 4.6-4.7), read off the
// plan the expansion pass writes (plan.ts), counted in operator applications (the operator is
// expensive: a message costs nothing beside it, section 4.3). Span is given three ways: levels
// (the synchronous reading: the longest local stage, the network's rounds, the longest second
// stage), dataflow depth (the longest chain of applications through the DAG, as if every node
// had a PE of its own: a lower bound) and the serialised span (each worker one PE running its
// nodes one at a time in plan order, as the agents do: exact with unit cost per application,
// free identities and free messages, which simulateScan confirms). `speedup` is (N - 1) over
// the serialised span, what the designer and bench:scan call speedup; `speedupDataflow` the
// bound over the depth. `rounds` execution adds a barrier before each network level.

export interface StageCounts {
  applications: number;
  sends: number;
  receives: number;
}

export interface WorkerModel {
  /** First element and count of the worker's block. */
  lo: number;
  count: number;
  /** Per stage: applications fired, messages sent and received. */
  local: StageCounts;
  network: StageCounts;
  prop: StageCounts;
  /** Expanded nodes the worker fires. */
  nodes: number;
}

export interface ScanModel {
  N: number;
  p: number;
  network: ScanNetwork;
  strategy: ScanStrategy;
  output: ScanOutput;
  execution: ScanExecution;
  workers: WorkerModel[];
  /** Expanded nodes (one firing each). */
  nodes: number;
  /** Applications fired, all workers. */
  work: number;
  /** Point-to-point messages: a node's output read on another worker, once per worker. */
  messages: number;
  span: {
    /** Longest local stage + network levels holding a fired application + longest second stage. */
    levels: number;
    /** The same with the network's levels counted whole (identities counted). */
    levelsCounted: number;
    /** Longest chain of applications through the DAG (under `execution`), every node on a PE of its own: a lower bound of `serialised`. */
    depth: number;
    /**
     * Applications until the last node ends when each worker is one PE firing its nodes one at
     * a time in plan order (locals, the network level by level, the second stage), each once
     * its inputs are there (under `execution`): the span the scan runs at unit cost. Above
     * `depth` where a worker holds several nodes in a row (serial, p = 8, N = 64: 21 against 20).
     */
    serialised: number;
  };
  /** (N - 1) / span.serialised: the serial scan's applications over the span workers run (the speedup the designer and bench:scan show). */
  speedup: number;
  /** (N - 1) / span.depth: the bound with a PE per node. */
  speedupDataflow: number;
  /** The network alone on the p block totals (figures 3.1-3.5). */
  networkPart: NetworkStats;
}

/** The model of a scan of N elements on p workers (1 <= p <= N). */
export function scanModel(
  N: number,
  p: number,
  network: ScanNetwork,
  strategy: ScanStrategy = 'scan-then-propagate',
  output: ScanOutput = 'inclusive',
  execution: ScanExecution = 'eager',
): ScanModel {
  return modelOfPlan(scanPlan(N, p, network, strategy, output), execution);
}

export function modelOfPlan(plan: ScanPlan, execution: ScanExecution = 'eager'): ScanModel {
  const { N, p, nodes } = plan;
  const zero = (): StageCounts => ({ applications: 0, sends: 0, receives: 0 });
  const workers: WorkerModel[] = plan.blocks.map((b) => ({ lo: b.lo, count: b.count, local: zero(), network: zero(), prop: zero(), nodes: 0 }));
  const stageOf = (s: Stage): keyof Pick<WorkerModel, 'local' | 'network' | 'prop'> => s;
  let work = 0;
  let messages = 0;
  // A message per (producer node, port, reading worker) on another worker.
  const sent = new Set<string>();
  for (const n of nodes) {
    const apps = operatorApplications(n.mode, n.count);
    const w = workers[n.worker];
    w[stageOf(n.stage)].applications += apps;
    w.nodes++;
    work += apps;
    for (const input of n.inputs)
      for (const r of input.runs) {
        if (r.node === IN) continue;
        const from = nodes[r.node];
        if (from.worker === n.worker) continue;
        const key = `${r.node}:${r.port}:${n.worker}`;
        if (sent.has(key)) continue;
        sent.add(key);
        messages++;
        workers[from.worker][stageOf(from.stage)].sends++;
        w[stageOf(n.stage)].receives++;
      }
  }

  const levelsFired = new Set(nodes.filter((n) => n.stage === 'network').map((n) => n.level!)).size;
  const longest = (s: 'local' | 'prop') => Math.max(0, ...workers.map((w) => w[s].applications));
  const depth = dataflowDepth(plan, execution);
  const serialised = serialisedSpan(plan, execution);
  return {
    N,
    p,
    network: plan.network.network,
    strategy: plan.strategy,
    output: plan.output,
    execution,
    workers,
    nodes: nodes.length,
    work,
    messages,
    span: {
      levels: longest('local') + levelsFired + longest('prop'),
      levelsCounted: longest('local') + plan.network.levels + longest('prop'),
      depth,
      serialised,
    },
    speedup: serialised > 0 ? (N - 1) / serialised : 1,
    speedupDataflow: depth > 0 ? (N - 1) / depth : 1,
    networkPart: networkStats(plan.network),
  };
}

/** Longest chain of applications: each node ends its own applications after its inputs; `rounds` makes each network level wait for everything before it. */
function dataflowDepth(plan: ScanPlan, execution: ScanExecution): number {
  const { nodes } = plan;
  const end = new Float64Array(nodes.length);
  const done = new Uint8Array(nodes.length);
  // Network levels in order, and the latest end of everything before each (for rounds).
  const barrier = new Map<number, number>();
  if (execution === 'rounds') {
    const levels = [...new Set(nodes.filter((n) => n.stage === 'network').map((n) => n.level!))].sort((a, b) => a - b);
    // Nodes are in plan order: locals, then the network by level, then the second stage.
    let before = 0;
    let k = 0;
    for (const level of levels) {
      for (; k < nodes.length && (nodes[k].stage === 'local' || (nodes[k].stage === 'network' && nodes[k].level! < level)); k++)
        before = Math.max(before, finish(k));
      barrier.set(level, before);
    }
  }
  let deepest = 0;
  for (let k = 0; k < nodes.length; k++) deepest = Math.max(deepest, finish(k));
  return deepest;

  function finish(k: number): number {
    if (done[k]) return end[k];
    const n = nodes[k];
    let start = n.stage === 'network' ? (barrier.get(n.level!) ?? 0) : 0;
    for (const input of n.inputs) for (const r of input.runs) if (r.node !== IN) start = Math.max(start, finish(r.node));
    end[k] = start + operatorApplications(n.mode, n.count);
    done[k] = 1;
    return end[k];
  }
}

/**
 * The span with workers serialised: nodes in plan order (an order every dependency respects),
 * each starting when its worker's previous node and its inputs have ended (and, for `rounds`,
 * everything before its network level), taking its applications.
 */
function serialisedSpan(plan: ScanPlan, execution: ScanExecution): number {
  const { nodes, p } = plan;
  const end = new Float64Array(nodes.length);
  const free = new Float64Array(p);
  let latest = 0;
  let level = 0;
  let barrier = 0;
  for (let k = 0; k < nodes.length; k++) {
    const n = nodes[k];
    if (n.stage === 'network' && n.level !== level) [level, barrier] = [n.level!, latest];
    let start = Math.max(free[n.worker], execution === 'rounds' && n.stage === 'network' ? barrier : 0);
    for (const input of n.inputs) for (const r of input.runs) if (r.node !== IN) start = Math.max(start, end[r.node]);
    end[k] = start + operatorApplications(n.mode, n.count);
    free[n.worker] = end[k];
    latest = Math.max(latest, end[k]);
  }
  return latest;
}

/** A point of a speedup curve: `speedup` over the serialised span `span`; `depth` the dataflow depth. */
export interface SpeedupPoint {
  p: number;
  speedup: number;
  span: number;
  depth: number;
  work: number;
}

/** Speedup (over the serialised span) for p = 1 .. min(N, maxP) and the p that gives the most (figures 4.6-4.7). */
export function speedupCurve(
  N: number,
  network: ScanNetwork,
  maxP: number,
  strategy: ScanStrategy = 'scan-then-propagate',
  output: ScanOutput = 'inclusive',
  execution: ScanExecution = 'eager',
): { points: SpeedupPoint[]; best: { p: number; speedup: number } } {
  const points: SpeedupPoint[] = [];
  let best = { p: 1, speedup: 0 };
  for (let p = 1; p <= Math.min(N, maxP); p++) {
    const m = scanModel(N, p, network, strategy, output, execution);
    points.push({ p, speedup: m.speedup, span: m.span.serialised, depth: m.span.depth, work: m.work });
    if (m.speedup > best.speedup) best = { p, speedup: m.speedup };
  }
  return { points, best };
}

/** The network on its own over p inputs: the figures' counts. */
export function networkModel(network: ScanNetwork, p: number): NetworkStats {
  return networkStats(buildNetwork(network, p));
}
