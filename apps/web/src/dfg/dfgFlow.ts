import { useMemo } from 'react';
import type { Edge, Node } from '@xyflow/react';
import { formatDataType, type DataType } from '@pipeloom/kernels';
import type { AppNode, WrittenDocument } from '@pipeloom/core';
import { projectStore } from '../store/project.js';
import type { Selection } from '../document/records.js';
import { effectivePe, graphAt, graphKey, isComposite, type GraphAt } from '../document/graphs.js';
import { DRAW_IN_VIEW_ONLY_ABOVE } from '../lib/canvas.js';
import { compositePorts, portTypeAt, type PortContext } from '../document/kernels.js';
import { peColor } from '../lib/color.js';
import { firstPe, samePlace } from '../document/targets.js';
import { problemKey } from '../store/problems.js';
import type { Resolve } from '../store/resolve.js';
import { declaredHandles, estimatedSize } from './KernelNode.js';
import { estimated, expandChanges, levelFlow, sameGraph, type Where } from './levelFlow.js';
import { at$ } from './addNode.js';

// The React Flow nodes and edges of the graph the DFG canvas shows (levelFlow.ts lays out the
// level and its expanded composites): each node's data (ports' types, PE and its colour,
// problems, repetitions) and the selection drawn.

/** Edge labels stay short: `f32 64×64`; the full type is in the inspector and port tooltips. */
const shortType = (t: DataType) => `${t.element} ${t.shape.join('×')}`;

const isSelected = (s: Selection | null, w: Where | undefined, mapping: boolean) => {
  if (!s || !w) return false;
  if (w.kind === 'node') return (s.kind === 'node' && s.id === w.id && sameGraph(s.at, w.at)) || (mapping && s.kind === 'mapping' && s.node === w.flatId);
  return s.kind === 'edge' && s.key === w.key && sameGraph(s.at, w.at);
};

export interface DfgFlowInput {
  doc: WrittenDocument;
  at: GraphAt | undefined;
  prefix: string;
  mapping: boolean;
  selection: Selection | null;
  /** Nodes picked together for Group. */
  picked: ReadonlySet<string>;
  /** Measured node sizes by flow id, and their version. */
  sizes: Map<string, { width: number; height: number }>;
  tick: number;
  problems: Map<string, number>;
  resolve: Resolve;
  repetitions?: Record<string, number>;
}

export function useDfgFlow({ doc, at, prefix, mapping, selection, picked, sizes, tick, problems, resolve, repetitions }: DfgFlowInput) {
  const peIds = useMemo(() => doc.arch.pes.map((p) => p.id), [doc.arch.pes]);

  const built = useMemo(() => {
    const g = graphAt(doc, at);
    // Large graphs draw only what is in view; their nodes state a size and handles until
    // measured, so React Flow need not draw every one of them first (KernelNode.tsx).
    const declare = (g?.nodes.length ?? 0) > DRAW_IN_VIEW_ONLY_ABOVE;
    const sizeOf = (flowId: string, n: AppNode) => sizes.get(flowId) ?? estimated(doc, n);
    const errorsOf = (id: string, nAt: GraphAt | undefined, flatId: string) =>
      (problems.get(problemKey({ kind: 'node', id, ...at$(nAt) })) ?? 0) + (mapping ? (problems.get(`mapping:${flatId}`) ?? 0) : 0);
    const pick = (flatId: string) =>
      mapping
        ? {
            pes: peIds,
            onPick: (p: string | null) => projectStore.getState().dispatch({ type: 'mapping/set', node: flatId, pe: p }, { label: `map ${flatId}` }),
          }
        : {};
    const toggle = (n: AppNode, nAt: GraphAt | undefined) => () => {
      const st = projectStore.getState();
      st.dispatch(
        expandChanges(st.doc, nAt, n, (id, x) => sizes.get(id) ?? estimated(st.doc, x)),
        { label: `${n.collapsed === false ? 'collapse' : 'expand'} ${n.id}` },
      );
    };
    const into = (flowId: string) => () => projectStore.getState().setLevel([...projectStore.getState().level, ...flowId.split('/')]);
    const ctxFor = (nAt: GraphAt | undefined, flatId: string, id: string): PortContext => ({
      at: nAt,
      prefix: flatId.slice(0, flatId.length - id.length),
      resolve,
    });
    const label = (n: AppNode) => (n.composite !== undefined ? `defs.${n.composite}` : 'inline graph');
    return levelFlow({
      doc,
      at,
      prefix,
      sizeOf,
      node: (n, flowId, flatId, nAt) => {
        const pe = effectivePe(doc.mapping, flatId).pe;
        const base = { measured: sizes.get(flowId), data: {} as Record<string, unknown> };
        if (isComposite(n)) {
          const ports = compositePorts(doc, n);
          const ctx = ctxFor(nAt, flatId, n.id);
          const types: Record<string, string> = {};
          for (const p of ports.inputs) {
            const t = portTypeAt(doc, ctx, n, p, 'in');
            types[`in.${p}`] = t.type ? formatDataType(t.type) : (t.error ?? '');
          }
          for (const p of ports.outputs) {
            const t = portTypeAt(doc, ctx, n, p, 'out');
            types[`out.${p}`] = t.type ? formatDataType(t.type) : (t.error ?? '');
          }
          return {
            ...base,
            type: 'composite',
            data: {
              node: n,
              flowId,
              label: label(n),
              ...ports,
              types,
              pe,
              color: peColor(doc, firstPe(pe)),
              errors: errorsOf(n.id, nAt, flatId),
              onExpand: toggle(n, nAt),
              onEnter: into(flowId),
              ...pick(flatId),
            },
          };
        }
        const estimate = declare && !sizes.get(flowId) ? estimatedSize(n.kernel ?? '', mapping) : undefined;
        return {
          ...base,
          type: 'kernel',
          ...(estimate ? { initialWidth: estimate.width, initialHeight: estimate.height, handles: declaredHandles(n.kernel ?? '') } : {}),
          data: {
            node: n,
            resolved: resolve(flatId, n),
            flowId,
            q: repetitions?.[flatId],
            pe,
            color: peColor(doc, firstPe(pe)),
            errors: errorsOf(n.id, nAt, flatId),
            ...pick(flatId),
          },
        };
      },
      group: (n, flowId, flatId, nAt) => {
        const pe = effectivePe(doc.mapping, flatId).pe;
        return {
          type: 'group',
          data: {
            node: n,
            flowId,
            label: label(n),
            pe,
            color: peColor(doc, firstPe(pe)),
            errors: errorsOf(n.id, nAt, flatId),
            onExpand: toggle(n, nAt),
            onEnter: into(flowId),
            ...pick(flatId),
          },
        };
      },
      edge: (e, id, src, inner) => {
        const t = portTypeAt(doc, ctxFor(src.at, src.flatId, src.node.id), src.node, e.from.port, 'out').type;
        return {
          // A delayed edge (feedback) says how many initial tokens it carries.
          label: t ? `${shortType(t)}${e.delay ? ` · delay ${e.delay}` : ''}` : e.delay ? `delay ${e.delay}` : undefined,
          labelBgPadding: [4, 2] as [number, number],
          labelStyle: { fontSize: 10 },
          // Above the group boxes they run inside.
          ...(inner ? { zIndex: 1 } : {}),
        };
      },
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [doc, at && graphKey(at), prefix, problems, tick, mapping, peIds, resolve, repetitions]);

  const nodes: Node[] = useMemo(
    () => built.nodes.map((n) => ({ ...n, selected: picked.has(n.id) || isSelected(selection, built.where.get(n.id), mapping) })),
    [built, selection, picked, mapping],
  );
  const edges: Edge[] = useMemo(
    () =>
      built.edges.map((e) => {
        const w = built.where.get(e.id);
        const k = w?.kind === 'edge' ? problemKey({ kind: 'edge', key: w.key, ...at$(w.at) }) : '';
        const a = built.where.get(e.source);
        const b = built.where.get(e.target);
        const pa = a?.kind === 'node' ? effectivePe(doc.mapping, a.flatId).pe : undefined;
        const pb = b?.kind === 'node' ? effectivePe(doc.mapping, b.flatId).pe : undefined;
        // A list spreads shares over PEs: its edges cross between PEs too.
        return {
          ...e,
          selected: isSelected(selection, w, mapping),
          className: `${problems.get(k) ? 'edge-error' : ''}${mapping && pa && pb && !samePlace(pa, pb) ? ' edge-crossing' : ''}`,
        };
      }),
    [built, selection, problems, mapping, doc.mapping],
  );

  return { built, nodes, edges };
}
