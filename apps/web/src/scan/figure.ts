import { IDENTITY, operatorApplications, type ScanPlan } from '@pipeloom/core';

// The scan's DAG laid out as Copik's figures 3.1-3.5 draw a prefix network, widened to the whole
// distributed scan: one column per network position (a worker; the tree networks' padded
// positions after them), one row per stage: the local scans, each network level, the second
// stage. Read from core's plan (scan/plan.ts) and the network in it, never recomputed: a dot
// per expanded node, the data edges between them, and the network's other applications apart:
// free ones (an identity operand: nothing fires) and those no worker's prefix needs (pruned).

export type DotKind = 'local' | 'network' | 'prop' | 'free' | 'pruned';

/** Each stage's colour, in Expand and in the scan timeline. */
export const STAGE_COLORS: Record<DotKind, string> = { local: '#2563eb', network: '#059669', prop: '#d97706', free: '#9ca3af', pruned: '#d1d5db' };

export interface Dot {
  col: number;
  row: number;
  kind: DotKind;
  /** The expanded node's key (`ks.r2.w5`), for dots the plan fires. */
  key?: string;
  /** Applications it makes (0 for a free one). */
  applications: number;
  /** The range it yields, `[lo, hi]` over the workers' blocks for network dots. */
  label: string;
}

export interface Line {
  from: number;
  to: number;
  /** Into a free or pruned application (drawn faint). */
  faint: boolean;
}

export interface ScanFigure {
  /** Columns: the network's positions (workers first, padded positions after). */
  columns: number;
  workers: number;
  /** Row labels, top to bottom: `local`, `level 1` ..., `second stage`. */
  rows: string[];
  dots: Dot[];
  lines: Line[];
  counts: { fired: number; free: number; pruned: number; nodes: number };
}

/** The figure of a plan; `counts.nodes` is the plan's node count (every dot the plan fires). */
export function scanFigure(plan: ScanPlan): ScanFigure {
  const net = plan.network;
  const levels = net.levels;
  const rows = ['local', ...Array.from({ length: levels }, (_, l) => `level ${l + 1}`), 'second stage'];
  const dots: Dot[] = [];
  const lines: Line[] = [];
  const dotOfNode = new Int32Array(plan.nodes.length).fill(-1);
  // Where each network value is made: a leaf by its worker's local node, an application by its dot.
  const dotOfValue = new Map<number, number>();
  const appOfNode = new Map<number, number>();

  // The plan's network nodes are the applications it keeps, in the network's order: each one
  // matched by level, worker and operands (its inputs name the nodes holding those values).
  const valueOfNode = new Map<string, number>();
  plan.nodes.forEach((n, k) => {
    if (n.stage === 'local')
      valueOfNode.set(
        `${k}:total`,
        net.values.findIndex((v) => v.leaf === n.worker),
      );
  });
  let next = 0;
  plan.nodes.forEach((n, k) => {
    if (n.stage !== 'network') return;
    const operand = (port: string) => {
      const r = n.inputs.find((i) => i.port === port)?.runs[0];
      return r ? valueOfNode.get(`${r.node}:${r.port}`) : undefined;
    };
    const a = operand('a');
    const b = operand('b');
    for (let j = next; j < net.applications.length; j++) {
      const app = net.applications[j];
      if (app.free || app.level !== n.level || app.worker !== n.worker || app.left !== a || app.right !== b) continue;
      appOfNode.set(k, j);
      valueOfNode.set(`${k}:out`, app.value!);
      next = j + 1;
      return;
    }
    throw new Error(`plan node ${n.key} matches no application of the ${net.network} network`);
  });
  const keptApps = new Set(appOfNode.values());

  plan.nodes.forEach((n, k) => {
    const app = appOfNode.get(k);
    const col = app !== undefined ? net.applications[app].position : n.worker;
    const row = n.stage === 'local' ? 0 : n.stage === 'prop' ? levels + 1 : n.level!;
    const b = plan.blocks[n.worker];
    const label = app !== undefined ? `[${net.applications[app].lo}, ${net.applications[app].hi}]` : `x${b.lo}…x${b.lo + b.count - 1}`;
    dotOfNode[k] = dots.push({ col, row, kind: n.stage, key: n.key, applications: operatorApplications(n.mode, n.count), label }) - 1;
    if (n.stage === 'local')
      dotOfValue.set(
        net.values.findIndex((v) => v.leaf === n.worker),
        dotOfNode[k],
      );
    if (app !== undefined) dotOfValue.set(net.applications[app].value!, dotOfNode[k]);
  });
  // The network's applications the plan does not fire: free (an identity operand) or pruned.
  let free = 0;
  let pruned = 0;
  net.applications.forEach((app, j) => {
    if (keptApps.has(j)) return;
    const kind: DotKind = app.free ? 'free' : 'pruned';
    if (app.free) free++;
    else pruned++;
    const d = dots.push({ col: app.position, row: app.level, kind, applications: 0, label: app.lo <= app.hi ? `[${app.lo}, ${app.hi}]` : 'identity' }) - 1;
    if (app.value !== undefined) dotOfValue.set(app.value, d);
    for (const v of [app.left, app.right]) {
      const from = v === IDENTITY ? undefined : dotOfValue.get(v);
      if (from !== undefined) lines.push({ from, to: d, faint: true });
    }
  });
  // The data edges between the plan's nodes (inputs read from `in` have no line).
  plan.nodes.forEach((n, k) => {
    const seen = new Set<number>();
    for (const input of n.inputs)
      for (const r of input.runs) {
        if (r.node < 0 || seen.has(r.node)) continue;
        seen.add(r.node);
        lines.push({ from: dotOfNode[r.node], to: dotOfNode[k], faint: false });
      }
  });
  const fired = plan.nodes.filter((n) => n.stage === 'network').length;
  return { columns: net.positions, workers: plan.p, rows, dots, lines, counts: { fired, free, pruned, nodes: plan.nodes.length } };
}
