import { buildNetwork, IDENTITY, NETWORK_TAGS, type Network, type ScanNetwork } from './networks.js';

// The distributed scan (Copik, chapter 4) as an abstract DAG over workers: what the expansion
// pass (document/scan.ts) writes as nodes and edges, and what the model (model.ts) counts.
//   local[i]  scan (reduce for reduce-then-scan; exclusive on worker 0 for an exclusive output)
//             of worker i's block (section 4.1: ceil(N/p) elements for i < N mod p, else floor)
//   network   the applications on the p block totals that some worker's prefix needs (pruned:
//             a padded network's values no worker reads are not computed)
//   prop[i]   worker i's prefix (+) its block: propagate over the local scan, or, for
//             reduce-then-scan, a scan of [prefix, block...]. Where the network already holds
//             worker i's inclusive prefix (Algorithm 9: an inclusive network, or Blelloch's root
//             for the last worker) prop[i] skips the block's last element and takes that value.
// The outputs are token runs of those nodes: `out` (N tokens) and `total` (1).

export type ScanStrategy = 'scan-then-propagate' | 'reduce-then-scan';
export type ScanOutput = 'inclusive' | 'exclusive';
export type ScanExecution = 'eager' | 'rounds';
export const SCAN_STRATEGIES: readonly ScanStrategy[] = ['scan-then-propagate', 'reduce-then-scan'];
export const SCAN_OUTPUTS: readonly ScanOutput[] = ['inclusive', 'exclusive'];
export const SCAN_EXECUTIONS: readonly ScanExecution[] = ['eager', 'rounds'];

/** An operator kernel's mode (its ports: apply a, b -> out; scan in -> out, total; reduce in -> total; propagate prefix, block -> out; exclusive in -> out, total). */
export type OperatorMode = 'apply' | 'scan' | 'reduce' | 'propagate' | 'exclusive';
export type Stage = 'local' | 'network' | 'prop';

/** Tokens `first .. first + count - 1` of the scan's `in` (source -1) or of node `node`'s output `port`. */
export interface Run {
  node: number;
  port: 'out' | 'total';
  first: number;
  count: number;
}
/** The scan's own input. */
export const IN = -1;

export interface PlanNode {
  /** The id after the scan node's (`local.w3`, `ks.r2.w5`, `prop.w3`). */
  key: string;
  stage: Stage;
  worker: number;
  mode: OperatorMode;
  /** Elements per port (the kernel's `count`): 1 for apply. */
  count: number;
  /** Network level (1-based), for network nodes. */
  level?: number;
  /** Each data input port and the runs that fill it, in token order. */
  inputs: { port: string; runs: Run[] }[];
}

export interface ScanPlan {
  N: number;
  p: number;
  network: Network;
  strategy: ScanStrategy;
  output: ScanOutput;
  /** First element and element count of each worker's block. */
  blocks: { lo: number; count: number }[];
  nodes: PlanNode[];
  /** The runs making `out`, in token order (N tokens). */
  out: Run[];
  /** The run making `total` (1 token). */
  total: Run;
}

/** Operator applications one firing of a node makes (identities are free: an exclusive scan's leading identity costs nothing). */
export function operatorApplications(mode: OperatorMode, count: number): number {
  if (mode === 'apply') return 1;
  if (mode === 'propagate') return count;
  return count - 1;
}

/** Tokens of a node's output port. */
export function portTokens(node: PlanNode, port: 'out' | 'total'): number {
  return port === 'total' || node.mode === 'apply' ? 1 : node.count;
}

/** Section 4.1's blocks: worker i gets ceil(N/p) elements when i < N mod p, else floor(N/p). */
export function blocks(N: number, p: number): { lo: number; count: number }[] {
  const base = Math.floor(N / p);
  const extra = N % p;
  const out: { lo: number; count: number }[] = [];
  let lo = 0;
  for (let i = 0; i < p; i++) {
    const count = base + (i < extra ? 1 : 0);
    out.push({ lo, count });
    lo += count;
  }
  return out;
}

/** The plan of a scan of N elements on p workers (1 <= p <= N). */
export function scanPlan(N: number, p: number, network: ScanNetwork, strategy: ScanStrategy, output: ScanOutput): ScanPlan {
  if (!Number.isSafeInteger(N) || !Number.isSafeInteger(p) || p < 1 || p > N) throw new RangeError(`a scan plan needs 1 <= p <= N, not p = ${p}, N = ${N}`);
  const net = buildNetwork(network, p);
  const bl = blocks(N, p);
  const nodes: PlanNode[] = [];
  const add = (n: PlanNode) => nodes.push(n) - 1;
  const reduce = strategy === 'reduce-then-scan';
  const exclusive = output === 'exclusive';

  // Local stage: every worker's block.
  const local = bl.map((b, i) =>
    add({
      key: `local.w${i}`,
      stage: 'local',
      worker: i,
      mode: reduce ? 'reduce' : exclusive && i === 0 ? 'exclusive' : 'scan',
      count: b.count,
      inputs: [{ port: 'in', runs: [{ node: IN, port: 'out', first: b.lo, count: b.count }] }],
    }),
  );

  // Network: the values some worker needs, then only the applications behind them.
  const held = (i: number) => (i === 0 ? undefined : net.inclusive[i]);
  const needed = new Set<number>();
  for (let i = 1; i < p; i++) {
    needed.add(net.exclusive[i]);
    const h = held(i);
    if (h !== undefined) needed.add(h);
  }
  const live = new Set<number>();
  const stack = [...needed].filter((v) => v !== IDENTITY);
  while (stack.length) {
    const v = stack.pop()!;
    const app = net.values[v].app;
    if (app === undefined || live.has(app)) continue;
    live.add(app);
    const a = net.applications[app];
    if (a.left !== IDENTITY) stack.push(a.left);
    if (a.right !== IDENTITY) stack.push(a.right);
  }
  const tag = NETWORK_TAGS[network];
  const nodeOfApp = new Map<number, number>();
  const valueRun = (v: number): Run => {
    const value = net.values[v];
    return value.leaf !== undefined
      ? { node: local[value.leaf], port: 'total', first: 0, count: 1 }
      : { node: nodeOfApp.get(value.app!)!, port: 'out', first: 0, count: 1 };
  };
  net.applications.forEach((a, k) => {
    if (a.free || !live.has(k)) return;
    nodeOfApp.set(
      k,
      add({
        key: `${tag}.r${a.level}.w${a.worker}`,
        stage: 'network',
        worker: a.worker,
        mode: 'apply',
        count: 1,
        level: a.level,
        inputs: [
          { port: 'a', runs: [valueRun(a.left)] },
          { port: 'b', runs: [valueRun(a.right)] },
        ],
      }),
    );
  });

  // Second local stage; y[k] is where global inclusive result k is found.
  const y: Run[] = new Array(N);
  let identity: Run | undefined;
  const at = (node: number, port: 'out' | 'total', first: number): Run => ({ node, port, first, count: 1 });
  bl.forEach((b, i) => {
    const h = held(i);
    if (i === 0) {
      if (!reduce) {
        if (exclusive) {
          identity = at(local[0], 'out', 0);
          for (let j = 0; j + 1 < b.count; j++) y[j] = at(local[0], 'out', j + 1);
          y[b.count - 1] = at(local[0], 'total', 0);
        } else for (let j = 0; j < b.count; j++) y[j] = at(local[0], 'out', j);
        return;
      }
      // Reduce-then-scan: worker 0 scans its block again, but its last element is the reduction it has.
      y[b.count - 1] = at(local[0], 'total', 0);
      if (exclusive) {
        const count = Math.max(1, b.count - 1);
        const prop = add({
          key: 'prop.w0',
          stage: 'prop',
          worker: 0,
          mode: 'exclusive',
          count,
          inputs: [{ port: 'in', runs: [{ node: IN, port: 'out', first: 0, count }] }],
        });
        identity = at(prop, 'out', 0);
        for (let j = 0; j + 2 < b.count; j++) y[j] = at(prop, 'out', j + 1);
        if (b.count >= 2) y[b.count - 2] = at(prop, 'total', 0);
      } else if (b.count >= 2) {
        const prop = add({
          key: 'prop.w0',
          stage: 'prop',
          worker: 0,
          mode: 'scan',
          count: b.count - 1,
          inputs: [{ port: 'in', runs: [{ node: IN, port: 'out', first: 0, count: b.count - 1 }] }],
        });
        for (let j = 0; j + 1 < b.count; j++) y[j] = at(prop, 'out', j);
      }
      return;
    }
    const c = b.count - (h === undefined ? 0 : 1);
    if (h !== undefined) y[b.lo + b.count - 1] = valueRun(h);
    if (c === 0) return;
    const prefix = valueRun(net.exclusive[i]);
    if (reduce) {
      const prop = add({
        key: `prop.w${i}`,
        stage: 'prop',
        worker: i,
        mode: 'scan',
        count: c + 1,
        inputs: [{ port: 'in', runs: [prefix, { node: IN, port: 'out', first: b.lo, count: c }] }],
      });
      for (let j = 0; j < c; j++) y[b.lo + j] = at(prop, 'out', j + 1);
    } else {
      const prop = add({
        key: `prop.w${i}`,
        stage: 'prop',
        worker: i,
        mode: 'propagate',
        count: c,
        inputs: [
          { port: 'prefix', runs: [prefix] },
          { port: 'block', runs: [{ node: local[i], port: 'out', first: 0, count: c }] },
        ],
      });
      for (let j = 0; j < c; j++) y[b.lo + j] = at(prop, 'out', j);
    }
  });

  const order = exclusive ? [identity!, ...y.slice(0, N - 1)] : y;
  return { N, p, network: net, strategy, output, blocks: bl, nodes, out: mergeRuns(order), total: y[N - 1] };
}

/** Consecutive single tokens of one node's port merged into runs. */
export function mergeRuns(runs: Run[]): Run[] {
  const out: Run[] = [];
  for (const r of runs) {
    const last = out[out.length - 1];
    if (last && last.node === r.node && last.port === r.port && last.first + last.count === r.first) last.count += r.count;
    else out.push({ ...r });
  }
  return out;
}

/** A barrier of a scan run in rounds: relays `inputs` (one token each, in order) as its `out`. */
export interface BarrierNode {
  /** The id after the scan node's (`barrier.r2`). */
  key: string;
  /** The network level it holds back. */
  level: number;
  /** Runs on worker 0's PE (the root of a central barrier, as MPI_Barrier's). */
  worker: 0;
  inputs: Run[];
}

/**
 * Execution "rounds" (a barrier before each network level): before level L, a barrier node
 * takes every operand of level L's nodes and one token of each node of the level before (the
 * local stage before the first level) that gives none, and relays them; level L's nodes read
 * their operands from it. A level's nodes thus start after the whole level before ended, and
 * transitively after everything before it: the model's `rounds` span (model.ts). Barriers fire
 * no application. Runs into barrier b use node index plan.nodes.length + b.
 */
export function scanBarriers(plan: ScanPlan): { nodes: PlanNode[]; barriers: BarrierNode[] } {
  const nodes = plan.nodes.map((n) => ({ ...n, inputs: n.inputs.map((i) => ({ ...i, runs: i.runs.map((r) => ({ ...r })) })) }));
  const levels = [...new Set(nodes.filter((n) => n.stage === 'network').map((n) => n.level!))].sort((a, b) => a - b);
  const barriers: BarrierNode[] = [];
  let before = nodes.map((_, k) => k).filter((k) => nodes[k].stage === 'local');
  for (const level of levels) {
    const at = plan.nodes.length + barriers.length;
    const inputs: Run[] = [];
    const position = new Map<string, number>();
    const take = (r: Run) => {
      const key = `${r.node}:${r.port}:${r.first}`;
      let i = position.get(key);
      if (i === undefined) position.set(key, (i = inputs.push({ ...r, count: 1 }) - 1));
      return i;
    };
    const members = nodes.map((_, k) => k).filter((k) => nodes[k].stage === 'network' && nodes[k].level === level);
    for (const k of members) for (const input of nodes[k].inputs) input.runs = input.runs.map((r) => ({ node: at, port: 'out', first: take(r), count: 1 }));
    for (const k of before) if (!inputs.some((r) => r.node === k)) take({ node: k, port: nodes[k].stage === 'local' ? 'total' : 'out', first: 0, count: 1 });
    barriers.push({ key: `barrier.r${level}`, level, worker: 0, inputs });
    before = members;
  }
  return { nodes, barriers };
}
