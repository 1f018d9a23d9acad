import { useCallback, useMemo, useRef } from 'react';
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
  type NodeChange,
} from '@xyflow/react';
import { findKernel, type DataType } from '@pipeloom/kernels';
import { projectStore, useProject } from '../store/project.js';
import { edgeKey, type EdgeKey } from '../store/records.js';
import { boundsOf, DRAW_IN_VIEW_ONLY_ABOVE, MINIMAP_UP_TO, openingViewport, useMeasured, useSize, nextDragKey, pickedId } from '../lib/canvas.js';
import { connectionProblem, freshNodeId, portType, writtenParams } from '../lib/kernels.js';
import { peColor } from '../lib/colors.js';
import { useProblemCounts } from '../lib/problems.js';
import { declaredHandles, estimatedSize, nodeTypes, type KernelFlowNode } from './KernelNode.js';
import { compilerApi } from '../worker/client.js';

export const KERNEL_MIME = 'application/pipeloom-kernel';

/** Edge labels stay short: `f32 64×64`; the full type is in the inspector and port tooltips. */
const shortType = (t: DataType) => `${t.element} ${t.shape.join('×')}`;

/** Adds a node of `kernelId` with default params at a flow position; returns its id. */
export function addKernelNode(kernelId: string, position: { x: number; y: number }): string | null {
  const kernel = findKernel(kernelId);
  if (!kernel) return null;
  const { doc, dispatch, select } = projectStore.getState();
  const id = freshNodeId(doc, kernelId);
  const ok = dispatch({ type: 'node/add', node: { id, kernel: kernelId, params: writtenParams(kernel, {}), position: { x: Math.round(position.x), y: Math.round(position.y) } } }, { label: `add ${id}` });
  if (ok) select({ kind: 'node', id });
  return ok ? id : null;
}

export function DfgEditor({ mode = 'edit' }: { mode?: 'edit' | 'mapping' }) {
  const doc = useProject((s) => s.doc);
  const selection = useProject((s) => s.selection);
  const problems = useProblemCounts();
  const { sizes, tick, take } = useMeasured();
  const flow = useReactFlow();
  const dragKey = useRef<string | null>(null);
  const mapping = mode === 'mapping';

  const peIds = useMemo(() => doc.arch.pes.map((p) => p.id), [doc.arch.pes]);
  const nodes: KernelFlowNode[] = useMemo(
    () => {
      // Large graphs draw only what is in view; their nodes state a size and handles until
      // measured, so React Flow need not draw every one of them first (KernelNode.tsx).
      const declare = doc.app.nodes.length > DRAW_IN_VIEW_ONLY_ABOVE;
      return doc.app.nodes.map((n, i) => {
        const pe = doc.mapping[n.id];
        const measured = sizes.get(n.id);
        // Only until measured: a drawn node's own handles (React Flow's measure) are exact.
        const estimate = declare && !measured ? estimatedSize(n.kernel ?? '', mapping) : undefined;
        return {
          id: n.id,
          type: 'kernel',
          position: n.position ?? { x: 40 + 220 * i, y: 80 },
          selected: (selection?.kind === 'node' && selection.id === n.id) || (selection?.kind === 'mapping' && selection.node === n.id),
          measured,
          ...(estimate ? { initialWidth: estimate.width, initialHeight: estimate.height, handles: declaredHandles(n.kernel ?? '') } : {}),
          data: {
            node: n,
            pe,
            color: peColor(doc, pe),
            errors: (problems.get(`node:${n.id}`) ?? 0) + (mapping ? (problems.get(`mapping:${n.id}`) ?? 0) : 0),
            ...(mapping ? { pes: peIds, onPick: (p: string | null) => projectStore.getState().dispatch({ type: 'mapping/set', node: n.id, pe: p }, { label: `map ${n.id}` }) } : {}),
          },
        };
      });
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [doc, selection, problems, tick, mapping, peIds],
  );

  const edges: Edge[] = useMemo(() => {
    // By id, once per render: a search per edge was quadratic on large graphs.
    const byId = new Map(doc.app.nodes.map((n) => [n.id, n]));
    return doc.app.edges.map((e) => {
      const k = edgeKey(e);
      const src = byId.get(e.from.node);
      const t = src ? portType(src, e.from.port, 'out').type : undefined;
      const sel = selection?.kind === 'edge' && selection.key === k;
      const pe = doc.mapping[e.from.node];
      const crossing = pe && doc.mapping[e.to.node] && doc.mapping[e.to.node] !== pe;
      return {
        id: k,
        source: e.from.node,
        sourceHandle: e.from.port,
        target: e.to.node,
        targetHandle: e.to.port,
        selected: sel,
        label: t ? shortType(t) : undefined,
        className: `${problems.get(`edge:${k}`) ? 'edge-error' : ''}${mapping && crossing ? ' edge-crossing' : ''}`,
        labelBgPadding: [4, 2] as [number, number],
        labelStyle: { fontSize: 10 },
      };
    });
  }, [doc, selection, problems, mapping]);

  const onNodesChange = useCallback(
    (changes: NodeChange<KernelFlowNode>[]) => {
      take(changes);
      const st = projectStore.getState();
      const moves = [];
      for (const c of changes) {
        if (c.type === 'position' && c.position) moves.push({ type: 'node/move' as const, id: c.id, position: { x: Math.round(c.position.x), y: Math.round(c.position.y) } });
      }
      if (moves.length) {
        dragKey.current ??= nextDragKey('dfg');
        st.dispatch(moves, { label: 'move', coalesce: dragKey.current });
      }
      const picked = pickedId(changes);
      if (picked) st.select(mapping ? { kind: 'mapping', node: picked } : { kind: 'node', id: picked });
    },
    [take, mapping],
  );

  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      const st = projectStore.getState();
      const picked = pickedId(changes);
      if (picked) st.select({ kind: 'edge', key: picked as EdgeKey });
    },
    [mapping],
  );

  // Delete key: one history entry; edges of deleted nodes go with their node's removal.
  const onDelete = useCallback(({ nodes: ns, edges: es }: { nodes: { id: string }[]; edges: { id: string; source: string; target: string }[] }) => {
    const gone = new Set(ns.map((n) => n.id));
    const changes = [
      ...es.filter((e) => !gone.has(e.source) && !gone.has(e.target)).map((e) => ({ type: 'edge/remove' as const, key: e.id as EdgeKey })),
      ...ns.map((n) => ({ type: 'node/remove' as const, id: n.id })),
    ];
    if (changes.length) projectStore.getState().dispatch(changes, { label: ns.length ? `delete ${ns.map((n) => n.id).join(', ')}` : 'delete edge' });
  }, []);

  const onConnect = useCallback((c: Connection) => {
    const st = projectStore.getState();
    const from = { node: c.source, port: c.sourceHandle ?? '' };
    const to = { node: c.target, port: c.targetHandle ?? '' };
    const problem = connectionProblem(st.doc, from, to);
    if (problem) {
      st.toast(`Connection refused: ${problem}`, 'error');
      return;
    }
    st.dispatch({ type: 'edge/add', edge: { from, to } }, { label: `connect ${from.node} -> ${to.node}` });
  }, []);

  // Live feedback while dragging a connection: the handle under the pointer turns red when
  // the connection would be refused; releasing there says why.
  const isValidConnection = useCallback((c: Connection | Edge) => {
    const doc = projectStore.getState().doc;
    return !connectionProblem(doc, { node: c.source, port: c.sourceHandle ?? '' }, { node: c.target, port: c.targetHandle ?? '' });
  }, []);

  const onConnectEnd = useCallback((_: MouseEvent | TouchEvent, state: FinalConnectionState) => {
    if (state.isValid !== false || !state.fromHandle || !state.toHandle) return;
    const [a, b] = state.fromHandle.type === 'source' ? [state.fromHandle, state.toHandle] : [state.toHandle, state.fromHandle];
    if (a.type === b.type) {
      projectStore.getState().toast(`Connection refused: connect an output (right side) to an input (left side)`, 'error');
      return;
    }
    const st = projectStore.getState();
    const problem = connectionProblem(st.doc, { node: a.nodeId, port: a.id ?? '' }, { node: b.nodeId, port: b.id ?? '' });
    if (problem) st.toast(`Connection refused: ${problem}`, 'error');
  }, []);

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
    if (!api) return;
    const sz: Record<string, { width: number; height: number }> = {};
    for (const [id, s] of sizes) sz[id] = s;
    const pos = await api.tidy(projectStore.getState().doc, sz);
    const st = projectStore.getState();
    const moves = st.doc.app.nodes.filter((n) => pos[n.id]).map((n) => ({ type: 'node/move' as const, id: n.id, position: pos[n.id] }));
    if (moves.length) st.dispatch(moves, { label: 'tidy' });
    requestAnimationFrame(() => flow.fitView({ padding: 0.2, maxZoom: 1.2, duration: 200 }));
  };

  const { ref, size } = useSize<HTMLDivElement>();
  const viewport = useMemo(() => {
    if (!size) return undefined;
    const rects = nodes.map((n) => ({ ...n.position, width: sizes.get(n.id)?.width ?? 170, height: sizes.get(n.id)?.height ?? (mapping ? 110 : 80) }));
    return rects.length ? openingViewport(boundsOf(rects), size.width, size.height, { minZoom: 0.7, maxZoom: 1.1 }) : { x: 0, y: 0, zoom: 1 };
    // The opening viewport only: later edits keep the user's pan and zoom.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [size]);

  return (
    <div className="canvas" ref={ref} data-testid={mapping ? 'mapping-canvas' : 'dfg-canvas'} onDragOver={(e) => { if (!mapping) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; } }} onDrop={mapping ? undefined : onDrop}>
      {viewport && <ReactFlow
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
        onPaneClick={() => projectStore.getState().select(null)}
        deleteKeyCode={mapping ? null : ['Delete', 'Backspace']}
        minZoom={0.1}
        maxZoom={1.5}
        onlyRenderVisibleElements={nodes.length > DRAW_IN_VIEW_ONLY_ABOVE}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={16} size={1} />
        <Controls showInteractive={false} fitViewOptions={{ padding: 0.2, maxZoom: 1.2 }} />
        <Panel position="top-right">
          <button onClick={tidy} title="Lay the DFG out left to right (undoable)" data-testid="tidy">
            Tidy layout
          </button>
        </Panel>
        {nodes.length <= MINIMAP_UP_TO && <MiniMap pannable zoomable nodeColor={(n) => (n.data as { color?: string }).color ?? '#9ca3af'} />}
      </ReactFlow>}
    </div>
  );
}
