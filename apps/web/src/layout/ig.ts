import ELK from 'elkjs/lib/elk.bundled.js';
import type { ElkNode } from 'elkjs/lib/elk-api.js';
import { bufferNodes, type ImplementationGraph, type MappingTarget } from '@pipeloom/core';
import { loweredPe } from '../document/targets.js';
import { longestPathDepths } from '../lib/layers.js';

// Lays out an implementation graph with elkjs: layered, left to right, one cluster per PE
// holding that PE's computations and buffers. Runs in the compile worker, so the canvas
// never waits for it.

export const COMPUTE_SIZE = { width: 136, height: 42 };
export const BUFFER_SIZE = { width: 100, height: 36 };

export interface IgLayoutNode {
  id: string;
  kind: 'pe' | 'node' | 'buffer';
  /** PE cluster holding it (none for clusters). */
  parent?: string;
  /** Relative to the parent cluster, as React Flow wants it. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface IgLayoutEdge {
  id: string;
  source: string;
  target: string;
  /** A copy between PEs (a transfer), not a local read or write. */
  transfer: boolean;
}

export interface IgLayout {
  nodes: IgLayoutNode[];
  edges: IgLayoutEdge[];
}

const clusterId = (pe: string) => `pe:${pe}`;
const nodeKey = (n: string) => `n:${n}`;
const bufKey = (b: string) => `b:${b}`;

/** The graph the IG view draws, before positions: clusters, members and edges. */
export function igGraph(ig: ImplementationGraph, mapping: Record<string, MappingTarget>) {
  const buffers = bufferNodes(ig);
  const pes = new Set<string>(ig.programs.pes.map((p) => p.pe));
  for (const b of buffers) pes.add(b.pe);
  // The IG names lowered nodes: a share `X[j]` of a list-mapped X has the lane lowering gives it.
  const peOf = new Map(ig.order.map((n) => [n, loweredPe(mapping, n)]));
  for (const pe of peOf.values()) if (pe) pes.add(pe);
  const members = new Map<string, { id: string; kind: 'node' | 'buffer' }[]>();
  for (const pe of pes) members.set(pe, []);
  for (const n of ig.order) {
    const pe = peOf.get(n);
    if (pe) members.get(pe)!.push({ id: nodeKey(n), kind: 'node' });
  }
  for (const b of buffers) members.get(b.pe)!.push({ id: bufKey(b.id), kind: 'buffer' });
  // PEs the mapping leaves idle get no lane.
  for (const [pe, list] of members) if (!list.length) members.delete(pe);
  for (const pe of [...pes]) if (!members.has(pe)) pes.delete(pe);
  const edges: IgLayoutEdge[] = [];
  for (const b of buffers) {
    if ('node' in b.from) edges.push({ id: `${nodeKey(b.from.node)}->${bufKey(b.id)}`, source: nodeKey(b.from.node), target: bufKey(b.id), transfer: false });
    for (const nx of b.next) edges.push({ id: `${bufKey(b.id)}->${bufKey(nx)}`, source: bufKey(b.id), target: bufKey(nx), transfer: true });
    for (const c of b.consumers)
      edges.push({ id: `${bufKey(b.id)}->${nodeKey(c.node)}:${c.port}`, source: bufKey(b.id), target: nodeKey(c.node), transfer: false });
  }
  return { pes: [...pes], members, edges };
}

let elk: InstanceType<typeof ELK> | undefined;

const LANE_HEADER = 26;
const LANE_PAD = 12;
const ROW_GAP = 14;
const LAYER_GAP = 30;

/**
 * Above this many members (computations and buffers) the lanes take their x positions from a
 * longest-path layering instead of ELK: ELK's layered layout of 4,400 members (a 1,000-node
 * DFG) takes ~6 s in the worker, and on 12,000 (3,000 nodes) it overflows its recursion, where
 * the layering takes milliseconds for any size.
 */
export const ELK_LIMIT = 1500;

type Graph = ReturnType<typeof igGraph>;
type Sizes = Map<string, { width: number; height: number }>;

/** x of every member from ELK's layered layout (data flow order, edge lengths and crossings minimised). */
async function elkX(g: Graph, sizeOf: Sizes): Promise<Map<string, number>> {
  elk ??= new ELK();
  // ELK's ids are member numbers: it refuses some characters of flattened and firing ids (`s1/inc`, `S#3`).
  const ids = [...sizeOf.keys()];
  const number = new Map(ids.map((id, i) => [id, `m${i}`]));
  const root: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.layered.spacing.nodeNodeBetweenLayers': String(LAYER_GAP),
      'elk.spacing.nodeNode': '18',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
    },
    children: [...sizeOf].map(([id, size]) => ({ id: number.get(id)!, ...size })),
    edges: g.edges
      .filter((e) => number.has(e.source) && number.has(e.target))
      .map((e, i) => ({ id: `e${i}`, sources: [number.get(e.source)!], targets: [number.get(e.target)!] })),
  };
  const out = await elk.layout(root);
  return new Map((out.children ?? []).map((c) => [ids[Number(c.id.slice(1))], c.x ?? 0]));
}

/**
 * x of every member from its longest path from a source (lib/layers.ts; the IG is acyclic:
 * the DFG is, and buffers only split its edges), one column per layer as wide as the widest
 * member. Linear in members and edges.
 */
export function layerX(g: Graph, sizeOf: Sizes): Map<string, number> {
  const layer = longestPathDepths(
    [...sizeOf.keys()],
    g.edges.map((e) => ({ from: e.source, to: e.target })),
  );
  let column = 0;
  for (const s of sizeOf.values()) column = Math.max(column, s.width);
  column += LAYER_GAP;
  const x = new Map<string, number>();
  for (const [id, d] of layer) x.set(id, d * column);
  return x;
}

/**
 * ELK's layered algorithm orders the flat graph left to right (data flow order); each PE then
 * gets a horizontal lane holding its members at those x positions. Clusters as ELK compound
 * nodes cannot work here: data leaves a PE and comes back (CPU -> GPU -> CPU), which a
 * layering of boxes must break; lanes keep both the flow order and the PE grouping. Graphs
 * beyond ELK_LIMIT members get their x from `layerX`.
 */
export async function layoutIg(ig: ImplementationGraph, mapping: Record<string, MappingTarget>, peOrder: readonly string[] = []): Promise<IgLayout> {
  const g = igGraph(ig, mapping);
  const sizeOf: Sizes = new Map();
  for (const list of g.members.values()) for (const m of list) sizeOf.set(m.id, m.kind === 'node' ? COMPUTE_SIZE : BUFFER_SIZE);
  const x = sizeOf.size > ELK_LIMIT ? layerX(g, sizeOf) : await elkX(g, sizeOf);
  const rank = (pe: string) => {
    const i = peOrder.indexOf(pe);
    return i < 0 ? peOrder.length : i;
  };
  const pes = [...g.pes].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  // A loop, not Math.max(...list): a spread of tens of thousands of arguments overflows the stack.
  let right = 200;
  for (const [id, s] of sizeOf) right = Math.max(right, (x.get(id) ?? 0) + s.width);
  const width = right + 2 * LANE_PAD;
  const nodes: IgLayoutNode[] = [];
  let y = 0;
  for (const pe of pes) {
    // Members whose x ranges overlap go on separate rows of the lane.
    const members = g.members
      .get(pe)!
      .slice()
      .sort((a, b) => (x.get(a.id) ?? 0) - (x.get(b.id) ?? 0));
    const rowEnds: number[] = [];
    const placed: IgLayoutNode[] = [];
    const rowHeight = COMPUTE_SIZE.height + ROW_GAP;
    for (const m of members) {
      const s = sizeOf.get(m.id)!;
      const mx = x.get(m.id) ?? 0;
      let row = rowEnds.findIndex((end) => end + 12 <= mx);
      if (row < 0) row = rowEnds.push(0) - 1;
      rowEnds[row] = mx + s.width;
      placed.push({
        id: m.id,
        kind: m.kind,
        parent: clusterId(pe),
        x: mx + LANE_PAD,
        y: LANE_HEADER + row * rowHeight + (COMPUTE_SIZE.height - s.height) / 2,
        width: s.width,
        height: s.height,
      });
    }
    const height = LANE_HEADER + Math.max(rowEnds.length, 1) * rowHeight - ROW_GAP + LANE_PAD;
    nodes.push({ id: clusterId(pe), kind: 'pe', x: 0, y, width, height });
    for (const p of placed) nodes.push(p);
    y += height + 10;
  }
  return { nodes, edges: g.edges };
}
