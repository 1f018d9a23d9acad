import { memo, useMemo } from 'react';
import { Background, Controls, Handle, Panel, Position, ReactFlow, type Edge, type Node, type NodeProps } from '@xyflow/react';
import { findKernel } from '@pipeloom/kernels';
import type { AppNode, TokenRange } from '@pipeloom/core';
import { useProject } from '../store/project.js';
import { effectivePe } from '../document/graphs.js';
import { firstPe, loweredPe } from '../document/targets.js';
import { peColor } from '../lib/color.js';
import { boundsOf, openingViewport } from '../lib/canvas.js';
import { useCompile } from '../store/compiler.js';
import { FIRING_SIZE } from '../worker/protocol.js';

// "Show expanded graph": the single-rate graph the compiler reads (core's lowering, laid out
// by ELK in the worker), read-only. Each firing of a multi-rate node is a node of its own
// (`S#0` .. `S#7`), composites are flattened (`s1/inc`), and an edge carrying part of a port
// says which tokens (`3/8`: token 3 of the 8 a firing of the producer makes).

type FiringData = { id: string; kernel?: string; firing?: AppNode['firing']; color?: string };

function FiringNodeView({ data }: NodeProps<Node<FiringData, 'firing'>>) {
  const kernel = findKernel(data.kernel ?? '');
  return (
    <div
      className="firing"
      style={
        data.color
          ? ({ '--pe': data.color, width: FIRING_SIZE.width, height: FIRING_SIZE.height } as React.CSSProperties)
          : { width: FIRING_SIZE.width, height: FIRING_SIZE.height }
      }
      data-testid={`firing-${data.id}`}
    >
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <div className="kn-id">{data.id}</div>
      <div className="muted">
        {kernel?.title ?? data.kernel}
        {data.firing ? ` · firing ${data.firing.index + 1} of ${data.firing.of}` : ''}
      </div>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}

const types = { firing: memo(FiringNodeView) };

const part = (t?: TokenRange) => (t && t.of > 1 ? (t.count === 1 ? `${t.first}/${t.of}` : `${t.first}..${t.first + t.count - 1}/${t.of}`) : undefined);

export function ExpandedView({ toggle, size }: { toggle: React.ReactNode; size: { width: number; height: number } | null }) {
  const lowered = useCompile((s) => s.result?.lowered);
  const status = useCompile((s) => s.status);
  const doc = useProject((s) => s.doc);
  const { nodes, edges } = useMemo(() => {
    const g = lowered?.expanded;
    const nodes: Node[] = (g?.nodes ?? []).map((n) => {
      // A share `X[j]` of a node with tasks runs where lowering puts it (document/targets.ts loweredPe).
      const pe = loweredPe(doc.mapping, n.id) ?? firstPe(effectivePe(doc.mapping, n.id).pe ?? effectivePe(doc.mapping, n.firing?.node ?? n.id).pe);
      return {
        id: n.id,
        type: 'firing',
        position: n.position,
        draggable: false,
        selectable: false,
        connectable: false,
        width: FIRING_SIZE.width,
        height: FIRING_SIZE.height,
        data: { id: n.id, kernel: n.kernel, firing: n.firing, color: peColor(doc, pe) },
      };
    });
    const edges: Edge[] = (g?.edges ?? []).map((e, i) => {
      const label = [part(e.fromTokens), part(e.toTokens) && `→ ${part(e.toTokens)}`].filter(Boolean).join(' ');
      return {
        id: `x${i}`,
        source: e.from.node,
        target: e.to.node,
        selectable: false,
        ...(label ? { label, labelStyle: { fontSize: 10 }, labelBgPadding: [4, 2] as [number, number] } : {}),
      };
    });
    return { nodes, edges };
  }, [lowered, doc]);
  // The whole graph in view (down to a small zoom: 8 firings of 3 nodes are a tall column).
  const viewport = useMemo(
    () =>
      size
        ? openingViewport(boundsOf(nodes.map((n) => ({ ...n.position, ...FIRING_SIZE }))), size.width, size.height, { minZoom: 0.2, maxZoom: 1.1 })
        : undefined,
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [size, lowered === undefined],
  );
  return (
    <ReactFlow
      key={String(lowered === undefined)}
      nodes={nodes}
      edges={edges}
      nodeTypes={types}
      defaultViewport={viewport}
      nodesDraggable={false}
      nodesConnectable={false}
      elementsSelectable={false}
      minZoom={0.05}
      maxZoom={1.5}
      proOptions={{ hideAttribution: true }}
      data-testid="expanded-graph"
    >
      <Background gap={16} size={1} />
      <Controls showInteractive={false} />
      <Panel position="top-left">
        <span className="breadcrumb muted" data-testid="expanded-summary">
          {lowered
            ? `Expanded graph (read-only): ${nodes.length} nodes, ${edges.length} edges`
            : status === 'compiling'
              ? 'compiling…'
              : 'No expanded graph: the document has no rates or composites, or a problem (see Problems)'}
        </span>
      </Panel>
      <Panel position="top-right" className="canvas-actions">
        {toggle}
      </Panel>
    </ReactFlow>
  );
}
