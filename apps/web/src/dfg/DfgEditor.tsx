import { useCallback, useMemo, useState } from 'react';
import { Background, Controls, MiniMap, Panel, ReactFlow, useReactFlow } from '@xyflow/react';
import { projectStore, useProject } from '../store/project.js';
import { compositeOf, graphAt, graphKey, isComposite, levelAt, levelPrefix } from '../document/graphs.js';
import { boundsOf, DRAW_IN_VIEW_ONLY_ABOVE, MINIMAP_UP_TO, minimapFits, openingViewport, useMeasured, useRefitOnResize, useSize } from '../lib/canvas.js';
import { useProblemCounts } from '../store/problems.js';
import { useResolve } from '../store/resolve.js';
import { nodeTypes } from './CompositeNode.js';
import { estimated, sameGraph, type Where } from './levelFlow.js';
import { Breadcrumb } from './Breadcrumb.js';
import { ExpandedView } from './ExpandedView.js';
import { group as groupComposite, ungroup } from '../store/composites.js';
import { compilerApi, useCompile } from '../store/compiler.js';
import { addKernelNode, at$, KERNEL_MIME } from './addNode.js';
import { useDfgFlow } from './dfgFlow.js';
import { useDfgHandlers } from './dfgHandlers.js';

// The DFG canvas (and, in mapping mode, the mapping board's): the graph of the level shown
// (dfgFlow.ts), what its events do (dfgHandlers.ts), drops from the palette (addNode.ts), and
// the Group / Ungroup / Tidy / expanded-graph actions.

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
  // Nodes picked together (ctrl-click, shift-drag box) for Group; the store holds one selection.
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const mapping = mode === 'mapping';

  const at = levelAt(doc, level);
  const prefix = levelPrefix(level);

  const { built, nodes, edges } = useDfgFlow({ doc, at, prefix, mapping, selection, picked, sizes, tick, problems, resolve, repetitions });
  const { onNodesChange, onEdgesChange, onDelete, onConnect, isValidConnection, onConnectEnd, onNodeDragStop } = useDfgHandlers({
    built,
    mapping,
    picked,
    setPicked,
    take,
    resolve,
  });

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
    const rects = nodes
      .filter((n) => !n.parentId)
      .map((n) => ({
        ...n.position,
        width: sizes.get(n.id)?.width ?? (n.width as number | undefined) ?? 170,
        height: sizes.get(n.id)?.height ?? (n.height as number | undefined) ?? (mapping ? 110 : 80),
      }));
    return rects.length ? openingViewport(boundsOf(rects), size.width, size.height, { minZoom: 0.7, maxZoom: 1.1, fitDownTo: 0.5 }) : { x: 0, y: 0, zoom: 1 };
    // The opening viewport only (the first size): later edits keep the user's pan and zoom.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [!!size]);
  useRefitOnResize(nodes.length, { padding: 0.2, maxZoom: 1.1 });

  const expandedToggle = (
    <label className="toggle" title="The single-rate graph the compiler reads: each firing of a multi-rate node (S#0 … S#7), composites flattened; read-only">
      <input type="checkbox" checked={showExpanded} onChange={(e) => projectStore.getState().showExpanded(e.target.checked)} data-testid="show-expanded" /> Show
      expanded graph
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
    <div
      className="canvas"
      ref={ref}
      data-testid={mapping ? 'mapping-canvas' : 'dfg-canvas'}
      data-level={level.join('/')}
      onDragOver={(e) => {
        if (!mapping) {
          e.preventDefault();
          e.dataTransfer.dropEffect = 'copy';
        }
      }}
      onDrop={mapping ? undefined : onDrop}
    >
      {viewport && (
        <ReactFlow
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
          onNodeDragStop={onNodeDragStop}
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
              <button
                onClick={group}
                disabled={!groupable}
                title="Make one composite node of the selected nodes (Ctrl+click or Shift+drag to select several; undoable)"
                data-testid="group"
              >
                Group
              </button>
              <button
                onClick={() => ungroupable && ungroup(doc, ungroupable.at, ungroupable.id)}
                disabled={!ungroupable}
                title="Put the selected composite's inner nodes in its place (undoable)"
                data-testid="ungroup"
              >
                Ungroup
              </button>
              <button onClick={tidy} title="Lay the graph shown out left to right (undoable)" data-testid="tidy">
                Tidy layout
              </button>
              {expandedToggle}
            </Panel>
          )}
          {nodes.length <= MINIMAP_UP_TO && minimapFits(size) && (
            <MiniMap pannable zoomable nodeColor={(n) => (n.data as { color?: string }).color ?? '#9ca3af'} />
          )}
        </ReactFlow>
      )}
    </div>
  );
}
