import type { Edge, Node } from '@xyflow/react';
import type { AppEdge, AppNode, WrittenDocument } from '@pipeloom/core';
import { compositeOf, graphAt, graphKey, innerAt, isComposite, type Graph, type GraphAt } from '../document/graphs.js';
import { edgeKey, type EdgeKey } from '../document/records.js';
import type { Change } from '../document/changes.js';
import { longestPathDepths } from '../lib/layers.js';
import { estimatedSize } from './KernelNode.js';

// The React Flow nodes and edges of one level of the DFG canvas: the graph of the composite
// instances entered (store `level`). A composite drawn collapsed is one node with its ports; one
// drawn expanded (`collapsed: false`) is a group node holding its inner nodes (React Flow
// parent/child, positions relative to the group), recursively, and each edge to one of its
// ports is drawn to the inner port it is bound to. Flow ids are paths from the level
// (`s1/inc`); `where` says which graph and node or edge each one is, so edits go to the right
// graph and selection maps back.

export type Where = { kind: 'node'; at: GraphAt | undefined; id: string; flatId: string } | { kind: 'edge'; at: GraphAt | undefined; key: EdgeKey };

export interface LevelFlow {
  nodes: Node[];
  edges: Edge[];
  where: Map<string, Where>;
}

/** Inside an expanded group: its header's height and the padding around its inner nodes. */
export const GROUP = { top: 38, pad: 16 };

/** A size for each flow id, measured or estimated. */
export type SizeOf = (flowId: string, n: AppNode) => { width: number; height: number };

export const estimated = (doc: WrittenDocument, n: AppNode): { width: number; height: number } => {
  if (!isComposite(n)) return estimatedSize(n.kernel ?? '', false);
  const c = compositeOf(doc, n);
  const rows = Math.max(c?.inputs?.length ?? 0, c?.outputs?.length ?? 0, 1);
  return { width: 168, height: 64 + rows * 20 };
};

/** Positions for nodes written without one (a def from a file): by depth, as documents.ts places app nodes. */
export function placed(g: Graph): Map<string, { x: number; y: number }> {
  const out = new Map<string, { x: number; y: number }>();
  if (g.nodes.every((n) => n.position)) {
    for (const n of g.nodes) out.set(n.id, n.position!);
    return out;
  }
  const depth = longestPathDepths(
    g.nodes.map((n) => n.id),
    g.edges.map((e) => ({ from: e.from.node, to: e.to.node })),
  );
  const rows = new Map<number, number>();
  for (const n of g.nodes) {
    if (n.position) {
      out.set(n.id, n.position);
      continue;
    }
    const d = depth.get(n.id) ?? 0;
    const r = rows.get(d) ?? 0;
    rows.set(d, r + 1);
    out.set(n.id, { x: d * 230, y: r * 120 });
  }
  return out;
}

export interface LevelInput {
  doc: WrittenDocument;
  at: GraphAt | undefined;
  /** Flattened id prefix of the level (`s1/`). */
  prefix: string;
  sizeOf: SizeOf;
  /** Builds a kernel or collapsed composite node's data and type-specific fields. */
  node: (n: AppNode, flowId: string, flatId: string, at: GraphAt | undefined, inner: boolean) => Omit<Node, 'id' | 'position'>;
  group: (n: AppNode, flowId: string, flatId: string, at: GraphAt | undefined, inner: boolean) => Omit<Node, 'id' | 'position'>;
  edge: (e: AppEdge, id: string, source: { flowId: string; flatId: string; node: AppNode; at: GraphAt | undefined }, inner: boolean) => Partial<Edge>;
}

const expanded = (n: AppNode) => isComposite(n) && n.collapsed === false;

export function levelFlow(input: LevelInput): LevelFlow {
  const { doc } = input;
  const nodes: Node[] = [];
  const edges: Edge[] = [];
  const where = new Map<string, Where>();
  const g = graphAt(doc, input.at);
  if (!g) return { nodes, edges, where };

  /** Adds the nodes of `graph` (flow id prefix `fp`) under `parent`; returns the extent they cover. */
  const addNodes = (
    graph: Graph,
    at: GraphAt | undefined,
    fp: string,
    flat: string,
    parent: string | undefined,
    offset: { x: number; y: number },
    depth: number,
  ): { width: number; height: number } => {
    const pos = placed(graph);
    let width = 0;
    let height = 0;
    for (const n of graph.nodes) {
      const flowId = `${fp}${n.id}`;
      const flatId = `${flat}${n.id}`;
      const p = pos.get(n.id)!;
      const position = { x: p.x + offset.x, y: p.y + offset.y };
      where.set(flowId, { kind: 'node', at, id: n.id, flatId });
      const c = expanded(n) && depth < 16 ? compositeOf(doc, n) : undefined;
      const inner = innerAt(at, n);
      if (c && inner) {
        const index = nodes.length;
        nodes.push({ id: flowId, position, ...(parent ? { parentId: parent } : {}), ...input.group(n, flowId, flatId, at, parent !== undefined) });
        const size = addNodes(c, inner, `${flowId}/`, `${flatId}/`, flowId, { x: GROUP.pad, y: GROUP.top }, depth + 1);
        const w = Math.max(size.width + GROUP.pad, 200);
        const h = Math.max(size.height + GROUP.pad, 90);
        nodes[index] = { ...nodes[index], width: w, height: h, style: { ...(nodes[index].style ?? {}), width: w, height: h } };
        width = Math.max(width, p.x + w);
        height = Math.max(height, p.y + h);
      } else {
        nodes.push({ id: flowId, position, ...(parent ? { parentId: parent } : {}), ...input.node(n, flowId, flatId, at, parent !== undefined) });
        const s = input.sizeOf(flowId, n);
        width = Math.max(width, position.x + s.width);
        height = Math.max(height, position.y + s.height);
      }
    }
    return { width, height };
  };
  addNodes(g, input.at, '', input.prefix, undefined, { x: 0, y: 0 }, 0);

  /** The drawn ends of a port: an expanded composite's port is drawn at the inner ports bound to it. */
  const ends = (
    graph: Graph,
    at: GraphAt | undefined,
    fp: string,
    flat: string,
    node: string,
    port: string,
    side: 'in' | 'out',
    depth: number,
  ): { flowId: string; flatId: string; handle: string; node: AppNode; at: GraphAt | undefined }[] => {
    const n = graph.nodes.find((x) => x.id === node);
    if (!n) return [];
    const c = expanded(n) && depth < 16 ? compositeOf(doc, n) : undefined;
    const inner = innerAt(at, n);
    if (!c || !inner) return [{ flowId: `${fp}${node}`, flatId: `${flat}${node}`, handle: port, node: n, at }];
    const refs =
      side === 'in' ? (c.inputs?.find((b) => b.name === port)?.to ?? []) : [c.outputs?.find((b) => b.name === port)?.from].filter((x) => x !== undefined);
    return refs.flatMap((r) => ends(c, inner, `${fp}${node}/`, `${flat}${node}/`, r.node, r.port, side, depth + 1));
  };

  const addEdges = (graph: Graph, at: GraphAt | undefined, fp: string, flat: string, depth: number) => {
    for (const e of graph.edges) {
      const key = edgeKey(e);
      const froms = ends(graph, at, fp, flat, e.from.node, e.from.port, 'out', depth);
      const tos = ends(graph, at, fp, flat, e.to.node, e.to.port, 'in', depth);
      const pairs = froms.flatMap((a) => tos.map((b) => [a, b] as const));
      pairs.forEach(([a, b], k) => {
        const id = `${fp}${key}${pairs.length > 1 ? `~${k}` : ''}`;
        where.set(id, { kind: 'edge', at, key });
        edges.push({ id, source: a.flowId, sourceHandle: a.handle, target: b.flowId, targetHandle: b.handle, ...input.edge(e, id, a, fp !== '') });
      });
    }
    for (const n of graph.nodes) {
      const c = expanded(n) && depth < 16 ? compositeOf(doc, n) : undefined;
      const inner = innerAt(at, n);
      if (c && inner) addEdges(c, inner, `${fp}${n.id}/`, `${flat}${n.id}/`, depth + 1);
    }
  };
  addEdges(g, input.at, '', input.prefix, 0);
  return { nodes, edges, where };
}

/**
 * Expanding a composite in place (or collapsing it back): its `collapsed` flag, and the nodes
 * to its right moved by the difference in width so the group does not cover them. One step.
 */
export function expandChanges(doc: WrittenDocument, at: GraphAt | undefined, n: AppNode, sizeOf: SizeOf): Change[] {
  const g = graphAt(doc, at);
  const c = compositeOf(doc, n);
  const where = at && (at.def !== undefined || at.inline?.length) ? { at } : {};
  const expanding = n.collapsed !== false;
  const flag: Change = { type: 'node/update', id: n.id, ...where, collapsed: expanding ? false : null };
  if (!g || !c || !n.position) return [flag];
  const pos = placed(c);
  let inner = 0;
  for (const x of c.nodes) inner = Math.max(inner, pos.get(x.id)!.x + sizeOf(`${n.id}/${x.id}`, x).width);
  // The collapsed box's own size: a measured one is the group's while expanded.
  const box = estimated(doc, n).width;
  const dx = Math.max(0, Math.round(inner + 2 * GROUP.pad - box));
  const x0 = n.position.x;
  const moves: Change[] = [];
  for (const o of g.nodes) {
    if (o.id === n.id || !o.position || o.position.x <= x0) continue;
    const x = expanding ? o.position.x + dx : Math.max(x0 + box + 40, o.position.x - dx);
    if (x !== o.position.x) moves.push({ type: 'node/move', id: o.id, ...where, position: { x, y: o.position.y } });
  }
  return [flag, ...moves];
}

/** Whether two GraphAt name the same graph. */
export const sameGraph = (a: GraphAt | undefined, b: GraphAt | undefined) => graphKey(a) === graphKey(b);
