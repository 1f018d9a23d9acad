import { MarkerType, Position, type Edge, type Node, type NodeHandle } from '@xyflow/react';
import { type WrittenDocument, bufferIndex, bufferNode } from '@pipeloom/core';
import { boundsOf, DRAW_IN_VIEW_ONLY_ABOVE } from '../lib/canvas.js';
import { GENERIC_SUM } from '@pipeloom/kernels';
import { peColor } from '../lib/color.js';
import { loweredPe } from '../document/targets.js';
import type { IgLayout } from '../layout/ig.js';
import type { LoweredView, Strategy } from '../worker/protocol.js';

// The IG view's React Flow nodes and edges, from a laid-out strategy: lanes, computations
// and buffers with the data their node components draw.

/**
 * Handles a node declares, for large graphs: drawn only where in view, but React Flow draws
 * every node once to measure its handles unless the node declares them (on a 10,000-node
 * DFG's IG that first draw was 45,000 nodes). IG members have fixed sizes (layout.ts,
 * styles.css), so their handles are known: the target mid-left, the source mid-right, React
 * Flow's default 6 px square. Lanes have none.
 */
export function declaredHandles(n: { kind: string; width: number; height: number }): NodeHandle[] {
  if (n.kind === 'pe') return [];
  return [
    { type: 'target', position: Position.Left, x: -3, y: n.height / 2 - 3, width: 6, height: 6 },
    { type: 'source', position: Position.Right, x: n.width - 3, y: n.height / 2 - 3, width: 6, height: 6 },
  ];
}

export function igFlow({ ig, layout }: Strategy, doc: WrittenDocument, lowered?: LoweredView): { nodes: Node[]; edges: Edge[] } {
  // By id, once per render: a search per IG node was quadratic on large graphs. A document
  // with composites or rates names lowered nodes (`s1/inc`, `S#3`): those of the lowered view.
  const appNodes = new Map<string, { kernel?: string; tasks?: unknown }>(doc.app.nodes.map((n) => [n.id, n]));
  for (const n of lowered?.expanded.nodes ?? []) appNodes.set(n.id, n);
  const kernelOf = (id: string) => splitKernel(appNodes, id) ?? appNodes.get(id)?.kernel;
  const peKinds = new Map(doc.arch.pes.map((p) => [p.id, p.kind]));
  const declare = layout.nodes.length > DRAW_IN_VIEW_ONLY_ABOVE;
  const nodes: Node[] = layout.nodes.map((n) => {
    const base = {
      id: n.id,
      position: { x: n.x, y: n.y },
      width: n.width,
      height: n.height,
      measured: { width: n.width, height: n.height },
      draggable: false,
      ...(n.parent ? { parentId: n.parent } : {}),
      ...(declare ? { handles: declaredHandles(n) } : {}),
    };
    if (n.kind === 'pe') {
      const pe = n.id.slice(3);
      return { ...base, type: 'igPe', selectable: false, data: { pe, kind: peKinds.get(pe), color: peColor(doc, pe) } };
    }
    if (n.kind === 'buffer') return { ...base, type: 'igBuffer', data: { buffer: bufferNode(ig, bufferIndex(ig, n.id.slice(2))) } };
    const id = n.id.slice(2);
    return {
      ...base,
      type: 'igNode',
      data: {
        id,
        kernel: kernelOf(id) ?? '',
        schedule: (ig.schedule as Record<string, number>)[id],
        latency: (ig.latency as Record<string, number>)[id],
        color: peColor(doc, n.parent ? n.parent.slice('pe:'.length) : loweredPe(doc.mapping, id)),
      },
    };
  });
  const edges: Edge[] = layout.edges.map((e) => ({
    id: e.id,
    source: e.source,
    target: e.target,
    className: e.transfer ? 'ig-transfer' : 'ig-local',
    markerEnd: { type: MarkerType.ArrowClosed, width: 14, height: 14 },
    ...(e.transfer ? { animated: true } : {}),
  }));
  return { nodes, edges };
}

/**
 * Lowering splits a node X with tasks into shares `X[j]`, of X's kernel, and a combine keeping
 * the id X, a generic.sum (core document/tasks.ts): their kernels, where the IG names them.
 */
function splitKernel(nodes: ReadonlyMap<string, { kernel?: string; tasks?: unknown }>, id: string): string | undefined {
  if (nodes.get(id)?.tasks !== undefined) return GENERIC_SUM;
  const m = /^(.*)\[\d+\]$/.exec(id);
  const x = m && nodes.get(m[1]);
  return x && x.tasks !== undefined ? x.kernel : undefined;
}

/**
 * The lanes' bounds, starting at the first member of the top lane: lanes start at x 0, but
 * where a graph is too wide to show whole, the view opens on data, not on empty lane.
 */
export function dataBounds(nodes: IgLayout['nodes']) {
  const lanes = nodes.filter((n) => n.kind === 'pe');
  const b = boundsOf(lanes);
  const top = lanes.reduce<(typeof lanes)[number] | undefined>((t, n) => (!t || n.y < t.y ? n : t), undefined);
  let first = Infinity;
  for (const n of nodes) if (n.parent === top?.id) first = Math.min(first, n.x);
  return Number.isFinite(first) && first > b.x ? { ...b, x: first, width: b.width - (first - b.x) } : b;
}
