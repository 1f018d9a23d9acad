import { useCallback, useMemo, useRef, useState } from 'react';
import {
  Background,
  Controls,
  MiniMap,
  Panel,
  ReactFlow,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type FinalConnectionState,
  type Node,
  type NodeChange,
} from '@xyflow/react';
import { findKernel, formatDataType, type DataType } from '@pipeloom/kernels';
import type { AppNode } from '@pipeloom/core';
import { projectStore, useProject } from '../store/project.js';
import type { Change } from '../document/changes.js';
import type { Selection } from '../document/records.js';
import { compositeOf, effectivePe, graphAt, graphKey, isApp, isComposite, levelAt, levelPrefix, type GraphAt } from '../document/graphs.js';
import { boundsOf, DRAW_IN_VIEW_ONLY_ABOVE, MINIMAP_UP_TO, minimapFits, openingViewport, useMeasured, useRefitOnResize, useSize, nextDragKey } from '../lib/canvas.js';
import { closesLoop, compositePorts, connectionProblem, freshNodeId, portTypeAt, writtenParams, type PortContext } from '../document/kernels.js';
import { peColour } from '../lib/colour.js';
import { firstPe, samePlace } from '../document/targets.js';
import { problemKey, useProblemCounts } from '../store/problems.js';
import { useResolve } from '../store/resolve.js';
import { declaredHandles, estimatedSize } from './KernelNode.js';
import { nodeTypes } from './CompositeNode.js';
import { estimated, expandChanges, GROUP, levelFlow, sameGraph, type Where } from './levelFlow.js';
import { Breadcrumb } from './Breadcrumb.js';
import { ExpandedView } from './ExpandedView.js';
import { group as groupComposite, ungroup } from '../store/composites.js';
import { compilerApi, useCompile } from '../store/compiler.js';
import { newScanParams } from '../document/scanNode.js';

export const KERNEL_MIME = 'application/pipeloom-kernel';

/** Edge labels stay short: `f32 64×64`; the full type is in the inspector and port tooltips. */
const shortType = (t: DataType) => `${t.element} ${t.shape.join('×')}`;

const at$ = (at: GraphAt | undefined) => (at && !isApp(at) ? { at } : {});

/** The graph the canvas shows now (the level's), never undefined: the app graph when the level went stale. */
function shownAt(): GraphAt | undefined {
  const { doc, level } = projectStore.getState();
  return levelAt(doc, level);
}

/** The palette's Scan entry (not a kernel id: those are namespaced, `a.b`). */
export const SCAN_ITEM = 'scan';

/**
 * Adds a node of `kernelId` with default params to the graph shown, at a flow position (default:
 * beside its last node); returns its id. `SCAN_ITEM` adds a scan macro-node with its defaults.
 */
export function addKernelNode(kernelId: string, position?: { x: number; y: number }): string | null {
  const kernel = kernelId === SCAN_ITEM ? undefined : findKernel(kernelId);
  if (!kernel && kernelId !== SCAN_ITEM) return null;
  const { doc, dispatch, select } = projectStore.getState();
  const at = shownAt();
  const g = graphAt(doc, at) ?? doc.app;
  const last = g.nodes.at(-1)?.position;
  const p = position ?? (last ? { x: last.x + 300, y: last.y } : { x: 40, y: 80 });
  const id = freshNodeId(doc, kernel ? kernelId : 'scan', at);
  const where = { x: Math.round(p.x), y: Math.round(p.y) };
  const node: AppNode = kernel ? { id, kernel: kernelId, params: writtenParams(kernel, {}), position: where } : { id, type: 'scan', params: newScanParams(), position: where };
  const ok = dispatch({ type: 'node/add', node, ...at$(at) }, { label: `add ${id}` });
  if (ok) select({ kind: 'node', id, ...at$(at) });
  return ok ? id : null;
}

const isSelected = (s: Selection | null, w: Where | undefined, mapping: boolean) => {
  if (!s || !w) return false;
  if (w.kind === 'node') return (s.kind === 'node' && s.id === w.id && sameGraph(s.at, w.at)) || (mapping && s.kind === 'mapping' && s.node === w.flatId);
  return s.kind === 'edge' && s.key === w.key && sameGraph(s.at, w.at);
};

export function DfgEditor({ mode = 'edit' }: { mode?: 'edit' | 'mapping' }) {
  const doc = useProject((s) => s.doc);
  const selection = useProject((s) => s.selection);
  const level = useProject((s) => s.level);
  const showExpanded = useProject((s) => s.expandedGraph);
  const repetitions = useCompile((s) => s.result?.lowered?.repetitions);
  const problems = useProblemCounts();
  const resolve = useResolve();
  const { sizes, tick, take } = useMeasured();
  const flow = useReactFlow();
  const dragKey = useRef<string | null>(null);
  // Nodes picked together (ctrl-click, shift-drag box) for Group; the store holds one selection.
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const mapping = mode === 'mapping';

  const at = levelAt(doc, level);
  const prefix = levelPrefix(level);
  const peIds = useMemo(() => doc.arch.pes.map((p) => p.id), [doc.arch.pes]);

  const built = useMemo(() => {
    const g = graphAt(doc, at);
    // Large graphs draw only what is in view; their nodes state a size and handles until
    // measured, so React Flow need not draw every one of them first (KernelNode.tsx).
    const declare = (g?.nodes.length ?? 0) > DRAW_IN_VIEW_ONLY_ABOVE;
    const sizeOf = (flowId: string, n: AppNode) => sizes.get(flowId) ?? estimated(doc, n);
    const errorsOf = (id: string, nAt: GraphAt | undefined, flatId: string) => (problems.get(problemKey({ kind: 'node', id, ...at$(nAt) })) ?? 0) + (mapping ? (problems.get(`mapping:${flatId}`) ?? 0) : 0);
    const pick = (flatId: string) => (mapping ? { pes: peIds, onPick: (p: string | null) => projectStore.getState().dispatch({ type: 'mapping/set', node: flatId, pe: p }, { label: `map ${flatId}` }) } : {});
    const toggle = (n: AppNode, nAt: GraphAt | undefined) => () => {
      const st = projectStore.getState();
      st.dispatch(expandChanges(st.doc, nAt, n, (id, x) => sizes.get(id) ?? estimated(st.doc, x)), { label: `${n.collapsed === false ? 'collapse' : 'expand'} ${n.id}` });
    };
    const into = (flowId: string) => () => projectStore.getState().setLevel([...projectStore.getState().level, ...flowId.split('/')]);
    const ctxFor = (nAt: GraphAt | undefined, flatId: string, id: string): PortContext => ({ at: nAt, prefix: flatId.slice(0, flatId.length - id.length), resolve });
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
          return { ...base, type: 'composite', data: { node: n, flowId, label: label(n), ...ports, types, pe, colour: peColour(doc, firstPe(pe)), errors: errorsOf(n.id, nAt, flatId), onExpand: toggle(n, nAt), onEnter: into(flowId), ...pick(flatId) } };
        }
        const estimate = declare && !sizes.get(flowId) ? estimatedSize(n.kernel ?? '', mapping) : undefined;
        return {
          ...base,
          type: 'kernel',
          ...(estimate ? { initialWidth: estimate.width, initialHeight: estimate.height, handles: declaredHandles(n.kernel ?? '') } : {}),
          data: { node: n, resolved: resolve(flatId, n), flowId, q: repetitions?.[flatId], pe, colour: peColour(doc, firstPe(pe)), errors: errorsOf(n.id, nAt, flatId), ...pick(flatId) },
        };
      },
      group: (n, flowId, flatId, nAt) => {
        const pe = effectivePe(doc.mapping, flatId).pe;
        return { type: 'group', data: { node: n, flowId, label: label(n), pe, colour: peColour(doc, firstPe(pe)), errors: errorsOf(n.id, nAt, flatId), onExpand: toggle(n, nAt), onEnter: into(flowId), ...pick(flatId) } };
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

  const nodes: Node[] = useMemo(() => built.nodes.map((n) => ({ ...n, selected: picked.has(n.id) || isSelected(selection, built.where.get(n.id), mapping) })), [built, selection, picked, mapping]);
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
        return { ...e, selected: isSelected(selection, w, mapping), className: `${problems.get(k) ? 'edge-error' : ''}${mapping && pa && pb && !samePlace(pa, pb) ? ' edge-crossing' : ''}` };
      }),
    [built, selection, problems, mapping, doc.mapping],
  );

  const onNodesChange = useCallback(
    (changes: NodeChange[]) => {
      take(changes);
      const st = projectStore.getState();
      const moves: Change[] = [];
      let next: Set<string> | undefined;
      let primary: Where | undefined;
      for (const c of changes) {
        const w = 'id' in c ? built.where.get(c.id) : undefined;
        if (c.type === 'position' && c.position && w?.kind === 'node') {
          // Children of an expanded composite are placed relative to its box, below its header.
          const inner = c.id.includes('/');
          const p = inner ? { x: c.position.x - GROUP.pad, y: c.position.y - GROUP.top } : c.position;
          moves.push({ type: 'node/move', id: w.id, ...at$(w.at), position: { x: Math.round(p.x), y: Math.round(p.y) } });
        }
        if (c.type === 'select') {
          next ??= new Set(picked);
          if (c.selected) {
            next.add(c.id);
            primary = w;
          } else next.delete(c.id);
        }
      }
      if (moves.length) {
        dragKey.current ??= nextDragKey('dfg');
        st.dispatch(moves, { label: 'move', coalesce: dragKey.current });
      }
      if (next) setPicked(next);
      if (primary?.kind === 'node') st.select(mapping ? { kind: 'mapping', node: primary.flatId } : { kind: 'node', id: primary.id, ...at$(primary.at) });
    },
    [take, mapping, built, picked],
  );

  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      for (const c of changes) {
        if (c.type !== 'select' || !c.selected) continue;
        const w = built.where.get(c.id);
        if (w?.kind === 'edge') projectStore.getState().select({ kind: 'edge', key: w.key, ...at$(w.at) });
      }
    },
    [built],
  );

  // Delete key: one history entry; edges of deleted nodes go with their node's removal.
  const onDelete = useCallback(
    ({ nodes: ns, edges: es }: { nodes: { id: string }[]; edges: { id: string }[] }) => {
      const gone = ns.map((n) => built.where.get(n.id)).filter((w): w is Extract<Where, { kind: 'node' }> => w?.kind === 'node');
      const goneIds = new Set(gone.map((w) => `${graphKey(w.at)}:${w.id}`));
      // A node inside a deleted composite goes with it.
      const kept = gone.filter((w) => !gone.some((o) => w.flatId.startsWith(`${o.flatId}/`)));
      const edgeChanges = new Map<string, Change>();
      for (const e of es) {
        const w = built.where.get(e.id);
        if (w?.kind !== 'edge') continue;
        const g = graphAt(projectStore.getState().doc, w.at);
        const edge = g?.edges.find((x) => `${x.from.node}.${x.from.port}->${x.to.node}.${x.to.port}` === w.key);
        if (edge && (goneIds.has(`${graphKey(w.at)}:${edge.from.node}`) || goneIds.has(`${graphKey(w.at)}:${edge.to.node}`))) continue;
        edgeChanges.set(`${graphKey(w.at)}:${w.key}`, { type: 'edge/remove', key: w.key, ...at$(w.at) });
      }
      const changes: Change[] = [...edgeChanges.values(), ...kept.map((w) => ({ type: 'node/remove' as const, id: w.id, ...at$(w.at) }))];
      if (changes.length) projectStore.getState().dispatch(changes, { label: kept.length ? `delete ${kept.map((w) => w.id).join(', ')}` : 'delete edge' });
      setPicked(new Set());
    },
    [built],
  );

  /** The graph both ends are in and their ids there, or why the connection is refused. */
  const ends = useCallback(
    (source: string, target: string) => {
      const a = built.where.get(source);
      const b = built.where.get(target);
      if (a?.kind !== 'node' || b?.kind !== 'node') return { problem: 'both ends must be nodes' };
      if (!sameGraph(a.at, b.at)) return { problem: 'the two nodes are in different graphs: enter the composite to connect inside it, or connect to its ports' };
      return { a, b };
    },
    [built],
  );

  const problemOf = useCallback(
    (source: string, sourceHandle: string, target: string, targetHandle: string) => {
      const r = ends(source, target);
      if (!('a' in r) || !r.a || !r.b) return { problem: r.problem ?? 'refused' };
      const ctx: PortContext = { at: r.a.at, prefix: r.a.flatId.slice(0, r.a.flatId.length - r.a.id.length), resolve };
      const from = { node: r.a.id, port: sourceHandle };
      const to = { node: r.b.id, port: targetHandle };
      return { problem: connectionProblem(projectStore.getState().doc, from, to, ctx), from, to, at: r.a.at };
    },
    [ends, resolve],
  );

  const onConnect = useCallback(
    (c: Connection) => {
      const st = projectStore.getState();
      const r = problemOf(c.source, c.sourceHandle ?? '', c.target, c.targetHandle ?? '');
      if (r.problem || !('from' in r) || !r.from || !r.to) {
        st.toast(`Connection refused: ${r.problem}`, 'error');
        return;
      }
      // An edge closing a loop needs initial tokens to start it: one iteration of zeros, set in the inspector.
      const loop = closesLoop(st.doc, r.from, r.to, { at: r.at, prefix: '', resolve });
      st.dispatch({ type: 'edge/add', edge: { from: r.from, to: r.to, ...(loop ? { delay: 1, init: 0 } : {}) }, ...at$(r.at) }, { label: `connect ${r.from.node} -> ${r.to.node}` });
      if (loop) st.toast(`${r.from.node} -> ${r.to.node} closes a loop: it carries 1 initial token of zeros (delay 1, init 0); change them in the inspector`, 'info');
    },
    [problemOf, resolve],
  );

  // Live feedback while dragging a connection: the handle under the pointer turns red when
  // the connection would be refused; releasing there says why.
  const isValidConnection = useCallback((c: Connection | Edge) => !problemOf(c.source, c.sourceHandle ?? '', c.target, c.targetHandle ?? '').problem, [problemOf]);

  const onConnectEnd = useCallback(
    (_: MouseEvent | TouchEvent, state: FinalConnectionState) => {
      if (state.isValid !== false || !state.fromHandle || !state.toHandle) return;
      const [a, b] = state.fromHandle.type === 'source' ? [state.fromHandle, state.toHandle] : [state.toHandle, state.fromHandle];
      if (a.type === b.type) {
        projectStore.getState().toast(`Connection refused: connect an output (right side) to an input (left side)`, 'error');
        return;
      }
      const r = problemOf(a.nodeId, a.id ?? '', b.nodeId, b.id ?? '');
      if (r.problem) projectStore.getState().toast(`Connection refused: ${r.problem}`, 'error');
    },
    [problemOf],
  );

  const onDrop = useCallback(
    (e: React.DragEvent) => {
      const kernelId = e.dataTransfer.getData(KERNEL_MIME);
      if (!kernelId) return;
      e.preventDefault();
      const p = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
      addKernelNode(kernelId, { x: p.x - 80, y: p.y - 30 });
    },
    [flow],
  );

  const tidy = async () => {
    const api = compilerApi();
    const st = projectStore.getState();
    const g = graphAt(st.doc, at);
    if (!api || !g) return;
    const sz: Record<string, { width: number; height: number }> = {};
    for (const n of g.nodes) sz[n.id] = sizes.get(n.id) ?? estimated(st.doc, n);
    const pos = await api.tidy({ ...st.doc, app: { nodes: g.nodes, edges: g.edges } }, sz);
    const moves = g.nodes.filter((n) => pos[n.id]).map((n) => ({ type: 'node/move' as const, id: n.id, position: pos[n.id], ...at$(at) }));
    if (moves.length) projectStore.getState().dispatch(moves, { label: 'tidy' });
    requestAnimationFrame(() => flow.fitView({ padding: 0.2, maxZoom: 1.2, duration: 200 }));
  };

  // Group: the picked nodes of one graph (the level's, or one expanded composite's inside).
  const groupable = useMemo(() => {
    const ws = [...picked].map((id) => built.where.get(id)).filter((w): w is Extract<Where, { kind: 'node' }> => w?.kind === 'node');
    if (!ws.length || !ws.every((w) => sameGraph(w.at, ws[0].at))) return undefined;
    return { at: ws[0].at, ids: ws.map((w) => w.id) };
  }, [picked, built]);
  const group = () => {
    if (groupable) groupComposite(groupable.at, groupable.ids, () => setPicked(new Set()));
  };
  const sel = selection?.kind === 'node' ? graphAt(doc, selection.at)?.nodes.find((n) => n.id === selection.id) : undefined;
  const ungroupable = sel && isComposite(sel) && compositeOf(doc, sel) && selection?.kind === 'node' ? { at: selection.at, id: sel.id } : undefined;

  const { ref, size } = useSize<HTMLDivElement>();
  const viewport = useMemo(() => {
    if (!size) return undefined;
    const rects = nodes.filter((n) => !n.parentId).map((n) => ({ ...n.position, width: sizes.get(n.id)?.width ?? (n.width as number | undefined) ?? 170, height: sizes.get(n.id)?.height ?? (n.height as number | undefined) ?? (mapping ? 110 : 80) }));
    return rects.length ? openingViewport(boundsOf(rects), size.width, size.height, { minZoom: 0.7, maxZoom: 1.1, fitDownTo: 0.5 }) : { x: 0, y: 0, zoom: 1 };
    // The opening viewport only (the first size): later edits keep the user's pan and zoom.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [!!size]);
  useRefitOnResize(nodes.length, { padding: 0.2, maxZoom: 1.1 });

  const expandedToggle = (
    <label className="toggle" title="The single-rate graph the compiler reads: each firing of a multi-rate node (S#0 … S#7), composites flattened; read-only">
      <input type="checkbox" checked={showExpanded} onChange={(e) => projectStore.getState().showExpanded(e.target.checked)} data-testid="show-expanded" /> Show expanded graph
    </label>
  );

  if (showExpanded && !mapping) {
    return (
      <div className="canvas" ref={ref} data-testid="dfg-canvas">
        <ExpandedView toggle={expandedToggle} size={size} />
      </div>
    );
  }

  return (
    <div className="canvas" ref={ref} data-testid={mapping ? 'mapping-canvas' : 'dfg-canvas'} data-level={level.join('/')} onDragOver={(e) => { if (!mapping) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; } }} onDrop={mapping ? undefined : onDrop}>
      {viewport && <ReactFlow
        key={graphKey(at)}
        defaultViewport={viewport}
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={mapping ? undefined : onConnect}
        isValidConnection={isValidConnection}
        onDelete={mapping ? undefined : onDelete}
        onConnectEnd={mapping ? undefined : onConnectEnd}
        nodesConnectable={!mapping}
        onNodeDragStop={() => {
          dragKey.current = null;
          projectStore.getState().seal();
        }}
        onNodeDoubleClick={(_, n) => {
          if (n.type === 'composite' || n.type === 'group') projectStore.getState().setLevel([...level, ...n.id.split('/')]);
        }}
        onPaneClick={() => {
          setPicked(new Set());
          projectStore.getState().select(null);
        }}
        deleteKeyCode={mapping ? null : ['Delete', 'Backspace']}
        minZoom={0.1}
        maxZoom={1.5}
        onlyRenderVisibleElements={nodes.length > DRAW_IN_VIEW_ONLY_ABOVE}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={16} size={1} />
        <Controls showInteractive={false} fitViewOptions={{ padding: 0.2, maxZoom: 1.2 }} />
        <Panel position="top-left">
          <Breadcrumb />
        </Panel>
        {!mapping && (
          <Panel position="top-right" className="canvas-actions">
            <button onClick={group} disabled={!groupable} title="Make one composite node of the selected nodes (Ctrl+click or Shift+drag to select several; undoable)" data-testid="group">
              Group
            </button>
            <button onClick={() => ungroupable && ungroup(doc, ungroupable.at, ungroupable.id)} disabled={!ungroupable} title="Put the selected composite's inner nodes in its place (undoable)" data-testid="ungroup">
              Ungroup
            </button>
            <button onClick={tidy} title="Lay the graph shown out left to right (undoable)" data-testid="tidy">
              Tidy layout
            </button>
            {expandedToggle}
          </Panel>
        )}
        {nodes.length <= MINIMAP_UP_TO && minimapFits(size) && <MiniMap pannable zoomable nodeColor={(n) => (n.data as { colour?: string }).colour ?? '#9ca3af'} />}
      </ReactFlow>}
    </div>
  );
}
