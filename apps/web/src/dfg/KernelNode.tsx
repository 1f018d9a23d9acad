import { memo } from 'react';
import { Handle, Position, type Node, type NodeHandle, type NodeProps } from '@xyflow/react';
import { findKernel, formatDataType } from '@pipeloom/kernels';
import type { AppNode, MappingTarget } from '@pipeloom/core';
import { nodePorts, portType } from '../document/kernels.js';
import { PeBadge, PePick } from './PePick.js';
import { isScan } from '../document/scanNode.js';
import { IO_SINK, IO_SOURCE, ioView } from '../document/io.js';

export type KernelNodeData = {
  node: AppNode;
  /** The node with its expressions evaluated (store/resolve.ts): its ports and types. */
  resolved?: AppNode;
  /** Its path from the canvas's level (`s1/inc` inside an expanded composite): test ids and handles. */
  flowId?: string;
  /** Firings per iteration, shown when above 1 (`×8`). */
  q?: number;
  /** Its PE, or, for a node with tasks, the PEs its shares take in turn. */
  pe?: MappingTarget;
  color?: string;
  errors: number;
  /** Mapping view: the PE picker on the node. */
  pes?: string[];
  onPick?: (pe: string | null) => void;
};
export type KernelFlowNode = Node<KernelNodeData, 'kernel'>;

/** A kernel node's size before React Flow has measured it (styles.css `.kn`): its port rows set the height. */
export function estimatedSize(kernelId: string, mapping: boolean): { width: number; height: number } {
  const kernel = findKernel(kernelId);
  const rows = Math.max(kernel?.inputs.length ?? 0, kernel?.outputs.length ?? 0, 1);
  const file = kernelId === IO_SOURCE || kernelId === IO_SINK ? ESTIMATE.file : 0;
  return { width: ESTIMATE.width, height: ESTIMATE.ports + rows * PORT_ROW + file + (mapping ? ESTIMATE.picker : 0) };
}

/**
 * Handles declared before measuring, for large graphs: React Flow draws every node once to
 * measure its handles unless it declares them, and on a 10,000-node DFG that first draw was
 * most of opening the file. Inputs on the left, outputs on the right, one 20 px row each below
 * the node's header (styles.css `.kn-port`); once a node is drawn React Flow measures the real
 * ones, so these only place the ends of edges to nodes not yet in view.
 */
export function declaredHandles(kernelId: string): NodeHandle[] {
  const kernel = findKernel(kernelId);
  if (!kernel) return [];
  const row = (i: number) => ESTIMATE.ports + i * PORT_ROW + PORT_ROW / 2 - HANDLE / 2;
  return [
    ...kernel.inputs.map((p, i) => ({
      id: p.name,
      type: 'target' as const,
      position: Position.Left,
      x: ESTIMATE.left - HANDLE / 2,
      y: row(i),
      width: HANDLE,
      height: HANDLE,
    })),
    ...kernel.outputs.map((p, i) => ({
      id: p.name,
      type: 'source' as const,
      position: Position.Right,
      x: ESTIMATE.width - ESTIMATE.right - HANDLE / 2,
      y: row(i),
      width: HANDLE,
      height: HANDLE,
    })),
  ];
}

/**
 * styles.css: a port row's height and its handle's size; a node's width, left and right
 * borders, the height above its ports (id and kernel lines), of a source's or sink's file lines and of the PE picker. Measured in
 * Chromium on the paper's P-I-I-C: 168 x 60 px with one port row, handle centres 50 px down,
 * at x 4 and 167.
 */
const PORT_ROW = 20;
const HANDLE = 9;
const ESTIMATE = { width: 168, left: 4, right: 1, ports: 40, picker: 34, file: 34 };

function KernelNodeView({ data, selected }: NodeProps<KernelFlowNode>) {
  const { node, color, errors } = data;
  const resolved = data.resolved ?? node;
  const flowId = data.flowId ?? node.id;
  const kernel = findKernel(node.kernel ?? '');
  // Variadic kernels (a display's in0..in{n-1}) show the ports their params give.
  const { inputs, outputs } = nodePorts(resolved);
  const rows = Math.max(inputs.length, outputs.length, 1);
  const file = ioView(node, resolved);
  return (
    <div
      className={`kn${selected ? ' selected' : ''}${errors ? ' has-error' : ''}`}
      style={color ? ({ '--pe': color } as React.CSSProperties) : undefined}
      data-testid={`dfg-node-${flowId}`}
    >
      <div className="kn-head">
        <span className="kn-id">{node.id}</span>
        {data.q !== undefined && data.q > 1 && (
          <span className="kn-reps" title={`fires ${data.q} times per iteration (${flowId}#0 … #${data.q - 1})`} data-testid={`reps-${flowId}`}>
            ×{data.q}
          </span>
        )}
        {node.tasks !== undefined && (
          <span
            className="kn-tasks"
            title={`runs each firing as ${resolved.tasks} tasks (shares of its ${kernel?.split?.range ?? 'work'}), then sums them`}
            data-testid={`tasks-${flowId}`}
          >
            {typeof resolved.tasks === 'number' ? resolved.tasks : node.tasks} tasks
          </span>
        )}
        <PeBadge flowId={flowId} pe={data.pe} scan={isScan(node)} />
      </div>
      {isScan(node) ? (
        <div className="kn-kernel" title="Scan macro-node: its model and DAG are in the inspector" data-testid={`scan-label-${flowId}`}>
          Scan · {String(node.params?.network ?? 'kogge-stone')} · {String(node.params?.operator ?? '?')}
        </div>
      ) : (
        <div className="kn-kernel" title={kernel?.description}>
          {kernel?.title ?? `unknown kernel ${node.kernel}`}
        </div>
      )}
      <div className="kn-ports" style={{ height: rows * PORT_ROW }}>
        {inputs.map((p, i) => {
          const t = portType(resolved, p.name, 'in');
          return (
            <div key={`in-${p.name}`} className="kn-port in" style={{ top: i * PORT_ROW }} title={t.type ? formatDataType(t.type) : t.error}>
              <Handle type="target" position={Position.Left} id={p.name} data-testid={`handle-${flowId}-in-${p.name}`} />
              <span>{p.name}</span>
            </div>
          );
        })}
        {outputs.map((p, i) => {
          const t = portType(resolved, p.name, 'out');
          return (
            <div key={`out-${p.name}`} className="kn-port out" style={{ top: i * PORT_ROW }} title={t.type ? formatDataType(t.type) : t.error}>
              <span>{p.name}</span>
              <Handle type="source" position={Position.Right} id={p.name} data-testid={`handle-${flowId}-out-${p.name}`} />
            </div>
          );
        })}
      </div>
      {file && (
        // Below the ports, so a source's or sink's handles stand where declaredHandles puts them.
        <div className="kn-file" data-testid={`io-file-${flowId}`} title={`${file.role === 'source' ? 'reads' : 'writes'} ${file.path || 'no file yet'}`}>
          <span className="kn-file-path">{file.path || 'no file'}</span>
          <span className="kn-file-shape" data-testid={`io-shape-${flowId}`}>
            {file.shape}
          </span>
        </div>
      )}
      <PePick flowId={flowId} pe={data.pe} pes={data.pes} onPick={data.onPick} />
      {errors > 0 && (
        <div className="kn-badge" title={`${errors} problem(s)`}>
          {errors}
        </div>
      )}
    </div>
  );
}

export const KernelNode = memo(KernelNodeView);
