import { useMemo } from 'react';
import { Background, Controls, MarkerType, Position, ReactFlow, type Edge, type Node, type NodeHandle } from '@xyflow/react';
import { useProject, projectStore } from '../store/project.js';
import { useCompile } from '../worker/client.js';
import { peColor } from '../lib/colors.js';
import { formatMs, formatSeconds } from '../lib/format.js';
import { boundsOf, DRAW_IN_VIEW_ONLY_ABOVE, openingViewport, useSize } from '../lib/canvas.js';
import { igNodeTypes } from './IgNodes.js';
import type { IgLayout } from './layout.js';
import { igSelection } from './igSelection.js';

// The implementation graph as the compiler produced it: computations labelled
// `name (schedule, latency)` like the paper's Figs 9-10, buffer nodes between them with their
// depth and memory colour, one cluster per PE. Both strategies come precomputed from the
// worker, so the overlap toggle only swaps which one is drawn.

export function useShownStrategy() {
  const overlap = useProject((s) => s.doc.options.overlap);
  const result = useCompile((s) => s.result);
  return { overlap, strategy: result ? (overlap ? result.overlap : result.noOverlap) : null, result };
}

export function OverlapToggle() {
  const overlap = useProject((s) => s.doc.options.overlap);
  const set = (v: boolean) => projectStore.getState().dispatch({ type: 'options/update', patch: { overlap: v } }, { label: v ? 'overlap on' : 'overlap off' });
  return (
    <div className="segmented" data-testid="overlap-toggle">
      <button className={overlap ? 'on' : ''} onClick={() => set(true)} data-testid="overlap-on">
        Overlap
      </button>
      <button className={!overlap ? 'on' : ''} onClick={() => set(false)} data-testid="overlap-off">
        No overlap
      </button>
    </div>
  );
}

export function IgView() {
  const doc = useProject((s) => s.doc);
  const { strategy, result, overlap } = useShownStrategy();
  const status = useCompile((s) => s.status);
  const loads = useProject((s) => s.loads);

  const { nodes, edges } = useMemo(() => {
    if (!strategy) return { nodes: [] as Node[], edges: [] as Edge[] };
    const { ig, layout } = strategy;
    const buffers = new Map(ig.buffers.map((b) => [b.id as string, b]));
    // By id, once per render: a search per IG node was quadratic on large graphs.
    const appNodes = new Map(doc.app.nodes.map((n) => [n.id, n]));
    const peKinds = new Map(doc.arch.pes.map((p) => [p.id, p.kind]));
    // A large graph is drawn only where in view, but React Flow draws every node once to
    // measure its handles unless the node declares them: on a 10,000-node DFG's IG that first
    // draw was 45,000 nodes. The sizes are fixed (layout.ts, styles.css), so the handles are
    // known: the target mid-left, the source mid-right, React Flow's default 6 px square.
    const declare = layout.nodes.length > DRAW_IN_VIEW_ONLY_ABOVE;
    const handlesOf = (n: { kind: string; width: number; height: number }): NodeHandle[] =>
      n.kind === 'pe'
        ? []
        : [
            { type: 'target', position: Position.Left, x: -3, y: n.height / 2 - 3, width: 6, height: 6 },
            { type: 'source', position: Position.Right, x: n.width - 3, y: n.height / 2 - 3, width: 6, height: 6 },
          ];
    const nodes: Node[] = layout.nodes.map((n) => {
      const base = { id: n.id, position: { x: n.x, y: n.y }, width: n.width, height: n.height, measured: { width: n.width, height: n.height }, draggable: false, ...(n.parent ? { parentId: n.parent } : {}), ...(declare ? { handles: handlesOf(n) } : {}) };
      if (n.kind === 'pe') {
        const pe = n.id.slice(3);
        return { ...base, type: 'igPe', selectable: false, data: { pe, kind: peKinds.get(pe), color: peColor(doc, pe) } };
      }
      if (n.kind === 'buffer') return { ...base, type: 'igBuffer', data: { buffer: buffers.get(n.id.slice(2))! } };
      const id = n.id.slice(2);
      const app = appNodes.get(id);
      return {
        ...base,
        type: 'igNode',
        data: { id, kernel: app?.kernel ?? '', schedule: (ig.schedule as Record<string, number>)[id], latency: (ig.latency as Record<string, number>)[id], color: peColor(doc, doc.mapping[id]) },
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
  }, [strategy, doc]);

  const { ref, size } = useSize<HTMLDivElement>();
  const viewport = useMemo(
    () => (size && strategy ? openingViewport(dataBounds(strategy.layout.nodes), size.width, size.height - 40, { minZoom: 0.75 }) : undefined),
    // Only the first layout of a mount matters: later edits keep the user's viewport.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [size, !!strategy],
  );

  return (
    <div className="canvas ig" data-testid="ig-canvas" ref={ref}>
      <div className="canvas-bar">
        <OverlapToggle />
        {strategy && (
          <span className="muted" data-testid="ig-summary">
            {strategy.ig.buffers.length} buffer nodes · {strategy.ig.buffers.filter((b) => b.depth === 2).length} double · fill {strategy.ig.fillCycles} cycles · {overlap ? 'with' : 'without'} overlap
          </span>
        )}
        {result?.prediction && (
          <span className="pred" data-testid="ig-prediction" title="Predicted from kernel cost hints and link bandwidth and latency">
            predicted cycle {formatSeconds((overlap ? result.prediction.overlap : result.prediction.noOverlap).cycleTime)} ·{' '}
            {(overlap ? result.prediction.overlap : result.prediction.noOverlap).throughput.toFixed(1)} it/s · overlap speedup ×{result.prediction.speedup.toFixed(2)}
          </span>
        )}
        {result && <span className="muted">compiled in {formatMs(result.compileMs)}</span>}
      </div>
      {!strategy && (
        <div className="canvas-empty" data-testid="ig-empty">
          {status === 'compiling' ? 'Compiling…' : result ? 'The document has errors (see Problems below); fix them to see the implementation graph.' : 'Waiting for the compiler…'}
        </div>
      )}
      {size && <ReactFlow
        key={`${loads}-${strategy ? 'ig' : 'none'}`}
        defaultViewport={viewport ? { ...viewport, y: viewport.y + 40 } : undefined}
        nodes={nodes}
        edges={edges}
        nodeTypes={igNodeTypes}
        nodesConnectable={false}
        nodesDraggable={false}
        elementsSelectable
        minZoom={0.05}
        maxZoom={1.5}
        onlyRenderVisibleElements={nodes.length > DRAW_IN_VIEW_ONLY_ABOVE}
        proOptions={{ hideAttribution: true }}
        onNodeClick={(_, n) => {
          if (n.id.startsWith('n:')) projectStore.getState().select({ kind: 'node', id: n.id.slice(2) });
          igSelection.setState({ buffer: n.id.startsWith('b:') ? n.id.slice(2) : null });
        }}
        onPaneClick={() => igSelection.setState({ buffer: null })}
      >
        <Background gap={16} size={1} />
        <Controls showInteractive={false} fitViewOptions={{ padding: 0.08, maxZoom: 1.1 }} />
      </ReactFlow>}
    </div>
  );
}

/**
 * The lanes' bounds, starting at the first member of the top lane: lanes start at x 0, but
 * where a graph is too wide to show whole, the view opens on data, not on empty lane.
 */
function dataBounds(nodes: IgLayout['nodes']) {
  const lanes = nodes.filter((n) => n.kind === 'pe');
  const b = boundsOf(lanes);
  const top = lanes.reduce<(typeof lanes)[number] | undefined>((t, n) => (!t || n.y < t.y ? n : t), undefined);
  let first = Infinity;
  for (const n of nodes) if (n.parent === top?.id) first = Math.min(first, n.x);
  return Number.isFinite(first) && first > b.x ? { ...b, x: first, width: b.width - (first - b.x) } : b;
}
