import { useMemo } from 'react';
import { Background, Controls, ReactFlow, type Edge, type Node } from '@xyflow/react';
import { useProject, projectStore } from '../store/project.js';
import { useCompile } from '../store/compiler.js';
import { formatMs, formatSeconds } from '../lib/format.js';
import { boundsOf, DRAW_IN_VIEW_ONLY_ABOVE, openingViewport, useRefitOnResize, useSize } from '../lib/canvas.js';
import { igNodeTypes } from './IgNodes.js';
import { dataBounds, igFlow } from './flow.js';
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

/** Fitting zooms out no further than this; a graph that needs more opens at a readable zoom at its source. */
const FIT_MIN_ZOOM = 0.3;
const FIT = { padding: 0.08, maxZoom: 1.1, minZoom: FIT_MIN_ZOOM };

/** The whole graph, lanes included, when it fits at FIT_MIN_ZOOM or closer; else its first data at a readable zoom. */
function igOpening(layout: Parameters<typeof dataBounds>[0], width: number, height: number) {
  const all = boundsOf(layout.filter((n) => n.kind === 'pe'));
  const fit = Math.min((width - 80) / Math.max(all.width, 1), (height - 80) / Math.max(all.height, 1));
  return fit >= FIT_MIN_ZOOM
    ? openingViewport(all, width, height, { minZoom: FIT_MIN_ZOOM, maxZoom: 1.1 })
    : openingViewport(dataBounds(layout), width, height, { minZoom: 0.75 });
}

export function IgView() {
  const doc = useProject((s) => s.doc);
  const { strategy, result, overlap } = useShownStrategy();
  const status = useCompile((s) => s.status);
  const loads = useProject((s) => s.loads);
  // The strategy the document does not choose may be impossible (a loop's delay): no line then.
  const predicted = result?.prediction ? (overlap ? result.prediction.overlap : result.prediction.noOverlap) : undefined;

  const lowered = useCompile((s) => s.result?.lowered);
  const { nodes, edges } = useMemo(() => (strategy ? igFlow(strategy, doc, lowered) : { nodes: [] as Node[], edges: [] as Edge[] }), [strategy, doc, lowered]);

  const { ref, size } = useSize<HTMLDivElement>();
  const viewport = useMemo(
    () => (size && strategy ? igOpening(strategy.layout.nodes, size.width, size.height - 40) : undefined),
    // Only the first layout of a mount matters: later edits keep the user's viewport.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [!!size, !!strategy],
  );
  useRefitOnResize(nodes.length, FIT);

  return (
    // Without a result the project (just opened) has not compiled: no graph is shown as its.
    <div className={`canvas ig${result ? '' : ' stale'}`} data-testid="ig-canvas" data-stale={!result || undefined} ref={ref}>
      <div className="canvas-bar">
        <OverlapToggle />
        {strategy && (
          <span className="muted" data-testid="ig-summary">
            {strategy.ig.buffers.count} buffer nodes · {strategy.ig.buffers.depth.filter((d) => d === 2).length} double · fill {strategy.ig.fillCycles} cycles ·{' '}
            {overlap ? 'with' : 'without'} overlap
          </span>
        )}
        {predicted && (
          <span className="pred" data-testid="ig-prediction" title="Predicted from kernel cost hints and link bandwidth and latency">
            predicted cycle {formatSeconds(predicted.cycleTime)} · {predicted.throughput.toFixed(1)} it/s · overlap speedup ×
            {result!.prediction!.speedup.toFixed(2)}
          </span>
        )}
        {result?.calibrated && (
          <span
            className="pred"
            data-testid="ig-calibrated"
            title={`Predicted with the project's calibration (${result.calibrated.date.slice(0, 16).replace('T', ' ')} UTC, ${result.calibrated.machine}): ${result.calibrated.firings.calibrated} of ${result.calibrated.firings.total} firings and ${result.calibrated.transfers.calibrated} of ${result.calibrated.transfers.total} transfers measured, the others from their cost hints${result.calibrated.diagnostics.map((d) => `; ${d.message}`).join('')}`}
          >
            calibrated {formatSeconds(overlap ? result.calibrated.overlap : result.calibrated.noOverlap)}
          </span>
        )}
        {result && <span className="muted">compiled in {formatMs(result.compileMs)}</span>}
      </div>
      {!strategy && (
        <div className="canvas-empty" data-testid="ig-empty">
          {status === 'compiling'
            ? result
              ? 'Compiling…'
              : 'Compiling this project: its implementation graph appears when it has compiled…'
            : result
              ? 'The document has errors (see Problems below); fix them to see the implementation graph.'
              : 'Waiting for the compiler…'}
        </div>
      )}
      {size && (
        <ReactFlow
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
          <Controls showInteractive={false} fitViewOptions={FIT} />
        </ReactFlow>
      )}
    </div>
  );
}
