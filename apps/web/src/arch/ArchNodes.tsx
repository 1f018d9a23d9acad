import { memo } from 'react';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import type { Host, ProcessingElement } from '@pipeloom/core';
import { formatBytes } from '../lib/format.js';

export type HostFlowNode = Node<{ host: Host; pes: number; errors: number }, 'host'>;
export type PeFlowNode = Node<{ pe: ProcessingElement; color?: string; mapped: string[]; errors: number }, 'pe'>;

function HostView({ data, selected }: NodeProps<HostFlowNode>) {
  return (
    <div className={`host${selected ? ' selected' : ''}${data.errors ? ' has-error' : ''}`} data-testid={`arch-host-${data.host.id}`}>
      <div className="host-head">
        <span className="host-id">{data.host.id}</span>
        <span className="host-agent" title={data.host.agent ?? 'no agent URL'}>
          {data.host.agent ?? 'no agent URL'}
        </span>
      </div>
    </div>
  );
}

function PeView({ data, selected }: NodeProps<PeFlowNode>) {
  const { pe } = data;
  return (
    <div
      className={`pe ${pe.kind}${selected ? ' selected' : ''}${data.errors ? ' has-error' : ''}`}
      style={data.color ? ({ '--pe': data.color } as React.CSSProperties) : undefined}
      data-testid={`arch-pe-${pe.id}`}
    >
      <Handle type="source" position={Position.Right} id="r" />
      <Handle type="source" position={Position.Left} id="l" />
      <Handle type="source" position={Position.Bottom} id="b" />
      <Handle type="source" position={Position.Top} id="t" />
      <div className="pe-id">{pe.id}</div>
      <div className="pe-meta">
        {pe.kind.toUpperCase()}
        {pe.kind === 'gpu' && pe.device !== undefined ? ` #${pe.device}` : ''} · {formatBytes(pe.memory)}
      </div>
      {data.mapped.length > 0 && (
        <div className="pe-mapped" title={data.mapped.join(', ')}>
          {data.mapped.join(', ')}
        </div>
      )}
    </div>
  );
}

export const archNodeTypes = { host: memo(HostView), pe: memo(PeView) };
