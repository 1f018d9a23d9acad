import { memo } from 'react';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import { findKernel, formatDataType } from '@pipeloom/kernels';
import type { AppNode } from '@pipeloom/core/document/types';
import { portType } from '../lib/kernels.js';

export type KernelNodeData = {
  node: AppNode;
  pe?: string;
  color?: string;
  errors: number;
  /** Mapping view: the PE picker on the node. */
  pes?: string[];
  onPick?: (pe: string | null) => void;
};
export type KernelFlowNode = Node<KernelNodeData, 'kernel'>;

function KernelNodeView({ data, selected }: NodeProps<KernelFlowNode>) {
  const { node, color, errors } = data;
  const kernel = findKernel(node.kernel);
  const inputs = kernel?.inputs ?? [];
  const outputs = kernel?.outputs ?? [];
  const rows = Math.max(inputs.length, outputs.length, 1);
  return (
    <div
      className={`kn${selected ? ' selected' : ''}${errors ? ' has-error' : ''}`}
      style={color ? ({ '--pe': color } as React.CSSProperties) : undefined}
      data-testid={`dfg-node-${node.id}`}
    >
      <div className="kn-head">
        <span className="kn-id">{node.id}</span>
        {data.pe && <span className="kn-pe" title="Processing element">{data.pe}</span>}
      </div>
      <div className="kn-kernel" title={kernel?.description}>{kernel?.title ?? `unknown kernel ${node.kernel}`}</div>
      <div className="kn-ports" style={{ height: rows * 20 }}>
        {inputs.map((p, i) => {
          const t = portType(node, p.name, 'in');
          return (
            <div key={`in-${p.name}`} className="kn-port in" style={{ top: i * 20 }} title={t.type ? formatDataType(t.type) : t.error}>
              <Handle type="target" position={Position.Left} id={p.name} data-testid={`handle-${node.id}-in-${p.name}`} />
              <span>{p.name}</span>
            </div>
          );
        })}
        {outputs.map((p, i) => {
          const t = portType(node, p.name, 'out');
          return (
            <div key={`out-${p.name}`} className="kn-port out" style={{ top: i * 20 }} title={t.type ? formatDataType(t.type) : t.error}>
              <span>{p.name}</span>
              <Handle type="source" position={Position.Right} id={p.name} data-testid={`handle-${node.id}-out-${p.name}`} />
            </div>
          );
        })}
      </div>
      {data.pes && data.onPick && (
        <select
          className="kn-pick nodrag"
          value={data.pe ?? ''}
          data-testid={`map-pick-${node.id}`}
          onChange={(e) => data.onPick!(e.target.value || null)}
        >
          <option value="">unmapped</option>
          {data.pes.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      )}
      {errors > 0 && <div className="kn-badge" title={`${errors} problem(s)`}>{errors}</div>}
    </div>
  );
}

export const KernelNode = memo(KernelNodeView);
export const nodeTypes = { kernel: KernelNode };
