import { memo } from 'react';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import type { AppNode, MappingTarget } from '@pipeloom/core';
import { KernelNode } from './KernelNode.js';
import { PeBadge, PePick } from './PePick.js';

// Composite nodes on the DFG canvas. Collapsed: one box with the composite's ports as handles,
// like a kernel node. Expanded in place: a group box (React Flow parent) whose children are the
// inner nodes; its header collapses it back or enters it. Double-click either to enter it.

export type CompositeNodeData = {
  node: AppNode;
  flowId: string;
  /** `defs.stage` or `inline graph`. */
  label: string;
  inputs: string[];
  outputs: string[];
  pe?: MappingTarget;
  color?: string;
  errors: number;
  /** Port types for tooltips. */
  types?: Record<string, string>;
  onExpand: () => void;
  onEnter: () => void;
  /** Mapping view: the PE picker on the node (the whole composite's entry). */
  pes?: string[];
  onPick?: (pe: string | null) => void;
};
export type CompositeFlowNode = Node<CompositeNodeData, 'composite'>;
export type GroupFlowNode = Node<Omit<CompositeNodeData, 'inputs' | 'outputs' | 'types'>, 'group'>;

const PORT_ROW = 20;

function CompositeNodeView({ data, selected }: NodeProps<CompositeFlowNode>) {
  const { node, flowId, color, errors } = data;
  const rows = Math.max(data.inputs.length, data.outputs.length, 1);
  return (
    <div
      className={`kn composite${selected ? ' selected' : ''}${errors ? ' has-error' : ''}`}
      style={color ? ({ '--pe': color } as React.CSSProperties) : undefined}
      data-testid={`dfg-node-${flowId}`}
    >
      <div className="kn-head">
        <span className="kn-id">{node.id}</span>
        <PeBadge flowId={flowId} pe={data.pe} what="Processing element (the whole composite)" />
      </div>
      <div className="kn-kernel">
        <span title="Composite node">{data.label}</span>
        <span className="kn-actions nodrag">
          <button className="icon" title="Expand in place" onClick={data.onExpand} data-testid={`expand-${flowId}`}>
            ⊞
          </button>
          <button className="icon" title="Enter (edit its inner graph)" onClick={data.onEnter} data-testid={`enter-${flowId}`}>
            ↳
          </button>
        </span>
      </div>
      <div className="kn-ports" style={{ height: rows * PORT_ROW }}>
        {data.inputs.map((p, i) => (
          <div key={`in-${p}`} className="kn-port in" style={{ top: i * PORT_ROW }} title={data.types?.[`in.${p}`]}>
            <Handle type="target" position={Position.Left} id={p} data-testid={`handle-${flowId}-in-${p}`} />
            <span>{p}</span>
          </div>
        ))}
        {data.outputs.map((p, i) => (
          <div key={`out-${p}`} className="kn-port out" style={{ top: i * PORT_ROW }} title={data.types?.[`out.${p}`]}>
            <span>{p}</span>
            <Handle type="source" position={Position.Right} id={p} data-testid={`handle-${flowId}-out-${p}`} />
          </div>
        ))}
      </div>
      <PePick flowId={flowId} pe={data.pe} pes={data.pes} onPick={data.onPick} />
      {errors > 0 && (
        <div className="kn-badge" title={`${errors} problem(s)`}>
          {errors}
        </div>
      )}
    </div>
  );
}

function GroupNodeView({ data, selected }: NodeProps<GroupFlowNode>) {
  const { node, flowId, color, errors } = data;
  return (
    <div
      className={`dfg-group${selected ? ' selected' : ''}${errors ? ' has-error' : ''}`}
      style={color ? ({ '--pe': color } as React.CSSProperties) : undefined}
      data-testid={`dfg-group-${flowId}`}
    >
      <div className="dfg-group-head">
        <span className="kn-id">{node.id}</span>
        <span className="muted">{data.label}</span>
        <PeBadge flowId={flowId} pe={data.pe} />
        <span className="kn-actions nodrag">
          <button className="icon" title="Collapse to one node" onClick={data.onExpand} data-testid={`collapse-${flowId}`}>
            ⊟
          </button>
          <button className="icon" title="Enter (edit its inner graph)" onClick={data.onEnter} data-testid={`enter-${flowId}`}>
            ↳
          </button>
        </span>
      </div>
      <PePick flowId={flowId} pe={data.pe} pes={data.pes} onPick={data.onPick} />
    </div>
  );
}

export const CompositeNode = memo(CompositeNodeView);
export const GroupNode = memo(GroupNodeView);

export const nodeTypes = { kernel: KernelNode, composite: CompositeNode, group: GroupNode };
